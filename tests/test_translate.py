"""What a translation of the docs' passages keeps out of the model's hands, and puts back."""

import json

import pytest

from docubot.rag.query_translation import query_request
from docubot.rag.translate import (
    TRANSLATOR_SYSTEM,
    after_sentences,
    first_piece,
    masked,
    parse_translation,
    pre_edited,
    sentence_groups,
    translation_request,
    unmasked,
    with_row_labels,
)

PASSAGE = "Ves a *Configuració > API > Tokens*, fes clic a **Revoca** i copia `nub_live_`. Fet."


def test_code_menu_paths_and_buttons_become_markers_and_come_back_whole() -> None:
    text, kept = masked(PASSAGE)
    assert text == "Ves a [P1], fes clic a [P2] i copia [P3]. Fet."
    assert kept == ["*Configuració > API > Tokens*", "**Revoca**", "`nub_live_`"]
    english = "Go to [P1], click [P2] and copy [P3]. Done."
    back = unmasked(english, kept)
    assert back == "Go to *Configuració > API > Tokens*, click **Revoca** and copy `nub_live_`. Done."


def test_a_translation_that_loses_repeats_or_invents_a_marker_is_refused() -> None:
    _, kept = masked(PASSAGE)
    assert unmasked("Go to [P1] and copy [P3].", kept) is None
    assert unmasked("Go to [P1], [P1], click [P2] and copy [P3].", kept) is None
    assert unmasked("Go to [P1], click [P2], copy [P3] and [P4].", kept) is None


def test_a_button_is_kept_as_the_screen_shows_it() -> None:
    """Fresh a113 and a115, with the real model: "fes clic a **Nou webhook**" became "click on **New
    webhook**" and "**Regenera l'enllaç**" "**Regenera el enlace**", buttons the screen does not show."""
    text, kept = masked("Fes clic al botó **Nou webhook** o tria **Regenera l'enllaç**.")
    assert text == "Fes clic al botó [P1] o tria [P2]."
    assert kept == ["**Nou webhook**", "**Regenera l'enllaç**"]


def test_a_button_named_by_what_it_is_done_with_is_kept() -> None:
    """Blind a141: "desa'l amb **Desa la cerca**" is a button, though no click verb stands before it."""
    text, kept = masked("Desa'l amb **Desa la cerca**. Save it with **Save search**.")
    assert text == "Desa'l amb [P1]. Save it with [P2]."
    assert kept == ["**Desa la cerca**", "**Save search**"]


def test_a_menu_path_in_bold_is_kept_as_the_screen_shows_it() -> None:
    """answers.jsonl a205 and a217, with the real model: "(**⋯ > Mou a un altre projecte**)" and
    "amb **⋯ > Duplica**" came back as "tarea > mover" and "with > duplicate", paths the claim check
    refused, and the Spanish and English answers stayed in Catalan."""
    text, kept = masked(
        "Mou-la des del menú (**⋯ > Mou a un altre projecte**) o duplica-la amb **⋯ > Duplica**."
    )
    assert text == "Mou-la des del menú ([P1]) o duplica-la amb [P2]."
    assert kept == ["**⋯ > Mou a un altre projecte**", "**⋯ > Duplica**"]


def test_emphasis_and_italics_without_a_path_are_translated() -> None:
    text, kept = masked("El pla **Starter** no permet *exportar* res.")
    assert kept == [] and text == "El pla **Starter** no permet *exportar* res."
    assert "markers like [P1]" not in translation_request("s", text, "ca", "en", 10, 0.1).messages[0].content


def test_a_label_in_italics_is_kept_as_the_screen_shows_it() -> None:
    """answers.jsonl a206, with the real model: "l'opció *Desplaça automàticament les dates*" came
    back as "*Desplaza automáticamente las fechas*", an option the screen does not show."""
    text, kept = masked("Si actives l'opció *Desplaça automàticament les dates* a *Projecte > Cronograma*…")
    assert text == "Si actives l'opció [P1] a [P2]…"
    assert kept == ["*Desplaça automàticament les dates*", "*Projecte > Cronograma*"]
    assert masked("Quatre nivells: *Baixa*, *Normal* i *Urgent*.")[1] == ["*Baixa*", "*Normal*", "*Urgent*"]


def test_the_ela_geminada_is_written_as_two_ls() -> None:
    assert pre_edited("Els col·laboradors i la cel·la.") == "Els collaboradors i la cella."


