"""Language identification on the labelled short questions, and the accuracy function itself."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from docubot.eval.language import LanguageCase, language_accuracy, load_language_set
from docubot.eval.sets import EvalSetError
from docubot.text import LANGUAGES, detect_language

QUESTIONS = Path(__file__).parents[1] / "evals" / "lang" / "questions.jsonl"


def test_accuracy_is_counted_per_language_with_the_misses() -> None:
    cases = [
        LanguageCase("1", "hola", "ca", "dev"),
        LanguageCase("2", "adeu", "ca", "dev"),
        LanguageCase("3", "hello", "en", "holdout"),
    ]
    result = language_accuracy(cases, lambda text: "ca")
    assert result.of("ca") == 1.0 and result.of("en") == 0.0 and result.of("es") == 0.0
    assert result.overall == pytest.approx(2 / 3)
    assert [(case.id, predicted) for case, predicted in result.misses] == [("3", "ca")]


def test_a_line_without_a_label_is_named(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text('{"id": "a", "text": "hola", "lang": "ca", "split": "dev"}\n{"id": "b", "text": "x"}\n')
    with pytest.raises(EvalSetError, match="line 2"):
        load_language_set(path)


def test_the_labelled_set_is_large_balanced_short_and_has_a_holdout_third() -> None:
    cases = load_language_set(QUESTIONS)
    assert len(cases) >= 180 and len({c.id for c in cases}) == len(cases)
    assert all(Counter(c.lang for c in cases)[lang] >= 60 for lang in LANGUAGES)
    assert all(2 <= len(re.findall(r"\S+", c.text)) <= 15 for c in cases)
    holdout = sum(c.split == "holdout" for c in cases) / len(cases)
    assert {c.split for c in cases} == {"dev", "holdout"} and 0.3 <= holdout <= 0.36


@pytest.mark.parametrize("fallback", LANGUAGES)
def test_short_questions_are_identified_at_95_percent_whatever_the_corpus_language(fallback: str) -> None:
    cases = load_language_set(QUESTIONS)
    result = language_accuracy(cases, lambda text: detect_language(text, fallback))
    assert result.overall >= 0.95, result.misses
    assert all(result.of(lang) >= 0.85 for lang in LANGUAGES), result.misses
    held_out = [c for c in cases if c.split == "holdout"]
    holdout = language_accuracy(held_out, lambda text: detect_language(text, fallback))
    assert holdout.overall >= 0.95, holdout.misses


def test_a_code_block_says_nothing_of_a_texts_language() -> None:
    """A Spanish answer with the docs' `curl` call under it was read as English, so its translation
    was refused as "written in en"."""
    code = "```bash\n# list the projects the token can access\ncurl https://api.example/v1/projects\n```"
    answer = f"Envía el token en la cabecera con el esquema Bearer:\n{code}\n{code}\n{code}"
    assert detect_language(answer, fallback="en") == "es"
