"""`docubot eval answers`: the whole answering path, question by question.

On `answers.jsonl` when the set has one (else `retrieval.jsonl`). Per question: whether the
contract validated, whether refusing (or not) was right, whether a gold url is among `fonts`,
which gold facts the answer states (`a|b`: any alternative; whole words, accents, case and
markdown ignored), whether a `forbidden` value (a plausible wrong one) appears, whether the
answer is in the question's language, the outcome, time to first token and total latency.
"Fully correct": every fact stated and nothing forbidden. Slow with a real model (tens of
seconds per question on the local one): `--sample N` takes N questions spread over the set.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from docubot.eval.sets import EvalSetError, Gold, RetrievalCase, load_retrieval_set, read_jsonl
from docubot.rag.answer import AskResult
from docubot.rag.contract import Answer
from docubot.rag.prompt import REFUSAL_TEXT
from docubot.rag.question import EMPTY_QUESTION_TEXT
from docubot.text import language_probabilities

Ask = Callable[[str], AskResult]
ANSWER_SHARES = (
    "contract_valid",
    "refusals_correct",
    "answerable_answered",
    "unanswerable_refused",
    "sources_correct",
    "facts_found",
    "fully_correct",
    "forbidden_absent",
    "language_right",
)
"""The summary keys that are shares (0..1), plotted in `answers.png`."""


@dataclass(frozen=True)
class AnswerCase:
    """One labelled question of `answers.jsonl` (or `retrieval.jsonl`, with no forbidden values)."""

    id: str
    question: str
    lang: str
    answerable: bool
    gold: tuple[Gold, ...]
    facts: tuple[str, ...]
    forbidden: tuple[str, ...] = ()
    kind: str = ""
    split: str = ""


def load_answer_cases(folder: Path) -> list[AnswerCase]:
    """`answers.jsonl` when the set has one, else the questions of `retrieval.jsonl`."""
    if not (folder / "answers.jsonl").exists():
        return [_from_retrieval(c) for c in load_retrieval_set(folder)]
    cases = []
    for number, data in read_jsonl(folder / "answers.jsonl"):
        try:
            cases.append(
                AnswerCase(
                    id=str(data["id"]),
                    question=str(data["question"]),
                    lang=str(data.get("lang", "")),
                    answerable=bool(data["answerable"]),
                    gold=tuple(Gold(g["url"], g["section"]) for g in data.get("gold", [])),
                    facts=tuple(data.get("facts", [])),
                    forbidden=tuple(data.get("forbidden", [])),
                    kind=str(data.get("kind", "")),
                    split=str(data.get("split", "")),
                )
            )
        except (KeyError, TypeError) as exc:
            raise EvalSetError(f"answers.jsonl line {number}: missing or bad field {exc}") from exc
    return cases


def sample(cases: Sequence[AnswerCase], n: int | None) -> list[AnswerCase]:
    """`n` cases spread evenly over the set (every kind and language gets its turn), or all."""
    if n is None or n >= len(cases):
        return list(cases)
    step = len(cases) / n
    return [cases[int(i * step)] for i in range(n)]


def _from_retrieval(case: RetrievalCase) -> AnswerCase:
    return AnswerCase(
        case.id, case.question, case.lang, case.answerable, case.gold, case.facts, (), case.kind
    )


@dataclass(frozen=True)
class AnswerOutcome:
    case: AnswerCase
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
    forbidden_found: tuple[str, ...] = ()
    language_right: bool | None = None
    """The answer is in the question's language (None: refused, or no language labelled)."""
    first_token_ms: float | None = None

    @property
    def fully_correct(self) -> bool:
        return not self.refused and self.facts_found == len(self.case.facts) and not self.forbidden_found


def evaluate_answers(
    cases: Sequence[AnswerCase | RetrievalCase], ask: Ask, progress: Callable[[], None] | None = None
) -> list[AnswerOutcome]:
    outcomes = []
    for item in cases:
        case = _from_retrieval(item) if isinstance(item, RetrievalCase) else item
        result = ask(case.question)
        outcomes.append(_judge(case, result))
        if progress:
            progress()
    return outcomes


def answers_summary(outcomes: Sequence[AnswerOutcome]) -> dict[str, float | int | None]:
    answerable = [o for o in outcomes if o.case.answerable]
    facts_total = sum(len(o.case.facts) for o in answerable)
    latencies = [o.latency_ms for o in outcomes]
    first_tokens = [o.first_token_ms for o in outcomes if o.first_token_ms is not None]
    near_topic = [o for o in outcomes if o.case.kind.replace("-", "_") == "near_topic"]
    return {
        "questions": len(outcomes),
        "contract_valid": _share(o.contract_valid for o in outcomes),
        "refusals_correct": _share(o.refusal_correct for o in outcomes),
        "answerable_answered": _share(not o.refused for o in answerable),
        "unanswerable_refused": _share(o.refused for o in outcomes if not o.case.answerable),
        "sources_correct": _share(bool(o.source_correct) for o in answerable if not o.refused),
        "facts_found": round(sum(o.facts_found for o in answerable) / facts_total, 4) if facts_total else 0.0,
        "fully_correct": _share(o.fully_correct for o in answerable),
        "forbidden_absent": _share(not o.forbidden_found for o in answerable),
        "language_right": _share(bool(o.language_right) for o in answerable if o.language_right is not None),
        "near_topic_refused": _share(o.refused for o in near_topic),
        "ungrounded": sum(o.grounded is False for o in outcomes),
        "fallbacks": sum(o.outcome == "fallback" for o in outcomes),
        "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
        "first_token_p50_ms": round(statistics.median(first_tokens), 1) if first_tokens else None,
        "latency_max_ms": round(max(latencies), 1) if latencies else 0.0,
    }


