"""Keyword search in PostgreSQL's full-text engine: the `KeywordSearch` backend for chunks in PostgreSQL
(`DOCUBOT_KEYWORD_INDEX=fulltext`).

Each chunk gets a `tsvector` in `chunk_fts` (migration 0007, GIN index) made with the text-search
configuration of its language (`catalan`, `spanish`, `english`, which PostgreSQL ships), the language
found as the bm25s index finds it (`corpus_languages`: per chunk, the corpus's majority as the prior).
Texts are folded (accents off, as users type) and DocuBot's stopwords dropped in Python before
`to_tsvector`, the same words `docubot.text.tokenize` keeps (PostgreSQL's `catalan` has no stopword
list, and folding in Python needs no `unaccent` extension on a managed server). Questions are
turned into lexemes the same way, in their language, and OR-ed.

Ranking is BM25 (Lucene's idf, k1 1.5, b 0.75, as bm25s), computed in SQL from the term frequencies
the tsvector holds; the filters (version, `latest`, page…) are in the WHERE clause, so a filtered
search never comes back short. The table follows the corpus version: when it moved, the first
search (or `rebuild`) re-indexes every chunk in one transaction under an advisory lock, so every
server sees the new corpus at once and only one of them does the work.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from docubot.db import Database
from docubot.store import VectorStore, validate_filters
from docubot.store.sql import _driver_rows, _meta_value, set_meta
from docubot.text import DEFAULT_LANGUAGE, LANGUAGES, corpus_languages, detect_language, fold, guess_language
from docubot.text import stopwords as stopwords_of

CONFIGURATIONS = {"ca": "catalan", "es": "spanish", "en": "english"}
"""PostgreSQL's text-search configuration for each language DocuBot detects."""
K1, B = 1.5, 0.75
STAMP = "fts_corpus_version"
FTS_LOCK = 0x0D0C_F75
"""Advisory lock serialising re-indexing across processes and machines."""
_FACTS = ("fts_language", "fts_docs", "fts_avg_tokens")


@dataclass(frozen=True)
class _Indexed:
    """What a search needs to know about the indexed corpus."""

    version: int
    language: str
    docs: float
    avg_tokens: float


class FullTextIndex:
    """BM25 over `chunk_fts` in PostgreSQL; the caller owns `db`."""

    def __init__(self, db: Database) -> None:
        if db.is_sqlite:
            raise ValueError("PostgreSQL full-text search needs a PostgreSQL database")
        self.db = db
        self._lock = threading.Lock()
        self._indexed: _Indexed | None = None

    def rebuild(self, store: VectorStore) -> None:
        self._current(store)

    def language(self, store: VectorStore) -> str:
        return self._current(store).language

    def ranking(
        self, store: VectorStore, question: str, filters: dict[str, Any], depth: int
    ) -> list[tuple[str, float]]:
        indexed = self._current(store)
        with self.db.read() as conn:
            lexemes = _query_lexemes(conn, question, indexed.language)
            if not lexemes or indexed.docs == 0:
                return []
            where, params = [], []
            for name, values in validate_filters(filters).items():
                where.append(f"COALESCE(CAST(c.\"{name}\" AS TEXT), '') = ANY(?)")
                params.append(values)
            query = " | ".join(f"'{lexeme}'" for lexeme in lexemes)
            rows = _driver_rows(
                conn,
                _BM25_SQL.format(filters="".join(f" AND {w}" for w in where)),
                [lexemes, query, lexemes, *params, indexed.docs, indexed.avg_tokens, depth],
            )
        return [(str(chunk_id), float(score)) for chunk_id, score in rows]

    # -- keeping up with the corpus -------------------------------------------------------------
    def _current(self, store: VectorStore) -> _Indexed:
        """The index facts of the store's current corpus version, re-indexing first if it moved."""
        version = store.corpus_version()
        indexed = self._indexed
        if indexed is not None and indexed.version == version:
            return indexed
        with self._lock:
            with self.db.read() as conn:
                indexed = _read_facts(conn)
            if indexed is None or indexed.version != version:
                with self.db.write() as conn:
                    indexed = _reindex(conn)
            self._indexed = indexed
            return indexed


def prepared_text(text: str, language: str) -> str:
    """`text` folded, without DocuBot's stopwords of `language`: what goes to `to_tsvector`."""
    words = re.findall(r"\w+", fold(text.replace("·", "")))
    stop = stopwords_of(language)
    return " ".join(w for w in words if w not in stop and (len(w) > 1 or w.isdigit()))


