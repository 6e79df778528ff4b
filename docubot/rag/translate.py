"""Translating a verified answer into the language the question was asked in.

The small local model often answers a Spanish or English question with its Catalan quotes, and a
note asking it to answer again in the question's language does not change that (measured: README,
"Whole answers with the local model"). Translating the answer alone is a short task it does: one
call with the same system prompt (so llama.cpp's prefix cache still holds it) and a user message
holding only the answer and an English instruction. The translation is then checked like any answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from docubot.llm import ChatRequest, Message
from docubot.rag.contract import ContractError, json_object
from docubot.rag.focus import ROW_LABEL_DASH
from docubot.text import sentences
from docubot.text.language import FENCED_CODE

LANGUAGE_NAMES = {"ca": "Catalan", "es": "Spanish (castellano)", "en": "English"}
TRANSLATOR_SYSTEM = (
    "You are a professional translator. You translate text faithfully from one language into "
    "another and never answer or add anything."
)
"""The system prompt when the model only translates (the docs' passages answer): with DocuBot's
answering rules, in Catalan, the local model copied a Catalan passage back as its "Spanish"
translation 4 times in 6; with this one 2 in 6, and through English (`PIVOT`) it translated."""
PIVOT = "en"
"""The language a translation the model would not make directly goes through (Catalan and
Spanish are close enough that it copies one for the other)."""


def translation_request(
    system: str,
    answer: str,
    source: str,
    target: str,
    max_tokens: int,
    temperature: float,
    rejected: str | None = None,
) -> ChatRequest:
    """The request translating `answer` from `source` into `target`; the reply is `{"resposta": "…"}`.
    The instruction is in English whatever the languages: asked in Spanish to translate Catalan,
    the local model copied the Catalan back in 2 of 3 tries; asked in English, it translated 3 of 3.
    `rejected`: why the last translation of it was refused, said so that the next one is faithful."""
    kept = "button names and markers like [P1]" if _MARKER.search(answer) else "and button names"
    prompt = (
        f"Translate this {LANGUAGE_NAMES[source]} text into {LANGUAGE_NAMES[target]}. Keep numbers, "
        f"names, menu paths{',' if _MARKER.search(answer) else ''} {kept} exactly as written. Reply "
        "with the translated text only."
        + (f" {correction(rejected)}" if rejected else "")
        + f"\n\n{LANGUAGE_NAMES[source].split()[0]}: {answer}"
    )
    return ChatRequest(
        system=system,
        messages=(Message("user", prompt),),
        json_schema=translation_schema(),
        max_tokens=max_tokens,
        temperature=temperature,
        free_string=True,
    )


def correction(rejected: str) -> str:
    """What a second translation is told about the first one, refused for `rejected`."""
    return (
        f"A first translation was refused ({rejected}): translate again, word for word, adding, "
        "dropping and changing nothing."
    )


def translation_schema(field: str = "resposta") -> dict[str, Any]:
    """A reply holding one string, `field` (an answer's translation: `resposta`)."""
    return {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}


def parse_translation(text: str, field: str = "resposta") -> str:
    """The translated text, `field` of the reply; ContractError when there is none."""
    candidate = json_object(text)
    try:
        data = json.loads(candidate) if candidate is not None else None
    except json.JSONDecodeError as exc:
        raise ContractError(f"invalid JSON in the translation: {exc.msg}") from exc
    translated = data.get(field) if isinstance(data, dict) else None
    text = _PREAMBLE.sub("", translated.strip(), count=1) if isinstance(translated, str) else ""
    if not text.strip():
        raise ContractError(f"the translation has no `{field}`")
    return text.strip()


_PREAMBLE = re.compile(
    r"^(?:here (?:is|are)|aqu[ií] (?:est[aá]n?|tienes)|(?:the |la |el )?(?:translat|traduc)\w*)\b"
    r"[^:\n]{0,60}:\s+(?=\S)",
    re.IGNORECASE,
)
"""A lead the model may write before its translation, which is not one ("Here are the translated
text: …", fresh a107; "Aquí está la traducción: …"): it is dropped."""


_KEPT = re.compile(
    FENCED_CODE.pattern + r"|`[^`\n]+`|(?<!\*)\*[^*\n]*>[^*\n]*\*(?!\*)|(?<!\*)\*[A-ZÀ-Ý][^*\n]{0,60}\*(?!\*)"
    r"|(?<=\]\()[^)\s]+(?=\))|\*\*[^*\n]{1,40}\*\*"
)
"""What a translation must not touch: code (`nub_live_`, `POST /v1/webhooks`, a fenced block), menu paths
(*Configuració > API > Tokens*, or in bold: **⋯ > Mou a un altre projecte**, which the local model
wrote "tarea > mover"), labels in italics that open with a capital (an option, a state, a field:
*Desplaça automàticament les dates*, *En curs*) and the buttons clicked (`_CLICKED`), the words the
user will see on the screen, as they are; and the targets of links
("[Slack](../integracions/slack.md)": the local model wrote "integraciones"). A lowercase italic
(*exportar*) is an emphasis, translated."""
_CLICKED = re.compile(
    r"\b(?:clica|clic(?:k)?(?:\s+(?:a|al|en|on))?|tria|prem|pulsa|selecciona|escull|elige|choose|select|press"
    r"|bot[oó]n?|button|amb|con|with)\s+$",
    re.IGNORECASE,
)
"""What stands before a bold label that is a button ("fes clic a **Nou webhook**", "desa'l amb
**Desa la cerca**"), not an emphasis ("**no permet exportar**"): the local model wrote "New
webhook" and "Regenera el enlace", which the screen does not show, and blind a141's Spanish answer
("¿cómo me guardo un filtro…?") named no button."""
_MARKER = re.compile(r"\[P(\d+)\]")
PIECE_CHARS = 240
"""An extract translated piece by piece is cut into whole sentences of about this many characters."""


def masked(text: str) -> tuple[str, list[str]]:
    """`text` with each piece of code, menu path, label, button and link target replaced by a marker
    `[P1]`, `[P2]`…, and the pieces in order (asked to translate "*Configuració > API*", the local
    model wrote "configuration > api", which the claim check then rejected)."""
    kept: list[str] = []

    def mark(match: re.Match[str]) -> str:
        piece = match.group(0)
        if piece.startswith("**") and " > " not in piece and not _CLICKED.search(text, 0, match.start()):
            return piece  # an emphasis: translated
        kept.append(piece)
        return f"[P{len(kept)}]"

    return _KEPT.sub(mark, text), kept


def unmasked(text: str, kept: Sequence[str]) -> str | None:
    """The translation with its markers put back; None when one is lost, repeated or invented. A
    lost code block is put back at the end: the local model dropped the marker of the block closing
    an extract ("…per evitar atacs de repetició. [P3]") in both whole translations."""
    found = [int(n) for n in _MARKER.findall(text)]
    blocks = [n for n, piece in enumerate(kept, 1) if FENCED_CODE.fullmatch(piece)]
    lost = [n for n in blocks if n not in found]
    if sorted(found + lost) != list(range(1, len(kept) + 1)):
        return None
    text += "".join(f" [P{n}]" for n in lost)
    out = ""
    for n, between in enumerate(_MARKER.split(text)):
        if n % 2 == 0:
            out += between.lstrip() if out.endswith("\n") else between
        elif FENCED_CODE.fullmatch(piece := kept[int(between) - 1]):
            out = f"{out.rstrip()}\n{piece}\n\n"  # on lines of its own: the model wrote "…: [P3]" in one line
        else:
            out += piece
    return out.strip()


def with_row_labels(translated: str, source: str) -> str:
    """`translated` with the labels of the table rows spelled out in `source` ("Enterprise — Preu…")
    written back as the docs write them: the local model wrote the plans "Empresa — Precio…" and
    "Inicio — Precio…" (tune a003, a211, a230), and a marker in their place was dropped (3 tries of 4).
    Left as it is when the translation does not hold as many rows."""
    labels = _ROW_LABEL.findall(source)
    rows = list(_TRANSLATED_ROW_LABEL.finditer(translated))
    if not labels or len(rows) != len(labels):
        return translated
    for row, label in zip(reversed(rows), reversed(labels), strict=True):
        translated = f"{translated[: row.start(1)]}{label} {ROW_LABEL_DASH} {translated[row.end() :]}"
    return translated


_LABEL = rf"(?:^|(?<=[.;] ))([^\s{ROW_LABEL_DASH}.;:\-][^{ROW_LABEL_DASH}.;:\n]{{0,40}}?)"
"""A row's label: at the start or after a sentence or cell, up to 40 characters with no dash or stop."""
_CELLS_FOLLOW = r"(?=[^.;:\n]{1,60}: )"
_ROW_LABEL = re.compile(rf"{_LABEL} {ROW_LABEL_DASH} {_CELLS_FOLLOW}")
"""A table row spelled out by the focus step: its label (first cell), then " — " and its cells
("Starter — Preu (per usuari i mes): 6 €; …")."""
_TRANSLATED_ROW_LABEL = re.compile(rf"{_LABEL} [{ROW_LABEL_DASH}–-] {_CELLS_FOLLOW}")
"""The same row in a translation, where the model may write the dash as "-" or "–" ("Empresa - Precio…")."""


def pre_edited(catalan: str) -> str:
    """Catalan text rewritten, meaning unchanged, into words the local model translates right
    (controlled-language pre-editing): `_PRE_EDITS` in order, each measured on the real model.
    Code blocks stay as the docs write them."""
    segments = FENCED_CODE.split(catalan)
    for n, segment in enumerate(segments):
        if not FENCED_CODE.fullmatch(segment):
            for pattern, replacement in _PRE_EDITS:
                segment = pattern.sub(replacement, segment)
            segments[n] = segment
    return "".join(segments)


def _capitalised_like(replacement: str) -> Callable[[re.Match[str]], str]:
    """A substitution writing `replacement` with the matched text's first letter's case."""

    def substitute(match: re.Match[str]) -> str:
        first = match.group(0)[0]
        return (replacement[0].upper() if first.isupper() else replacement[0]) + replacement[1:]

    return substitute


_BEFORE_A_NOUN = (
    "el",
    "al",
    "del",
    "un",
    "cada",
    "nou",
    "teu",
    "seu",
    "vostre",
    "nostre",
    "aquest",
    "quin",
    "qualsevol",
    "mateix",
)
"""Words after which "pla" is the noun (a plan): articles, determiners and possessives."""

_PRE_EDITS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str] | str], ...] = (
    # "Il·limitats" (unlimited) became "Infinitos" in Spanish 3 tries of 3 (tune a003, a211),
    # "Sense límit" "Sin límite" 2 of 2; in English both became "Unlimited".
    (re.compile(r"\b[iI]l[·•]?limitat(?:s|da|des)?\b"), _capitalised_like("sense límit")),
    # the ela geminada written "ll": "Il·limitats" was read "Limitations" in 6 tries of 6.
    (re.compile(r"([lL])[·•]([lL])"), r"\1\2"),
    # "Preu (per usuari i mes)" became "Price (for user and business)" in English in 4 tries of 4
    # (tune a006); "per usuari al mes" "per user per month" in 2 of 2, in Spanish "por usuario al
    # mes" in 6 of 7 ("mensual per usuari" left "Preu" in Catalan 5 times in 7).
    (re.compile(r"\bper (\w+) i mes\b"), r"per \1 al mes"),
    # "Ves a *Configuració > …*" (go to) became "You are …" in 3 tries of 4 and "Vas a …" in 4 of 4
    # (tune a021, a051); "Obre *…*" became "Open …" and "Abre …" in 8 of 8.
    (re.compile(r"\b[vV]es al\b"), _capitalised_like("obre el")),
    (re.compile(r"\b[vV]es a\b"), _capitalised_like("obre")),
    # "pla" (a plan) after a determiner or before a name became "menú", "plato" or "pla" in Spanish
    # in 5 of 7 sentences of the plans page and "menu", "level", "platform" or "page" in English in
    # 4 of 7 ("El menú **Starter** está pensado…", five answers of a whole run); written "plan",
    # Spanish said "plan" 7 times of 7 and English 6 of 7. Only the noun: "text pla" is plain text.
    (re.compile(rf"\b((?i:{'|'.join(_BEFORE_A_NOUN)})\s+)pla\b"), r"\1plan"),
    (re.compile(r"\b[pP]la(?=\s+\**[A-Z])"), _capitalised_like("plan")),
)


