"""A question in another language than the docs is translated into theirs for retrieval.

The scripted model drives the control flow; that the real model's translations bring the right
section up is tested in test_answer_local.py and measured in the README.
"""

import json

import pytest

from docubot.llm import ProviderError
from docubot.llm.base import EMBEDDED_PROVIDER
from docubot.rag.answer import DocuBot
from docubot.rag.query_translation import translate_through
from docubot.rag.translate import TRANSLATOR_SYSTEM
from tests.fakes import ScriptedModel

LOCKOUT_URL = "wiki/administracio/seguretat-i-acces"
LOCKOUT_SECTION = "Seguretat i accés > Bloqueig del compte"
QUESTION = "How long does an account lockout last?"
CATALAN = "Quant dura el bloqueig del compte?"


def translation(text: str) -> str:
    return json.dumps({"pregunta": text})


def answer_from_last_fragment(request) -> str:
    """An evidence-first reply quoting the first prose line of the most relevant fragment."""
    block = request.messages[-1].content.split("<documentacio>\n", 1)[1].split("\n</documentacio>")[0]
    body = block.split("\n---\n")[-1].split("\n", 1)[1]
    quote = next(line for line in body.splitlines() if line.strip() and line[0].isalpha())
    return json.dumps(
        {
            "evidencia": [{"fragment": block.count("[Fragment "), "cita": quote}],
            "resposta": quote,
            "confianca": "alta",
        }
    )


def echo(request) -> str:
    """A "translation" of the extract that copies it back (refused: not in the language asked)."""
    return json.dumps({"resposta": request.messages[-1].content.split(": ", 1)[-1]})


@pytest.fixture
def bot(sample_settings, embedder):
    def make(model: ScriptedModel, **overrides) -> DocuBot:
        return DocuBot(sample_settings.with_overrides(**overrides), embedder=embedder, chat_model=model)

    return make


def sections(result) -> list[str]:
    return [h.metadata["section_path"] for h in result.retrieval.hits]


def test_an_english_question_is_searched_in_catalan(bot) -> None:
    model = ScriptedModel([translation(CATALAN), answer_from_last_fragment])
    docubot = bot(model)
    result = docubot.ask(QUESTION)
    asked = model.requests[0].messages[0].content
    assert asked.startswith("Translate the English question below into Catalan. Do not answer it")
    assert asked.endswith(f"Question: {QUESTION}")
    assert result.checks[0] == {
        "check": "query_translation",
        "from": "en",
        "to": "ca",
        "ok": True,
        "text": CATALAN,
        "ms": result.checks[0]["ms"],
    }
    assert sections(result)[0] == LOCKOUT_SECTION
    assert "Pregunta: How long does an account lockout last?" in model.requests[1].messages[-1].content
    logged = next(c for c in docubot.call_log.last(5) if c.id == result.call_id)
    assert logged.retrieval_question == CATALAN and logged.question == QUESTION
    assert result.usage.input_tokens > 0 and "query_translation" in result.timings_ms


def test_without_translation_the_english_question_misses_the_section(bot) -> None:
    """What the translation is for: searched as asked, the lockout section is not in the top 4."""
    model = ScriptedModel([answer_from_last_fragment])
    result = bot(model, translate_queries=False).ask(QUESTION)
    assert all(c["check"] != "query_translation" for c in result.checks)
    assert LOCKOUT_SECTION not in sections(result)  # and it is refused: nothing scores well enough


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (translation("Quant dura el bloqueig del compte a Okta?"), "added okta"),
        (translation("Quant dura el bloqueig de 30 minuts del compte?"), "numbers changed: 30"),
        (translation("How long does an account lockout last?"), "written in en"),  # not translated
        (translation("Quant " * 80), "longer than"),
        (translation("El bloqueig dura 15 minuts."), "not a question"),  # answered, not translated
        ("not json at all", "translation"),
        (translation("Com eliminar un projecte?"), "the instruction's example"),  # tune a194's
    ],
    ids=["added-name", "added-number", "untranslated", "runaway", "answered", "broken", "example"],
)
def test_a_bad_translation_is_not_used(bot, reply, why) -> None:
    model = ScriptedModel([reply, answer_from_last_fragment])
    docubot = bot(model)
    result = docubot.ask(QUESTION)
    check = result.checks[0]
    assert check["check"] == "query_translation" and check["ok"] is False and why in check["why"]
    as_asked = docubot.retriever.search(QUESTION).hits
    assert [h.id for h in result.retrieval.hits] == [h.id for h in as_asked]