def _read_facts(conn: Connection) -> _Indexed | None:
    stamp = _meta_value(conn, STAMP)
    if stamp is None:
        return None
    language, docs, avg = (_meta_value(conn, key) for key in _FACTS)
    return _Indexed(int(stamp), language or DEFAULT_LANGUAGE, float(docs or 0), float(avg or 1))


def _reindex(conn: Connection) -> _Indexed:
    """Index every chunk again (one transaction; one process at a time), unless another process
    has just done it for the current corpus version."""
    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({FTS_LOCK})")
    version = int(_meta_value(conn, "corpus_version") or 0)
    done = _read_facts(conn)
    if done is not None and done.version == version:
        return done
    rows = _driver_rows(conn, "SELECT id, text FROM chunks ORDER BY id", [])
    languages, majority = corpus_languages([text for _, text in rows], fallback=DEFAULT_LANGUAGE)
    conn.exec_driver_sql("DELETE FROM chunk_fts")
    cursor = conn.connection.cursor()
    try:
        cursor.executemany(
            "INSERT INTO chunk_fts (chunk_id, language, tokens, tsv) "
            "SELECT %s, %s, 0, to_tsvector(CAST(%s AS regconfig), %s)",
            [
                (chunk_id, language, CONFIGURATIONS[language], prepared_text(text, language))
                for (chunk_id, text), language in zip(rows, languages, strict=True)
            ],
        )
    finally:
        cursor.close()
    conn.exec_driver_sql(
        "UPDATE chunk_fts SET tokens = (SELECT COALESCE(SUM(COALESCE(cardinality(positions), 1)), 0) "
        "FROM unnest(tsv))"
    )
    [(docs, avg)] = _driver_rows(conn, "SELECT count(*), COALESCE(avg(tokens), 1) FROM chunk_fts", [])
    indexed = _Indexed(version, majority, float(docs), max(float(avg), 1.0))
    set_meta(
        conn,
        {
            STAMP: str(version),
            "fts_language": majority,
            "fts_docs": str(indexed.docs),
            "fts_avg_tokens": str(indexed.avg_tokens),
        },
    )
    return indexed


def _query_lexemes(conn: Connection, question: str, fallback: str) -> list[str]:
    """The question's lexemes in its language (`fallback`, the corpus's, as the prior); a text too
    short to tell, in every language's (as `docubot.text.query_tokens`)."""
    if guess_language(question) is not None:
        languages: Sequence[str] = [detect_language(question, fallback)]
    else:
        languages = [fallback, *(language for language in LANGUAGES if language != fallback)]
    lexemes: dict[str, None] = {}
    for language in languages:
        rows = _driver_rows(
            conn,
            "SELECT unnest(tsvector_to_array(to_tsvector(CAST(? AS regconfig), ?)))",
            [CONFIGURATIONS[language], prepared_text(question, language)],
        )
        lexemes.update((str(lexeme), None) for (lexeme,) in rows)
    return list(lexemes)


_BM25_SQL = (
    "WITH q(lexeme) AS (SELECT unnest(CAST(? AS text[]))), "
    "df AS (SELECT q.lexeme, (SELECT count(*) FROM chunk_fts f "
    "       WHERE f.tsv @@ CAST(quote_literal(q.lexeme) AS tsquery))::float8 AS df FROM q), "
    "hits AS (SELECT f.chunk_id, f.tokens, t.lexeme, COALESCE(cardinality(t.positions), 1) AS tf "
    "       FROM chunk_fts f JOIN chunks c ON c.id = f.chunk_id, unnest(f.tsv) AS t "
    "       WHERE f.tsv @@ CAST(? AS tsquery) AND t.lexeme = ANY(CAST(? AS text[])){filters}), "
    "stats(n, avg_tokens) AS (SELECT CAST(? AS float8), CAST(? AS float8)) "
    "SELECT h.chunk_id, SUM(ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5)) * h.tf * "
    f"({K1} + 1) / (h.tf + {K1} * (1 - {B} + {B} * h.tokens / s.avg_tokens))) AS score "
    "FROM hits h JOIN df d ON d.lexeme = h.lexeme CROSS JOIN stats s "
    "GROUP BY h.chunk_id ORDER BY score DESC, h.chunk_id LIMIT ?"
)
