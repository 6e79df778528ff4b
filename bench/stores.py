"""Vector stores side by side: `python bench/stores.py [--sizes 10000,100000]` (prints, asserts nothing).

For each size, the same synthetic 384-d unit vectors (clustered like real chunks: each is a noisy copy
of one of 200 topic centres) go into a fresh SQLite store and a fresh embedded Chroma store:
- ingest: upsert of every chunk, in batches of 1,000 (what an ingest's write phase does);
- query p50/p95: 200 searches for k=10 among the latest chunks (the filter DocuBot's retriever sends);
- overlap@10: the share of SQLite's exact top 10 that Chroma's HNSW also returns.
Ratios are Chroma / SQLite.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.db import Database  # noqa: E402
from docubot.store import Record, VectorStore, open_store  # noqa: E402

DIM = 384
BATCH = 1000
QUERIES = 200
K = 10
BACKENDS = ("sqlite", "chroma")


def synthetic(n: int, rng: np.random.Generator) -> tuple[list[Record], np.ndarray]:
    centres = rng.standard_normal((200, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 200, n)] + 0.6 * rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [
        Record(
            f"page-{i // 8}--section-{i % 8}",
            f"[Pàgina {i // 8} > Secció {i % 8}]\ntext sintètic {i}",
            {
                "url": f"wiki/page-{i // 8}",
                "page_title": f"Pàgina {i // 8}",
                "section_title": f"Secció {i % 8}",
                "section_path": f"Pàgina {i // 8} > Secció {i % 8}",
                "version": "2026.2" if i % 10 else "2026.1",
                "date": "2026-09-01",
                "source_path": f"page-{i // 8}.md",
                "chunk_index": i % 8,
                "content_hash": f"h{i}",
                "chunker_version": "1",
                "latest": bool(i % 10),
            },
            vectors[i],
        )
        for i in range(n)
    ]
    picks = vectors[rng.integers(0, n, QUERIES)] + 0.3 * rng.standard_normal((QUERIES, DIM)).astype(
        np.float32
    )
    return records, picks / np.linalg.norm(picks, axis=1, keepdims=True)


def open_backend(backend: str, folder: Path) -> tuple[Database, VectorStore]:
    db = Database(Settings(home=folder, vector_store=backend))
    return db, open_store(db)


@dataclass
class Result:
    ingest_s: float
    p50_ms: float
    p95_ms: float
    tops: list[list[str]]


def measure(store: VectorStore, records: list[Record], queries: np.ndarray) -> Result:
    start = time.perf_counter()
    for i in range(0, len(records), BATCH):
        store.upsert(records[i : i + BATCH])
    ingest_s = time.perf_counter() - start
    store.query(queries[0], K, {"latest": True})  # warm: SQLite loads its matrix, Chroma its index
    latencies, tops = [], []
    for query in queries:
        start = time.perf_counter()
        hits = store.query(query, K, {"latest": True})
        latencies.append(time.perf_counter() - start)
        tops.append([h.id for h in hits])
    ordered = sorted(latencies)
    return Result(
        ingest_s, 1000 * statistics.median(ordered), 1000 * ordered[int(0.95 * (len(ordered) - 1))], tops
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated chunk counts")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    rng = np.random.default_rng(7)
    print(
        f"{'chunks':>8} {'store':<7} {'ingest s':>9} {'chunks/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'overlap@10':>10}"
    )
    for n in sizes:
        records, queries = synthetic(n, rng)
        results = {}
        for backend in BACKENDS:
            with tempfile.TemporaryDirectory(prefix=f"bench-{backend}-") as folder:
                db, store = open_backend(backend, Path(folder))
                try:
                    results[backend] = measure(store, records, queries)
                finally:
                    store.close()
                    db.close()
        exact = results["sqlite"].tops
        for backend, r in results.items():
            overlap = np.mean([len(set(a) & set(b)) / K for a, b in zip(exact, r.tops, strict=True)])
            print(
                f"{n:>8} {backend:<7} {r.ingest_s:>9.2f} {n / r.ingest_s:>9.0f} "
                f"{r.p50_ms:>8.2f} {r.p95_ms:>8.2f} {overlap:>10.3f}"
            )
        s, c = results["sqlite"], results["chroma"]
        print(
            f"{n:>8} chroma/sqlite: ingest ×{c.ingest_s / s.ingest_s:.1f}, "
            f"p50 ×{c.p50_ms / s.p50_ms:.1f}, p95 ×{c.p95_ms / s.p95_ms:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
