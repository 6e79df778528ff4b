"""The parts of a deployment, built once per process from the settings: `Components`.

Whatever answers, searches, evaluates or ingests receives its parts from here instead of building
them: `DocuBot(components)`, `docubot search`, `docubot eval`, the server. Each part is built on
first use and then shared (so `docubot search` never loads the chat model); a caller may hand in
ready-made parts instead (tests: `Components.from_settings(settings, embedder=e5, chat_model=None)`).

Two lists wire the parts to each other explicitly, with no module-level registry:
`user_erasers` (how each store forgets a user: the session manager runs them) and
`corpus_listeners` (what must happen after an ingest changes the corpus: `ingest` calls them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from docubot.cache.answers import AnswerCache, erase_user, evict_stale
from docubot.calllog import CallLog
from docubot.config import Settings
from docubot.db import Database
from docubot.embed import Embedder, make_embedder
from docubot.embed.memo import DocumentVectors
from docubot.llm import ChatModel, make_chat_model
from docubot.rag.keyword import KeywordSearch, open_keyword_index
from docubot.rag.refusal import Refusal
from docubot.rag.retrieve import Retriever, Stage
from docubot.rag.spelling import Spelling
from docubot.rag.synonyms import SynonymsSource
from docubot.rag.threshold import refusal_threshold
from docubot.store import VectorStore, open_store

UserEraser = Callable[[str], int]
"""user → how many rows went."""
CorpusListener = Callable[[int], None]
"""Called with the new corpus version after an ingest changed the store."""

UNSET: Any = object()
"""`chat_model=UNSET`: build the configured chat model (None means no model: extractive answers)."""


class Components:
    """Database, embedder, store, keyword index, retriever, chat model, call log, answer cache,
    refusal threshold and the erasure and corpus-change wiring of one deployment (see the module doc)."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        chat_model: ChatModel | None = UNSET,
        db: Database | None = None,
        stages: Sequence[Stage] = (),
    ) -> None:
        self.settings = settings
        self.stages = list(stages)
        """Post-retrieval stages (reranker, pruner), in order: none by default."""
        given: dict[str, object] = {"embedder": embedder, "store": store, "db": db}
        if chat_model is not UNSET:
            given["chat_model"] = chat_model  # None is a choice: extractive answers
        self._given = {name for name, part in given.items() if part is not None or name == "chat_model"}
        for name in self._given:
            self.__dict__[name] = given[name]  # what cached_property would have built

    @classmethod
    def from_settings(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        chat_model: ChatModel | None = UNSET,
        db: Database | None = None,
        stages: Sequence[Stage] = (),
    ) -> Components:
        """The deployment described by `settings` (default: the environment and config file)."""
        return cls(
            settings or Settings(),
            embedder=embedder,
            store=store,
            chat_model=chat_model,
            db=db,
            stages=stages,
        )

    @cached_property
    def db(self) -> Database:
        """The deployment's database (SQLite file or PostgreSQL), migrated on open."""
        return Database(self.settings)

    @cached_property
    def embedder(self) -> Embedder:
        return make_embedder(self.settings)

    @cached_property
    def passage_vectors(self) -> DocumentVectors:
        """The embeddings of passages scored for extracts and focused context, kept by text."""
        return DocumentVectors(self.embedder)

    @cached_property
    def store(self) -> VectorStore:
        return open_store(self.db)

    @cached_property
    def keyword_index(self) -> KeywordSearch:
        """bm25s (in the data folder on SQLite, in memory on PostgreSQL) or PostgreSQL full text."""
        return open_keyword_index(self.settings, self.store)

    @cached_property
    def retriever(self) -> Retriever:
        return Retriever(
            self.embedder,
            self.store,
            self.keyword_index,
            mode=self.settings.retrieval_mode,
            top_k=self.settings.top_k,
            fusion=self.settings.fusion,
            dense_weight=self.settings.fusion_dense_weight,
            rrf_k=self.settings.rrf_k,
            stages=self.stages,
            synonyms=SynonymsSource(self.db, self.settings.synonyms),
            spelling=Spelling(),
        )

    @cached_property
    def chat_model(self) -> ChatModel | None:
        """The configured chat model; None for the `none` provider (extractive answers)."""
        return make_chat_model(self.settings)

    @cached_property
    def call_log(self) -> CallLog:
        return CallLog(self.db)

    @cached_property
    def cache(self) -> AnswerCache | None:
        """The answer caches, or None when they are turned off."""
        return AnswerCache(self.settings, self.embedder, self.db) if self.settings.cache_enabled else None

    @cached_property
    def threshold(self) -> float:
        """The refusal floor for this embedding model."""
        return refusal_threshold(self.settings, self.embedder.name, self.db)

    @cached_property
    def refusal(self) -> Refusal:
        """The refusal decision before any LLM call: the combined model, or the threshold alone."""
        return Refusal(self.settings, self.embedder.name, self.threshold, self.db)

    @cached_property
    def user_erasers(self) -> dict[str, UserEraser]:
        """How each store besides the sessions forgets a user, by the name its count is reported under."""
        return {
            "call_log": self.call_log.delete_user,
            "cached_answers": lambda user: erase_user(self.db, user),
        }

    @cached_property
    def corpus_listeners(self) -> list[CorpusListener]:
        """What follows a corpus change: cached answers of older corpus versions are deleted (they
        could never be served again: entries are keyed by the corpus version)."""
        return [lambda version: _evict(self.db, version)]

    def close(self) -> None:
        """Close the store and the database if they were opened here (not handed in)."""
        for name in ("store", "db"):
            if name not in self._given and name in self.__dict__:
                self.__dict__.pop(name).close()


def _evict(db: Database, version: int) -> None:
    evict_stale(db, version)
