"""A conversation with DocuBot: history re-sent each turn under a policy, follow-ups rewritten.

The system prompt travels apart from the history, so no policy can truncate it. Retrieval runs
per turn on the (rewritten) question; the documentation belongs to its turn and is never carried
into later ones. A turn that fails leaves the history exactly as it was: it always alternates
user/assistant and starts with a user message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from docubot.chat.lexical import MessageAnalyzer
from docubot.chat.policies import (
    OMITTED_MARKER,
    ConversationState,
    FullPolicy,
    FusedMessageScorer,
    HistoryPolicy,
    LastTurnsPolicy,
    MessageScorer,
    PolicyError,
    RelevantPolicy,
    SlidingWindowPolicy,
    SummaryPolicy,
    TokenBudgetPolicy,
)
from docubot.chat.profile import UserProfile
from docubot.chat.rewrite import needs_rewrite, rewrite_with_model, rewrite_without_model
from docubot.chat.summarize import model_summarizer, rule_summarizer
from docubot.llm import ChatModel, ChatRequest, Message, ProviderError, StreamEvent, Usage
from docubot.rag.answer import AskResult, DocuBot, TurnContext

DEFAULT_POLICY = "sliding_window:4"


@dataclass
class TurnUsage:
    """One line of the usage ledger: every model call a turn made (rewrite, summary, answer)."""

    turn: int
    policy: str
    input_tokens: int
    output_tokens: int
    calls: int
    latency_ms: float
    outcome: str
    rewrite: str | None = None


class _Meter:
    """Wraps the chat model and adds up the usage of every call made through it: the conversation's
    own accounting, passed to each `ask`; the shared bot is never changed."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.name = model.name
        self.context_window = model.context_window
        self.usage = Usage()
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        self.calls += 1
        for event in self.model.stream(request):
            if event.usage is not None:
                self.usage.input_tokens += event.usage.input_tokens
                self.usage.output_tokens += event.usage.output_tokens
            yield event

    def reset(self) -> None:
        self.usage = Usage()
        self.calls = 0


@dataclass
class Conversation:
    """One user's conversation. `send` answers a message and keeps the history balanced."""

    bot: DocuBot
    policy_name: str = DEFAULT_POLICY
    state: ConversationState = field(default_factory=lambda: ConversationState([]))
    profile: UserProfile = field(default_factory=UserProfile)
    ledger: list[TurnUsage] = field(default_factory=list)
    last_sent_messages: list[dict[str, str]] = field(default_factory=list)
    last_result: AskResult | None = None
    user: str | None = None
    """The authenticated owner (sessions); recorded with every call and scopes cached answers."""
    session_id: str | None = None

    def __post_init__(self) -> None:
        self._meter = _Meter(self.bot.chat_model) if self.bot.chat_model else None
        self.policy = make_policy(self.policy_name, self.bot, self._meter)

    @property
    def messages(self) -> list[Message]:
        return list(self.state.messages)

    def set_policy(self, name: str) -> None:
        self.policy = make_policy(name, self.bot, self._meter)
        self.policy_name = name

    def reset(self) -> None:
        self.state = ConversationState([])
        self.profile = UserProfile()
        self.ledger.clear()
        self.last_sent_messages = []

    def send(
        self,
        text: str,
        on_text: Callable[[str], None] | None = None,
        on_status: Callable[[str], None] | None = None,
    ) -> AskResult:
        """Answer `text` in the context of the conversation; on any failure nothing is kept."""
        started = time.perf_counter()
        asked_at = time.time()
        if self._meter:
            self._meter.reset()
        self.state.messages.append(Message("user", text))
        try:
            result, rewrite = self._answer(text, asked_at, on_text, on_status)
        except BaseException:
            self.state.messages.pop()
            raise
        self.state.messages.append(Message("assistant", result.answer.resposta))
        if len(self.state.times) == len(self.state.messages) // 2 - 1:
            self.state.times.append(asked_at)
        self.policy.remember(self.state)
        self.profile.observe(text)
        self.last_result = result
        self.last_sent_messages = _sent(result)
        usage = self._meter.usage if self._meter else Usage()
        self.ledger.append(
            TurnUsage(
                turn=len(self.state.messages) // 2,
                policy=self.policy.name,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                calls=self._meter.calls if self._meter else 0,
                latency_ms=round((time.perf_counter() - started) * 1000, 1),
                outcome=result.outcome,
                rewrite=rewrite,
            )
        )
        return result

    def totals(self) -> dict[str, int]:
        return {
            "turns": len(self.ledger),
            "input_tokens": sum(t.input_tokens for t in self.ledger),
            "output_tokens": sum(t.output_tokens for t in self.ledger),
            "calls": sum(t.calls for t in self.ledger),
        }

    def _answer(
        self,
        text: str,
        asked_at: float,
        on_text: Callable[[str], None] | None,
        on_status: Callable[[str], None] | None,
    ) -> tuple[AskResult, str | None]:
        state = self.state
        past = ConversationState(
            state.messages[:-1], state.summary, state.summarized_turns, state.times, asked_at, state.memory
        )
        rewrite = None
        if needs_rewrite(text, past.messages):
            rewrite = self.rewrite(text, past.messages)
            if on_status:
                on_status(f"standalone question: {rewrite}")
        selection = self.policy.select(past, text)
        self.state.summary, self.state.summarized_turns = past.summary, past.summarized_turns
        extra = [self.profile.render()]
        if selection.summary:
            extra.append(f"Resum de la conversa anterior:\n{selection.summary}")
        if selection.omitted:
            extra.append(OMITTED_MARKER)
        context = TurnContext(
            history=tuple(selection.messages),
            system_extra="\n\n".join(e for e in extra if e),
            retrieval_question=rewrite,
            user=self.user,
            session_id=self.session_id,
        )
        result = self.bot.ask(
            text, on_text=on_text, on_status=on_status, context=context, chat_model=self._meter
        )
        return result, rewrite

    def rewrite(self, text: str, history: list[Message]) -> str:
        """The standalone question: by the model, by rule when there is none or it fails."""
        if self._meter is not None:
            try:
                quoted = self.bot.answers_from_extract(self._meter)  # answers that are the docs' passages
                return rewrite_with_model(self._meter, text, history, with_answers=not quoted)
            except ProviderError:
                pass
        return rewrite_without_model(text, history)


