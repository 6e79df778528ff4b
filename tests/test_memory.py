"""Long-conversation memory: per-message scoring, dates, and per-message vectors and token counts
persisted with the turns (SQLite and PostgreSQL), on the real embedder."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, insert, select, update

from docubot.chat import lexical
from docubot.chat.dates import named_days
from docubot.chat.lexical import MessageAnalyzer, bm25_scores, term_counts
from docubot.chat.memory import MessageMemory
from docubot.chat.policies import ANSWER_OMITTED, ConversationState, FusedMessageScorer, TokenBudgetPolicy
from docubot.config import Settings
from docubot.embed.base import normalise
from docubot.embed.e5 import E5Embedder
from docubot.llm import Message
from docubot.rag.answer import DocuBot
from docubot.sessions import SessionManager
from docubot.sessions.tables import session_turn_vectors, session_turns, sessions
from docubot.text import tokenize
from tests.corpus_fixtures import with_sample_corpus

SET = Path(__file__).parents[1] / "evals" / "memory" / "conversations.json"
DAY = 86400.0


class RecordingEmbedder:
    """The real embedder, recording every text it embeds or counts; with `remember`, document
    vectors are kept by text (to build long histories fast)."""

    def __init__(self, inner: E5Embedder, remember: bool = False) -> None:
        self._inner, self._remember = inner, remember
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self.documents: list[str] = []
        self.queries: list[str] = []
        self.counted: list[str] = []
        self._vectors: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents.extend(texts)
        if not self._remember:
            return self._inner.embed_documents(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(zip(missing, self._inner.embed_documents(missing), strict=True))
        return np.array([self._vectors[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self._inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return self._inner.count_tokens(text)


@pytest.fixture(params=["sqlite", "postgres"])
def db_settings(request, sample_settings: Settings, tmp_path) -> Settings:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    return with_sample_corpus(sample_settings, url)


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_questions_name_days_in_catalan_spanish_and_english() -> None:
    now = datetime(2026, 12, 1, 10, tzinfo=UTC).timestamp()
    day = datetime(2026, 11, 30, tzinfo=UTC).date()
    assert named_days("Què et vaig dir ahir?", now) == (day, day)
    assert named_days("¿Qué te dije ayer?", now) == (day, day)
    assert named_days("What did I say on November 3?", now)[0].day == 3  # type: ignore[index]
    assert named_days("I el 14 de març?", now)[0].isoformat() == "2026-03-14"  # type: ignore[index]
    assert named_days("What did I do last week?", now)[0].isoformat() == "2026-11-23"  # type: ignore[index]
    assert named_days("May I export a project to CSV?", now) is None
    assert named_days("Com exporto un projecte?", now) is None


def test_a_question_naming_a_day_gets_that_days_messages_dated(embedder) -> None:
    """Before: dates lived nowhere; "yesterday" could not favour yesterday's turn."""
    now = datetime(2026, 12, 1, 10, tzinfo=UTC).timestamp()
    said = [
        ("I adopted a dog called Pirata.", now - 20 * DAY),
        ("How do I export a project to CSV?", now - 9 * DAY),
        ("My sister is moving to Dublin.", now - 1 * DAY),
        ("How long does an API token last?", now - 2 * DAY),
        ("Can I sync deadlines with Outlook?", now - 0.1 * DAY),
        ("Is there a limit on attachment size?", now - 0.05 * DAY),
    ]
    messages = [m for text, _ in said for m in (Message("user", text), Message("assistant", "Entesos."))]
    state = ConversationState(messages, times=[at for _, at in said], now=now)
    scorer = FusedMessageScorer(embedder.embed_documents, embedder.embed_query, MessageAnalyzer("en"), "e5")
    policy = TokenBudgetPolicy(scorer, embedder.count_tokens, budget=120, tokenizer="e5", whole_turns=0)
    sent = [m.content for m in policy.select(state, "What did I tell you yesterday?").messages]
    assert "[2026-11-30] My sister is moving to Dublin." in sent
    assert not any("Pirata" in s for s in sent)
    assert all(s.startswith("[2026-") or s == ANSWER_OMITTED for s in sent)


