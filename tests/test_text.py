"""The shared text layer: folding, one stopword list per language, stems, language identification."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from docubot.text import (
    content_stems,
    corpus_languages,
    detect_language,
    fold,
    fold_in_place,
    guess_language,
    query_tokens,
    question_parts,
    sentences,
    stopwords,
    tokenize,
)

TEXT_PACKAGE = Path(__file__).parents[1] / "docubot" / "text"


def test_tokens_are_stemmed_folded_and_free_of_stopwords() -> None:
    assert tokenize("Com exporto les contrasenyes?", "ca") == tokenize("exportar contrasenya", "ca")
    assert "de" not in tokenize("la configuració de l'espai", "ca")
    assert tokenize("Configuració", "ca") == tokenize("configuracio", "ca")
    assert tokenize("¿Cómo cambio la contraseña?", "es") == tokenize("cambio contraseñas", "es")
    assert tokenize("removing members", "en") == tokenize("remove member", "en")
    assert tokenize("col·laboradors", "ca") == tokenize("collaboradors", "ca")


def test_one_stopword_list_per_language_holds_both_old_catalan_lists() -> None:
    catalan = stopwords("ca")
    # from the BM25 list and from the extractive answers' list, which used to differ
    assert {"sota", "vaig", "quin", "quines", "fer", "cada", "perque", "aixo"} <= catalan
    assert {"como", "para", "que"} <= stopwords("es") and {"how", "what", "the"} <= stopwords("en")
    assert all(word == fold(word) for language in ("ca", "es", "en") for word in stopwords(language))
    assert tokenize("quin és el preu", "ca") == tokenize("preu", "ca")


def test_content_stems_drop_the_stopwords_of_every_language() -> None:
    assert content_stems("Quines són les passes per exportar?") == {"passe", "expor"}
    assert content_stems("What are these steps for exporting?") == {"steps", "expor"}
    assert content_stems("¿Cuáles son estos pasos?") == {"cuale", "pasos"}


def test_sentences_split_prose_and_markdown_lines() -> None:
    expected = ["Obre el menú.", "Tria Exportar.", "- Un punt"]
    assert sentences("Obre el menú. Tria Exportar.\n- Un punt") == expected


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("preu del pla?", "ca"),
        ("precio del plan?", "es"),
        ("how do I export", "en"),
        ("Puc connectar Nubelia amb Google Calendar?", "ca"),
        ("remove a member from the team", "en"),  # no marker word: the old rule said Catalan
    ],
)
def test_short_questions_get_their_language(text: str, language: str) -> None:
    assert guess_language(text) == language
    assert detect_language(text, fallback="es" if language != "es" else "en") == language


@pytest.mark.parametrize("text", ["2FA", "X-Nubelia-Signature", "403", ""])
def test_a_text_that_does_not_tell_gets_the_fallback_not_catalan(text: str) -> None:
    assert guess_language(text) is None
    assert detect_language(text, fallback="en") == "en"
    assert detect_language(text, fallback="es") == "es"


def test_the_corpus_language_weighs_as_a_prior_on_near_spanish_catalan() -> None:
    assert guess_language("Com exporto un informe a PDF?") == "es"  # the model alone: 64 % Spanish
    assert detect_language("Com exporto un informe a PDF?", fallback="ca") == "ca"
    assert detect_language("¿Cómo duplico una tarea?", fallback="ca") == "es"
    assert detect_language("How do I duplicate a task?", fallback="ca") == "en"


def test_a_corpus_gives_its_majority_language_to_the_texts_that_do_not_tell() -> None:
    texts = [
        "To archive a project, open its settings and choose Archive.",
        "Invoices are sent by email on the first day of every month.",
        "Per arxivar un projecte, obre'n la configuració.",
        "2FA",
    ]
    assert corpus_languages(texts, fallback="es") == (["en", "en", "ca", "en"], "en")
    assert corpus_languages(["2FA", "403"], fallback="es") == (["es", "es"], "es")
    assert corpus_languages([], fallback="ca") == ([], "ca")


def test_the_text_layer_imports_nothing_from_the_layers_above() -> None:
    for path in TEXT_PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top != "docubot" or name.startswith(("docubot.text", "docubot.config")), (path, name)
                assert top == "docubot" or top in sys.stdlib_module_names or top in {"Stemmer", "py3langid"}


def test_a_question_too_short_to_tell_is_searched_in_every_language() -> None:
    assert query_tokens("Zirconi", fallback="en") == ["zirconi", "zircon"]  # English, then Catalan stems
    assert query_tokens("Com exporto un informe a PDF?", fallback="ca") == tokenize(
        "Com exporto un informe a PDF?", "ca"
    )


@pytest.mark.parametrize(
    ("message", "parts"),
    [
        (
            "quant temps tinc per acceptar una invitació? i l'enllaç per restablir la contrasenya "
            "quant dura?",
            [
                "quant temps tinc per acceptar una invitació?",
                "i l'enllaç per restablir la contrasenya quant dura?",
            ],
        ),
        (
            "Quin suport tenim amb el pla Starter? hi ha xat?",
            ["Quin suport tenim amb el pla Starter?", "hi ha xat?"],
        ),
        ("Hola? Com exporto un informe?", ["Hola? Com exporto un informe?"]),  # a greeting is no part
        ("Vull editar tasques. Em pujarà la factura?", ["Vull editar tasques. Em pujarà la factura?"]),
        ("Com exporto un informe?", ["Com exporto un informe?"]),
        (  # a second question joined by "y" and a question word (holdout a026)
            "¿Cuántos días dura la prueba gratis y cuánto cuesta luego el plan?",
            ["¿Cuántos días dura la prueba gratis", "y cuánto cuesta luego el plan?"],
        ),
        (
            "which scope does my token need to read tasks, and how many come back per page?",
            ["which scope does my token need to read tasks,", "and how many come back per page?"],
        ),
        ("Puc saber qui i quan ha modificat una tasca?", ["Puc saber qui i quan ha modificat una tasca?"]),
        ("Com i quan es renova el pla?", ["Com i quan es renova el pla?"]),
    ],
)
def test_a_message_asking_several_questions_is_split_into_them(message, parts) -> None:
    assert question_parts(message) == parts


def test_the_prompt_asks_for_every_part_in_the_question_language() -> None:
    from docubot.rag.prompt import Fragment, user_message

    shown = [Fragment("u", "P > S", "Les invitacions caduquen als 7 dies.", ())]
    both = user_message("Quant duren les invitacions? i l'enllaç de la contrasenya?", shown)
    assert both.endswith("(Respon en català. La pregunta té 2 parts: respon-les totes.)")
    english = user_message("How long do invitations last? and the password link?", shown)
    assert "The question has 2 parts: answer all of them." in english
    assert "parts" not in user_message("Quant duren les invitacions?", shown)


def test_fold_in_place_keeps_every_character_where_it_was() -> None:
    text = "Hi ha integració amb l'aplicació? Cancel·la-ho"
    folded = fold_in_place(text)
    assert folded == "hi ha integracio amb l'aplicacio? cancel·la-ho"
    assert len(folded) == len(text) and folded.index("?") == text.index("?")
