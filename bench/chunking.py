"""Chunking choices compared on the labelled set, same run, same model: `python bench/chunking.py`.

1. heading chunks with the `[Page > Section]` prefix (DocuBot's chunker);
2. the same chunks without the prefix;
3. fixed 1,000-character chunks (200 overlap) over each page's text.
Dense e5 retrieval, exact cosine; a fixed chunk counts as a hit for every section it overlaps.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.eval.metrics import mrr, recall_at  # noqa: E402
from docubot.eval.sets import load_retrieval_set  # noqa: E402
from docubot.ingest.chunk import ChunkLimits, chunk_page, slugify  # noqa: E402
from docubot.ingest.files import find_pages, read_page  # noqa: E402
from docubot.ingest.parse import Page, parse_page  # noqa: E402

DOCS = ROOT / "examples" / "docs_nubelia"
FIXED_SIZE, FIXED_OVERLAP = 1000, 200


def current_pages() -> list[Page]:
    pages = [parse_page(read_page(f, 2_000_000), f.relative) for f in find_pages(DOCS)[0]]
    return [p for p in pages if not p.meta.source_path.startswith("arxiu/")]


def heading_chunks(
    pages: list[Page], embedder: E5Embedder, prefix: bool
) -> list[tuple[str, set[tuple[str, str]]]]:
    out = []
    for page in pages:
        for chunk in chunk_page(
            page, embedder.count_tokens, ChunkLimits(300, 60, 500), slugify(page.meta.url)
        ):
            text = chunk.text if prefix else chunk.text.split("\n", 1)[1]
            out.append((text, {(chunk.url, chunk.section_path)}))
    return out


def fixed_chunks(pages: list[Page]) -> list[tuple[str, set[tuple[str, str]]]]:
    out = []
    for page in pages:
        text, spans = "", []
        for section in page.sections:
            body = "\n\n".join(b.text for b in section.blocks)
            path = " > ".join((page.title, *section.path))
            spans.append((len(text), len(text) + len(body), (page.meta.url, path)))
            text += body + "\n\n"
        for start in range(0, max(len(text) - FIXED_OVERLAP, 1), FIXED_SIZE - FIXED_OVERLAP):
            end = start + FIXED_SIZE
            out.append((text[start:end], {label for a, b, label in spans if a < end and b > start}))
    return out


def evaluate(name: str, chunks: list[tuple[str, set[tuple[str, str]]]], embedder: E5Embedder) -> None:
    vectors = embedder.embed_documents([text for text, _ in chunks])
    cases = [c for c in load_retrieval_set(ROOT / "evals" / "nubelia") if c.answerable]
    ranks = []
    for case in cases:
        order = np.argsort(-(vectors @ embedder.embed_query(case.question)))[:10]
        gold = {(g.url, g.section) for g in case.gold}
        ranks.append(next((r for r, i in enumerate(order, 1) if chunks[i][1] & gold), None))
    print(f"{name:38s} {len(chunks):4d} chunks  recall@5 {recall_at(ranks, 5):.3f}  MRR@10 {mrr(ranks):.3f}")


def main() -> None:
    embedder = E5Embedder()
    pages = current_pages()
    evaluate("headings + [Page > Section] prefix", heading_chunks(pages, embedder, prefix=True), embedder)
    evaluate("headings, no prefix", heading_chunks(pages, embedder, prefix=False), embedder)
    evaluate(f"fixed {FIXED_SIZE} chars / {FIXED_OVERLAP} overlap", fixed_chunks(pages), embedder)


if __name__ == "__main__":
    main()
