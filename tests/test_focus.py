"""Focused context on the real sample docs: retrieved by the real retriever, scored by the real e5."""

from __future__ import annotations

import pytest

from docubot.rag.answer import DocuBot
from docubot.rag.contract import Quote
from docubot.rag.evidence import verify_quotes
from docubot.rag.focus import (
    DOMINANCE_GAP,
    Unit,
    amounts,
    cap,
    dominates,
    focus,
    matching_rows,
    prune,
    quotable_rows,
    unit_scores,
    units,
)
from docubot.rag.prompt import Fragment, documentation_block, fragments_from
from docubot.store import Hit

LINK = "Quant de temps és vàlid l'enllaç per restablir la contrasenya?"
LINK_SENTENCE = "L'enllaç que rebràs per correu és vàlid durant 24 hores."
SESSIONS_SENTENCE = "Quan canvies la contrasenya, es tanquen totes les sessions obertes"
SECURITY = "wiki/administracio/seguretat-i-acces"
PLANS_TABLE = [
    "| Pla | Preu (per usuari i mes) | Usuaris | Emmagatzematge | Exportació CSV | API i webhooks | Suport |",
    "|-----|------------------------|---------|----------------|----------------|----------------|---------|",
    "| Starter | 6 € | Fins a 10 | 10 GB | No | No | Correu electrònic |",
    "| Business | 12 € | Il·limitats | 100 GB | Sí | Sí | Correu electrònic i xat |",
    "| Enterprise | 22 € | Il·limitats | 1 TB | Sí | Sí | Gestor de compte dedicat |",
]


def words(text: str) -> int:
    return len(text.split())


@pytest.fixture
def retrieve(sample_settings, embedder):
    """question → (fragments best first, the similarity function DocuBot gives focus)."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)

    def run(question: str):
        result = bot.retriever.search(question)
        return fragments_from(result.hits), lambda texts: embedder.embed_documents(texts) @ result.vector

    return run


def test_a_pruned_fragment_keeps_the_sentence_that_answers(retrieve) -> None:
    fragments, similarity = retrieve(LINK)
    [section] = [f for f in fragments if f.section == "Seguretat i accés > Restablir la contrasenya"]
    pruned = prune(section, LINK, similarity)
    assert LINK_SENTENCE in pruned.text
    assert SESSIONS_SENTENCE in section.text and SESSIONS_SENTENCE not in pruned.text
    assert words(pruned.text) < words(section.text) / 2
    assert (pruned.url, pruned.section, pruned.hits) == (section.url, section.section, section.hits)


def test_tables_stay_whole_with_their_header_and_the_named_row_is_spelled_out(retrieve) -> None:
    question = "amb el Starter puc baixar-me els informes en csv?"
    fragments, similarity = retrieve(question)
    [plans] = [f for f in fragments if f.section == "Plans i facturació > Comparativa de plans"]
    pruned = prune(plans, question, similarity)
    assert "\n".join(PLANS_TABLE) in pruned.text
    assert "Starter — Preu (per usuari i mes): 6 €; Usuaris: Fins a 10;" in pruned.text
    assert "Exportació CSV: No;" in pruned.text and "Business —" not in pruned.text
    assert "no permet exportar projectes ni informes a CSV" in pruned.text  # the prose that answers


def test_a_dominant_first_fragment_is_shown_alone(retrieve) -> None:
    fragments, similarity = retrieve("Quant de temps es guarda el registre d'activitat?")
    assert len(fragments) > 1 and dominates(fragments)
    focused = focus("Quant de temps es guarda el registre d'activitat?", fragments, similarity, words)
    assert [f.section for f in focused.fragments] == ["Seguretat i accés > Registre d'activitat"]
    assert focused.check["dominant"] is True and focused.check["fragments"] == [len(fragments), 1]


def test_two_close_fragments_are_both_kept(retrieve) -> None:
    question = (
        "quant temps tinc per acceptar una invitació? i l'enllaç per restablir la contrasenya quant dura?"
    )
    fragments, similarity = retrieve(question)
    assert not dominates(fragments)
    urls = {f.url for f in focus(question, fragments, similarity, words).fragments}
    assert {SECURITY, "wiki/administracio/membres-i-permisos"} <= urls


def fragment(score: float, text: str = "text") -> Fragment:
    return Fragment(f"u{score}", "S", text, (Hit(f"h{score}", text, {}, score),))


def test_dominance_is_a_cosine_lead_over_every_other_fragment() -> None:
    assert dominates([fragment(0.90), fragment(0.90 - DOMINANCE_GAP - 0.001), fragment(0.80)])
    assert not dominates([fragment(0.90), fragment(0.89)])
    assert not dominates([fragment(0.86), fragment(0.90)])  # ranked first by BM25, not by cosine
    assert not dominates([fragment(0.95)])


def test_the_token_cap_drops_the_least_relevant_fragments_but_never_the_first() -> None:
    long = [fragment(0.9, "a " * 200), fragment(0.8, "b " * 200), fragment(0.7, "c " * 200)]
    assert cap(long, words, 10_000) == long
    assert cap(long, words, 450) == long[:2]
    assert cap(long, words, 10) == long[:1]


def test_repeated_units_from_chunk_overlap_are_shown_once() -> None:
    text = "Requisits:\n\n- tenir 12 caràcters;\n- un número.\n\n- un número."
    assert prune(fragment(0.9, text), "requisits?", lambda texts: [0.0] * len(texts)).text == (
        "Requisits:\n\n- tenir 12 caràcters;\n- un número."
    )


def test_quotes_are_verified_against_what_was_shown_and_map_to_their_source(retrieve) -> None:
    fragments, similarity = retrieve(LINK)
    shown = focus(LINK, fragments, similarity, words).fragments
    block = documentation_block(shown)
    assert LINK_SENTENCE in block and SESSIONS_SENTENCE not in block
    quotes = [Quote(fragment=9, cita=LINK_SENTENCE), Quote(fragment=1, cita=SESSIONS_SENTENCE)]
    [verified] = verify_quotes(quotes, shown)
    assert verified.text == LINK_SENTENCE and shown[verified.fragment - 1].url == SECURITY


ERRORS_TABLE = (
    "| Codi HTTP | Codi d'error | Significat |\n"
    "|-----------|--------------|------------|\n"
    "| 401 | `token_missing` | La petició no inclou la capçalera `Authorization`. |\n"
    "| 401 | `token_expired` | El token ha caducat. |\n"
    "| 401 | `token_revoked` | El token s'ha revocat. |"
)


@pytest.mark.parametrize(
    ("question", "row"),
    [
        (
            "m'han revocat el token, quin error em tornarà l'api?",
            "401 — Codi d'error: `token_revoked`; Significat: El token s'ha revocat.",
        ),
        (
            "Quin codi d'error surt si m'oblido de posar la capçalera Authorization?",
            "401 — Codi d'error: `token_missing`; Significat: La petició no inclou la capçalera "
            "`Authorization`.",
        ),
    ],
)
def test_a_row_the_question_describes_is_spelled_out(question, row) -> None:
    """answers.jsonl a009/a010: the model quoted the description cell and left out the code in the
    same row; no row label (all "401") is named, so the row sharing the most stems is spelled out."""
    assert matching_rows(ERRORS_TABLE, question) == [row]


def test_of_several_rows_with_the_named_label_the_one_whose_code_is_named_is_quoted() -> None:
    """answers.jsonl a209: "em surt un 401 amb token_missing…" named every 401 row, and the extract
    said the expired and revoked tokens' meanings too."""
    asked = "em surt un 401 amb token_missing quan crido l'api, que vol dir?"
    assert quotable_rows(ERRORS_TABLE, asked).named == [
        "401 — Codi d'error: `token_missing`; Significat: La petició no inclou la capçalera `Authorization`."
    ]
    assert len(quotable_rows(ERRORS_TABLE, "quins errors pot donar un 401?").named) == 3