def make_policy(name: str, bot: DocuBot, model: ChatModel | None) -> HistoryPolicy:
    """A policy from its name: full, last_turns:N, summary:N, sliding_window:N, relevant, token_budget:N."""
    kind, _, arg = name.partition(":")
    try:
        number = int(arg) if arg else None
    except ValueError as exc:
        raise PolicyError(f"policy {name!r}: {arg!r} is not a number") from exc
    if number is not None and number < 1:
        raise PolicyError(f"policy {name!r}: the number must be at least 1")
    summarize = model_summarizer(model) if model is not None else rule_summarizer

    def scorer() -> MessageScorer:
        analyzer = MessageAnalyzer(bot.keyword_index.language(bot.store))
        embedder = bot.embedder
        return FusedMessageScorer(embedder.embed_documents, embedder.embed_query, analyzer, embedder.name)

    count = model.count_tokens if model is not None else bot.embedder.count_tokens
    tokenizer = model.name if model is not None else bot.embedder.name
    builders: dict[str, Callable[[], HistoryPolicy]] = {
        "full": FullPolicy,
        "last_turns": lambda: LastTurnsPolicy(number or 6),
        "summary": lambda: SummaryPolicy(summarize, threshold=number or 8),
        "sliding_window": lambda: SlidingWindowPolicy(summarize, number or 4),
        "relevant": lambda: RelevantPolicy(scorer(), k=number or 3),
        "token_budget": lambda: TokenBudgetPolicy(
            scorer(), count, budget=number or 1500, tokenizer=tokenizer
        ),
    }
    if kind not in builders:
        raise PolicyError(
            f"unknown policy {name!r}; known: {', '.join(sorted(builders))} (e.g. last_turns:6)"
        )
    return builders[kind]()


def _sent(result: AskResult) -> list[dict[str, str]]:
    """The request the model saw, as role/content pairs (empty when it was not called)."""
    if result.request is None:
        return []
    request = result.request
    return [{"role": "system", "content": request.system}] + [
        {"role": m.role, "content": m.content} for m in request.messages
    ]
