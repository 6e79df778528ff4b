"""Whether passages state the quantity a question asks for: the kind of number, not any number."""

import pytest

from docubot.rag.answer import DocuBot
from docubot.rag.quantity import amount_spans, states_the_quantity
from docubot.text import fold


def test_a_number_written_into_a_name_or_code_is_no_amount() -> None:
    """fresh a121: "is there a max number of webhooks…?" was answered with the sentence naming
    `POST /v1/webhooks`, whose "1" passed for the number asked."""
    said = (
        "També pots crear webhooks amb l'API (`POST /v1/webhooks`) si el token té l'àmbit `webhooks:manage`."
    )
    assert not states_the_quantity(said, ["is there a max number of webhooks we can create per workspace?"])
    text = fold("Respon amb un codi `2xx`, signatura SHA256, la presentació del 3T; 100MB, 24h i `429`.")
    assert [text[start:end] for start, end in amount_spans(text)] == ["100", "24", "429"]


def test_a_count_of_things_is_not_answered_by_durations_alone() -> None:
    """fresh a122: "quants caràcters…" was answered with a passage whose only number was "una
    acció de cinc minuts"."""
    said = "Tampoc no cal crear una tasca per a cada acció de cinc minuts."
    assert not states_the_quantity(said, ["quants caracters pot tenir com a maxim el titol d'una tasca?"])
    assert states_the_quantity("Bloqueja el compte després de 5 intents.", ["quants cops em puc equivocar?"])
    assert states_the_quantity(said, ["quants minuts dura?"])  # a count of time: any duration


@pytest.mark.parametrize(
    ("said", "answers"),
    [
        ("Si no respon en 10 segons, torna a enviar l'esdeveniment fins a 5 vegades.", False),
        ("Cada token pot fer fins a 100 peticions per minut.", False),
        ("Nubelia envia com a màxim 20 esdeveniments per segon.", True),
        ("Fins a 20 esdeveniments/s.", True),
        ("Fins a 20 esdeveniments / segon.", True),
    ],
)
def test_a_rate_per_unit_of_time_needs_a_number_per_that_unit(said: str, answers: bool) -> None:
    """unseen a187: "¿cuántos eventos por segundo nos puede mandar nubelia por webhook?" was
    answered with the retries' "no respon en 10 segons"."""
    question = "¿cuantos eventos por segundo nos puede llegar a mandar nubelia por webhook?"
    assert states_the_quantity(said, [question, "Quants events per segon es pot enviar nubelia?"]) is answers


def test_a_question_asking_no_quantity_needs_no_number() -> None:
    assert states_the_quantity("Ves a Configuració.", ["Com convido un membre?"])
    assert not states_the_quantity("Ves a Configuració.", ["Quants membres puc convidar?"])


def test_the_kind_asked_refuses_what_any_number_let_through(sample_settings, embedder) -> None:
    """The real store and embedder, as the extract answers: fresh a122 refused, and a count, a
    rate and a duration the docs state still answered."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    refused = bot.ask("quants caracters pot tenir com a maxim el titol d'una tasca?")
    assert refused.outcome == "refused" and {"check": "quantity", "refuse": True} in refused.checks
    for question, fact in [
        ("quants cops em puc equivocar de contrasenya abans no em bloquegin el compte?", "5"),
        ("quantes peticions per minut aguanta l'API?", "100"),
        ("Quant de temps es guarda el registre d'activitat?", "12 mesos"),
    ]:
        answered = bot.ask(question)
        assert answered.outcome == "answered" and fact in answered.answer.resposta, question