def test_a_translation_written_in_a_language_near_the_docs_is_used(bot) -> None:
    """Tune a217, with the real model: asked for Catalan, it wrote Spanish, which was refused. Used,
    the passage saying what a copy keeps (and that comments and attachments are not) is found."""
    spanish = "Si duplico una tarea, ¿se copian los comentarios y los adjuntos?"
    asked = "if i duplicate a task, do the comments and attachments get copied over too?"
    untranslated = [echo] * 30  # the extract's translation into English fails: it stands as written
    result = bot(ScriptedModel([translation(spanish), *untranslated]), answer_from="extract").ask(asked)
    assert result.checks[0]["ok"] is True and result.checks[0]["text"] == spanish
    assert "La còpia conserva" in result.answer.resposta


def test_a_translation_left_in_the_questions_language_is_not_used(bot) -> None:
    spanish = "¿Se copian los comentarios y los adjuntos si duplico una tarea?"
    result = bot(ScriptedModel([translation(spanish), answer_from_last_fragment])).ask(spanish)
    assert result.checks[0]["ok"] is False and result.checks[0]["why"] == "written in es"


def test_a_translation_that_drops_a_name_is_not_used(bot) -> None:
    model = ScriptedModel([translation("Es pot connectar Nubelia?"), answer_from_last_fragment])
    result = bot(model).ask("Can I connect Nubelia to Zapier?")
    assert result.checks[0]["ok"] is False and result.checks[0]["why"] == "lost zapier"


def test_a_translation_that_drops_a_plan_named_in_lowercase_is_not_used(bot) -> None:
    """Blind a134, with the real model: "whats the storage cap on enterprise?" came back as "Quina
    capa de stockage té l'entitat?"; its search missed the plans table, which the question as
    asked finds. A word the docs write only as a name is kept however the question writes it."""
    question = "whats the storage cap on enterprise?"
    model = ScriptedModel(
        [translation("Quina capa d'emmagatzematge té l'entitat?"), answer_from_last_fragment]
    )
    result = bot(model).ask(question)
    assert result.checks[0]["ok"] is False and result.checks[0]["why"] == "lost enterprise"
    assert "Plans i facturació > Comparativa de plans" in sections(result)


def test_a_translation_that_drops_a_product_the_docs_name_is_not_used(bot) -> None:
    """Not only plans: the docs write "Outlook" only as a name, so it is kept even asked in lowercase."""
    model = ScriptedModel([translation("Puc veure les tasques al calendari?"), answer_from_last_fragment])
    result = bot(model).ask("can i see my tasks in outlook?")
    assert result.checks[0]["ok"] is False and result.checks[0]["why"] == "lost outlook"


def test_a_translation_keeping_the_plan_is_used(bot) -> None:
    model = ScriptedModel(
        [translation("Quin és el límit d'emmagatzematge de l'Enterprise?"), answer_from_last_fragment]
    )
    result = bot(model).ask("whats the storage cap on enterprise?")
    assert result.checks[0]["ok"] is True


def test_a_provider_failure_while_translating_still_answers(bot) -> None:
    model = ScriptedModel([ProviderError("bad request"), answer_from_last_fragment])
    result = bot(model).ask("Can I export a report as a PDF?")
    assert result.checks[0]["ok"] is False and "bad request" in result.checks[0]["why"]
    assert result.outcome == "answered"


def test_a_question_in_the_docs_language_is_not_translated(bot) -> None:
    model = ScriptedModel([answer_from_last_fragment])
    result = bot(model).ask("Quant dura el bloqueig si m'equivoco massa cops de contrasenya?")
    assert model.calls == 1
    assert all(c["check"] != "query_translation" for c in result.checks)


def test_a_wrong_translation_does_not_hide_what_the_asked_words_find(bot) -> None:
    """answers.jsonl a006, with the real model: "dedicated account manager" came back as "manager
    d'acordament"; searched alone, that put the plans table 7th. The search embeds both."""
    wrong = "Quin plan te permetteu un manager d'acordament?"
    model = ScriptedModel([translation(wrong), answer_from_last_fragment])
    result = bot(model).ask("Which plan gets you a dedicated account manager?")
    assert result.checks[0]["text"] == wrong
    assert result.retrieval.question == wrong and result.retrieval.timings_ms["embed"] == 0
    assert sections(result)[0] == "Plans i facturació > Comparativa de plans"


class EmbeddedScript(ScriptedModel):
    """A scripted model that DocuBot takes for the embedded one (by its name, as it takes a wrapper)."""

    name = f"{EMBEDDED_PROVIDER}/scripted"


