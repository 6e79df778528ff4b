"""What a question must be before anything is called: checked at the edge, the same on every backend.

A question is refused (`QuestionError`, HTTP 400) when it is empty, too long, or carries control
characters (NUL and the like: PostgreSQL cannot store them, and no person types them). A question
that passes but says nothing ("...", "?", a lone letter) is *content-free*: DocuBot answers it with
a request to ask a real question, without looking anything up or caching anything.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from docubot.rag.contract import Answer

EMPTY_QUESTION_OUTCOME = "empty_question"
EMPTY_QUESTION_TEXT = (
    "Si us plau, escriu una pregunta sobre la documentació, per exemple: «Com exporto un informe a PDF?»"
)
_ALLOWED_CONTROLS = frozenset("\t\n\r")
_WORD = re.compile(r"\w{2,}")


class QuestionError(ValueError):
    """The question cannot be asked as it is (empty, too long, control characters); nothing was called."""


def checked_question(text: str, max_chars: int) -> str:
    """The question without surrounding whitespace; QuestionError when it cannot be asked."""
    question = text.strip()
    if not question:
        raise QuestionError("the question is empty")
    if len(question) > max_chars:
        raise QuestionError(
            f"the question is {len(question)} characters long; the limit is "
            f"{max_chars} (DOCUBOT_MAX_QUESTION_CHARS)"
        )
    controls = sorted({c for c in question if _is_control(c)})
    if controls:
        shown = ", ".join(f"U+{ord(c):04X}" for c in controls)
        raise QuestionError(f"the question contains control characters ({shown}); remove them and ask again")
    return question


def is_content_free(question: str) -> bool:
    """True when the question has no word of two or more letters or digits ("...", "?", "a")."""
    return _WORD.search(question) is None


def please_ask(categories: Sequence[str]) -> Answer:
    """The answer to a content-free question: ask a real one (nothing was looked up)."""
    category = "altres" if "altres" in categories else categories[-1]
    return Answer(categoria=category, resposta=EMPTY_QUESTION_TEXT, fonts=[], confianca="baixa")


def _is_control(character: str) -> bool:
    return unicodedata.category(character) == "Cc" and character not in _ALLOWED_CONTROLS
