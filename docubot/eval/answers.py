"""`docubot eval answers`: the whole answering path on `retrieval.jsonl`, question by question.

Per question: whether the contract validated, whether refusing (or not) was right, whether a gold
url is among `fonts`, which gold facts the answer contains, the groundedness flag, the outcome and
the latency. Slow with a real model (tens of seconds per question on the local one).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from docubot.eval.sets import RetrievalCase
from docubot.rag.answer import AskResult
from docubot.rag.contract import Answer
from docubot.rag.prompt import REFUSAL_TEXT

Ask = Callable[[str], AskResult]
ANSWER_SHARES = (
    "contract_valid",
    "refusals_correct",
    "answerable_answered",
    "unanswerable_refused",
    "sources_correct",
    "facts_found",
)
"""The summary keys that are shares (0..1), plotted in `answers.png`."""


@dataclass(frozen=True)
class AnswerOutcome:
    case: RetrievalCase
    outcome: str
    contract_valid: bool
    refused: bool
    refusal_correct: bool
    source_correct: bool | None
    """A gold url among `fonts` (None for unanswerable questions)."""
    facts_found: int
    grounded: bool | None
    latency_ms: float
    resposta: str


def evaluate_answers(
    cases: Sequence[RetrievalCase], ask: Ask, progress: Callable[[], None] | None = None
) -> list[AnswerOutcome]:
    outcomes = []
    for case in cases:
        result = ask(case.question)
        outcomes.append(_judge(case, result))
        if progress:
            progress()
    return outcomes


def answers_summary(outcomes: Sequence[AnswerOutcome]) -> dict[str, float | int]:
    answerable = [o for o in outcomes if o.case.answerable]
    facts_total = sum(len(o.case.facts) for o in answerable)
    latencies = [o.latency_ms for o in outcomes]
    return {
        "questions": len(outcomes),
        "contract_valid": _share(o.contract_valid for o in outcomes),
        "refusals_correct": _share(o.refusal_correct for o in outcomes),
        "answerable_answered": _share(not o.refused for o in answerable),
        "unanswerable_refused": _share(o.refused for o in outcomes if not o.case.answerable),
        "sources_correct": _share(bool(o.source_correct) for o in answerable if not o.refused),
        "facts_found": round(sum(o.facts_found for o in answerable) / facts_total, 4) if facts_total else 0.0,
        "ungrounded": sum(o.grounded is False for o in outcomes),
        "fallbacks": sum(o.outcome == "fallback" for o in outcomes),
        "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
        "latency_max_ms": round(max(latencies), 1) if latencies else 0.0,
    }


def answers_markdown(outcomes: Sequence[AnswerOutcome], provider: str, title: str) -> str:
    summary = answers_summary(outcomes)
    lines = [f"# {title}", "", f"Provider: {provider}.", "", "| measure | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in summary.items()]
    lines += [
        "",
        "| id | outcome | refusal right | gold source | facts | grounded | ms | answer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        source = "" if o.source_correct is None else ("yes" if o.source_correct else "NO")
        answer = o.resposta.replace("\n", " ").replace("|", "\\|")[:120]
        lines.append(
            f"| {o.case.id} | {o.outcome} | {'yes' if o.refusal_correct else 'NO'} | {source} | "
            f"{o.facts_found}/{len(o.case.facts)} | {o.grounded} | {o.latency_ms:.0f} | {answer} |"
        )
    return "\n".join(lines) + "\n"


def _judge(case: RetrievalCase, result: AskResult) -> AnswerOutcome:
    try:
        Answer.model_validate(result.answer.model_dump())
        valid = True
    except ValidationError:
        valid = False
    refused = result.answer.resposta.strip() == REFUSAL_TEXT
    gold_urls = {g.url for g in case.gold}
    text = result.answer.resposta.casefold()
    return AnswerOutcome(
        case=case,
        outcome=result.outcome,
        contract_valid=valid,
        refused=refused,
        refusal_correct=refused != case.answerable,
        source_correct=bool(gold_urls & set(result.answer.fonts)) if case.answerable else None,
        facts_found=sum(fact.casefold() in text for fact in case.facts),
        grounded=result.grounded,
        latency_ms=result.timings_ms.get("total", 0.0),
        resposta=result.answer.resposta,
    )


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return round(sum(values) / len(values), 4) if values else 0.0
