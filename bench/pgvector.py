"""Vector search on PostgreSQL + pgvector (exact and HNSW) beside SQLite + numpy, synthetic vectors.

For each size: clustered synthetic 384-d unit vectors (topics plus noise, closer to real embeddings
than uniform noise) go into a SQLite store and a PostgreSQL store (the embedded server of
`docubot db start`); the same queries (perturbed corpus vectors) run exact on both, then through
the HNSW index at a few `ef_search` values. Prints recall@10 of HNSW against exact, p50/p95 query
latency, index build time, and latency ratios to SQLite + numpy.

From `--copy-from` chunks up (default 500,000) the PostgreSQL store is loaded with one `COPY` (the
store's batched inserts would take most of an hour at 1M), the exact neighbours come from numpy over
the same matrix (what SQLite + numpy computes, without writing a second 1M-row copy), and the
pgvector exact scan is timed on `--exact-queries` queries only (seconds each at 1M). The HNSW
index is still built by the store, with `maintenance_work_mem = --index-memory-mb`.

    python bench/pgvector.py --sizes 10000 100000
    python bench/pgvector.py --sizes 1000000 --index-memory-mb 2500 [--m 16 --ef-construction 64]
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
from docubot.store.base import METADATA_FIELDS, Record
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


def row(name: str, ms: np.ndarray, base: np.ndarray, extra: str = "", versus: str = "sqlite") -> str:
    p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
    ratio = p50 / np.percentile(base, 50)
    return f"  {name:<26} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms  p50 vs {versus} {ratio:6.2f}x  {extra}"


def copy_into(url: str, vectors: np.ndarray) -> float:
    """Load `vectors` as the store's chunk rows with one COPY (bench-only shortcut); seconds."""
    started = time.perf_counter()
    columns = ["id", "text", *METADATA_FIELDS, "embedding", "embedding_vec"]
    meta = {"version": "2026.2", "latest": "1", "source_path": "synthetic.md", "chunk_index": "0"}
    with psycopg.connect(url) as conn, conn.cursor() as cursor:
        names = ", ".join(f'"{c}"' for c in columns)
        with cursor.copy(f"COPY chunks ({names}) FROM STDIN") as copy:
            for i, v in enumerate(vectors):
                fields = {**meta, "content_hash": f"h{i}"}
                copy.write_row(
                    [
                        f"c{i}",
                        "text",
                        *(fields.get(name) for name in METADATA_FIELDS),
                        v.tobytes(),
                        "[" + ",".join(map(repr, v.tolist())) + "]",
                    ]
                )
    return time.perf_counter() - started


def numpy_exact(vectors: np.ndarray, queries: np.ndarray) -> tuple[list[list[str]], np.ndarray]:
    """The exact top-K ids per query by a numpy mat-vec over the whole matrix, and its timings."""
    results, seconds = [], []
    for q in queries:
        started = time.perf_counter()
        scores = vectors @ q
        top = np.argpartition(-scores, K)[:K]
        top = top[np.argsort(-scores[top], kind="stable")]
        seconds.append(time.perf_counter() - started)
        results.append([f"c{i}" for i in top])
    return results, np.array(seconds) * 1000


def bench_copied(n: int, server_url: str, folder: Path, args: argparse.Namespace) -> None:
    """One large size: COPY loading, numpy reference, the store's HNSW build and searches."""
    vectors, queries = corpus(n, np.random.default_rng(n))
    exact_queries, index_memory_mb = args.exact_queries, args.index_memory_mb
    settings = Settings(
        home=folder / f"pg-{n}",
        database_url=new_database(server_url),
        pg_index_memory_mb=index_memory_mb,
        pg_hnsw_m=args.m,
        pg_hnsw_ef_construction=args.ef_construction,
    )
    with Database(settings.with_overrides(pg_hnsw_min_rows=10**9)) as db:
        PgVectorStore(db).check_embedding_model("synthetic", DIM)  # schema and the dimension meta row
    load_s = copy_into(settings.database_url or "", vectors)
    exact, numpy_ms = numpy_exact(vectors, queries)
    print(f"\n{n} vectors, {DIM}-d, {QUERIES} queries, k={K}  (COPY load: {load_s:.1f} s)")
    print(row("numpy exact (in memory)", numpy_ms, numpy_ms, versus="numpy"))
    with Database(settings.with_overrides(pg_hnsw_min_rows=10**9)) as db:
        got, ms = search(PgVectorStore(db), queries[:exact_queries])
    print(
        row(
            f"pgvector exact ({exact_queries} q)",
            ms,
            numpy_ms,
            f"recall@10 {recall(got, exact[:exact_queries]):.4f}",
            "numpy",
        )
    )
    started = time.perf_counter()
    with Database(settings.with_overrides(pg_hnsw_min_rows=0)) as db:
        PgVectorStore(db)  # builds the index
    print(
        f"  HNSW build (m={args.m}, ef_construction={args.ef_construction}, "
        f"maintenance_work_mem {index_memory_mb} MB): "
        f"{time.perf_counter() - started:.1f} s"
    )
    for ef in args.ef_search:
        with Database(settings.with_overrides(pg_hnsw_min_rows=0, pg_ef_search=ef)) as db:
            got, ms = search(PgVectorStore(db), queries)
        print(
            row(f"pgvector HNSW ef_search={ef}", ms, numpy_ms, f"recall@10 {recall(got, exact):.4f}", "numpy")
        )


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
    hnsw = f"m={pg_settings.pg_hnsw_m}, ef_construction={pg_settings.pg_hnsw_ef_construction}"
    print(f"  HNSW build ({hnsw}): {time.perf_counter() - started:.1f} s")
    for ef in EF_SEARCH:
        with Database(pg_settings.with_overrides(pg_hnsw_min_rows=0, pg_ef_search=ef)) as db:
            got, ms = search(PgVectorStore(db), queries)
        print(row(f"pgvector HNSW ef_search={ef}", ms, sqlite_ms, f"recall@10 {recall(got, exact):.4f}"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--copy-from", type=int, default=500_000, help="sizes loaded with COPY from this up")
    parser.add_argument("--index-memory-mb", type=int, default=2500, help="HNSW build memory, COPY sizes")
    parser.add_argument("--exact-queries", type=int, default=20, help="pgvector exact scans, COPY sizes")
    parser.add_argument("--m", type=int, default=32, help="HNSW m, COPY sizes")
    parser.add_argument("--ef-construction", type=int, default=128, help="HNSW ef_construction, COPY sizes")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200, 400], help="COPY sizes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, postgres_server() as server_url:
        for n in args.sizes:
            if n >= args.copy_from:
                bench_copied(n, server_url, Path(folder), args)
            else:
                bench_size(n, server_url, Path(folder))


if __name__ == "__main__":
    main()
