"""Keyword (BM25) search over the stored chunks, for Catalan, Spanish and English.

Tokens are lowercased words with accents folded (users often type without them), minus the
language's stopwords, reduced by its Snowball stemmer (PyStemmer). The index (bm25s) lives in
`<home>/bm25/`, stamped with the corpus version it was built from: ingest rebuilds it after every
change, and a reader that finds a stale or missing index rebuilds it from the store, so the two
can never drift apart.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from docubot.rag.text import detect_language, fold
from docubot.store import VectorStore

_STEMMER_NAMES = {"ca": "catalan", "es": "spanish", "en": "english"}
_CATALAN_STOPWORDS = """
a al als amb an aquell aquella aquelles aquells aquest aquesta aquestes aquests aqui així això com d
de del dels des dins el els en entre era es és està estan et ha han hi i jo la les li lo ma me mes
més meu meva molt n ne no o on per però pel pels perquè pot puc pots que què qui s sa se seu seva
seus seves si sí sense sobre son són sota també te teu teva tinc tot tota totes tots u un una unes
uns va vaig vos""".split()


@lru_cache(maxsize=1)
def _stopwords() -> dict[str, frozenset[str]]:
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_SPANISH

    return {
        "ca": frozenset(fold(w) for w in _CATALAN_STOPWORDS),
        "es": frozenset(fold(w) for w in STOPWORDS_SPANISH),
        "en": frozenset(fold(w) for w in STOPWORDS_EN),
    }


@lru_cache(maxsize=3)
def _stemmer(language: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(_STEMMER_NAMES[language])


def tokenize(text: str, language: str | None = None) -> list[str]:
    """Search tokens of `text`, in its language (detected when not given)."""
    language = language or detect_language(text)
    words = re.findall(r"\w+", fold(text.replace("·", "")))
    stop = _stopwords()[language]
    kept = [w for w in words if w not in stop and (len(w) > 1 or w.isdigit())]
    return _stemmer(language).stemWords(kept)


class KeywordIndex:
    """BM25 over every stored chunk; searched unfiltered, filtered by the caller."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._loaded: tuple[int, object, list[str]] | None = None

    def rebuild(self, store: VectorStore) -> None:
        """Index the store's current chunks and save the index with the store's corpus version."""
        import bm25s

        version = store.corpus_version()
        ids = sorted(store.list_ids())
        records = {r.id: r.text for r in store.get(ids)}
        retriever = bm25s.BM25()
        if ids:
            retriever.index([tokenize(records[i]) or ["∅"] for i in ids], show_progress=False)
        tmp = self.folder.with_name(self.folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if ids:
            retriever.save(str(tmp), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps({"corpus_version": version, "ids": ids}))
        shutil.rmtree(self.folder, ignore_errors=True)
        tmp.rename(self.folder)
        with self._lock:
            self._loaded = (version, retriever, ids)

    def scores(self, store: VectorStore, question: str) -> dict[str, float]:
        """id → BM25 score for every chunk sharing a token with `question` (score > 0)."""
        _, retriever, ids = self._current(store)
        if not ids:
            return {}
        tokens = tokenize(question)
        if not tokens:
            return {}
        raw = np.asarray(retriever.get_scores(tokens))  # type: ignore[attr-defined]
        return {ids[i]: float(raw[i]) for i in np.flatnonzero(raw > 0)}

    def _current(self, store: VectorStore) -> tuple[int, object, list[str]]:
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

    def _load(self) -> tuple[int, object, list[str]] | None:
        import bm25s

        try:
            meta = json.loads((self.folder / "ids.json").read_text())
        except (OSError, json.JSONDecodeError):
            return None
        ids = list(meta["ids"])
        retriever = bm25s.BM25.load(str(self.folder), mmap=True, show_progress=False) if ids else bm25s.BM25()
        return int(meta["corpus_version"]), retriever, ids
