"""The combined refusal decision: question terms, corpus vocabulary, the fitted model, its storage
and its evaluation, on the real sample store and retrieval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docubot.db import Database
from docubot.eval.refusal import (
    LabelledQuestion,
    Row,
    evaluate_refusal,
    fit_model,
    load_refusal_questions,
    refusal_combined_markdown,
)
from docubot.rag.answer import DocuBot
from docubot.rag.question import EMPTY_QUESTION_OUTCOME, EMPTY_QUESTION_TEXT
from docubot.rag.refusal import (
    SIGNALS,
    Refusal,
    Vocabulary,
    question_terms,
    things,
    unknown_things,
    unseen_nearby,
)
from docubot.rag.threshold import refusal_model_data, refusal_threshold, write_refusal_model
from docubot.store import Hit
from docubot.store.sql import SQLStore


def test_salient_terms_are_names_codes_and_long_numbers_not_sentence_starts() -> None:
    terms = question_terms("Podem desplegar Nubelia a Heroku amb MongoDB, SAML2 i l'ISO 27001 des de Go?")
    assert terms.salient == ("nubelia", "heroku", "mongodb", "saml2", "iso", "27001", "go")
    assert "podem" in terms.content and "podem" not in terms.salient
    assert question_terms("Okta funciona?").salient == ()  # the first word of a sentence proves nothing


@pytest.fixture
def sample_store(sample_settings):
    with Database(sample_settings) as db:
        yield SQLStore(db)


def test_vocabulary_knows_inflections_and_sibling_languages_not_absent_products(sample_store) -> None:
    vocabulary = Vocabulary()
    for word in ("contrasenya", "contrasena", "exporto", "webhooks", "slack"):
        assert vocabulary.known(sample_store, word), word
    for word in ("heroku", "mongodb", "okta", "bitcoins"):
        assert not vocabulary.known(sample_store, word), word
    assert vocabulary.language(sample_store) == "ca"


def test_a_colleague_named_with_la_is_no_salient_term() -> None:
    """unseen a167: "la Núria es lectora…" was refused (P 0.05): "Núria", capitalised inside the
    sentence and unknown to the docs, counted as a product the docs never name."""
    terms = question_terms("la Núria es lectora i vull que pugui editar nomes el projecte de la web")
    assert "nuria" in terms.people and "nuria" not in terms.salient
    assert question_terms("Es pot connectar amb el Jira?").salient == ("jira",)


def test_the_things_a_question_names_are_no_verb_form_and_no_colleague() -> None:
    terms = question_terms("Vull que en Pere pugui importar i muntar les carpetes des de Trello")
    assert things(terms, "ca") == ["carpetes", "trello"]
    # a noun that is also a verb form counts as a verb: the rule then refuses less, never more
    assert things(question_terms("Hi ha un filtre?"), "ca") == []
    assert things(question_terms("¿Puedo importar las tareas desde Trello?"), "es") == ["tareas", "trello"]


@pytest.mark.parametrize(
    ("question", "absent"),
    [
        ("es pot canviar la interfície a mode fosc?", ("fosc",)),
        ("Hi ha integració amb microsoft teams?", ("teams",)),
        ("Puc guardar un filtre per no haver de tornar-lo a muntar?", ()),  # verbs, however unknown
        ("Vull que en Jordi pugui editar tasques, es pot fer?", ()),  # a colleague
        ("som 40 a l'oficina, hi ha un màxim d'usuaris al Business?", ()),  # the office is no thing asked for
        ("Puc tallar l'accés d'un treballador durant la baixa per maternitat?", ()),  # nor a leave
        ("Em recomanes alguna sèrie per veure aquest cap de setmana?", ("serie",)),  # off-topic a083
        ("Quina vista em recomanes per seguir les tasques?", ()),  # a recommendation the docs can give
        ("Quin temps fa a Barcelona?", ()),  # asks for no thing: the model decides
        ("Is there a dark mode?", ()),  # not the docs' language: the model decides
    ],
)
def test_unknown_things_are_what_a_question_asks_whether_it_can_have_and_the_docs_never_name(
    sample_store, question, absent
) -> None:
    assert unknown_things(question, sample_store, Vocabulary()) == absent


def test_a_question_asking_for_a_thing_the_docs_never_name_is_refused(sample_settings, embedder) -> None:
    """The refusal model answered near-topic questions that name nothing capitalised ("mode fosc",
    "microsoft teams" typed lowercase): they scored like answerable ones."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    result = bot.ask("es pot canviar la interfície a mode fosc?")
    assert result.outcome == "refused"
    assert result.checks[0]["unknown_things"] == ["fosc"] and result.checks[0]["refuse"] is True
    kept = bot.ask("Puc guardar un filtre per no haver de tornar-lo a muntar?")
    assert kept.outcome == "answered" and "unknown_things" not in kept.checks[0]


