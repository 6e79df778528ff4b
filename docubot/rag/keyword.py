"""Keyword (BM25) search over the stored chunks, for Catalan, Spanish and English.

Tokens come from `docubot.text.tokenize`, each chunk and question in its own language, the corpus's
majority language (computed at index time, stored with the index) weighing as the prior for what a
short text does not settle. The index (bm25s) lives in
`<home>/bm25/`, stamped with the corpus version it was built from: ingest rebuilds it after every
change, and a reader whose index is not of the store's current corpus version (a crash between the
chunks and the rebuild, another process's ingest) reloads or rebuilds it before searching, so the
index can never lag the chunks. It is also stamped with `TOKENS_VERSION`: an index tokenized
otherwise (an upgrade changed the stopwords or stemming) is built again on first search.

When the chunks live in PostgreSQL, no index is written to the data folder: each process builds it
in memory from the database's chunks, again whenever the corpus version moves, so any number of
servers share one corpus and keep nothing local (`open_keyword_index`). PostgreSQL's own full-text
search is the other backend there (`docubot/rag/fulltext.py`, `DOCUBOT_KEYWORD_INDEX=fulltext`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from filelock import FileLock

from docubot.config import Settings
from docubot.store import VectorStore, validate_filters_for
from docubot.text import DEFAULT_LANGUAGE, TOKENS_VERSION, corpus_languages, query_tokens, tokenize
from docubot.text.edits import OneEditIndex


@dataclass
class _Loaded:
    """An index in memory: the corpus version it was built from, its chunk ids in row order, and the
    corpus's majority language."""

    version: int
    retriever: Any
    ids: list[str]
    language: str

    @cached_property
    def typo_index(self) -> OneEditIndex:
        """Every vocabulary term of `FUZZY_MIN_CHARS`+ letters, found by a typo of it."""
        vocabulary = getattr(self.retriever, "vocab_dict", {})
        return OneEditIndex(t for t in vocabulary if len(t) >= FUZZY_MIN_CHARS and t.isalpha())

    def near_terms(self, token: str) -> list[str]:
        """Vocabulary terms one edit (insert, delete, substitute, swap) away from `token`."""
        return self.typo_index.near(token)


class KeywordSearch(Protocol):
    """What the retriever needs of a keyword backend (bm25s here, PostgreSQL full text)."""

    def rebuild(self, store: VectorStore) -> None:
        """Catch up with the store's chunks after a change (ingest, page removal)."""
        ...

    def ranking(
        self, store: VectorStore, question: str, filters: dict[str, Any], depth: int
    ) -> list[tuple[str, float]]:
        """(chunk id, score) of the chunks matching `filters` that share a term with `question`,
        best first, at most `depth`."""
        ...

    def language(self, store: VectorStore) -> str:
        """The majority language of the indexed chunks."""
        ...


def open_keyword_index(settings: Settings, store: VectorStore) -> KeywordSearch:
    """The keyword backend for `store`: bm25s in `<home>/bm25/` on SQLite (or Chroma); on PostgreSQL
    bm25s in memory, or PostgreSQL's full-text search with `DOCUBOT_KEYWORD_INDEX=fulltext`."""
    db = getattr(store, "db", None)
    if db is None or db.is_sqlite:
        if settings.keyword_index == "fulltext":
            raise ValueError("DOCUBOT_KEYWORD_INDEX=fulltext needs the chunks in PostgreSQL")
        return KeywordIndex(settings.keyword_index_dir)
    if settings.keyword_index == "fulltext":
        from docubot.rag.fulltext import FullTextIndex

        return FullTextIndex(db)
    return KeywordIndex(None)


