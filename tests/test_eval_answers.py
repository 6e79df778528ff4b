"""`docubot eval answers` scoring: facts with alternatives, forbidden values, language, refusals."""

from __future__ import annotations

import json
from pathlib import Path

from docubot.eval.answers import (
    AnswerCase,
    answers_markdown,
    answers_summary,
    evaluate_answers,
    flat_summary,
    load_answer_cases,
    normalise,
    sample,
    states,
)
from docubot.eval.sets import Gold
from docubot.rag.answer import AskResult
from docubot.rag.contract import Answer, refusal

PLANS = "wiki/administracio/plans-i-facturacio"


def case(question: str, lang: str, facts=(), forbidden=(), answerable=True, kind="table") -> AnswerCase:
    gold = (Gold(PLANS, "Plans i facturació > Comparativa de plans"),) if answerable else ()
    return AnswerCase("a1", question, lang, answerable, gold, tuple(facts), tuple(forbidden), kind)


def answered(text: str, fonts=(PLANS,)) -> AskResult:
    result = AskResult(
        Answer(categoria="facturacio", resposta=text, fonts=list(fonts), confianca="alta"),
        [],
        "answered",
        "fake",
    )
    result.timings_ms.update(first_token=1200.0, total=5000.0)
    return result


def test_facts_match_whole_words_any_alternative_accents_and_markdown_ignored() -> None:
    text = normalise("El pla **Business** costa 12€ i l'enllaç dura *24 hores*.")
    assert states(text, "12 €|12€|12 euros") and states(text, "business") and states(text, "24 HORES")
    assert not states(text, "2 €") and not states(text, "4 hores")


def test_a_right_answer_is_fully_correct_and_a_wrong_row_is_caught() -> None:
    asked = case("¿Cuánto cuesta el plan Business?", "es", facts=["12 €|12€"], forbidden=["6 €", "22 €"])
    right, wrong = (
        evaluate_answers([asked], lambda _, text=text: answered(text))[0]
        for text in ("El plan Business cuesta 12 € por usuario y mes.", "El plan Business cuesta 6 € al mes.")
    )
    assert right.fully_correct and right.language_right and right.first_token_ms == 1200.0
    assert not wrong.fully_correct and wrong.forbidden_found == ("6 €",)
    catalan = evaluate_answers([asked], lambda _: answered("El pla Business costa 12 € per usuari i mes."))[0]
    assert catalan.language_right is False


def test_summary_counts_near_topic_refusals_and_time_to_first_token() -> None:
    cases = [
        case("¿Cuánto cuesta el plan Business?", "es", facts=["12 €"]),
        case("Hi ha integració amb Jira?", "ca", answerable=False, kind="near_topic"),
    ]
    replies = {
        cases[0].question: answered("Cuesta 12 € al mes."),
        cases[1].question: AskResult(refusal(), [], "refused", "fake"),
    }
    summary = answers_summary(evaluate_answers(cases, replies.__getitem__))
    assert summary["fully_correct"] == 1.0 and summary["near_topic_refused"] == 1.0
    assert summary["language_right"] == 1.0 and summary["first_token_p50_ms"] == 1200.0


def test_the_answer_set_is_preferred_and_a_sample_spreads_over_it(tmp_path: Path) -> None:
    rows = [
        {"id": f"a{i:03}", "question": f"q{i}", "lang": "ca", "answerable": True, "gold": [], "facts": ["x"],
         "forbidden": ["y"], "kind": "fact", "split": "tune" if i % 3 else "holdout"}
        for i in range(30)
    ]  # fmt: skip
    (tmp_path / "answers.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    cases = load_answer_cases(tmp_path)
    assert len(cases) == 30 and cases[0].forbidden == ("y",) and cases[0].split == "holdout"
    assert [c.id for c in sample(cases, 3)] == ["a000", "a010", "a020"]


def test_each_split_is_summarised_on_its_own() -> None:
    """The README compares the part tuned on with the part never looked at: one run gives both."""
    tune = case("¿Cuánto cuesta el plan Business?", "es", facts=["12 €"])
    holdout = AnswerCase(
        "a2", "Quant costa el Business?", "ca", True, tune.gold, ("12 €",), (), "table", "holdout"
    )
    tune = AnswerCase(**{**tune.__dict__, "split": "tune"})
    replies = {tune.question: answered("Cuesta 12 € al mes."), holdout.question: answered("Costa 6 €.")}
    outcomes = evaluate_answers([tune, holdout], replies.__getitem__)
    flat = flat_summary(outcomes)
    assert flat["fully_correct"] == 0.5
    assert flat["tune.fully_correct"] == 1.0 and flat["holdout.fully_correct"] == 0.0
    table = answers_markdown(outcomes, "fake", "t")
    assert "| measure | all | tune | holdout |" in table and "| fully_correct | 0.5 | 1.0 | 0.0 |" in table


def test_each_language_is_summarised_on_its_own() -> None:
    """English and Spanish answers are the docs' Catalan translated back: their share right and
    their time to first token are read apart from the Catalan ones."""
    spanish = case("¿Cuánto cuesta el plan Business?", "es", facts=["12 €"])
    catalan = AnswerCase("a2", "Quant costa el Business?", "ca", True, spanish.gold, ("12 €",), (), "table")
    replies = {spanish.question: answered("Cuesta 12 € al mes."), catalan.question: answered("Costa 6 €.")}
    replies[catalan.question].timings_ms.update(first_token=300.0)
    outcomes = evaluate_answers([spanish, catalan], replies.__getitem__)
    flat = flat_summary(outcomes)
    assert flat["lang.es.fully_correct"] == 1.0 and flat["lang.ca.fully_correct"] == 0.0
    assert flat["lang.es.first_token_p50_ms"] == 1200.0 and flat["lang.ca.first_token_p50_ms"] == 300.0
    table = answers_markdown(outcomes, "fake", "t")
    assert "| measure | all | asked in ca | asked in es |" in table
    alone = flat_summary(evaluate_answers([spanish], replies.__getitem__))
    assert not any(key.startswith("lang.") for key in alone)
