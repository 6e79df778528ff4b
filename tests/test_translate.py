"""What a translation of the docs' passages keeps out of the model's hands, and puts back."""

from docubot.rag.translate import masked, plain_ela_geminada, translation_request, unmasked

PASSAGE = "Ves a *Configuració > API > Tokens*, fes clic a **Revoca** i copia `nub_live_`. Fet."


def test_code_and_menu_paths_become_markers_and_come_back_whole() -> None:
    text, kept = masked(PASSAGE)
    assert text == "Ves a [P1], fes clic a **Revoca** i copia [P2]. Fet."
    assert kept == ["*Configuració > API > Tokens*", "`nub_live_`"]
    english = "Go to [P1], click **Revoca** and copy [P2]. Done."
    back = unmasked(english, kept)
    assert back == "Go to *Configuració > API > Tokens*, click **Revoca** and copy `nub_live_`. Done."


def test_a_translation_that_loses_repeats_or_invents_a_marker_is_refused() -> None:
    _, kept = masked(PASSAGE)
    assert unmasked("Go to [P1] and copy it.", kept) is None
    assert unmasked("Go to [P1], [P1] and copy [P2].", kept) is None
    assert unmasked("Go to [P1], copy [P2] and [P3].", kept) is None


def test_emphasis_and_italics_without_a_path_are_translated() -> None:
    text, kept = masked("El pla **Starter** no permet *exportar* res.")
    assert kept == [] and text == "El pla **Starter** no permet *exportar* res."
    assert "markers like [P1]" not in translation_request("s", text, "ca", "en", 10, 0.1).messages[0].content


def test_the_ela_geminada_is_written_as_two_ls() -> None:
    written = plain_ela_geminada("Usuaris: Il·limitats; col·laboradors.")
    assert written == "Usuaris: Illimitats; collaboradors."
