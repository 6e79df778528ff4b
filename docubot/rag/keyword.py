"""Keyword (BM25) search over the stored chunks, for Catalan, Spanish and English.

Tokens come from `docubot.text.tokenize`, each chunk in its own language; a chunk or a question
whose language the detector cannot tell gets the corpus's majority language, computed at index
time. The index (bm25s) lives in `<home>/bm25/`, stamped with the corpus version it was built from
and that majority language: ingest rebuilds it after every change, and a reader that finds a stale
or missing index rebuilds it from the store, so the two can never drift apart.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np

from docubot.store import VectorStore
from docubot.text import DEFAULT_LANGUAGE, corpus_languages, detect_language, tokenize


class KeywordIndex:
    """BM25 over every stored chunk; searched unfiltered, filtered by the caller."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._loaded: tuple[int, object, list[str], str] | None = None

    def rebuild(self, store: VectorStore) -> None:
        """Index the store's current chunks and save the index with the store's corpus version and
        majority language."""
        import bm25s

        version = store.corpus_version()
        ids = sorted(store.list_ids())
        records = {r.id: r.text for r in store.get(ids)}
        texts = [records[i] for i in ids]
        languages, majority = corpus_languages(texts, fallback=DEFAULT_LANGUAGE)
        retriever = bm25s.BM25()
        if ids:
            tokens = [tokenize(t, lang) or ["∅"] for t, lang in zip(texts, languages, strict=True)]
            retriever.index(tokens, show_progress=False)
        tmp = self.folder.with_name(self.folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if ids:
            retriever.save(str(tmp), show_progress=False)
        stamp = {"corpus_version": version, "ids": ids, "language": majority}
        (tmp / "ids.json").write_text(json.dumps(stamp))
        shutil.rmtree(self.folder, ignore_errors=True)
        tmp.rename(self.folder)
        with self._lock:
            self._loaded = (version, retriever, ids, majority)

    def scores(self, store: VectorStore, question: str) -> dict[str, float]:
        """id → BM25 score for every chunk sharing a token with `question` (score > 0)."""
        _, retriever, ids, majority = self._current(store)
        if not ids:
            return {}
        tokens = tokenize(question, detect_language(question, fallback=majority))
        if not tokens:
            return {}
        raw = np.asarray(retriever.get_scores(tokens))  # type: ignore[attr-defined]
        return {ids[i]: float(raw[i]) for i in np.flatnonzero(raw > 0)}

    def language(self, store: VectorStore) -> str:
        """The majority language of the indexed chunks: what a text that does not tell is taken for."""
        return self._current(store)[3]

    def _current(self, store: VectorStore) -> tuple[int, object, list[str], str]:
        version = store.corpus_version()
        with self._lock:
            if self._loaded is not None and self._loaded[0] == version:
                return self._loaded
            loaded = self._load()
            if loaded is not None and loaded[0] == version:
                self._loaded = loaded
                return loaded
        self.rebuild(store)
        assert self._loaded is not None
        return self._loaded

    def _load(self) -> tuple[int, object, list[str], str] | None:
        import bm25s

        try:
            meta = json.loads((self.folder / "ids.json").read_text())
        except (OSError, json.JSONDecodeError):
            return None
        if "language" not in meta:  # made by an older tokenizer: rebuild
            return None
        ids = list(meta["ids"])
        retriever = bm25s.BM25.load(str(self.folder), mmap=True, show_progress=False) if ids else bm25s.BM25()
        return int(meta["corpus_version"]), retriever, ids, str(meta["language"])
