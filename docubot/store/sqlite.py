"""The embedded default store: one SQLite file (WAL) as the system of record, exact cosine in numpy.

Vectors are float32 blobs in the `chunks` table. Searches run over an in-memory matrix that is
reloaded whenever the database changed, by this connection or by another process
(`PRAGMA data_version`), so every reader sees committed writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from docubot.store.base import (
    METADATA_FIELDS,
    EmbeddingModelMismatch,
    Filters,
    Hit,
    Record,
    StoreError,
    validate_filters,
)


def _column_type(name: str) -> str:
    return "INTEGER" if name in ("chunk_index", "latest") else "TEXT"


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    {", ".join(f"{name} {_column_type(name)}" for name in METADATA_FIELDS)},
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks (content_hash);
"""
_COLUMNS = ("id", "text", *METADATA_FIELDS)


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the data folder's SQLite file, in WAL mode, usable across threads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


@dataclass
class _Matrix:
    ids: list[str]
    vectors: np.ndarray
    columns: dict[str, np.ndarray]
    masks: dict[tuple[str, tuple[str, ...]], np.ndarray] = field(default_factory=dict)

    def mask(self, name: str, values: list[str]) -> np.ndarray:
        """Rows whose `name` is one of `values`; cached, since the same filters come back."""
        key = (name, tuple(sorted(values)))
        if key not in self.masks:
            self.masks[key] = np.isin(self.columns[name], values)
        return self.masks[key]