def test_two_things_asked_for_that_no_passage_found_names_are_unseen_nearby(sample_store) -> None:
    """The docs use both words elsewhere (unknown_things lets them through); the passages found
    name neither. One such thing alone is a user's own word, not a missing feature."""
    found = [
        Hit(
            "c1", "La barra lateral mostra la llista de projectes i els preferits.", {"section": "Inici"}, 0.9
        )
    ]
    asked = "hi ha manera d'agrupar els projectes en carpetes per departament a la barra lateral?"
    assert unknown_things(asked, sample_store, Vocabulary()) == ()
    assert unseen_nearby(asked, found, sample_store, Vocabulary()) == ("manera", "carpetes", "departament")
    one = "es poden agrupar els projectes per departament a la barra lateral?"
    assert unseen_nearby(one, found, sample_store, Vocabulary()) == ()
    assert unseen_nearby("Is there a folder per department?", found, sample_store, Vocabulary()) == ()
    https = [Hit("c2", "Introdueix la URL de destinació. Ha de ser HTTPS.", {"section": "Webhooks"}, 0.9)]
    plain = "Puc fer servir una URL http normal per al webhook?"  # "http" begins "https": one unseen
    assert unseen_nearby(plain, https, sample_store, Vocabulary()) == ()


def test_a_question_asking_for_things_the_passages_found_never_name_is_refused(
    sample_settings, embedder
) -> None:
    """unseen a186 was answered with the sidebar's description: the docs write "carpeta" of the
    spam folder and "Departament" in a custom field's example, so the corpus knows both words."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    result = bot.ask("hi ha manera d'agrupar els projectes en carpetes per departament a la barra lateral?")
    assert result.outcome == "refused"
    assert {"carpetes", "departament"} <= set(result.checks[0]["unseen_nearby"])
    kept = bot.ask("Es pot exportar un informe a pdf per passar-lo al client?")
    assert kept.outcome == "answered" and "unseen_nearby" not in kept.checks[0]


@pytest.mark.parametrize(
    ("question", "refused"),
    [
        ("Com restableixo la contrasenya?", False),
        ("¿Cuánto cuesta el plan Enterprise al mes por usuario?", False),
        ("How do I create a webhook?", False),
        ("Podem entrar a Nubelia amb Okta o Azure AD?", True),
        ("Es pot desplegar Nubelia a Heroku?", True),
        ("¿Qué base de datos usáis, PostgreSQL o MongoDB?", True),
    ],
)
def test_near_topic_questions_naming_absent_products_are_refused(
    sample_settings, embedder, question, refused
) -> None:
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    result = bot.ask(question)
    assert (result.outcome == "refused") is refused, result.checks
    decision = result.checks[0]
    assert decision["check"] == "refusal" and 0.0 <= decision["p_answerable"] <= 1.0


def test_an_explicit_threshold_means_the_cosine_floor_alone(sample_settings, embedder) -> None:
    bot = DocuBot(sample_settings.with_overrides(refusal_threshold=0.0), embedder=embedder, chat_model=None)
    result = bot.ask("Es pot desplegar Nubelia a Heroku?")
    assert result.outcome == "answered"
    assert result.checks[0] == {"check": "refusal", "refuse": False, "p_answerable": None}


def test_a_model_for_another_retrieval_mode_is_not_used(sample_settings, embedder) -> None:
    settings = sample_settings.with_overrides(retrieval_mode="dense")
    decision = DocuBot(settings, embedder=embedder, chat_model=None).ask("Es pot desplegar Nubelia a Heroku?")
    assert decision.checks[0]["p_answerable"] is None


def rows(points: list[tuple[float, bool, str, bool]]) -> list[Row]:
    """Rows whose first signal is `value` and the others constant."""
    return [
        Row(LabelledQuestion(f"q{i}", f"q{i}", ok, kind, held), [value] + [0.5] * (len(SIGNALS) - 1), value)
        for i, (value, ok, kind, held) in enumerate(points)
    ]


def test_the_fitted_threshold_keeps_the_target_share_of_answerable_questions() -> None:
    good = [(0.80 + i / 100, True, "answerable", i % 3 == 0) for i in range(40)]
    bad = [(0.60 + i / 100, False, "near_topic", i % 3 == 0) for i in range(12)]
    data = rows(good + bad)
    model = fit_model([r for r in data if not r.item.held_out], "hybrid", keep=0.97)
    assert model.weights[0] > 0
    tune_good = [r for r in data if r.item.answerable and not r.item.held_out]
    kept = sum(model.probability(r.values) >= model.threshold for r in tune_good)
    assert kept / len(tune_good) >= 0.97
    evaluation = evaluate_refusal(data, floor=0.75, mode="hybrid")
    assert evaluation.combined["holdout"]["refused_near_topic"] == 1.0
    assert evaluation.combined["holdout"]["kept_answerable"] >= 0.9
    assert evaluation.signal_auroc["best_similarity"]["tune"] > 0.9
    assert set(evaluation.combined) >= {"tune", "holdout", "cv3"}


def test_the_evaluation_reports_the_unknown_thing_rule_beside_the_model() -> None:
    good = [(0.80 + i / 100, True, "answerable", False) for i in range(20)]
    bad = [(0.95, False, "near_topic", False), (0.96, False, "near_topic", False)]
    data = rows(good + bad)
    data[-1].unknown_things = ("fosc",)
    evaluation = evaluate_refusal(data, floor=0.75, mode="hybrid")
    alone, ruled = evaluation.combined["tune"], evaluation.combined["tune + unknown-thing rule"]
    assert ruled["refused_near_topic"] == alone["refused_near_topic"] + 0.5
    assert ruled["kept_answerable"] == alone["kept_answerable"]


def test_the_report_names_tuning_questions_and_only_counts_held_out_ones() -> None:
    """`docubot eval refusal` printed every held-out question it got wrong, blind splits included:
    whoever tunes must read those only as counts."""
    good = [(0.80 + i / 100, True, "answerable", i % 2 == 0) for i in range(20)]
    bad = [(0.95, False, "near_topic", False), (0.96, False, "near_topic", True)]
    bad += [(0.97, False, "off_topic", True)]
    data = rows(good + bad)
    report = refusal_combined_markdown(evaluate_refusal(data, floor=0.75, mode="hybrid"))
    assert 'Unanswerable questions answered, tuning part (1): ["q20"]; held out: 2.' in report
    assert "q21" not in report and "q22" not in report


def test_a_written_model_is_read_back_and_used(sample_settings, embedder, tmp_path) -> None:
    settings = sample_settings.with_overrides(home=tmp_path / "home")
    model = fit_model(rows([(0.9, True, "answerable", False), (0.1, False, "near_topic", False)]), "hybrid")
    always = {**model.to_json(), "threshold": 1.01}  # refuses everything
    write_refusal_model(settings, embedder.name, always)
    assert refusal_threshold(settings, embedder.name) == pytest.approx(0.835)  # the floor is kept apart
    refusal = Refusal(settings, embedder.name, floor=0.0)
    assert refusal.model is not None and refusal.model.threshold == 1.01
    assert not (settings.home / "calibration.json").exists()  # in the database's calibration table
    assert refusal_model_data(settings, embedder.name)["signals"] == list(SIGNALS)


def test_labelled_questions_come_from_both_sets_once_with_a_stratified_holdout(tmp_path: Path) -> None:
    retrieval = [
        {"id": f"r{i}", "question": f"Pregunta {i}?", "answerable": i < 9, "gold": [], "facts": []}
        | ({} if i < 9 else {"kind": "near-topic"})
        for i in range(12)
    ]
    answers = [
        {"id": "a1", "question": "pregunta 1?", "answerable": True, "split": "holdout"},  # a duplicate
        {
            "id": "a2",
            "question": "Hi ha Okta?",
            "answerable": False,
            "kind": "near_topic",
            "split": "holdout",
        },
        {"id": "a3", "question": "...", "answerable": False, "kind": "empty", "split": "tune"},
    ]
    (tmp_path / "retrieval.jsonl").write_text("\n".join(json.dumps(r) for r in retrieval))
    (tmp_path / "answers.jsonl").write_text("\n".join(json.dumps(r) for r in answers))
    questions = load_refusal_questions(tmp_path)
    assert len(questions) == 13
    assert {q.kind for q in questions} == {"answerable", "near_topic"}
    held = [q for q in questions if q.held_out and q.id.startswith("r")]
    assert sum(q.answerable for q in held) == 3 and sum(not q.answerable for q in held) == 1
    assert next(q for q in questions if q.id == "a2").held_out


@pytest.mark.parametrize("question", ["...", "?", "¿¡ … !?"])
def test_a_question_with_no_words_gets_asked_for_one(sample_settings, embedder, question) -> None:
    result = DocuBot(sample_settings, embedder=embedder, chat_model=None).ask(question)
    assert result.outcome == EMPTY_QUESTION_OUTCOME
    assert result.answer.resposta == EMPTY_QUESTION_TEXT and result.answer.fonts == []


def test_a_thing_is_known_by_its_dictionary_form(sample_store) -> None:
    """a274 (answerable): "…hi ha manera que la tasca es torni a crear sola cada setmana…?" was
    refused for "sola": the docs write "sol" ("d'un sol ús"), never "sola"."""
    asked = (
        "cada dilluns tenim la mateixa reunió, hi ha manera que la tasca es torni a crear sola cada setmana?"
    )
    assert unknown_things(asked, sample_store, Vocabulary()) == ()
    assert unknown_things("es pot canviar la interfície a mode fosc?", sample_store, Vocabulary()) == (
        "fosc",
    )


def test_a_message_asking_two_things_is_read_against_what_each_question_finds(
    sample_settings, embedder
) -> None:
    """a278 (answerable) was refused for "màxim" and "files": the whole message's search found the
    export procedure, and only its second question, searched alone, finds "com a màxim 50.000 files"."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    result = bot.ask(
        "vull treure totes les tasques d'un projecte a un csv per passar-les a un altre programa, on es "
        "fa aixo? i hi ha algun maxim de files?"
    )
    assert result.outcome == "answered" and "unseen_nearby" not in result.checks[0]
    assert "50.000" in result.answer.resposta
    refused = bot.ask("hi ha manera d'agrupar els projectes en carpetes per departament a la barra lateral?")
    assert refused.outcome == "refused"