def test_per_message_scoring_and_dates_keep_the_evidence_of_a_long_conversation(embedder) -> None:
    """The synthetic set's holdout conversation c3 (not LoCoMo) at a 2,000-token budget. Before (pairs,
    no dates): date questions kept 3 of 7 evidence messages."""
    conversation = next(c for c in json.loads(SET.read_text())["conversations"] if c["id"] == "c3")
    scorer = FusedMessageScorer(embedder.embed_documents, embedder.embed_query, MessageAnalyzer("en"), "e5")
    policy = TokenBudgetPolicy(scorer, embedder.count_tokens, budget=2000, tokenizer="e5")
    memory = MessageMemory()
    kept: dict[str, list[bool]] = {}
    for question in conversation["questions"]:
        asked = _epoch(question["asked_at"])
        turns = [t for t in conversation["turns"] if _epoch(t["at"]) < asked]
        messages = [Message(r, t[r]) for t in turns for r in ("user", "assistant")]  # type: ignore[arg-type]
        state = ConversationState(messages, times=[_epoch(t["at"]) for t in turns], now=asked, memory=memory)
        sent = [m.content for m in policy.select(state, question["question"]).messages]
        used = sum(embedder.count_tokens(s) for s in sent)
        assert used <= 2000
        wanted = [conversation["turns"][e["turn"] - 1]["user"] for e in question["evidence"]]
        kept.setdefault(question["kind"], []).append(all(any(s.endswith(w) for s in sent) for w in wanted))
    assert all(kept["date"]) and all(kept["single"])
    assert sum(kept["multi"]) >= len(kept["multi"]) - 1


def test_message_bm25_scores_equal_a_rebuilt_bm25s_index() -> None:
    """The selection scores messages from term counts kept per message instead of rebuilding a
    bm25s index over the whole history on every question (most of its time at 700 turns)."""
    from bm25s import BM25

    conversation = json.loads(SET.read_text())["conversations"][0]
    tokenize = MessageAnalyzer("en")
    texts = [t[r] for t in conversation["turns"] for r in ("user", "assistant")] + ["", "?"]
    index = BM25()
    index.index([tokenize(t) or ["∅"] for t in texts], show_progress=False)
    documents = [term_counts(tokenize(t)) for t in texts]
    questions = [q["question"] for q in conversation["questions"]] + ["export export CSV", "zzzz"]
    stored = [lexical.loads(lexical.dumps(d)) for d in documents]  # as the session store keeps them
    for question in questions:
        query = tokenize(question)
        assert np.array_equal(bm25_scores(documents, query), index.get_scores(query)), question
        assert np.array_equal(bm25_scores(stored, query), index.get_scores(query)), question
    assert not bm25_scores(documents, []).any()


def test_a_question_is_embedded_on_one_thread_with_the_same_vector(embedder) -> None:
    """Two OpenMP threads made the question's embedding wait seconds beside another job."""
    engine = embedder._model._lib
    before = engine.omp_get_max_threads()
    question = "Com exporto un informe a PDF?"
    assert np.array_equal(embedder.embed_query(question), normalise(embedder._model.query(question)))
    assert engine.omp_get_max_threads() == before


def _long_session(settings: Settings, embedder: RecordingEmbedder, user: str, pairs: int) -> str:
    """A session of `pairs` turns: all but the last written straight into the tables, then one real
    turn (which computes and stores every message's vector and token count)."""
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    manager = SessionManager(settings, bot, bot.db)
    info = manager.create(user, policy="token_budget:2000")
    topics = ["exportar a CSV", "convidar membres", "factures en PDF", "tokens de l'API", "Slack"]
    start = time.time() - pairs * 3600
    with bot.db.write() as conn:
        conn.execute(
            insert(session_turns),
            [
                {
                    "session_id": info.id,
                    "turn": n + 1,
                    "question": f"Pregunta {n % 10} sobre {topics[n % 5]}",
                    "answer": json.dumps({"resposta": f"Resposta {n % 7} sobre {topics[n % 5]}"}),
                    "created_at": start + n * 3600,
                }
                for n in range(pairs - 1)
            ],
        )
        conn.execute(update(sessions).where(sessions.c.id == info.id).values(turns=pairs - 1))
    manager.send(user, info.id, "Com restableixo la contrasenya?")
    return info.id


