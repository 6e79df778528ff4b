"""The store on PostgreSQL with pgvector: searches run in SQL, not over an in-memory matrix.

Chunks live in the same `chunks` table as on SQLite; each also has its vector in the
`embedding_vec vector` column (migration 0003), beside the float32 blob, which stays as the
portable copy (`vectors_by_hash`, moving data between backends). Rows whose `embedding_vec` is
missing (copied in as rows, or written by a plain `SQLStore`) are filled in when the store opens.

Searches are `ORDER BY embedding_vec <=> :q LIMIT k` with the filters in the WHERE clause: exact
while the corpus is small; once it holds `pg_hnsw_min_rows` chunks, a write builds an HNSW index
(`vector_cosine_ops`) and searches go through it with `SET LOCAL hnsw.ef_search = pg_ef_search`
(and iterative scans when filtered, so a filter never leaves fewer than k hits that exist).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from sqlalchemy import Connection

from docubot.db import Database
from docubot.store.base import METADATA_FIELDS, Filters, Hit, Record, StoreError, validate_filters
from docubot.store.sql import (
    BATCH,
    SQLStore,
    _bump_corpus_version,
    _delete,
    _driver_rows,
    _meta_value,
    _metadata_dict,
    _touch,
    _update_metadata,
    _upsert,
)

HNSW_INDEX = "chunks_embedding_hnsw"
HNSW_MAX_DIM = 2000
"""pgvector's HNSW limit for `vector`; above it searches stay exact."""
PG_ONLY = {"embedding_vec", "chunks_vec_missing", HNSW_INDEX, "chunk_fts", "chunk_fts_tsv"}
"""Schema objects that exist only on PostgreSQL (pgvector's; the full-text index of migration 0007),
not in the shared table definitions."""

NO_PGVECTOR = (
    "this PostgreSQL database has no pgvector: DocuBot keeps its vectors in a `vector` column. "
    "Install the extension on the server (package postgresql-NN-pgvector, or a managed PostgreSQL "
    "with pgvector), then as a role that may create it run: CREATE EXTENSION vector; "
    "ALTER TABLE chunks ADD COLUMN embedding_vec vector; "
    "or use `docubot db start` for a local PostgreSQL that has it."
)

_COLUMNS = ", ".join(f'"{name}"' for name in ("id", "text", *METADATA_FIELDS))


def has_pgvector(conn: Connection) -> bool:
    """Whether the migrated `chunks` table has its `embedding_vec` column (pgvector is usable)."""
    rows = _driver_rows(
        conn,
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'chunks' AND column_name = 'embedding_vec'",
        [],
    )
    return bool(rows)


