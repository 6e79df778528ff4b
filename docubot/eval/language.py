"""Language identification measured on labelled short questions (`evals/lang/questions.jsonl`).

Each line is `{"id", "text", "lang", "split"}`; `split` is `dev` (used to choose the detector and
its confidence threshold) or `holdout` (only measured afterwards).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docubot.eval.sets import EvalSetError, read_jsonl


@dataclass(frozen=True)
class LanguageCase:
    id: str
    text: str
    lang: str
    split: str


@dataclass
class LanguageAccuracy:
    """Correct and total per labelled language, and the cases missed with what was predicted."""

    correct: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    misses: list[tuple[LanguageCase, str]] = field(default_factory=list)

    @property
    def overall(self) -> float:
        return sum(self.correct.values()) / sum(self.total.values()) if self.total else 0.0

    def of(self, language: str) -> float:
        return self.correct.get(language, 0) / self.total[language] if self.total.get(language) else 0.0


def load_language_set(path: Path) -> list[LanguageCase]:
    """The labelled questions; a clear error names the bad line."""
    cases = []
    for number, data in read_jsonl(path):
        try:
            case = LanguageCase(str(data["id"]), str(data["text"]), str(data["lang"]), str(data["split"]))
            cases.append(case)
        except KeyError as exc:
            raise EvalSetError(f"{path.name} line {number}: missing field {exc}") from exc
    return cases


def language_accuracy(cases: Sequence[LanguageCase], detect: Callable[[str], str]) -> LanguageAccuracy:
    """How often `detect` names each case's labelled language."""
    result = LanguageAccuracy()
    for case in cases:
        predicted = detect(case.text)
        result.total[case.lang] = result.total.get(case.lang, 0) + 1
        result.correct[case.lang] = result.correct.get(case.lang, 0) + (predicted == case.lang)
        if predicted != case.lang:
            result.misses.append((case, predicted))
    return result