def split_summaries(outcomes: Sequence[AnswerOutcome]) -> dict[str, dict[str, float | int | None]]:
    """`answers_summary` of each split of the set (`tune`, `holdout`), when it has splits."""
    splits = sorted({o.case.split for o in outcomes if o.case.split}, key=lambda s: (s != "tune", s))
    return {split: answers_summary([o for o in outcomes if o.case.split == split]) for split in splits}


def language_summaries(outcomes: Sequence[AnswerOutcome]) -> dict[str, dict[str, float | int | None]]:
    """`answers_summary` of the questions asked in each language, when they are asked in several:
    an answer translated back from the docs' language, and its time to first token, differ by
    the language asked."""
    languages = sorted({o.case.lang for o in outcomes if o.case.lang})
    if len(languages) < 2:
        return {}
    return {lang: answers_summary([o for o in outcomes if o.case.lang == lang]) for lang in languages}


def flat_summary(outcomes: Sequence[AnswerOutcome]) -> dict[str, float | int | None]:
    """The summary, then each split's under `<split>.` (`holdout.fully_correct`) and each
    language's under `lang.<code>.` (`lang.en.first_token_p50_ms`): the `--json` keys."""
    flat = answers_summary(outcomes)
    for split, summary in split_summaries(outcomes).items():
        flat.update({f"{split}.{name}": value for name, value in summary.items()})
    for lang, summary in language_summaries(outcomes).items():
        flat.update({f"lang.{lang}.{name}": value for name, value in summary.items()})
    return flat


def answers_markdown(outcomes: Sequence[AnswerOutcome], provider: str, title: str) -> str:
    summary = answers_summary(outcomes)
    languages = language_summaries(outcomes)
    parts = split_summaries(outcomes) | {f"asked in {lang}": values for lang, values in languages.items()}
    lines = [f"# {title}", "", f"Provider: {provider}.", ""]
    lines += ["| measure | all |" + "".join(f" {p} |" for p in parts), "|---|---|" + "---|" * len(parts)]
    lines += [
        f"| {name} | {value} |" + "".join(f" {parts[p][name]} |" for p in parts)
        for name, value in summary.items()
    ]
    lines += [
        "",
        "| id | outcome | refusal right | gold source | facts | forbidden | language | ms | answer |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        source = "" if o.source_correct is None else ("yes" if o.source_correct else "NO")
        language = "" if o.language_right is None else ("yes" if o.language_right else "NO")
        answer = o.resposta.replace("\n", " ").replace("|", "\\|")[:120]
        forbidden = ", ".join(o.forbidden_found).replace("|", "\\|")
        lines.append(
            f"| {o.case.id} | {o.outcome} | {'yes' if o.refusal_correct else 'NO'} | {source} | "
            f"{o.facts_found}/{len(o.case.facts)} | {forbidden} | {language} | {o.latency_ms:.0f} | "
            f"{answer} |"
        )
    return "\n".join(lines) + "\n"


def _judge(case: AnswerCase, result: AskResult) -> AnswerOutcome:
    try:
        Answer.model_validate(result.answer.model_dump())
        valid = True
    except ValidationError:
        valid = False
    refused = result.answer.resposta.strip() in (REFUSAL_TEXT, EMPTY_QUESTION_TEXT)
    gold_urls = {g.url for g in case.gold}
    text = normalise(result.answer.resposta)
    first_token = result.timings_ms.get("first_token")
    return AnswerOutcome(
        case=case,
        outcome=result.outcome,
        contract_valid=valid,
        refused=refused,
        refusal_correct=refused != case.answerable,
        source_correct=bool(gold_urls & set(result.answer.fonts)) if case.answerable else None,
        facts_found=sum(states(text, fact) for fact in case.facts),
        grounded=result.grounded,
        latency_ms=result.timings_ms.get("total", 0.0),
        resposta=result.answer.resposta,
        forbidden_found=tuple(f for f in case.forbidden if states(text, f)),
        language_right=None
        if refused or case.lang not in ("ca", "es", "en")
        else _most_likely_language(result.answer.resposta) == case.lang,
        first_token_ms=first_token,
    )


def normalise(text: str) -> str:
    """Accents and case folded, markdown `*` and backticks dropped, whitespace collapsed."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", folded.casefold().replace("*", "").replace("`", "")).strip()


def states(normalised_answer: str, label: str) -> bool:
    """One alternative of `label` (`a|b`) occurs in the answer as whole words (5 is not in 15)."""
    return any(
        re.search(rf"(?<!\w){re.escape(normalise(alternative))}(?!\w)", normalised_answer)
        for alternative in label.split("|")
        if alternative.strip()
    )


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return round(sum(values) / len(values), 4) if values else 0.0


def _most_likely_language(text: str) -> str:
    """The answer's most likely language, with no prior: the judge must not favour the docs' language."""
    probabilities = language_probabilities(text)
    return max(probabilities, key=probabilities.__getitem__)
