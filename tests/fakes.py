"""A scripted chat model for control-flow tests (retries, parsing, fallbacks) — never proof of answering."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from docubot.llm import ChatRequest, ProviderError, StreamEvent, Usage
from docubot.text import loose_stems


def grounded_reply(content: str, prefix: str = "Resposta a") -> str:
    """An evidence-first reply that passes DocuBot's checks: of the fragments sharing the most words
    with the question, the most relevant (shown last), it quotes the first line (its list items when
    it has no prose line) that shares a word with the question (else its first line) and answers
    "<prefix>: <question> <quote>", so a test can still tell which question an answer belongs to."""
    question = content.rsplit("Pregunta: ", 1)[-1].split("\n")[0]
    block = content.split("<documentacio>\n", 1)[-1].split("\n</documentacio>", 1)[0]
    bodies = [part.split("\n", 1)[-1] for part in block.split("\n---\n")]
    shared = [len(loose_stems(body) & loose_stems(question)) for body in bodies]
    chosen = max(range(len(bodies)), key=lambda i: (shared[i], i))
    lines = [line.strip() for line in bodies[chosen].splitlines() if line.strip()]
    prose = [line for line in lines if not line.startswith(("#", "|", "`", "-", "*"))]
    items = [line.lstrip("-* ") for line in lines if line.startswith(("- ", "* "))]
    candidates = prose or items  # a fragment that is all list items: its items
    on_topic = [line for line in candidates if loose_stems(line) & loose_stems(question)]
    quote = next(iter(on_topic or candidates), "")[:200]
    return json.dumps(
        {
            "evidencia": [{"fragment": chosen + 1, "cita": quote}],
            "resposta": f"{prefix}: {question} {quote}",
            "confianca": "alta",
        }
    )


class ScriptedModel:
    """Plays back one step per call: a reply text (streamed in small pieces), a function of the
    request returning one, or an exception to raise."""

    name = "fake/scripted"

    def __init__(
        self, steps: list[str | Exception | Callable[[ChatRequest], str]], context_window: int = 4096
    ) -> None:
        self.steps = list(steps)
        self.requests: list[ChatRequest] = []
        self.context_window = context_window

    @property
    def calls(self) -> int:
        return len(self.requests)

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        if not self.steps:
            raise ProviderError("script exhausted")
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if callable(step):
            step = step(request)
        for start in range(0, len(step), 7):
            yield StreamEvent(text=step[start : start + 7])
        yield StreamEvent(usage=Usage(self.count_tokens(request.system), self.count_tokens(step)))


class ConversationModel(ScriptedModel):
    """Answers each kind of request the conversation layer makes: rewrites, summaries, answers.

    Rewrites return `rewrites[question]` (or the question), summaries a fixed text, answers a valid
    contract citing the last (most relevant) fragment and echoing the question. Every request is kept.
    """

    def __init__(self, rewrites: dict[str, str] | None = None, context_window: int = 4096) -> None:
        super().__init__([], context_window)
        self.rewrites = rewrites or {}
        self.summaries = 0
        self.rewrite_calls = 0
        self.fail_next: Exception | None = None

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            self.requests.append(request)
            raise error
        self.steps = [self._reply(request)]
        return super().stream(request)

    def _reply(self, request: ChatRequest) -> str:
        import json

        if request.system.startswith("Reescriu"):
            self.rewrite_calls += 1
            question = request.messages[-1].content.rsplit("Última pregunta: ", 1)[-1].split("\n")[0]
            return json.dumps({"pregunta": self.rewrites.get(question, question)})
        if request.system.startswith("Resumeix"):
            self.summaries += 1
            return f"Resum {self.summaries}: l'usuari té el pla Business i el projecte Gavina."
        return grounded_reply(request.messages[-1].content)