def test_unlimited_is_written_without_a_limit() -> None:
    """tune a003 and a211, with the real model: "Usuaris: Il·limitats" came back "Usuarios: Infinitos"."""
    assert pre_edited("Usuaris: Il·limitats; projectes il·limitats.") == (
        "Usuaris: Sense límit; projectes sense límit."
    )


def test_per_user_and_month_is_written_per_user_a_month() -> None:
    """tune a006, with the real model: "Preu (per usuari i mes)" came back "Price (for user and business)"."""
    assert pre_edited("Preu (per usuari i mes): 22 €") == "Preu (per usuari al mes): 22 €"


def test_go_to_is_written_open() -> None:
    """tune a021 and a051, with the real model: "Ves a *Configuració > API > Webhooks*" came back
    "You are *Configuració > API > Webhooks*"."""
    assert pre_edited("Ves a *Configuració > Membres* o ves al teu perfil.") == (
        "Obre *Configuració > Membres* o obre el teu perfil."
    )
    assert pre_edited("Reves a vesper.") == "Reves a vesper."  # whole words only


def test_a_plan_is_written_plan() -> None:
    """Five answers of a whole run, with the real model: "El pla **Starter** està pensat…" came back
    "El menú **Starter** está pensado…", and "un pla superior" "un plato superior"."""
    assert pre_edited("El pla **Starter** i un pla superior; passa al pla Business.") == (
        "El plan **Starter** i un plan superior; passa al plan Business."
    )
    assert pre_edited("Pla Business") == "Plan Business"
    assert pre_edited("Exporta en text pla els plans Business.") == "Exporta en text pla els plans Business."


def test_a_link_keeps_its_target_and_translates_its_text() -> None:
    """holdout a019 and a031, with the real model: "[Slack](../integracions/slack.md)" came back as
    "…/integraciones/slack.md", and the claim check refused the whole Spanish translation."""
    text, kept = masked("Connecta Nubelia amb [Slack](../integracions/slack.md).")
    assert text == "Connecta Nubelia amb [Slack]([P1])." and kept == ["../integracions/slack.md"]
    assert unmasked("Conecta Nubelia con [Slack]([P1]).", kept) == (
        "Conecta Nubelia con [Slack](../integracions/slack.md)."
    )


def test_a_second_translation_is_told_why_the_first_was_refused() -> None:
    first = translation_request("s", "Text.", "ca", "en", 10, 0.1).messages[0].content
    second = translation_request("s", "Text.", "ca", "en", 10, 0.1, "number «4»").messages[0].content
    assert "refused" not in first
    assert "A first translation was refused (number «4»)" in second and second.endswith("Catalan: Text.")


ROWS = (
    "Starter — Preu (per usuari i mes): 6 €; Usuaris: Fins a 10. Enterprise — Preu (per usuari i mes): 22 €."
)


def test_a_table_row_keeps_its_label_as_the_docs_write_it() -> None:
    """tune a003, a211 and a230, with the real model: the plans' rows came back "Empresa - Precio…"
    and "Inicio — Precio…"; a marker in the label's place was dropped in 3 tries of 4."""
    spanish = (
        "Inicio — Precio (por usuario y mes): 6 €; Usuarios: Hasta 10. "
        "Empresa - Precio (por usuario y mes): 22 €."
    )
    assert with_row_labels(spanish, ROWS) == (
        "Starter — Precio (por usuario y mes): 6 €; Usuarios: Hasta 10. "
        "Enterprise — Precio (por usuario y mes): 22 €."
    )


def test_row_labels_are_left_alone_when_the_rows_do_not_match() -> None:
    one_row = "Inicio — Precio (por usuario y mes): 6 €; Usuarios: Hasta 10."
    assert with_row_labels(one_row, ROWS) == one_row  # a row lost: which label is which is unknown
    prose = "Quan ho facis — i aviat — funcionarà."
    assert with_row_labels("When you do it — and soon — it will work.", prose) == (
        "When you do it — and soon — it will work."
    )


@pytest.mark.parametrize(
    "lead",
    [
        "Here are the translated text: ",
        "Here is the translation into Spanish:\n",
        "Aquí está la traducción: ",
    ],
)
def test_a_lead_before_the_translation_is_dropped(lead: str) -> None:
    """Fresh a107, with the real model: the answer opened "Here are the translated text:"."""
    reply = json.dumps({"resposta": f"{lead}To revoke a token, open [P1]."})
    assert parse_translation(reply) == "To revoke a token, open [P1]."


