"""Vector search on PostgreSQL + pgvector (exact and HNSW) beside SQLite + numpy, synthetic vectors.

For each size: clustered synthetic 384-d unit vectors (topics plus noise, closer to real embeddings
than uniform noise) go into a SQLite store and a PostgreSQL store (the embedded server of
`docubot db start`); the same queries (perturbed corpus vectors) run exact on both, then through
the HNSW index at a few `ef_search` values. Prints recall@10 of HNSW against exact, p50/p95 query
latency, index build time, and latency ratios to SQLite + numpy.

    python bench/pgvector.py --sizes 10000 100000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docubot.config import Settings
from docubot.db import Database
from docubot.store.base import Record
from docubot.store.pgvector import PgVectorStore
from docubot.store.sql import SQLStore
from tests.postgres import postgres_server

DIM, K, QUERIES, TOPICS, BATCH = 384, 10, 200, 500, 5000
EF_SEARCH = (40, 100, 200)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def corpus(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n clustered unit vectors and QUERIES queries near some of them."""
    centres = unit(rng.standard_normal((TOPICS, DIM)))
    vectors = unit(centres[rng.integers(0, TOPICS, n)] + 0.6 * unit(rng.standard_normal((n, DIM))))
    queries = unit(vectors[rng.integers(0, n, QUERIES)] + 0.4 * unit(rng.standard_normal((QUERIES, DIM))))
    return vectors, queries


def records(vectors: np.ndarray, start: int) -> list[Record]:
    meta = {"version": "2026.2", "latest": True, "source_path": "synthetic.md", "chunk_index": 0}
    return [
        Record(f"c{start + i}", "text", {**meta, "content_hash": f"h{start + i}"}, v)
        for i, v in enumerate(vectors)
    ]


def fill(store: SQLStore, vectors: np.ndarray) -> float:
    started = time.perf_counter()
    store.check_embedding_model("synthetic", DIM)
    for start in range(0, len(vectors), BATCH):
        store.upsert(records(vectors[start : start + BATCH], start))
    return time.perf_counter() - started


def search(store: SQLStore, queries: np.ndarray) -> tuple[list[list[str]], np.ndarray]:
    store.query(queries[0], K)  # warm: matrix load, plan cache
    results, seconds = [], []
    for q in queries:
        started = time.perf_counter()
        results.append([h.id for h in store.query(q, K)])
        seconds.append(time.perf_counter() - started)
    return results, np.array(seconds) * 1000


def recall(got: list[list[str]], exact: list[list[str]]) -> float:
    return float(np.mean([len(set(g) & set(e)) / len(e) for g, e in zip(got, exact, strict=True)]))


def new_database(server_url: str) -> str:
    name = f"b{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def row(name: str, ms: np.ndarray, base: np.ndarray, extra: str = "") -> str:
    p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
    ratio = p50 / np.percentile(base, 50)
    return f"  {name:<26} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms  p50 vs sqlite {ratio:6.2f}x  {extra}"


def bench_size(n: int, server_url: str, folder: Path) -> None:
    vectors, queries = corpus(n, np.random.default_rng(n))
    sqlite_settings = Settings(home=folder / f"sqlite-{n}")
    pg_settings = Settings(home=folder / f"pg-{n}", database_url=new_database(server_url))
    with Database(sqlite_settings) as db:
        store = SQLStore(db)
        load_s = fill(store, vectors)
        exact, sqlite_ms = search(store, queries)
    print(f"\n{n} vectors, {DIM}-d, {QUERIES} queries, k={K}  (load: sqlite {load_s:.1f} s", end="")
    with Database(pg_settings.with_overrides(pg_hnsw_min_rows=10**9)) as db:
        pg_load_s = fill(PgVectorStore(db), vectors)
        pg_exact, pg_exact_ms = search(PgVectorStore(db), queries)
    print(f", postgresql {pg_load_s:.1f} s)")
    print(row("sqlite + numpy (exact)", sqlite_ms, sqlite_ms))
    print(row("pgvector exact", pg_exact_ms, sqlite_ms, f"recall@10 {recall(pg_exact, exact):.4f}"))
    started = time.perf_counter()
    with Database(pg_settings.with_overrides(pg_hnsw_min_rows=0)) as db:
        PgVectorStore(db)  # builds the index
    print(f"  HNSW build (m=16, ef_construction=64): {time.perf_counter() - started:.1f} s")
    for ef in EF_SEARCH:
        with Database(pg_settings.with_overrides(pg_hnsw_min_rows=0, pg_ef_search=ef)) as db:
            got, ms = search(PgVectorStore(db), queries)
        print(row(f"pgvector HNSW ef_search={ef}", ms, sqlite_ms, f"recall@10 {recall(got, exact):.4f}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, postgres_server() as server_url:
        for n in args.sizes:
            bench_size(n, server_url, Path(folder))


if __name__ == "__main__":
    main()