class SQLiteStore:
    """Chunks, metadata and vectors in one SQLite file; exact top-k over a cached matrix."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        self._conn.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._matrix: _Matrix | None = None
        self._matrix_version: tuple[int, int] | None = None
        self._local_writes = 0

    # -- writes ---------------------------------------------------------------------------------
    def upsert(self, records: Sequence[Record]) -> None:
        rows = []
        for record in records:
            if record.vector is None:
                raise StoreError(f"record {record.id} has no vector")
            vector = np.asarray(record.vector, dtype=np.float32)
            rows.append((record.id, record.text, *_metadata_row(record.metadata), vector.tobytes()))
        placeholders = ", ".join("?" * (len(_COLUMNS) + 1))
        updates = ", ".join(f"{c} = excluded.{c}" for c in (*_COLUMNS[1:], "embedding"))
        with self._write() as conn:
            conn.executemany(
                f"INSERT INTO chunks ({', '.join(_COLUMNS)}, embedding) VALUES ({placeholders}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                rows,
            )

    def update_metadata(self, records: Sequence[Record]) -> None:
        sets = ", ".join(f"{name} = ?" for name in METADATA_FIELDS)
        with self._write() as conn:
            conn.executemany(
                f"UPDATE chunks SET {sets} WHERE id = ?",
                [(*_metadata_row(r.metadata), r.id) for r in records],
            )

    def delete(self, ids: Iterable[str]) -> int:
        id_list = list(ids)
        with self._write() as conn:
            before = conn.total_changes
            conn.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in id_list])
            return conn.total_changes - before

    # -- reads ----------------------------------------------------------------------------------
    def query(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[Hit]:
        wanted = validate_filters(filters)
        matrix = self._current_matrix()
        if not matrix.ids:
            return []
        scores = matrix.vectors @ np.asarray(vector, dtype=np.float32)
        if wanted:
            mask = np.ones(len(matrix.ids), dtype=bool)
            for name, values in wanted.items():
                mask &= matrix.mask(name, values)
            scores = np.where(mask, scores, -np.inf)
            k = min(k, int(mask.sum()))
        k = min(k, len(matrix.ids))
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        records = {r.id: r for r in self.get(matrix.ids[i] for i in top)}
        hits = []
        for i in top:
            record = records.get(matrix.ids[i])
            if record is not None:
                hits.append(Hit(record.id, record.text, record.metadata, float(scores[i])))
        return hits

    def similarities(self, vector: np.ndarray, ids: Iterable[str]) -> dict[str, float]:
        matrix = self._current_matrix()
        rows = {chunk_id: i for i, chunk_id in enumerate(matrix.ids)}
        wanted = [(chunk_id, rows[chunk_id]) for chunk_id in ids if chunk_id in rows]
        if not wanted:
            return {}
        scores = matrix.vectors[[i for _, i in wanted]] @ np.asarray(vector, dtype=np.float32)
        return {chunk_id: float(score) for (chunk_id, _), score in zip(wanted, scores, strict=True)}

    def get(self, ids: Iterable[str]) -> list[Record]:
        id_list = list(ids)
        out: list[Record] = []
        with self._lock:
            for start in range(0, len(id_list), 500):
                part = id_list[start : start + 500]
                rows = self._conn.execute(
                    f"SELECT {', '.join(_COLUMNS)} FROM chunks WHERE id IN ({', '.join('?' * len(part))})",
                    part,
                ).fetchall()
                out.extend(Record(row[0], row[1], _metadata_dict(row[2:])) for row in rows)
        return out

    def all_metadata(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute(f"SELECT id, {', '.join(METADATA_FIELDS)} FROM chunks").fetchall()
        return {row[0]: _metadata_dict(row[1:]) for row in rows}

    def vectors_by_hash(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(set(hashes))
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ", ".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT content_hash, embedding FROM chunks WHERE content_hash IN ({marks})", part
                ).fetchall()
                out.update((h, np.frombuffer(blob, dtype=np.float32)) for h, blob in rows)
        return out

    def list_ids(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._conn.execute("SELECT id FROM chunks")}

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    # -- corpus facts ---------------------------------------------------------------------------
    def check_embedding_model(self, name: str, dim: int) -> None:
        stored = self._get_meta("embedding_model")
        if stored is None:
            with self._write() as conn:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedding_model', ?)", (name,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedding_dim', ?)", (str(dim),))
            return
        stored_dim = self._get_meta("embedding_dim")
        if stored != name or stored_dim != str(dim):
            raise EmbeddingModelMismatch(
                f"this store holds vectors of {stored} (dim {stored_dim}), not {name} (dim {dim}). "
                f"Use the same embedder, or another DOCUBOT_HOME, or re-ingest into an empty store."
            )

    def corpus_version(self) -> int:
        return int(self._get_meta("corpus_version") or 0)

    def bump_corpus_version(self) -> int:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO meta VALUES ('corpus_version', '1') "
                "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
            row = conn.execute("SELECT value FROM meta WHERE key = 'corpus_version'").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- internals ------------------------------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self._local_writes += 1

    def _get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _current_matrix(self) -> _Matrix:
        with self._lock:
            version = (self._conn.execute("PRAGMA data_version").fetchone()[0], self._local_writes)
            if self._matrix is None or version != self._matrix_version:
                self._matrix = self._load_matrix()
                self._matrix_version = version
            return self._matrix

    def _load_matrix(self) -> _Matrix:
        rows = self._conn.execute(
            f"SELECT id, embedding, {', '.join(METADATA_FIELDS)} FROM chunks"
        ).fetchall()
        if not rows:
            return _Matrix([], np.empty((0, 0), dtype=np.float32), {})
        vectors = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
        columns = {
            name: np.array([_filter_text(row[2 + i]) for row in rows], dtype=object)
            for i, name in enumerate(METADATA_FIELDS)
        }
        return _Matrix([row[0] for row in rows], vectors, columns)


def _metadata_row(metadata: dict[str, Any]) -> tuple[Any, ...]:
    row = []
    for name in METADATA_FIELDS:
        value = metadata.get(name)
        row.append(int(value) if isinstance(value, bool) else value)
    return tuple(row)


def _metadata_dict(values: Sequence[Any]) -> dict[str, Any]:
    data = dict(zip(METADATA_FIELDS, values, strict=True))
    data["latest"] = bool(data["latest"]) if data["latest"] is not None else True
    return data


def _filter_text(value: Any) -> str:
    return "" if value is None else str(value)
