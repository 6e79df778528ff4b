"""Focused context: less and better text for a small model.

The retrieved fragments are cut down before they are shown:

1. **Dominance**: when the first fragment's best cosine beats every other fragment's by
   `DOMINANCE_GAP`, only that fragment is shown (measured on the tune questions: the gold page
   was the first fragment every time the gap was that wide), unless the message asks several
   questions ("…? i …?").
2. **Sentence pruning**: a long fragment keeps only the units (sentences, whole lists, code
   blocks) closest to the question: the cosine of each unit to the question (multilingual, so a
   Spanish or English question prunes Catalan docs too) plus a bonus for the question's content
   stems it holds, rarer stems weighing more. Tables are kept whole with their header, and a row
   whose label the question names ("Business") is also spelled out cell by cell under it. Units
   repeated by chunk overlap are dropped. The heading path stays in the fragment's header.
3. **Token cap**: the least relevant fragments go until the documentation fits `max_tokens`.

What the model is shown is what its quotes are verified against; each pruned fragment keeps its
url, section and hits, so a verified quote still maps to its source.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from docubot.rag.extremes import extreme_rows, rows_instead
from docubot.rag.numbers import numbers
from docubot.rag.prompt import Fragment, documentation_block
from docubot.rag.quantity import asks_quantity
from docubot.text import content_stems, fold, folded_words, question_parts, sentences

Similarity = Callable[[Sequence[str]], Sequence[float]]
"""Each text's similarity to the question (the embedder's cosine)."""
TokenCounter = Callable[[str], int]

CONTEXT_TOKENS = 900
"""Default cap on the documentation block (the system prompt and the question come on top)."""
DOMINANCE_GAP = 0.025
"""Cosine lead of the first fragment over all others from which it is shown alone."""
MIN_PRUNE_WORDS = 80
"""Shorter fragments are shown whole: there is little to gain and an answer to lose."""
MAX_UNITS = 5
"""Most units kept from one fragment, besides its tables."""
KEEP_WITHIN = 0.05
"""Units scoring within this of the fragment's best unit are kept (up to MAX_UNITS)."""
STEM_BONUS = 0.04
"""Score added per question stem a unit holds, divided by how many units of the fragment hold it."""
NUMBER_BONUS = 0.03
"""Score added to a unit holding an amount (`amounts`) when the question asks how many, how long,
how much."""
ASKING_STEMS = content_stems(
    "quant quanta quants quantes cuanto cuanta cuantos cuantas cuales which where when many much"
)
"""The stems of question words that are no stopwords: what asks, not what is asked about ("Quant em
costarà el Business…?" chose "Mostra quantes tasques…" for its "quant")."""
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
ROW_LABEL_DASH = "—"
"""What stands between a spelled-out table row's label and its cells ("Starter — Preu…: 6 €")."""


@dataclass(frozen=True)
class Unit:
    """A piece of a fragment that is kept or dropped as a whole."""

    kind: str
    """prose | list | table | code"""
    text: str
    line: int
    """Where it starts: sentences of one line are joined by a space, lines by a blank line."""


@dataclass
class Focused:
    fragments: list[Fragment]
    check: dict[str, Any] = field(default_factory=dict)
    """What focusing did, for the call log: fragments and tokens before and after."""


def focus(
    question: str,
    fragments: Sequence[Fragment],
    similarity: Similarity,
    count_tokens: TokenCounter,
    max_tokens: int = CONTEXT_TOKENS,
) -> Focused:
    """The fragments (best first) cut down to what answers `question`."""
    before = count_tokens(documentation_block(fragments))
    dominant = dominates(fragments) and len(question_parts(question)) == 1  # each part its fragment
    chosen = list(fragments[:1]) if dominant else list(fragments)
    pruned = [prune(f, question, similarity) for f in chosen]
    capped = cap(pruned, count_tokens, max_tokens)
    return Focused(
        capped,
        {
            "check": "focus",
            "fragments": [len(fragments), len(capped)],
            "tokens": [before, count_tokens(documentation_block(capped))],
            "dominant": dominant,
            "pruned": sum(p.text != f.text for p, f in zip(pruned, chosen, strict=True)),
        },
    )


def dominates(fragments: Sequence[Fragment]) -> bool:
    """The first fragment's best cosine leads every other's by DOMINANCE_GAP."""
    if len(fragments) < 2:
        return False
    first, *others = (max(h.score for h in f.hits) for f in fragments)
    return first - max(others) >= DOMINANCE_GAP


def prune(fragment: Fragment, question: str, similarity: Similarity) -> Fragment:
    """The fragment with its tables and the units closest to the question (a short one whole),
    without repeated units."""
    whole = units(fragment.text)
    parts = deduplicated(whole)
    if len(fragment.text.split()) >= MIN_PRUNE_WORDS:
        parts = _closest(parts, question, similarity)
    if len(parts) == len(whole) and not any(u.kind == "table" for u in parts):
        return fragment
    return replace(fragment, text=_joined(parts, question))