class PgVectorStore(SQLStore):
    """The VectorStore on PostgreSQL + pgvector: exact or HNSW search in SQL. The caller owns `db`."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.hnsw_min_rows = db.settings.pg_hnsw_min_rows
        self.ef_search = db.settings.pg_ef_search
        self.index_memory_mb = db.settings.pg_index_memory_mb
        self.hnsw_m, self.hnsw_ef_construction = db.settings.pg_hnsw_m, db.settings.pg_hnsw_ef_construction
        self._hnsw_dim: int | None = None
        with db.read() as conn:
            if not has_pgvector(conn):
                raise StoreError(NO_PGVECTOR)
        with db.write() as conn:
            _fill_missing_vectors(conn)
            self._ensure_index(conn)

    # -- writes ---------------------------------------------------------------------------------
    def upsert(self, records: Sequence[Record]) -> None:
        with self.db.write() as conn:
            _upsert_with_vectors(conn, records)
            _touch(conn)
            self._ensure_index(conn)

    def apply(self, upserts: Sequence[Record], metadata: Sequence[Record], deletes: Iterable[str]) -> int:
        with self.db.write() as conn:
            _upsert_with_vectors(conn, upserts)
            _update_metadata(conn, metadata)
            _delete(conn, deletes)
            _touch(conn)
            version = _bump_corpus_version(conn)
            self._ensure_index(conn)
            return version

    # -- reads ----------------------------------------------------------------------------------
    def query(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[Hit]:
        wanted = validate_filters(filters)
        if k <= 0:
            return []
        where, params = ["embedding_vec IS NOT NULL"], []
        for name, values in wanted.items():
            where.append(f"COALESCE(CAST(\"{name}\" AS TEXT), '') = ANY(?)")
            params.append(values)
        with self.db.read() as conn:
            dim = self._index_dim(conn)
            column = "embedding_vec" if dim is None else f"(embedding_vec::vector({dim}))"
            cast = "vector" if dim is None else f"vector({dim})"
            if dim is not None:
                conn.exec_driver_sql(f"SET LOCAL hnsw.ef_search = {int(self.ef_search)}")
                if wanted:
                    conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = strict_order")
            sql = (
                f"SELECT {_COLUMNS}, {column} <=> CAST(? AS {cast}) AS distance FROM chunks "
                f"WHERE {' AND '.join(where)} ORDER BY distance LIMIT ?"
            )
            rows = _driver_rows(conn, sql, [vector_text(vector), *params, k])
        return [Hit(row[0], row[1], _metadata_dict(row[2:-1]), 1.0 - float(row[-1])) for row in rows]

    def similarities(self, vector: np.ndarray, ids: Iterable[str]) -> dict[str, float]:
        wanted = list(ids)
        out: dict[str, float] = {}
        query = vector_text(vector)
        with self.db.read() as conn:
            for start in range(0, len(wanted), BATCH):
                rows = _driver_rows(
                    conn,
                    "SELECT id, embedding_vec <=> CAST(? AS vector) FROM chunks "
                    "WHERE id = ANY(?) AND embedding_vec IS NOT NULL",
                    [query, wanted[start : start + BATCH]],
                )
                out.update((chunk_id, 1.0 - float(distance)) for chunk_id, distance in rows)
        return out

    # -- the HNSW index -------------------------------------------------------------------------
    def _index_dim(self, conn: Connection) -> int | None:
        """The dimension the HNSW index casts to, when there is one (else searches are exact).
        Looked up until found, then kept: the index is never dropped."""
        if self._hnsw_dim is None:
            rows = _driver_rows(conn, "SELECT indexdef FROM pg_indexes WHERE indexname = ?", [HNSW_INDEX])
            if rows:
                self._hnsw_dim = int(str(rows[0][0]).split("::vector(", 1)[1].split(")", 1)[0])
        return self._hnsw_dim

    def _ensure_index(self, conn: Connection) -> None:
        """Build the HNSW index once the corpus reaches `hnsw_min_rows` chunks (never dropped; `m` and
        `ef_construction` are those of the settings when it is built)."""
        dim = _meta_value(conn, "embedding_dim")
        if dim is None or int(dim) > HNSW_MAX_DIM or self._index_dim(conn) is not None:
            return
        [(count,)] = _driver_rows(conn, "SELECT count(*) FROM chunks", [])
        if int(count) < self.hnsw_min_rows:
            return
        conn.exec_driver_sql(f"SET LOCAL maintenance_work_mem = '{int(self.index_memory_mb)}MB'")
        conn.exec_driver_sql(
            f"CREATE INDEX {HNSW_INDEX} ON chunks USING hnsw "
            f"((embedding_vec::vector({int(dim)})) vector_cosine_ops) "
            f"WITH (m = {int(self.hnsw_m)}, ef_construction = {int(self.hnsw_ef_construction)})"
        )


def vector_text(vector: np.ndarray) -> str:
    """pgvector's text form; 9 significant digits give back the same float32."""
    return "[" + ",".join(f"{x:.9g}" for x in np.asarray(vector, dtype=np.float32).tolist()) + "]"


def _upsert_with_vectors(conn: Connection, records: Sequence[Record]) -> None:
    _upsert(conn, records)
    _set_vectors(conn, [(r.id, r.vector) for r in records if r.vector is not None])


def _fill_missing_vectors(conn: Connection) -> None:
    """Copy the blob of every row that has no `embedding_vec` yet into it."""
    while rows := _driver_rows(
        conn, "SELECT id, embedding FROM chunks WHERE embedding_vec IS NULL LIMIT ?", [BATCH]
    ):
        _set_vectors(conn, [(chunk_id, np.frombuffer(blob, dtype=np.float32)) for chunk_id, blob in rows])


def _set_vectors(conn: Connection, vectors: Sequence[tuple[str, np.ndarray]]) -> None:
    if not vectors:
        return
    cursor = conn.connection.cursor()
    try:
        cursor.executemany(
            "UPDATE chunks SET embedding_vec = CAST(%s AS vector) WHERE id = %s",
            [(vector_text(vector), chunk_id) for chunk_id, vector in vectors],
        )
    finally:
        cursor.close()