# tune a056, the real model's translations: searched with the direct one, the section on report
# data's refresh came 3rd; with the one through Spanish beside it, 1st (README, stop 48)
REFRESH = "How often is the data in reports refreshed?"
REFRESH_SECTION = "Informes i exportació > Limitacions"
DIRECT = "Quan es refresca la dades en els reports?"
SPANISH = "¿Cuál es la frecuencia con la que se actualiza el datos en los informes?"
THROUGH_SPANISH = "Quina és la freqüència amb la que es actualitzan els dades en els informes?"


def test_an_english_question_is_translated_through_spanish_too_for_the_embedded_model(bot) -> None:
    untranslated = [echo] * 30  # the extract's translation into English fails: it stands as written
    steps = [translation(DIRECT), translation(SPANISH), translation(THROUGH_SPANISH), *untranslated]
    model = EmbeddedScript(steps)
    result = bot(model).ask(REFRESH)
    asked = [request.messages[0].content.split(". Do not", 1)[0] for request in model.requests[:3]]
    assert asked == [
        "Translate the English question below into Catalan",
        "Translate the English question below into Spanish (castellano)",
        "Translate the Spanish (castellano) question below into Catalan",
    ]
    check = result.checks[0]
    assert check["text"] == DIRECT and check["also"] == {
        "check": "query_translation",
        "from": "en",
        "through": "es",
        "to": "ca",
        "ok": True,
        "text": THROUGH_SPANISH,
        "es": SPANISH,
    }
    assert result.retrieval.question == DIRECT  # the refusal, focus and extract read the first one
    assert sections(result)[0] == REFRESH_SECTION
    assert "15 minuts" in result.answer.resposta


def test_the_first_translation_alone_finds_the_refresh_section_lower(bot) -> None:
    """What the second translation is for. A hosted model translates once."""
    model = ScriptedModel([translation(DIRECT), answer_from_last_fragment])
    result = bot(model).ask(REFRESH)
    assert "also" not in result.checks[0]
    assert not any("Spanish" in request.messages[0].content[:80] for request in model.requests)
    assert sections(result)[0] != REFRESH_SECTION and REFRESH_SECTION in sections(result)


def test_the_translation_through_spanish_is_searched_alone_when_the_direct_one_fails(bot) -> None:
    """Tune a276 with the real model: "…does my endpoint have to be https or is plain http ok?"
    lost its direct translation (an added "URL") and was searched in English, which missed the
    events list; the one through Spanish, searched instead, found it (README, stop 54)."""
    untranslated = [echo] * 30
    steps = [translation("Com elimino un projecte?"), translation(SPANISH), translation(THROUGH_SPANISH)]
    model = EmbeddedScript([*steps, *untranslated])
    result = bot(model).ask(REFRESH)
    check = result.checks[0]
    assert check["ok"] is False and check["why"] == "the instruction's example"
    assert check["also"]["ok"] is True and check["also"]["text"] == THROUGH_SPANISH
    assert result.retrieval.question == THROUGH_SPANISH
    assert REFRESH_SECTION in sections(result)


def test_the_refusal_reads_the_search_by_the_first_translation_alone(bot) -> None:
    """Blind a156 with the real model: refused with one translation, answered from the Slack page
    once the second was searched beside it (P 0.53, threshold 0.50): the decision's signals were
    calibrated on a search by one text, and BM25 scores two texts higher."""
    steps = [
        translation("Pots ajudar-me a escriure un missatge de cumpleaños per a la tia?"),
        translation("¿Podrías ayudarme a escribir un mensaje de cumpleaños para mi hermana?"),
        translation("Pots ajudarme a escriure un missatge de cumpleaños per a la meva hermana?"),
    ]
    model = EmbeddedScript(steps)
    result = bot(model).ask("can you help me write a birthday message for my sister?")
    assert result.checks[0]["also"]["ok"] is True and model.calls == 3
    assert result.outcome == "refused", result.checks[1]


def test_a_translation_through_spanish_that_fails_its_second_step_searches_the_spanish() -> None:
    model = ScriptedModel([translation(SPANISH), translation("Com elimino un projecte?")])
    through = translate_through(REFRESH, "en", "es", "ca", model, TRANSLATOR_SYSTEM, 0.1)
    assert through.text == SPANISH and through.check["why"] == "the instruction's example"


def test_a_translation_through_spanish_that_fails_its_first_step_is_none() -> None:
    model = ScriptedModel([translation("¿Cómo puedo eliminar un proyecto?")])  # tune a194's
    through = translate_through(REFRESH, "en", "es", "ca", model, TRANSLATOR_SYSTEM, 0.1)
    assert through.text is None and through.check["why"] == "es: the instruction's example"
    assert model.calls == 1
