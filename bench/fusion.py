"""Retrieval modes and hybrid fusions compared on labelled sets, same run, same ingested corpus:

    DOCUBOT_HOME=/tmp/ferrule python bench/fusion.py evals/ferrule
    DOCUBOT_HOME=/tmp/nubelia python bench/fusion.py evals/nubelia evals/nubelia/retrieval_typos.jsonl

The data folder must hold the set's docs, ingested. Every question is embedded once; then the same
`Retriever` ranks it 20 deep in each mode and fusion (dense, bm25, hybrid by reciprocal rank at
several k, hybrid by z-score at several dense shares). It prints recall@1/5/10, MRR@10 and the top-20
miss rate per set and split, for the labelled answerable questions.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.components import Components  # noqa: E402
from docubot.eval.retrieval import MISS_DEPTH, CaseOutcome, gold_rank, measure  # noqa: E402
from docubot.eval.sets import load_retrieval_set  # noqa: E402
from docubot.rag.retrieve import Fusion, Mode, Retriever  # noqa: E402

VARIANTS: list[tuple[str, Mode, Fusion, float]] = [
    ("dense", "dense", "zscore", 0.5),
    ("bm25", "bm25", "zscore", 0.5),
    *((f"hybrid rrf k={k}", "hybrid", "rrf", k) for k in (2, 5, 10, 60)),
    *((f"hybrid zscore {w:.2f}", "hybrid", "zscore", w) for w in (0.4, 0.5, 0.6)),
]


def variant(base: Retriever, fusion: Fusion, value: float) -> Retriever:
    """`base`'s parts under another fusion (`value`: the rrf constant or the zscore dense share)."""
    return Retriever(
        base.embedder,
        base.store,
        base.keyword_index,
        fusion=fusion,
        dense_weight=value if fusion == "zscore" else 0.5,
        rrf_k=int(value) if fusion == "rrf" else 5,
    )


def main(paths: list[Path]) -> None:
    components = Components.from_settings(chat_model=None)
    base = components.retriever
    print("set | split | variant | n | recall@1 | recall@5 | recall@10 | MRR@10 | top-20 misses")
    for path in paths:
        cases = [c for c in load_retrieval_set(path) if c.answerable]
        vectors = [base.embedder.embed_query(c.question) for c in cases]
        for label, mode, fusion, value in VARIANTS:
            retriever = variant(base, fusion, value)
            outcomes = []
            for case, vector in zip(cases, vectors, strict=True):
                hits = retriever.search(case.question, k=MISS_DEPTH, mode=mode, query_vector=vector).hits
                outcomes.append(CaseOutcome(case, gold_rank(hits, case.gold), hits))
            report = measure(outcomes, MISS_DEPTH)
            for split, m in [("all", report.metrics), *report.splits.items()]:
                print(
                    f"{path} | {split} | {label} | {int(m['questions'])} | {m['recall@1']:.3f} | "
                    f"{m['recall@5']:.3f} | {m['recall@10']:.3f} | {m['mrr']:.3f} | {m['miss@20']:.1%}"
                )


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]] or [ROOT / "evals" / "nubelia"])