def test_a_restored_long_session_embeds_counts_and_tokenises_only_the_new_turn(
    db_settings, embedder, monkeypatch
) -> None:
    """Before: a new process re-embedded every turn on its first call (≈ 34 s for 355 pairs), and
    BM25-tokenised every message of the history again (0.74 s for 1,272 messages)."""
    user = f"anna-{uuid.uuid4().hex[:8]}"
    session_id = _long_session(db_settings, RecordingEmbedder(embedder, remember=True), user, 350)
    tokenised: list[str] = []

    def recording_tokenize(text: str, language: str) -> list[str]:
        tokenised.append(text)
        return tokenize(text, language)

    monkeypatch.setattr(lexical, "tokenize", recording_tokenize)
    restarted = RecordingEmbedder(embedder)
    bot = DocuBot(db_settings, embedder=restarted, chat_model=None)
    with bot.db.write() as conn:  # vectors of another (older) model are recomputed, not misread
        conn.execute(
            update(session_turn_vectors)
            .where(session_turn_vectors.c.session_id == session_id, session_turn_vectors.c.turn <= 3)
            .values(embedding_model="old/model")
        )
        conn.execute(  # and terms of an older analyzer, or none (rows stored before they were kept)
            update(session_turn_vectors)
            .where(session_turn_vectors.c.session_id == session_id, session_turn_vectors.c.turn == 4)
            .values(analyzer="tokens-0/ca")
        )
        conn.execute(
            update(session_turn_vectors)
            .where(session_turn_vectors.c.session_id == session_id, session_turn_vectors.c.turn == 5)
            .values(analyzer=None, terms=None)
        )
    manager = SessionManager(db_settings, bot, bot.db)
    question = "Com exporto un informe a PDF?"
    result = manager.send(user, session_id, question)
    turns = manager.turns(user, session_id)
    old = {text for t in turns[:3] for text in (t.question, t.answer["resposta"])}
    history = {text for t in turns[:-1] for text in (t.question, t.answer["resposta"])}
    embedded = [d for d in restarted.documents if d in history or d == question]  # not the extract's passages
    assert set(embedded) == old | {question} and len(embedded) == 6 + 1
    assert result.answer.resposta in restarted.documents
    assert set(restarted.queries) == {question}
    questions = {t.question for t in turns[:-1]}
    assert not questions & set(restarted.counted)  # no message of the history counted again
    retokenised = [
        m for t in manager.turns(user, session_id)[3:5] for m in (t.question, t.answer["resposta"])
    ]
    assert sorted(tokenised) == sorted([question, question, result.answer.resposta, *retokenised])
    with bot.db.read() as conn:
        stored = conn.execute(
            select(func.count())
            .select_from(session_turn_vectors)
            .where(
                session_turn_vectors.c.session_id == session_id,
                session_turn_vectors.c.embedding_model == embedder.name,
                session_turn_vectors.c.tokens.is_not(None),
                session_turn_vectors.c.analyzer == MessageAnalyzer("ca").name,
                session_turn_vectors.c.terms.is_not(None),
            )
        ).scalar_one()
    assert stored == 2 * 351
    manager.delete(user, session_id)
    with bot.db.read() as conn:
        left = conn.execute(
            select(func.count())
            .select_from(session_turn_vectors)
            .where(session_turn_vectors.c.session_id == session_id)
        ).scalar_one()
    assert left == 0
