"""Ingestion and search benchmark: `python bench/ingest.py` (prints numbers and ratios, asserts nothing).

1. First ingest of the sample docs (chunks/s) and a re-ingest as a ratio of the first.
2. Search latency p50/p95 over 10k and 100k stored chunks (synthetic unit vectors), against a bare
   numpy mat-vec over the same matrix in the same run (the baseline).
3. BM25: index build time, size on disk and query p50/p95 at 10k and 100k synthetic chunks.
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.db import Database  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.eval.sets import load_retrieval_set  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.rag.keyword import KeywordIndex  # noqa: E402
from docubot.rag.retrieve import Retriever  # noqa: E402
from docubot.store import Record  # noqa: E402
from docubot.store.sql import SQLStore  # noqa: E402

DOCS = ROOT / "examples" / "docs_nubelia"


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def bench_ingest(work: Path, embedder: E5Embedder) -> None:
    settings = Settings(home=work / "ingest")
    store = SQLStore(Database(settings))
    start = time.perf_counter()
    first = ingest(DOCS, settings, store, embedder)
    first_s = time.perf_counter() - start
    start = time.perf_counter()
    again = ingest(DOCS, settings, store, embedder)
    again_s = time.perf_counter() - start
    bench_retrieval(settings, store, embedder)
    store.db.close()
    print(f"first ingest: {first.chunks} chunks in {first_s:.1f} s = {first.chunks / first_s:.1f} chunks/s")
    print(f"re-ingest:    {again_s:.2f} s, embedded {again.embedded}; ratio to first {again_s / first_s:.3f}")


def bench_retrieval(settings: Settings, store: SQLStore, embedder: E5Embedder) -> None:
    """Whole retrieval (query embedding + searches + fusion) per mode on the sample store."""
    questions = [c.question for c in load_retrieval_set(ROOT / "evals" / "nubelia")]
    retriever = Retriever(embedder, store, KeywordIndex(settings.keyword_index_dir), rrf_k=settings.rrf_k)
    baseline = None
    for mode in ("dense", "bm25", "hybrid"):
        samples = []
        for question in questions:
            t = time.perf_counter()
            retriever.search(question, k=4, mode=mode)
            samples.append(time.perf_counter() - t)
        p50, p95 = percentiles(samples)
        baseline = baseline or p50
        print(
            f"retrieval {mode:6s} on the sample docs ({len(questions)} questions): p50 {p50 * 1000:.1f} ms p95 {p95 * 1000:.1f} ms x{p50 / baseline:.2f} vs dense"
        )


def synthetic_store(home: Path, n: int, vocabulary: list[str]) -> SQLStore:
    rng = np.random.default_rng(42)
    words = random.Random(42)
    store = SQLStore(Database(Settings(home=home)))
    for start in range(0, n, 5000):
        size = min(5000, n - start)
        vectors = rng.standard_normal((size, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.upsert(
            [
                Record(
                    f"doc-{start + i:07d}",
                    " ".join(words.choices(vocabulary, k=40)),
                    {
                        "url": f"wiki/p{(start + i) % 500}",
                        "version": "2026.2" if i % 4 else "2026.1",
                        "latest": bool(i % 4),
                        "section_path": "P > S",
                        "chunk_index": 0,
                        "content_hash": str(i),
                    },
                    vectors[i],
                )
                for i in range(size)
            ]
        )
    store.bump_corpus_version()
    return store


def bench_search(work: Path, n: int, vocabulary: list[str]) -> None:
    store = synthetic_store(work / f"search-{n}", n, vocabulary)
    rng = np.random.default_rng(7)
    queries = rng.standard_normal((200, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    store.query(queries[0], 4)  # loads the matrix once
    timings = {"store top-4": [], "store top-4, filter latest": [], "baseline mat-vec + argpartition": []}
    with store.db.read() as conn:
        matrix = store._current_matrix(conn).vectors
    for q in queries:
        t = time.perf_counter()
        store.query(q, 4)
        timings["store top-4"].append(time.perf_counter() - t)
        t = time.perf_counter()
        store.query(q, 4, {"latest": True})
        timings["store top-4, filter latest"].append(time.perf_counter() - t)
        t = time.perf_counter()
        scores = matrix @ q
        np.argpartition(-scores, 3)[:4]
        timings["baseline mat-vec + argpartition"].append(time.perf_counter() - t)
    base = statistics.median(timings["baseline mat-vec + argpartition"])
    for name, samples in timings.items():
        p50, p95 = percentiles(samples)
        latency = f"p50 {p50 * 1000:6.2f} ms  p95 {p95 * 1000:6.2f} ms"
        print(f"search {n:>6} chunks, {name:32s} {latency}  x{p50 / base:.2f}")
    bench_bm25(work, store, n, vocabulary)
    store.db.close()


def bench_bm25(work: Path, store: SQLStore, n: int, vocabulary: list[str]) -> None:
    index = KeywordIndex(work / f"bm25-{n}")
    start = time.perf_counter()
    index.rebuild(store)
    build_s = time.perf_counter() - start
    size = sum(f.stat().st_size for f in index.folder.rglob("*") if f.is_file()) / 1e6
    words = random.Random(3)
    samples = []
    for _ in range(100):
        question = " ".join(words.choices(vocabulary, k=6))
        t = time.perf_counter()
        index.scores(store, question)
        samples.append(time.perf_counter() - t)
    p50, p95 = percentiles(samples)
    latency = f"query p50 {p50 * 1000:.2f} ms p95 {p95 * 1000:.2f} ms"
    print(f"bm25   {n:>6} chunks: build {build_s:.1f} s, {size:.1f} MB on disk, {latency}")


def main() -> None:
    embedder = E5Embedder()
    vocabulary = sorted({w for p in DOCS.rglob("*.md") for w in p.read_text().split() if w.isalpha()})
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bench_ingest(work, embedder)
        for n in (10_000, 100_000):
            bench_search(work, n, vocabulary)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
