"""History policies: which past messages are re-sent with each question.

The full history is always kept; a policy only chooses what is sent. Every policy returns
user/assistant pairs in chronological order, starting with a user message, so the model always sees
a well-formed conversation (a user message kept without its answer gets a placeholder answer).
Summaries are context for the system prompt, never fake user turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from docubot.chat.dates import DayRange, day_of, named_days, render
from docubot.chat.lexical import MessageAnalyzer, TermCounts, bm25_scores, term_counts
from docubot.chat.memory import MessageMemory
from docubot.llm import Message
from docubot.rag.retrieve import reciprocal_rank_fusion

TokenCounter = Callable[[str], int]
Summarizer = Callable[[str, Sequence[Message]], str]
"""(previous summary, messages to fold in) → new summary."""
OMITTED_MARKER = "[Missatges anteriors omesos per espai.]"
ANSWER_OMITTED = "[Resposta omesa per espai.]"
NARROW_DAYS = 31
"""A question naming at most this many days brings the messages said on them first."""
"""The answer sent after a user message kept alone (the pair did not fit)."""


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
    times: list[float] = field(default_factory=list)
    """When each turn was asked (epoch seconds), one per complete turn; empty when unknown."""
    now: float | None = None
    """When the question being answered was asked (None: undated)."""
    memory: MessageMemory = field(default_factory=MessageMemory)
    """Per-message vectors and token counts, reused across turns (and persisted by sessions)."""

    @property
    def turns(self) -> list[tuple[Message, Message]]:
        return [(self.messages[i], self.messages[i + 1]) for i in range(0, len(self.messages) - 1, 2)]

    def turn_time(self, turn: int) -> float | None:
        """When turn `turn` (0-based) was asked, if known."""
        return self.times[turn] if len(self.times) == len(self.messages) // 2 else None

    def spans_days(self) -> bool:
        """The history and the question do not all fall on one day: messages are shown dated."""
        if self.now is None or len(self.times) != len(self.messages) // 2 or not self.times:
            return False
        return day_of(self.times[0]) != day_of(self.now)


class HistoryPolicy(Protocol):
    @property
    def name(self) -> str: ...

    def select(self, state: ConversationState, question: str) -> Selection: ...

    def remember(self, state: ConversationState) -> None:
        """After a turn: compute what later selections need of its messages (nothing, for most)."""
        ...


class _Forgetful:
    """Policies that need nothing of past messages but the messages."""

    def remember(self, state: ConversationState) -> None:
        return None


def _flatten(turns: Sequence[tuple[Message, Message]]) -> list[Message]:
    return [m for pair in turns for m in pair]


class FullPolicy(_Forgetful):
    """Everything, every time: cost grows quadratically (prototypes only)."""

    name = "full"

    def select(self, state: ConversationState, question: str) -> Selection:
        return Selection(list(state.messages))


@dataclass
class LastTurnsPolicy(_Forgetful):
    """The last `n` complete turns."""

    n: int = 6

    @property
    def name(self) -> str:
        return f"last_turns:{self.n}"

    def select(self, state: ConversationState, question: str) -> Selection:
        turns = state.turns
        return Selection(_flatten(turns[-self.n :]), omitted=len(turns) > self.n)


@dataclass
class SlidingWindowPolicy(_Forgetful):
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
class SummaryPolicy(_Forgetful):
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
class MessageScores:
    """Per scored unit (a message, or a pair in the pair-scoring baseline): a fused relevance score
    (higher is better) and the embedding similarity to the question."""

    fused: list[float]
    similarity: list[float]


Unit = tuple[int, ...]
"""Positions in the history scored as one text: (i,) a message, (i, i + 1) a user/assistant pair."""


class MessageScorer(Protocol):
    def __call__(self, question: str, state: ConversationState, units: Sequence[Unit]) -> MessageScores: ...

    def remember(self, state: ConversationState) -> None:
        """Embed every message of `state` that has no vector yet (into `state.memory`)."""
        ...


def _units(turns: Sequence[int], per_message: bool) -> list[Unit]:
    """The units to score for the 0-based turn numbers `turns`."""
    if per_message:
        return [(2 * t + r,) for t in turns for r in (0, 1)]
    return [(2 * t, 2 * t + 1) for t in turns]


def _render(state: ConversationState, turn: int, dated: bool, user_only: bool = False) -> list[Message]:
    """Turn `turn` as sent: dated when the history spans days; the answer replaced by a placeholder
    when only the user message is kept."""
    user, answer = state.messages[2 * turn], state.messages[2 * turn + 1]
    at = state.turn_time(turn)
    if dated and at is not None:
        user = Message("user", f"{render(at)} {user.content}")
        answer = Message("assistant", f"{render(at)} {answer.content}")
    return [user, Message("assistant", ANSWER_OMITTED) if user_only else answer]


@dataclass
class RelevantPolicy:
    """The last `keep` turns always, plus the turns of the most relevant earlier messages (fused
    ranking, each message scored on its own) whose embedding similarity to the question passes
    `floor`, at most `k` turns, in chronological order. `per_message=False` scores whole pairs (the
    measured baseline)."""

    score: MessageScorer
    keep: int = 2
    k: int = 3
    floor: float = 0.8
    per_message: bool = True

    name = "relevant"

    def select(self, state: ConversationState, question: str) -> Selection:
        total = len(state.messages) // 2
        older = max(total - self.keep, 0)
        chosen: list[int] = []
        if older:
            units = _units(range(older), self.per_message)
            scores = self.score(question, state, units)
            for i in np.argsort(-np.asarray(scores.fused), kind="stable"):
                turn = units[int(i)][0] // 2
                if len(chosen) < self.k and scores.similarity[i] >= self.floor and turn not in chosen:
                    chosen.append(turn)
        dated = state.spans_days()
        kept = sorted(chosen) + list(range(older, total))
        return Selection([m for t in kept for m in _render(state, t, dated)], omitted=len(chosen) < older)

    def remember(self, state: ConversationState) -> None:
        self.score.remember(state)


@dataclass
class TokenBudgetPolicy:
    """The last `keep` turns always (while they fit), then earlier messages by relevance while they
    fit `budget` tokens, chronological; a marker tells the model that older messages were left out.

    Each message is scored on its own (`per_message`), so an unrelated partner message does not
    dilute a relevant one. The best `whole_turns` user-ranked turns, and the turn of any ranked
    assistant message, go whole when they fit; other relevant user messages go alone with a
    placeholder answer, and get their answers back if budget is left at the end. An assistant
    message is never sent alone: an answer without its question is ambiguous, and the documentation
    it restates comes back through retrieval anyway, while the user's own words exist only in the
    history. A message identical to one already chosen is skipped. Token counts (dates included
    when shown) are counted once per message and reused (`state.memory`). `per_message=False`
    scores whole pairs (the measured baseline)."""

    score: MessageScorer
    count: TokenCounter
    budget: int = 1500
    keep: int = 2
    tokenizer: str = ""
    """Names `count`: cached counts of another tokenizer are recounted."""
    per_message: bool = True
    whole_turns: int = 3
    """How many of the best user-ranked turns are sent whole before user messages go alone."""
    _fixed: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Token counts of the texts every selection adds (a date, the placeholder answer)."""

    @property
    def name(self) -> str:
        return f"token_budget:{self.budget}"

    def select(self, state: ConversationState, question: str) -> Selection:
        total = len(state.messages) // 2
        dated = state.spans_days()
        sizes = _Sizes(self, state, dated)
        recent = list(range(max(total - self.keep, 0), total))
        used = sum(sizes.turn(t) for t in recent)
        while recent and used > self.budget:
            used -= sizes.turn(recent.pop(0))
        older = total - len(recent)
        whole: set[int] = set()
        alone: set[int] = set()
        if older:
            units = _units(range(older), self.per_message)
            scores = self.score(question, state, units)
            ranked = [units[int(i)] for i in np.argsort(-np.asarray(scores.fused), kind="stable")]
            sent: set[str] = set()
            for unit in ranked:
                turn, by_user = unit[0] // 2, len(unit) == 1 and unit[0] % 2 == 0
                text = _unit_text(state, unit)
                if turn in whole or text in sent:  # a repeated message (a stock reply) adds nothing
                    continue
                sent.add(text)
                if not by_user or len(whole) < self.whole_turns:
                    extra = sizes.turn(turn) - (sizes.alone(turn) if turn in alone else 0)
                    if used + extra <= self.budget:
                        whole.add(turn)
                        alone.discard(turn)
                        used += extra
                        continue
                if by_user and turn not in alone and used + sizes.alone(turn) <= self.budget:
                    alone.add(turn)
                    used += sizes.alone(turn)
            for turn in dict.fromkeys(u[0] // 2 for u in ranked if u[0] // 2 in alone):
                extra = sizes.turn(turn) - sizes.alone(turn)
                if used + extra <= self.budget:  # budget left: relevant user messages get their answers
                    whole.add(turn)
                    alone.discard(turn)
                    used += extra
        kept = sorted(whole | alone) + recent
        messages = [m for t in kept for m in _render(state, t, dated, user_only=t in alone)]
        return Selection(messages, omitted=len(whole) < older)

    def remember(self, state: ConversationState) -> None:
        self.score.remember(state)
        sizes = _Sizes(self, state, dated=False)
        for position in range(len(state.messages)):
            sizes.message(position)

    def fixed_tokens(self, text: str) -> int:
        """The token count of a text every selection may add, counted once per policy."""
        if text not in self._fixed:
            self._fixed[text] = self.count(text)
        return self._fixed[text]


class _Sizes:
    """Token sizes of turns as the budget policy would send them, from the memory's cached counts."""

    def __init__(self, policy: TokenBudgetPolicy, state: ConversationState, dated: bool) -> None:
        self.policy, self.state = policy, state
        self.date_tokens = policy.fixed_tokens(render(0.0)) if dated else 0
        self.placeholder = policy.fixed_tokens(ANSWER_OMITTED)

    def message(self, position: int) -> int:
        text = self.state.messages[position].content
        size = self.state.memory.tokens(position, text, self.policy.tokenizer, self.policy.count)
        return size + self.date_tokens

    def turn(self, turn: int) -> int:
        return self.message(2 * turn) + self.message(2 * turn + 1)

    def alone(self, turn: int) -> int:
        return self.message(2 * turn) + self.placeholder


class FusedMessageScorer:
    """Reciprocal-rank fusion of e5 similarity and BM25 over the units, plus (`use_dates`), when the
    question names days, a third ranking of the units said on those days; units said on a named
    span of at most `NARROW_DAYS` days come first. A message's vector comes from `state.memory`
    (embedded once, persisted by sessions); a pair unit (the baseline) is embedded as role-prefixed
    lines, remembered by text. A message's BM25 term counts come from `state.memory` too (tokenised
    once under the analyzer's name, persisted by sessions; a pair's are kept by text): a question tokenises
    only itself and scores only its own terms (`docubot/chat/lexical.py`)."""

    def __init__(
        self,
        embed_documents: Callable[[list[str]], np.ndarray],
        embed_query: Callable[[str], np.ndarray],
        analyzer: MessageAnalyzer,
        embedding_model: str,
        use_dates: bool = True,
    ) -> None:
        self.embed_documents, self.embed_query, self.analyzer = embed_documents, embed_query, analyzer
        self.embedding_model, self.use_dates = embedding_model, use_dates
        self._pairs: dict[str, np.ndarray] = {}
        self._terms: dict[str, TermCounts] = {}

    def remember(self, state: ConversationState) -> None:
        positions = list(range(len(state.messages)))
        texts = [m.content for m in state.messages]
        state.memory.vectors(positions, texts, self.embedding_model, self.embed_documents)
        for position, text in zip(positions, texts, strict=True):
            state.memory.terms(position, text, self.analyzer.name, self.analyzer)

    def __call__(self, question: str, state: ConversationState, units: Sequence[Unit]) -> MessageScores:
        texts = [_unit_text(state, u) for u in units]
        dense = self._vectors(state, units, texts) @ self.embed_query(question)
        terms = [self._terms_of(state, u, t) for u, t in zip(units, texts, strict=True)]
        lexical = bm25_scores(terms, self.analyzer(question))
        order_dense = [str(i) for i in np.argsort(-dense, kind="stable")]
        rankings = [order_dense, [str(i) for i in np.argsort(-lexical, kind="stable") if lexical[i] > 0]]
        days = named_days(question, state.now) if self.use_dates and state.now is not None else None
        said = [i for i in order_dense if _said_in(state, units[int(i)], days)] if days else []
        if said:
            rankings.append(said)
        fused = reciprocal_rank_fusion(rankings, k=5)
        if days and said and (days[1] - days[0]).days < NARROW_DAYS:
            on_days = set(said)
            fused = [i for i in fused if i in on_days] + [i for i in fused if i not in on_days]
        rank = {int(i): r for r, i in enumerate(fused)}
        return MessageScores([1.0 / (1 + rank[i]) for i in range(len(texts))], [float(x) for x in dense])

    def _terms_of(self, state: ConversationState, unit: Unit, text: str) -> TermCounts:
        """A unit's BM25 term counts: a message's from the memory, a pair's tokenised once per text."""
        if len(unit) == 1:
            return state.memory.terms(unit[0], text, self.analyzer.name, self.analyzer)
        terms = self._terms.get(text)
        if terms is None:
            terms = self._terms[text] = term_counts(self.analyzer(text))
        return terms

    def _vectors(self, state: ConversationState, units: Sequence[Unit], texts: list[str]) -> np.ndarray:
        if all(len(u) == 1 for u in units):
            positions = [u[0] for u in units]
            return state.memory.vectors(positions, texts, self.embedding_model, self.embed_documents)
        missing = [t for t in texts if t not in self._pairs]
        if missing:
            self._pairs.update(zip(missing, self.embed_documents(missing), strict=True))
        return np.array([self._pairs[t] for t in texts])


def _unit_text(state: ConversationState, unit: Unit) -> str:
    if len(unit) == 1:
        return state.messages[unit[0]].content
    return "\n".join(f"{state.messages[p].role}: {state.messages[p].content}" for p in unit)


def _said_in(state: ConversationState, unit: Unit, days: DayRange) -> bool:
    at = state.turn_time(unit[0] // 2)
    return at is not None and days[0] <= day_of(at) <= days[1]