def test_a_sentence_of_the_docs_ending_in_a_colon_is_no_lead() -> None:
    for text in ("To translate a page: open it.", "Open the menu: click [P1].", "Here: [P1]."):
        assert parse_translation(json.dumps({"resposta": text})) == text


CURL = (
    "```bash\n# comprova que el token funciona\ncurl https://api.nubelia.example/v1/me \\\n"
    '  -H "Authorization: Bearer nub_live_X"\n```'
)


def test_a_code_block_is_kept_whole_and_put_back_on_lines_of_its_own() -> None:
    """The local model wrote the marker of a code block after "…`Bearer`:" on the same line, and
    the block then opened mid-line; pre-editing would have rewritten the Catalan of its comments."""
    said = "Envia el token a la capçalera `Authorization` amb l'esquema `Bearer`:"
    extract = f"{said}\n{CURL}\n\nVes a *Configuració*."
    text, kept = masked(extract)
    assert kept[2] == CURL and "curl" not in text
    translated = "Send the token in the [P1] header with the [P2] scheme: [P3] Open [P4]."
    assert unmasked(translated, kept) == (
        "Send the token in the `Authorization` header with the `Bearer` scheme:\n"
        f"{CURL}\n\nOpen *Configuració*."
    )
    assert CURL in pre_edited(f"{CURL} Ves a *Configuració*.")
    pieces = sentence_groups(extract)
    assert pieces[0].endswith(CURL) and pieces[1] == "Ves a *Configuració*."


def test_a_code_block_the_translation_lost_is_put_back_at_its_end() -> None:
    """fresh a102: the local model dropped the marker of the Python example closing the extract in
    both whole translations, and the extract was then translated piece by piece, one left in Catalan."""
    _, kept = masked(f"Rebutja les peticions de fa més de cinc minuts:\n{CURL}\n\nVes a *Configuració*.")
    assert unmasked("Drop requests older than five minutes: Open [P2].", kept) == (
        f"Drop requests older than five minutes: Open *Configuració*.\n{CURL}"
    )
    assert unmasked("Drop requests older than five minutes: [P1] Open.", kept) is None  # a path lost


OPENING = (
    "Si tens activada la verificació en dos passos, després de restablir la contrasenya et continuarem "
    "demanant el codi de verificació en iniciar la sessió."
)
REST = "Restablir la contrasenya no la desactiva. L'enllaç que rebràs per correu és vàlid durant 24 hores."


def test_an_extract_is_cut_after_its_opening_sentences_to_be_translated_first() -> None:
    """As many opening sentences as fit in 160 characters, at least one, are translated and shown
    first; an extract that fits whole, or opens with code, is translated whole."""
    assert first_piece(f"{OPENING} {REST}") == (OPENING, f" {REST}")
    assert first_piece(f"Sí. Es pot fer. {OPENING} {REST}") == ("Sí. Es pot fer.", f" {OPENING} {REST}")
    assert first_piece(f"{OPENING}\n{REST}") == (OPENING, f"\n{REST}")
    assert first_piece(REST) is None  # it fits whole
    assert first_piece(f"{CURL}\n\n{OPENING} {REST}") is None


def test_an_extract_whose_opening_introduces_code_is_translated_whole() -> None:
    """A sentence ending in ":" says nothing without the code it introduces; the cut never falls
    between them, and an extract opening so is translated whole."""
    introduced = f"Comprova el token amb aquesta ordre, que respon amb les dades del compte:\n{CURL}"
    assert first_piece(f"{introduced}\n\n{REST}") is None
    assert first_piece(f"Sí. {introduced}\n\n{REST}") == ("Sí.", f" {introduced}\n\n{REST}")


def test_the_rest_of_a_translation_follows_its_first_sentences() -> None:
    assert after_sentences(f"{OPENING} {REST}", 1) == REST
    assert after_sentences(f"{OPENING} {REST}", 2) == REST.split(". ", 1)[1]
    assert after_sentences(f"{OPENING} {REST}", 3) is None
    assert after_sentences(f"Primer. Segon:\n{CURL}", 1) == f"Segon:\n{CURL}"


def test_only_an_answers_translation_may_be_written_without_the_grammar() -> None:
    """A question's translation keeps it: its words decide the search, and written without it they
    found the answer for 2 to 3 fewer of 72 Spanish and English questions (README, stop 53)."""
    assert translation_request(TRANSLATOR_SYSTEM, PASSAGE, "ca", "en", 64, 0.1).free_string
    assert not query_request("How do I revoke a token?", "en", "ca", TRANSLATOR_SYSTEM, 0.1).free_string
