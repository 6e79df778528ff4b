"""The endpoints the web page needs beyond the chat API: example questions, a source's section
text, and renaming a conversation. All behind the same bearer keys.

Annotations here are evaluated when defined (no `from __future__ import annotations`): the routes
are closures over the app's auth dependency, which FastAPI must see as a real `Annotated` type.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BaseModel, Field

from docubot.rag.answer import DocuBot
from docubot.server.examples import example_questions
from docubot.server.rendering import render_markdown
from docubot.server.sources import SectionKey, section_chunks, section_text
from docubot.server.users import User
from docubot.sessions import SessionManager
from docubot.store import VectorStore


class Rename(BaseModel):
    title: str = Field(min_length=1, max_length=1000, pattern=r"\S")


@dataclass(frozen=True)
class CorpusView:
    """What the page derives from the whole index, for one corpus version."""

    version: int
    examples: list[str]
    sections: dict[SectionKey, list[str]]


class CorpusViews:
    """The current `CorpusView`: every chunk's metadata is read once per corpus version."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._view: CorpusView | None = None
        self._lock = threading.Lock()

    def current(self) -> CorpusView:
        version = self.store.corpus_version()
        with self._lock:
            if self._view is None or self._view.version != version:
                metadata = self.store.all_metadata()
                self._view = CorpusView(
                    version, example_questions(metadata.values()), section_chunks(metadata)
                )
            return self._view


def web_router(bot: DocuBot, sessions: SessionManager, current_user: Callable[..., User]) -> APIRouter:
    """`GET /v1/examples`, `GET /v1/sources/text`, `PATCH /v1/sessions/{id}` over the app's bot."""
    router = APIRouter(prefix="/v1", tags=["web page"])
    authenticated = Annotated[User, Depends(current_user)]
    corpus = CorpusViews(bot.store)

    @router.get("/examples")
    def example_list(user: authenticated) -> dict[str, list[str]]:
        """Three questions the docs answer, from the indexed section titles (docs/web.md has the rule)."""
        return {"questions": corpus.current().examples}

    @router.get("/sources/text")
    def source_text(
        user: authenticated,
        url: Annotated[str, Query(min_length=1, max_length=2000)],
        section: Annotated[str, Query(min_length=1, max_length=2000)],
        version: Annotated[str, Query(min_length=1, max_length=200)],
    ) -> dict[str, Any]:
        """One source's section as indexed: its markdown `text` and the rendered `html`."""
        chunk_ids = corpus.current().sections.get((url, section, version), [])
        text = section_text(bot.store, chunk_ids) if chunk_ids else None
        if text is None:
            raise HTTPException(404, f"no indexed section {section!r} of {url} (version {version})")
        return {
            "url": url,
            "section": section,
            "version": version,
            "text": text,
            "html": render_markdown(text),
        }

    @router.patch("/sessions/{session_id}")
    def rename_session(session_id: str, body: Rename, user: authenticated) -> dict[str, Any]:
        """Rename a conversation: `{"title": "…"}`."""
        return sessions.rename(user.name, session_id, body.title).__dict__

    return router