def _closest(parts: list[Unit], question: str, similarity: Similarity) -> list[Unit]:
    """The tables, and up to MAX_UNITS other units scoring within KEEP_WITHIN of the best."""
    candidates = [u for u in parts if u.kind != "table"]
    if not candidates:
        return parts
    scores = unit_scores(candidates, question, similarity)
    best = max(scores)
    ranked = sorted(zip(scores, range(len(candidates)), strict=True), reverse=True)
    keep = {id(candidates[i]) for s, i in ranked[:MAX_UNITS] if s >= best - KEEP_WITHIN}
    return [u for u in parts if u.kind == "table" or id(u) in keep]


def cap(fragments: list[Fragment], count_tokens: TokenCounter, max_tokens: int) -> list[Fragment]:
    """The most relevant fragments whose documentation block fits `max_tokens` (at least one)."""
    kept = list(fragments)
    while len(kept) > 1 and count_tokens(documentation_block(kept)) > max_tokens:
        kept.pop()
    return kept


def units(text: str) -> list[Unit]:
    """`text` cut into sentences, whole lists, whole tables and whole code blocks."""
    out: list[Unit] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line:
            end = i + 1
        elif line.startswith(("```", "~~~")):
            fence = next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(line[:3])), len(lines) - 1
            )
            end = fence + 1
            out.append(Unit("code", "\n".join(lines[i:end]), i))
        elif line.startswith("|"):
            end = _block_end(lines, i, lambda s: s.startswith("|"))
            out.append(Unit("table", "\n".join(lines[i:end]), i))
        elif LIST_ITEM.match(line):
            end = _block_end(lines, i, lambda s: bool(LIST_ITEM.match(s)))
            out.append(Unit("list", "\n".join(lines[i:end]), i))
        else:
            end = i + 1 if _opens_block(line) else _block_end(lines, i + 1, lambda s: not _opens_block(s))
            paragraph = " ".join(lines[j].strip() for j in range(i, end))
            out += [Unit("prose", s, i) for s in sentences(paragraph)]
        i = end
    return out


_BLOCK_START = re.compile(r"^(?:```|~~~|\||#{1,6}\s|>|(?:=+|-+)\s*$)")


def _opens_block(line: str) -> bool:
    """`line` (stripped) opens another block than the paragraph before it: a fence, a table row, a
    list item, a heading, a quote or a setext underline. Any other line continues the paragraph:
    docs wrapped at a fixed width ("…si escrius\n#urgent #client a la primera línia…") were cut
    into a sentence per line."""
    return bool(_BLOCK_START.match(line) or LIST_ITEM.match(line))


ROW_STEMS = 2
"""A row no label of which the question names is spelled out when it shares this many stems."""


def matching_rows(table: str, question: str) -> list[str]:
    """The rows of `table` whose label (first cell) the question names, else the one row that
    shares the most of the question's stems (at least ROW_STEMS, and more than any other row:
    "m'han revocat el token" → the `token_revoked` row), spelled out cell by cell with their column
    names: "Starter — Preu (per usuari i mes): 6 €; Usuaris: Fins a 10; …"."""
    header, body = _header_and_body(table)
    return [_spelled_out(header, row) for row in _named(body, question) or _closest_row(body, question)]


@dataclass(frozen=True)
class QuotableRows:
    """The rows of a table an extract may quote for a question, spelled out with their column names."""

    named: list[str]
    """The rows the question names by their label."""
    instead: list[str]
    """When it names rows that all lack what it asks, the rows that have it (`rows_instead`)."""
    extreme: list[str]
    """When it names none, the rows it asks for by a least or a most (`extreme_rows`)."""
    every: list[str]


def quotable_rows(table: str, question: str) -> QuotableRows:
    """The rows of `table` to quote for `question`, the table read once: those it names by their
    label ("quin error surt si no poso la capçalera?" names none, and every row is scored against
    it like a sentence: its row says "capçalera"), with those that have what the named ones lack,
    or those it asks for by a least or a most ("el pla més barat")."""
    header, body = _header_and_body(table)
    named = _named(body, question)
    instead = rows_instead(header, body, named, question) if named else []
    extreme = [] if named else extreme_rows(header, body, question)
    return QuotableRows(
        named=[_spelled_out(header, row) for row in named],
        instead=[_spelled_out(header, row) for row in instead],
        extreme=[_spelled_out(header, row) for row in extreme],
        every=[_spelled_out(header, row) for row in body],
    )


def _header_and_body(table: str) -> tuple[list[str], list[list[str]]]:
    """The header's cells and each body row's cells (no body when the table has no row under
    its header)."""
    rows = [_cells(line) for line in table.split("\n") if line.strip() and not _is_separator(line)]
    return (rows[0], rows[1:]) if rows else ([], [])


