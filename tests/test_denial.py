"""Finding the sentence that denies what a "can I…?" question asks (docubot.rag.denial), on the
sample docs' own sentences."""

import pytest

from docubot.rag.denial import asks_ability, negates, stated_denial
from docubot.rag.prompt import Fragment

EXPIRY = (
    "A la versió 2026.2, els tokens d'accés són vàlids durant **90 dies** a partir del moment en què es "
    "creen. Set dies abans de la caducitat, el creador del token rep un correu electrònic d'avís. La "
    "durada d'un token no es pot allargar: abans que caduqui, cal rotar-lo o generar-ne un de nou."
)
ACTIVITY = (
    "La pestanya **Activitat**, al costat dels comentaris, mostra l'historial complet de la tasca. "
    "L'historial no es pot modificar ni esborrar, ni tan sols pels administradors."
)
PASSWORD = (
    "Si no pots iniciar la sessió perquè no recordes la contrasenya, fes clic a **Has oblidat la "
    "contrasenya?** a la pantalla d'inici de sessió."
)
STARTER = (
    "El pla **Starter** està pensat per a equips petits que comencen, però **no permet exportar "
    "projectes ni informes a CSV**. Si necessites l'exportació CSV, has de passar al pla **Business**."
)


def fragments(*texts: str) -> list[Fragment]:
    return [Fragment("wiki/x", "X", text, ()) for text in texts]


def test_the_sentence_denying_what_is_asked_is_found_in_its_fragment() -> None:
    found = stated_denial(
        "Puc allargar un token de l'api que està a punt de caducar?", fragments(ACTIVITY, EXPIRY)
    )
    assert found is not None and found.fragment == 2
    assert found.text.startswith("La durada d'un token no es pot allargar")


def test_a_denied_word_later_in_the_clause_counts() -> None:
    found = stated_denial("Soc admin, puc esborrar l'historial d'activitat d'una tasca?", fragments(ACTIVITY))
    assert found is not None and "no es pot modificar ni esborrar" in found.text


@pytest.mark.parametrize(
    ("question", "texts"),
    [
        ("Quant dura un token?", (EXPIRY,)),  # not a "can I" question
        ("Puc iniciar sessió amb el meu compte de Google?", (PASSWORD,)),  # a condition; no Google
        ("Puc iniciar la sessió si no recordo la contrasenya?", (PASSWORD,)),  # a condition
        ("Puc exportar a CSV amb el pla Business?", (STARTER,)),  # the denial is about Starter
        ("Puc allargar un token? i quants dies dura?", (EXPIRY,)),  # two questions
        ("Puc rotar un token?", (EXPIRY,)),  # "rotar" is not what is denied
    ],
)
def test_no_denial_where_the_docs_deny_something_else(question: str, texts: tuple[str, ...]) -> None:
    assert stated_denial(question, fragments(*texts)) is None


def test_a_denial_about_the_plan_the_question_names_is_found() -> None:
    found = stated_denial("Amb el Starter puc exportar els informes a CSV?", fragments(STARTER))
    assert found is not None and "no permet exportar" in found.text


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("puc canviar el subdomini?", True),
        ("Can I extend a token?", True),
        ("¿Se puede exportar a PDF?", True),
        ("Com exporto un informe?", False),
        ("How long does a token last?", False),
    ],
)
def test_questions_asking_whether_something_can_be_done(question: str, expected: bool) -> None:
    assert asks_ability(question) is expected


def test_negations_in_each_language() -> None:
    assert negates("No es pot allargar.") and negates("You can't extend it.") and negates("No se puede.")
    assert not negates("La pestanya Activitat mostra l'historial complet de la tasca.")
