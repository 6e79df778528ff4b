"""History policies: which past messages are re-sent with each question.

The full history is always kept; a policy only chooses what is sent. Every policy returns whole
user/assistant pairs in chronological order, starting with a user message, so the model always sees
a well-formed conversation. Summaries are context for the system prompt, never fake user turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from docubot.llm import Message
from docubot.rag.retrieve import reciprocal_rank_fusion

TokenCounter = Callable[[str], int]
Summarizer = Callable[[str, Sequence[Message]], str]
"""(previous summary, messages to fold in) → new summary."""
OMITTED_MARKER = "[Missatges anteriors omesos per espai.]"


class PolicyError(ValueError):
    """An unknown or malformed history policy name (for a conversation or a cost simulation)."""


@dataclass
class Selection:
    """What a policy sends: verbatim messages, plus an optional summary and omission note."""

    messages: list[Message]
    summary: str = ""
    omitted: bool = False


@dataclass
class ConversationState:
    """What policies read and (summaries) update: the full history and the running summary."""

    messages: list[Message]
    summary: str = ""
    summarized_turns: int = 0
    """How many of the oldest turns the summary already covers."""

    @property
    def turns(self) -> list[tuple[Message, Message]]:
        return [(self.messages[i], self.messages[i + 1]) for i in range(0, len(self.messages) - 1, 2)]


class HistoryPolicy(Protocol):
    @property
    def name(self) -> str: ...

    def select(self, state: ConversationState, question: str) -> Selection: ...


def _flatten(turns: Sequence[tuple[Message, Message]]) -> list[Message]:
    return [m for pair in turns for m in pair]


class FullPolicy:
    """Everything, every time: cost grows quadratically (prototypes only)."""

    name = "full"

    def select(self, state: ConversationState, question: str) -> Selection:
        return Selection(list(state.messages))


@dataclass
class LastTurnsPolicy:
    """The last `n` complete turns."""

    n: int = 6

    @property
    def name(self) -> str:
        return f"last_turns:{self.n}"

    def select(self, state: ConversationState, question: str) -> Selection:
        turns = state.turns
        return Selection(_flatten(turns[-self.n :]), omitted=len(turns) > self.n)


@dataclass
class SlidingWindowPolicy:
    """A running summary of older turns + the last `n` turns verbatim. When the window overflows,
    the turns leaving it are folded into the summary: one summarizer call per fold, not per turn."""

    summarize: Summarizer
    n: int = 4

    @property
    def name(self) -> str:
        return f"sliding_window:{self.n}"

    def select(self, state: ConversationState, question: str) -> Selection:
        turns = state.turns
        leaving = len(turns) - self.n
        if leaving > state.summarized_turns:
            state.summary = self.summarize(state.summary, _flatten(turns[state.summarized_turns : leaving]))
            state.summarized_turns = leaving
        return Selection(_flatten(turns[max(leaving, 0) :]), summary=state.summary)


@dataclass
class SummaryPolicy:
    """Once more than `threshold` turns are not yet summarized, all but the last `keep` of them are
    compressed into the summary in one call; recent turns stay verbatim. Compared with the sliding
    window it summarizes in batches: fewer calls, a window that breathes between `keep` and
    `threshold` turns."""

    summarize: Summarizer
    threshold: int = 8
    keep: int = 2

    @property
    def name(self) -> str:
        return f"summary:{self.threshold}"

    def select(self, state: ConversationState, question: str) -> Selection:
        turns = state.turns
        if len(turns) - state.summarized_turns > self.threshold:
            cut = len(turns) - self.keep
            state.summary = self.summarize(state.summary, _flatten(turns[state.summarized_turns : cut]))
            state.summarized_turns = cut
        return Selection(_flatten(turns[state.summarized_turns :]), summary=state.summary)


@dataclass(frozen=True)
class TurnScores:
    """Per past turn: a fused relevance score (higher is better) and the embedding similarity."""

    fused: list[float]
    similarity: list[float]


class TurnScorer(Protocol):
    def __call__(self, question: str, turns: Sequence[tuple[Message, Message]]) -> TurnScores: ...


@dataclass
class RelevantPolicy:
    """The last `keep` turns always, plus the most relevant earlier turns (fused ranking) whose
    embedding similarity to the question passes `floor`, at most `k`, in chronological order."""

    score: TurnScorer
    keep: int = 2
    k: int = 3
    floor: float = 0.8

    name = "relevant"

    def select(self, state: ConversationState, question: str) -> Selection:
        turns = state.turns
        older = turns[: -self.keep] if self.keep else turns
        if not older:
            return Selection(_flatten(turns))
        scores = self.score(question, older)
        order = np.argsort(-np.asarray(scores.fused), kind="stable")
        chosen = sorted([int(i) for i in order if scores.similarity[i] >= self.floor][: self.k])
        kept = [older[i] for i in chosen] + turns[len(older) :]
        return Selection(_flatten(kept), omitted=len(chosen) < len(older))


@dataclass
class TokenBudgetPolicy:
    """The last `keep` turns always, then the most relevant earlier turns while they fit `budget`
    tokens, chronological; a marker tells the model that older messages were left out."""

    score: TurnScorer
    count: TokenCounter
    budget: int = 1500
    keep: int = 2

    @property
    def name(self) -> str:
        return f"token_budget:{self.budget}"

    def select(self, state: ConversationState, question: str) -> Selection:
        turns = state.turns
        recent = turns[-self.keep :] if self.keep else []
        older = turns[: len(turns) - len(recent)]
        used = sum(self._size(pair) for pair in recent)
        while recent and used > self.budget:
            used -= self._size(recent[0])
            recent = recent[1:]
            older = turns[: len(turns) - len(recent)]
        chosen: list[int] = []
        if older:
            scores = self.score(question, older)
            for i in np.argsort(-np.asarray(scores.fused), kind="stable"):
                size = self._size(older[int(i)])
                if used + size <= self.budget:
                    chosen.append(int(i))
                    used += size
        kept = [older[i] for i in sorted(chosen)] + list(recent)
        return Selection(_flatten(kept), omitted=len(kept) < len(turns))

    def _size(self, pair: tuple[Message, Message]) -> int:
        return self.count(pair[0].content) + self.count(pair[1].content)


def fused_turn_scorer(
    embed_documents: Callable[[list[str]], np.ndarray],
    embed_query: Callable[[str], np.ndarray],
    tokenize: Callable[[str], list[str]],
) -> TurnScorer:
    """Reciprocal-rank fusion of e5 similarity and BM25 over turns, each turn embedded with its roles
    ("user: …", "assistant: …"), the best measured way to pick past turns (see shared findings)."""
    from bm25s import BM25

    cache: dict[str, np.ndarray] = {}

    def score(question: str, turns: Sequence[tuple[Message, Message]]) -> TurnScores:
        texts = [f"user: {u.content}\nassistant: {a.content}" for u, a in turns]
        missing = [t for t in texts if t not in cache]
        if missing:
            cache.update(zip(missing, embed_documents(missing), strict=True))
        dense = np.array([cache[t] for t in texts]) @ embed_query(question)
        bm25 = BM25()
        bm25.index([tokenize(t) or ["∅"] for t in texts], show_progress=False)
        query = tokenize(question)
        lexical = np.asarray(bm25.get_scores(query)) if query else np.zeros(len(texts))
        order_dense = [str(i) for i in np.argsort(-dense, kind="stable")]
        order_lexical = [str(i) for i in np.argsort(-lexical, kind="stable") if lexical[i] > 0]
        fused = reciprocal_rank_fusion([order_dense, order_lexical], k=5)
        rank = {int(i): r for r, i in enumerate(fused)}
        return TurnScores([1.0 / (1 + rank[i]) for i in range(len(texts))], [float(x) for x in dense])

    return score