def test_no_row_is_spelled_out_when_none_stands_out() -> None:
    assert matching_rows(ERRORS_TABLE, "Quins errors d'autenticació hi ha?") == []
    assert matching_rows(ERRORS_TABLE, "Què passa amb el token?") == []  # every row says token


def test_a_row_label_is_no_amount() -> None:
    """A "how many" question favours passages stating an amount: the "401" labelling an error
    table's row is none (tune a195); an error `429` still counts (tune a194 lost its passage)."""
    assert amounts("401 — Codi d'error: `token_missing`; Significat: La petició no inclou…") == set()
    assert amounts("l'API respon amb un error `429` i la capçalera `Retry-After`.") == {429.0}
    assert amounts("Introdueix el codi de sis xifres que et mostra l'aplicació.") == {6.0}
    assert amounts("Starter — Preu (per usuari al mes): 6 €; Usuaris: Fins a 10.") == {6.0, 10.0}


def test_a_question_word_is_no_subject_to_match() -> None:
    """tune a001: the "quant" of "Quant em costarà…?" gave "Mostra quantes tasques…" a stem bonus."""
    alike = lambda texts: [0.8] * len(texts)  # noqa: E731 — only the stems differ
    said = [
        Unit("prose", "Mostra quantes tasques té cada equip.", 0),
        Unit("prose", "El preu és de 12 €.", 1),
    ]
    first, second = unit_scores(said, "Quant costa?", alike)
    assert first == 0.8 and second > first  # the price holds a number; "quantes" earns nothing


def test_a_paragraph_wrapped_at_a_fixed_width_is_cut_into_its_sentences_not_its_lines() -> None:
    """Docs wrapped at a fixed width (the English corpus, evals/ferrule, most of it) were cut into
    a unit per line: half sentences, which the extract then said ("…the" alone at a line's end)."""
    text = (
        "Per exemple, si escrius\n"
        "#urgent #client a la primera línia, la tasca rebrà totes dues etiquetes. Les etiquetes no\n"
        "distingeixen entre majúscules i minúscules.\n"
        "Title\n"
        "=====\n"
        "### Heading\n"
        "- item one\n"
        "- item two"
    )
    assert [(u.kind, u.text) for u in units(text)] == [
        (
            "prose",
            "Per exemple, si escrius #urgent #client a la primera línia, la tasca rebrà totes dues "
            "etiquetes.",
        ),
        ("prose", "Les etiquetes no distingeixen entre majúscules i minúscules."),
        ("prose", "Title"),
        ("prose", "====="),
        ("prose", "### Heading"),
        ("list", "- item one\n- item two"),
    ]