class KeywordIndex:
    """BM25 over every stored chunk; searched unfiltered, then filtered.

    On disk, `folder/` holds versioned index folders and `current.json`, which names the one in use
    with its corpus version. A rebuild writes a fresh folder (never one a reader may be loading),
    then swaps the pointer atomically; old folders are removed after. Any number of processes and
    threads may rebuild and search at once. With `folder=None` the index lives in this process's
    memory only, built from the store when first searched and whenever its corpus version moved.
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    def rebuild(self, store: VectorStore) -> None:
        """Index the store's current chunks and publish the index with the store's corpus version
        (in memory: forget the index; the next search builds it)."""
        with self._lock:
            self._loaded = self._build(store) if self.folder is not None else None

    def ranking(
        self, store: VectorStore, question: str, filters: dict[str, Any], depth: int
    ) -> list[tuple[str, float]]:
        """BM25 (id, score) pairs matching the filters, best first, at most `depth` of them."""
        ordered = sorted(self.scores(store, question).items(), key=lambda item: -item[1])
        if not filters:
            return ordered[:depth]
        wanted = validate_filters_for(filters)
        out: list[tuple[str, float]] = []
        for start in range(0, len(ordered), depth * 2):
            batch = ordered[start : start + depth * 2]
            metadata = {r.id: r.metadata for r in store.get(chunk_id for chunk_id, _ in batch)}
            out += [(i, s) for i, s in batch if i in metadata and wanted(metadata[i])]
            if len(out) >= depth:
                break
        return out[:depth]

    def scores(self, store: VectorStore, question: str) -> dict[str, float]:
        """id → BM25 score for every chunk sharing a token with `question` (score > 0)."""
        index = self._current(store)
        if not index.ids:
            return {}
        tokens = query_tokens(question, fallback=index.language)
        if not tokens:
            return {}
        raw = np.asarray(index.retriever.get_scores(tokens)) + _typo_scores(index, tokens)
        return {index.ids[i]: float(raw[i]) for i in np.flatnonzero(raw > 0)}

    def language(self, store: VectorStore) -> str:
        """The majority language of the indexed chunks: the prior for a text that does not settle it."""
        return self._current(store).language

    def _current(self, store: VectorStore) -> _Loaded:
        """The index of the store's current corpus version: in memory, published, or built now."""
        version = store.corpus_version()
        loaded = self._loaded
        if loaded is not None and loaded.version == version:
            return loaded
        with self._lock:
            loaded = self._loaded
            if loaded is None or loaded.version != version:
                published = self._load_published(self.folder) if self.folder is not None else None
                loaded = published if published and published.version == version else self._build(store)
                self._loaded = loaded
            return loaded

    def _build(self, store: VectorStore) -> _Loaded:
        import bm25s

        version = store.corpus_version()  # read before the chunks: the index is never older than its stamp
        ids = sorted(store.list_ids())
        records = {r.id: r.text for r in store.get(ids)}
        texts = [records[i] for i in ids]
        languages, majority = corpus_languages(texts, fallback=DEFAULT_LANGUAGE)
        retriever = bm25s.BM25()
        if ids:
            tokens = [tokenize(t, lang) or ["∅"] for t, lang in zip(texts, languages, strict=True)]
            retriever.index(tokens, show_progress=False)
        if self.folder is None:
            return _Loaded(version, retriever, ids, majority)
        self.folder.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix=_BUILDING, dir=self.folder))
        if ids:
            retriever.save(str(build), show_progress=False)
        stamp = {
            "corpus_version": version,
            "ids": ids,
            "language": majority,
            "tokens": TOKENS_VERSION,
        }
        (build / _IDS).write_text(json.dumps(stamp))
        self._publish(self.folder, build, version, store)
        return _Loaded(version, retriever, ids, majority)

    def _publish(self, folder: Path, build: Path, version: int, store: VectorStore) -> None:
        """Point `current.json` at `build` unless a newer index of the store's version is already
        there (a slower, older rebuild never replaces it); then remove every other index folder."""
        with FileLock(folder / _LOCK):
            pointer = _read_pointer(folder)
            latest = store.corpus_version()
            if pointer and pointer["corpus_version"] == latest != version:
                shutil.rmtree(build, ignore_errors=True)
                return
            final = build.with_name(_PUBLISHED + build.name.removeprefix(_BUILDING))
            build.rename(final)
            tmp = folder / f"{_POINTER}.{final.name}"
            tmp.write_text(json.dumps({"folder": final.name, "corpus_version": version}))
            os.replace(tmp, folder / _POINTER)
            _remove_all_but(folder, final.name)

    def _load_published(self, folder: Path) -> _Loaded | None:
        """The published index; read twice at most (a rebuild may remove it mid-read); None if absent."""
        for _ in range(2):
            try:
                return self._load_pointed(folder)
            except (OSError, ValueError, KeyError):
                continue
        return None

    def _load_pointed(self, folder: Path) -> _Loaded | None:
        import bm25s

        pointer = _read_pointer(folder)
        if pointer is None:
            return None
        published = folder / str(pointer["folder"])
        meta = json.loads((published / _IDS).read_text())
        if "language" not in meta or meta.get("tokens") != TOKENS_VERSION:
            return None  # made before the text layer, or by another tokenizer: built again
        ids = list(meta["ids"])
        retriever = bm25s.BM25.load(str(published), mmap=True, show_progress=False) if ids else bm25s.BM25()
        return _Loaded(int(meta["corpus_version"]), retriever, ids, str(meta["language"]))


def _typo_scores(index: _Loaded, tokens: list[str]) -> np.ndarray | float:
    """For each query token missing from the vocabulary (a typo, most often), the best BM25 score of
    the vocabulary terms one edit away, weighted down by `FUZZY_WEIGHT`."""
    vocabulary = getattr(index.retriever, "vocab_dict", {})
    total: np.ndarray | float = 0.0
    for token in tokens:
        if token in vocabulary or len(token) < FUZZY_MIN_CHARS or not token.isalpha():
            continue
        near = index.near_terms(token)
        if near:
            best = np.max([np.asarray(index.retriever.get_scores([t])) for t in near], axis=0)
            total = total + FUZZY_WEIGHT * best
    return total


FUZZY_MIN_CHARS = 4
"""Query tokens (stemmed) this long or longer that the index lacks are matched one edit away."""
FUZZY_WEIGHT = 0.5
"""A near term scores at this share of an exact match."""

_POINTER = "current.json"
_LOCK = "publish.lock"
_IDS = "ids.json"
_BUILDING = "building-"
_PUBLISHED = "index-"
ABANDONED_BUILD_SECONDS = 3600
"""A build folder untouched for this long belongs to a rebuild that crashed; it is removed."""


def _read_pointer(folder: Path) -> dict[str, Any] | None:
    try:
        pointer = json.loads((folder / _POINTER).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return pointer if isinstance(pointer, dict) else None


def _remove_all_but(folder: Path, keep: str) -> None:
    """Remove old index folders, files of the older single-folder layout and abandoned builds;
    builds still in progress (recent `building-*`) are left alone."""
    cutoff = time.time() - ABANDONED_BUILD_SECONDS
    for entry in folder.iterdir():
        if entry.name in (keep, _POINTER, _LOCK):
            continue
        if entry.name.startswith(_BUILDING) and entry.stat().st_mtime > cutoff:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