def sentence_groups(text: str) -> list[str]:
    """`text` cut into pieces of whole sentences, each up to about PIECE_CHARS characters (a longer
    sentence is a piece of its own), for a translation made piece by piece; a code block stays
    whole, in the piece of the sentence that introduces it."""
    groups: list[str] = []
    after_code = False  # what follows a code block starts a piece of its own
    for segment in FENCED_CODE.split(text):
        if FENCED_CODE.fullmatch(segment):
            if groups:
                groups[-1] += f"\n{segment}"
            else:
                groups.append(segment)
            after_code = True
            continue
        for sentence in sentences(segment):
            if groups and not after_code and len(groups[-1]) + 1 + len(sentence) <= PIECE_CHARS:
                groups[-1] += f" {sentence}"
            else:
                groups.append(sentence)
            after_code = False
    return groups


HEAD_CHARS = 160
"""The most characters of the extract's opening sentences translated and shown first (at least one
sentence): Spanish and English users waited for the whole extract's translation before any word
of it (median 14.1 s and 16.9 s to the first token, README stop 49)."""


def first_piece(text: str, most: int = HEAD_CHARS) -> tuple[str, str] | None:
    """`text` cut after its opening whole sentences (as many as fit in `most` characters, at least
    one, none introducing a code block) into the head, translated and shown first, and the rest
    (its leading whitespace kept); None when the whole text fits in `most`, is one such piece or
    opens with code."""
    if len(text) <= most:
        return None
    code = FENCED_CODE.search(text)
    ends = _sentence_ends(text, text[: code.start()] if code else text)
    cuts = [end for end in ends if text[end:].strip() and not FENCED_CODE.match(text[end:].lstrip())]
    fitting = [end for end in cuts if end <= most] or cuts[:1]
    if not fitting:
        return None
    return text[: fitting[-1]], text[fitting[-1] :]


def after_sentences(text: str, count: int) -> str | None:
    """What follows the first `count` sentences of `text` (code blocks apart), stripped; None when
    nothing does."""
    ends = _sentence_ends(text, FENCED_CODE.sub(lambda m: " " * len(m.group(0)), text))
    rest = text[ends[count - 1] :].strip() if len(ends) > count else ""
    return rest or None


def _sentence_ends(text: str, prose: str) -> list[int]:
    """Where in `text` each sentence of `prose` (a prefix or a copy of it, code blanked) ends."""
    ends: list[int] = []
    for sentence in sentences(prose):
        at = text.find(sentence, ends[-1] if ends else 0)
        if at < 0:
            break
        ends.append(at + len(sentence))
    return ends
