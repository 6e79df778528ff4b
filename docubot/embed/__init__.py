"""Embedding models behind one interface; `make_embedder` picks one from the settings."""

from __future__ import annotations

from docubot.config import Settings
from docubot.embed.base import Embedder, normalise

__all__ = ["Embedder", "make_embedder", "normalise"]


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from docubot.embed.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.embed_model,
            settings.embed_base_url,
            settings.embed_api_key,
            query_prefix=settings.embed_query_prefix,
            passage_prefix=settings.embed_passage_prefix,
            send_input_type=settings.embed_send_input_type,
        )
    from docubot.embed.e5 import E5Embedder

    return E5Embedder(threads=settings.threads)