def _named(body: Sequence[list[str]], question: str) -> list[list[str]]:
    """The rows whose label (first cell) the question names as a whole word; of several, those
    whose code cell it names too ("un 401 amb token_missing": the `token_missing` row of the
    four 401 rows, whose others say "ha caducat", "s'ha revocat")."""
    asked = fold(question)
    named = [row for row in body if _names(asked, row[0])]
    coded = [row for row in named if any(c.startswith("`") and _names(asked, c.strip("`")) for c in row[1:])]
    return coded or named


def _names(asked: str, text: str) -> bool:
    """The folded question `asked` holds `text` as a whole word."""
    wanted = fold(text).strip()
    return bool(wanted) and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", asked) is not None


def _closest_row(body: Sequence[list[str]], question: str) -> list[list[str]]:
    """The row sharing the most question stems, when it shares ROW_STEMS or more and no other
    row shares as many (empty otherwise)."""
    wanted = content_stems(question)
    shared = sorted(
        ((len(content_stems(" ".join(row)) & wanted), i) for i, row in enumerate(body)), reverse=True
    )
    if not shared or shared[0][0] < ROW_STEMS or (len(shared) > 1 and shared[1][0] == shared[0][0]):
        return []
    return [body[shared[0][1]]]


def _spelled_out(header: Sequence[str], row: Sequence[str]) -> str:
    cells = [f"{name}: {value}" for name, value in zip(header[1:], row[1:], strict=False)]
    return f"{row[0]} {ROW_LABEL_DASH} " + "; ".join(cells).rstrip(".") + "."


def unit_scores(
    candidates: Sequence[Unit], question: str, similarity: Similarity, headings: Sequence[str] = ()
) -> list[float]:
    """Cosine to the question, plus a bonus for each question stem held (rarer in the fragment:
    more; a question word like "quant" is none) and, when the question asks for a quantity, for
    holding an amount. With `headings` (each unit's section, "[Page > Section]"), the cosine is the
    mean of the unit's alone and under its heading: a sentence means what its section makes it mean."""
    wanted = content_stems(question) - ASKING_STEMS
    stems = [content_stems(u.text) & wanted for u in candidates]
    spread = Counter(s for held in stems for s in held)
    cosines = _cosines([u.text for u in candidates], similarity, headings)
    quantity = NUMBER_BONUS if asks_quantity(question) else 0.0
    return [
        c
        + STEM_BONUS * sum(1 / spread[s] for s in held)
        + (quantity if amounts(u.text) else 0.0)  # digits or words: "Set dies abans…"
        for c, held, u in zip(cosines, stems, candidates, strict=True)
    ]


def _cosines(texts: Sequence[str], similarity: Similarity, headings: Sequence[str]) -> list[float]:
    """Each text's similarity, or its mean with the text's under its heading (`headings` given)."""
    alone = [float(c) for c in similarity(texts)]
    if not headings:
        return alone
    placed = similarity([f"{heading} {text}" for heading, text in zip(headings, texts, strict=True)])
    return [(a + float(p)) / 2 for a, p in zip(alone, placed, strict=True)]


def amounts(text: str) -> set[float]:
    """The numbers of `text` that may be amounts: not a table row's label ("401 — Codi d'error…",
    which took the passages of "quants dígits té el codi?"). A number in code still counts: an error
    `429` stands by the answer to "how long do I back off?"."""
    return numbers(_ROW_LABEL_START.sub("", text))


_ROW_LABEL_START = re.compile(rf"^[^{ROW_LABEL_DASH}\n]{{1,40}} {ROW_LABEL_DASH} ")


def deduplicated(parts: Sequence[Unit]) -> list[Unit]:
    """Without units whose words all occur, in order, in what came before (chunk-overlap repeats)."""
    out: list[Unit] = []
    seen = " "
    for unit in parts:
        words = " ".join(folded_words(unit.text))
        if words and f" {words} " in seen:
            continue
        out.append(unit)
        seen += f"{words} "
    return out


def _joined(parts: Sequence[Unit], question: str) -> str:
    """Units back into text (sentences of one line by a space, lines by a blank line), with the
    rows the question names spelled out under each table."""
    paragraphs: list[list[str]] = []
    last: int | None = None
    for unit in parts:
        text = unit.text
        if unit.kind == "table":
            text = "\n".join([text, *matching_rows(text, question)])
        if unit.kind == "prose" and unit.line == last:
            paragraphs[-1].append(text)
        else:
            paragraphs.append([text])
        last = unit.line if unit.kind == "prose" else None
    return "\n\n".join(" ".join(p) for p in paragraphs)


def _block_end(lines: Sequence[str], start: int, belongs: Callable[[str], bool]) -> int:
    end = start
    while end < len(lines) and lines[end].strip() and belongs(lines[end].strip()):
        end += 1
    return end


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]


def _is_separator(line: str) -> bool:
    return line.strip().startswith("|") and set(line.strip()) <= set("|-: ")
