"""The `none` provider: an answer made of the docs' own sentences, always grounded, no LLM.

Also the degradation path when the chat model fails: the user still gets the most relevant
passages with their sources.

The passages are the units of the four best fragments (sentences, list items, table rows spelled
out with their column names: the rows the question names or asks for by a least or a most ("el
pla més barat", said wherever they rank: `extremes.py`; a named row that lacks what the question
asks comes with the rows that have it), else every row; a sentence ending in
":" with the one-line command or the code block it introduces; a code block, said only when it
scores best) closest to the question: with an embedder, by
the same score that focuses the model's context (multilingual cosine, here the mean of the
passage's alone and under its section heading, plus the question's stems and, for "how many"
questions, amounts: numbers that label no table row; `focus.py`), less a little
for each fragment further down the ranking, and, for "how do I" questions, a procedure's steps; else
by the question's stems alone. A unit repeated by chunk overlap is said once. When the best passage
is a step of a numbered list, the whole procedure is said; a sentence opening with a pronoun
("Desa'ls…"), an example ("Per exemple, …") or a word pointing back ("Aquest…", "This…"), or
naming the ones before by a pronoun ("…qualsevol d'ells"), or, the best passage, saying "also"
("…també poden pagar per transferència"), comes with the one before it, a
sentence ending in ":" said alone, or asked "which ones" ("quins…?"), with the list it
introduces, and a table row the question names (said even past three passages, when it scores
near the best) with every other row of that table it names ("…with a 401?"), and a sentence
denying something with those of its paragraph that say how only it can be done ("…només és
possible des de l'aplicació web"), and, to a how question, a sentence using one button instead of
another ("…**Suspèn** en lloc d'**Elimina**") with the one saying where the other is, and a
sentence naming no menu path or button with the one after it that names one ("…pots convidar
persones externes…" / "Es fa des de *Projecte > Configuració > …*"). Of two
sentences saying what happens in two cases ("Quan passes a un pla superior, …" / "… inferior, …"),
only the one the question, widened by the synonyms file, asks about is said. A message
asking several questions gets the passages closest to each of them, from the fragments found for
each (`extract_each`; `DocuBot` searches each question on its own).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from docubot.rag.category import page_category
from docubot.rag.claims import holds_a_denial
from docubot.rag.contract import Answer
from docubot.rag.focus import (
    LIST_ITEM,
    Similarity,
    Unit,
    deduplicated,
    quotable_rows,
    unit_scores,
    units,
)
from docubot.rag.plans_asked import cut_to_plans, plans_asked
from docubot.rag.quantity import states_the_quantity
from docubot.store import Hit
from docubot.text import DEFAULT_LANGUAGE, content_stems, detect_language, fold, folded_words, question_parts
from docubot.text.edits import common_prefix_length

MAX_SENTENCES = 3
PARALLEL_OPENING = 3
"""Sentences opening with this many words alike say what happens in two cases (`_without_the_other_case`)."""
FRAGMENTS_PER_PART = 4
"""Passages come from this many of the best fragments per question of the message: the passage
that answers sits in a third or fourth fragment when retrieval ranks its section low (on the
113 answerable tune, holdout and fresh questions, every fact stood in the passages of the top 2
fragments for 89, of the top 4 for 98). With two, a passage's cosine alone chose well enough;
from four it needs its section's heading beside it (README, "This round")."""
DESCRIBED_ROW = "described_row"
"""A table row quoted because it scores well, not because the question names it: one per table."""
EXTREME_ROW = "extreme_row"
"""A table row the question asks for by a least or a most ("el pla més barat"): always said."""
INSTEAD_ROW = "instead_row"
"""A table row the question names that lacks what it asks, or a row that has it
(`extremes.rows_instead`): always said."""
MAX_STEPS = 10
"""A numbered list (a procedure) whose step is the best passage is said whole, up to this many steps."""
STEP = re.compile(r"^\s*\d+[.)]\s+")
ENCLITIC = re.compile(r"^[^\W\d_]{3,}(?:['’](?:l|ls|n|hi|ho)|-(?:lo|los|la|les|ne|hi|ho))\b", re.IGNORECASE)
"""A sentence opening with a verb and a weak pronoun ("Desa'ls", "Copia-la"): its referent is
in the sentence before."""
POINTING_BACK = re.compile(
    r"^(?:per exemple|por ejemplo|for example|for instance|aquest(?:a|s|es)?|aix[òo]|així|"
    r"este|esta|estos|estas|esto|this|these|that|it|they|otherwise)\b",
    re.IGNORECASE,
)
"""A sentence opening with an example of, or a word pointing at, what the sentence before says
("Per exemple, un camp numèric *Hores estimades*…" says nothing of the plans that have such
fields, which the sentence before names)."""
STEP_BONUS = 0.03
"""Added to the score of a procedure's step, or of a sentence saying which button to click
(`_CLICK`), when the question asks how to do something ("¿Cómo conecto Slack?" got the sentences
around the procedure, not its steps; "…¿cómo hago que deje de funcionar?" of a calendar link got
the steps making one, not "…fes clic a **Regenera l'enllaç**"; cosine scale)."""
_CLICK = re.compile(r"\b(?:(?:fes|feu|haz|haga) clic|clica|pulsa|click)\b[^.*]{0,20}\*\*")
"""A sentence telling which button to click (folded: "fes clic a **desbloqueja el compte**",
"click **run pipeline**"): a procedure in one line."""
_OF_THEM = re.compile(r"\b(?:d['’]ells|d['’]elles|de ellos|de ellas|of them)\b", re.IGNORECASE)
"""A sentence naming what the one before lists by a pronoun ("Fes clic a **Tanca la sessió** al
costat de qualsevol d'ells")."""
_ALSO = re.compile(r"\b(?:també|también|also)\b", re.IGNORECASE)
"""A sentence adding to what the one before it says ("…també poden pagar per transferència")."""
_HOW = re.compile(
    r"\b(?:com|como|how)\b(?!\s+(?:many|much|long|often|ara)\b)"
    r"|\b(?:que he de fer|que cal fer|que tengo que hacer|what do i (?:need to )?do)\b"
)
"""A question asking for a way to do something (folded)."""
_WHICH_ONES = re.compile(r"\b(?:quins|quines|cuales|what are|which are)\b")
"""A question asking which ones, in the plural (folded): it wants a list's every item."""
_ONLY_POSSIBLE = re.compile(
    r"\b(?:nomes|solament|unicament|solo|solamente|unicamente|only) (?:es |se )?"
    r"(?:possible|posible|pot|poden|puede|pueden)\b|\bcan only\b"
)
"""How only something can be done (folded): "només és possible", "només es poden", "solo se puede"."""
_INSTEAD_OF = re.compile(
    r"\*\*[^*\n]+\*\*\s+(?:en lloc d(?:e\s+|['’])|en vez de\s+|instead of\s+)\*\*([^*\n]+)\*\*", re.IGNORECASE
)
"""A button to use instead of another ("fes servir **Suspèn** en lloc d'**Elimina**"): group 1, the other."""
_MENU_PATH = re.compile(r"(?<!\*)\*[^*\n]+ > [^*\n]+\*")
"""A menu path in italics (*Configuració > Membres*): where something is."""
MAX_CODE_LINES = 12
"""A code block of up to this many lines may be said: with the sentence ending in ":" that
introduces it, or as a passage of its own when it scores best."""
ONE_LINE_CODE = 80
"""A code block of one line this short is said with the sentence that introduces it ("escriu:")."""
KEEP_WITHIN = 0.06
"""With an embedder, passages scoring within this of the best are said (up to MAX_SENTENCES)."""
SECOND_FRAGMENT_PENALTY = 0.02
"""Subtracted from the scores of the second fragment's units (cosine scale): the best fragment
wins ties."""
DEGRADED_LEAD = {
    "ca": "No he pogut redactar una resposta verificada; això és el que diu la documentació:",
    "es": "No he podido redactar una respuesta verificada; esto es lo que dice la documentación:",
    "en": "I could not write a verified answer; this is what the documentation says:",
}
TRANSLATED_LEAD = {
    "ca": "No he pogut redactar una resposta verificada; això és el que diu la documentació, traduït:",
    "es": "No he podido redactar una respuesta verificada; esto es lo que dice la documentación, traducido:",
    "en": "I could not write a verified answer; this is what the documentation says, translated:",
}


@dataclass(frozen=True)
class Passage:
    """A unit that may be quoted: its text and where it stands (fragment rank, position)."""

    unit: Unit
    rank: int
    position: int
    heading: str = ""
    """Its fragment's heading path, "[Page > Section]"."""
    code: str = ""
    """The code block this sentence (ending in ":") introduces, said after it as the docs write it."""


@dataclass(frozen=True)
class Extract:
    """The passages said, joined, and the fragments (hits) they come from, best first."""

    text: str
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class Asked:
    """One question of a message, the fragments found for it (best first) and each text's
    similarity to it (None: its stems choose)."""

    question: str
    hits: Sequence[Hit]
    similarity: Similarity | None = None
    widened: str = ""
    """The question with the docs' words the synonyms file adds ("": none), whose stems tell which
    of two cases it asks about ("de business a starter" → "…pla inferior": the sentence on moving
    to a lower plan, not the one on moving up; `_without_the_other_case`)."""


def extract(
    question: str, hits: Sequence[Hit], similarity: Similarity | None = None, asked: str = ""
) -> Extract:
    """The passages of the best fragments closest to the question, in the docs' order; for a
    message asking several questions ("…? i …?"), those closest to each of them among the
    message's best fragments, FRAGMENTS_PER_PART per question (`extract_each` takes each question's own). A
    table row is also named by `asked`, the user's own words when the question searched is their
    translation ("business plan" → "pla empresarial")."""
    parts = question_parts(question)
    top = list(hits[: FRAGMENTS_PER_PART * len(parts)])
    return extract_each([Asked(part, top, similarity) for part in parts], asked)


def extract_each(questions: Sequence[Asked], asked: str = "", plans: Collection[str] = ()) -> Extract:
    """The passages closest to each of `questions` among its own fragments, in the docs' order,
    said once; `asked` as in `extract`. `plans`, the corpus's plan names (`Vocabulary.plans`): a
    sentence giving each its own amount is cut to those the question asks about."""
    fragments = list({hit.id: hit for question in questions for hit in question.hits}.values())
    named_by = " ".join([*(question.question for question in questions), asked]).strip()
    candidates = passages(fragments, named_by)
    at = {p.position: p for p in candidates}
    chosen: dict[int, Passage] = {}
    for question in questions:
        rank = {hit.id: i for i, hit in enumerate(question.hits)}
        own = [
            replace(p, rank=rank[fragments[p.rank].id]) for p in candidates if fragments[p.rank].id in rank
        ]
        for picked in closest(own, question.question, question.similarity, question.widened):
            chosen[picked.position] = at[picked.position]
    ordered = sorted(chosen.values(), key=_where)
    if not ordered:
        return Extract(fragments[0].text.split("\n", 1)[-1][:500], (fragments[0],))
    quoted = tuple(fragments[rank] for rank in sorted({p.rank for p in ordered}))
    asked_plans = plans_asked(named_by, plans)
    said = [
        cut_to_plans(p.unit.text, asked_plans, plans) if p.unit.kind == "prose" else p.unit.text
        for p in ordered
    ]
    return Extract(
        as_one_text([f"{text}\n{p.code}" if p.code else text for text, p in zip(said, ordered, strict=True)]),
        quoted,
    )


def as_one_text(texts: Sequence[str]) -> str:
    """The passages as one text: a space between them, a code block on lines of its own."""
    out = ""
    for text in texts:
        if out:
            out += (
                "\n\n" if out.endswith(("```", "~~~")) else "\n" if text.startswith(("```", "~~~")) else " "
            )
        out += text
    return out


def lacks_the_quantity(quoted: Extract, *questions: str) -> bool:
    """One of `questions` (the message as asked, as searched) asks how many, how much or how
    long, and no passage states a number of the kind asked (`quantity.py`): the docs do not give
    the quantity asked ("hi ha un màxim de cerques desades per projecte?" got what saved searches
    are)."""
    return not states_the_quantity(quoted.text, questions)


def extractive_answer(
    question: str,
    quoted: Extract,
    categories: Sequence[str],
    threshold: float,
    degraded: bool = False,
    translation: str | None = None,
) -> Answer:
    """The extract `quoted` as the answer, or its checked `translation` into the question's
    language; `degraded` (the model failed) says so first."""
    text = translation or quoted.text
    if degraded:
        lead = TRANSLATED_LEAD if translation else DEGRADED_LEAD
        text = f"{lead[detect_language(question, fallback=docs_language(quoted.hits))]} {text}"
    best = quoted.hits[0]
    return Answer(
        categoria=page_category(best.metadata, categories),
        resposta=text,
        fonts=sorted({h.metadata["url"] for h in quoted.hits}),
        confianca="baixa" if degraded else _confidence(best.score, threshold),
    )


def passages(hits: Sequence[Hit], question: str) -> list[Passage]:
    """The quotable units of `hits` (their heading line left out): sentences, list items without
    their markers, and the table rows the question names, else every row (`quotable_rows`); code and
    other rows are not quotable; a code block of up to MAX_CODE_LINES lines is one passage, or,
    after the sentence ending in ":" that introduces it, said with it (its `code`; inline when it
    is a one-line command)."""
    out: list[Passage] = []
    for rank, hit in enumerate(hits):
        body = hit.text.split("\n", 1)[-1]
        heading = hit.text.split("\n", 1)[0] if hit.text.startswith("[") else ""
        for unit in units(body):
            introduced = bool(out) and out[-1].rank == rank and out[-1].unit.text.endswith(":")
            command = _one_line(unit)
            if command and introduced:
                said = out[-1]  # "…obre el canal privat a Slack i escriu:" says nothing without it
                out[-1] = replace(said, unit=replace(said.unit, text=f"{said.unit.text} `{command}`"))
                continue
            if introduced and _sayable_code(unit):
                out[-1] = replace(out[-1], code=unit.text)  # "Put the token in the header:" + the curl call
                continue
            kind, texts = _quotable(unit, question)
            for text in texts:
                out.append(Passage(Unit(kind, text, unit.line), rank, len(out), heading))
    kept = {id(u) for u in deduplicated([p.unit for p in out])}
    return [p for p in out if id(p.unit) in kept]


def closest(
    candidates: Sequence[Passage], question: str, similarity: Similarity | None, widened: str = ""
) -> list[Passage]:
    """The MAX_SENTENCES best-scoring passages, in the order they stand in the docs; with an
    embedder, only those within KEEP_WITHIN of the best, and past the limit the best table row
    the question names ("Quant em costarà el Business…?" scored three sentences above the
    Business row, about each person's workload and the annual payment), and always the rows it
    asks for by a least or a most (`EXTREME_ROW`), or names lacking what it asks, with the rows
    that have it (`INSTEAD_ROW`). A code block is said
    only when it scores best, beside the best prose ("tab completion for the cli in zsh": the
    `ferrule completion zsh` block); anywhere within reach it took the place of the sentence
    answering "What's the rate limit…?" with a `curl` call. Of two sentences saying what happens in
    two cases, the one the question does not ask about is left out, told by `widened`, the question
    with the synonyms file's words, when there is one (`_without_the_other_case`)."""
    if not candidates:
        return []
    how = _HOW.search(fold(question)) is not None
    if similarity is not None:
        headings = [p.heading for p in candidates]
        scores = unit_scores([p.unit for p in candidates], question, similarity, headings)
        step = STEP_BONUS if how else 0.0
        ranked = [
            s - SECOND_FRAGMENT_PENALTY * p.rank + (step if _is_action(p.unit) else 0.0)
            for s, p in zip(scores, candidates, strict=True)
        ]
    else:
        wanted = content_stems(question)
        ranked = [
            len(content_stems(p.unit.text) & wanted) - 0.5 * p.rank - 0.01 * p.position for p in candidates
        ]
    order = _one_described_row_per_table(sorted(range(len(candidates)), key=lambda i: -ranked[i]), candidates)
    order = _without_the_other_case(order, candidates, widened or question)
    # a code block is said only when it scores best, and beside the best prose, never in its place
    best_code = order[0] if similarity is not None and candidates[order[0]].unit.kind == "code" else None
    order = [i for i in order if candidates[i].unit.kind != "code"] or order[:1]
    always = _rows_always_said(order, candidates)
    if similarity is None:
        order = order[:MAX_SENTENCES]
    else:
        near = [i for i in order if ranked[i] >= ranked[order[0]] - KEEP_WITHIN]
        named_rows = [i for i in near[MAX_SENTENCES:] if candidates[i].unit.kind == "row"]
        code = [best_code] if best_code is not None and best_code not in near else []
        order = near[:MAX_SENTENCES] + named_rows[:1] + code
    order += always
    chosen = [candidates[i] for i in order]
    said = [
        *chosen,
        *_procedure(chosen[0], candidates),
        *_antecedents(chosen, candidates),
        *_introduced(chosen, candidates, enumerating=_WHICH_ONES.search(fold(question)) is not None),
        *_named_rows(chosen, candidates),
        *_what_can_be_done_instead(chosen, candidates),
        *(_where_the_other_button_is(chosen, candidates) if how else []),
        *(_where_it_is_done(chosen, candidates) if how else []),
    ]
    return sorted({id(p): p for p in said}.values(), key=_where)


def _without_the_other_case(order: Sequence[int], candidates: Sequence[Passage], question: str) -> list[int]:
    """`order` less each sentence saying what happens in another case than the one asked: a
    sentence opening with the same PARALLEL_OPENING words or more as another, then one word the
    question (as the synonyms file widened it) does not hold where the other has one it holds, then
    the same word again ("Quan passes a un pla **superior**, el canvi és immediat…" beside "Quan
    passes a un pla **inferior**, el canvi s'aplica…", to a question moving to a lower plan)."""
    wanted = content_stems(question)
    words = [folded_words(p.unit.text) if p.unit.kind == "prose" else [] for p in candidates]
    other_case = set()
    for i in order:
        for j in order:
            shared = common_prefix_length(words[i], words[j])
            if (
                i != j
                and PARALLEL_OPENING <= shared < min(len(words[i]), len(words[j])) - 1
                and words[i][shared + 1] == words[j][shared + 1]
                and content_stems(words[i][shared]) & wanted
                and not content_stems(words[j][shared]) & wanted
            ):
                other_case.add(j)
    return [i for i in order if i not in other_case]


def _is_action(unit: Unit) -> bool:
    """A procedure's step, or a sentence telling which button to click (`_CLICK`)."""
    clicks = unit.kind in ("prose", "list") and _CLICK.search(fold(unit.text)) is not None
    return unit.kind == "step" or clicks


def _rows_always_said(order: Sequence[int], candidates: Sequence[Passage]) -> list[int]:
    """The rows the question asks for by a least or a most, wherever they rank ("quin és el pla
    més barat que ens serveix?" scored sentences about CSV export above the Business row), and
    the rows it names that lack what it asks with those that have it (`INSTEAD_ROW`)."""
    return [i for i in order if candidates[i].unit.kind in (EXTREME_ROW, INSTEAD_ROW)]


def _antecedents(chosen: Sequence[Passage], candidates: Sequence[Passage]) -> list[Passage]:
    """The sentence before each chosen one that opens with a verb and the pronoun standing for
    what that sentence names ("Desa'ls en un lloc segur…" says nothing of the recovery codes the
    sentence before it names), or with an example of it or a word pointing at it
    (`POINTING_BACK`), or that names what it lists by a pronoun (`_OF_THEM`), when both stand in
    one paragraph; and the one before the best, when the best says "also" (`_ALSO`): "Els clients
    Enterprise amb pagament anual també poden pagar per transferència…" answers "can we pay by bank
    transfer?" only with the ways everyone can pay, said before it (blind a140). Said of any chosen
    sentence, "also" added a sentence to four more answers (a134, a153, a179, a206), such as the
    payment methods to a question on Enterprise storage."""
    out = []
    for n, passage in enumerate(chosen):
        previous = _before_in_paragraph(passage, candidates)
        text = passage.unit.text
        if previous is not None and (
            ENCLITIC.match(text)
            or POINTING_BACK.match(text)
            or _OF_THEM.search(text)
            or (n == 0 and _ALSO.search(text))
        ):
            out.append(previous)
    return out


def _before_in_paragraph(passage: Passage, candidates: Sequence[Passage]) -> Passage | None:
    """The sentence before `passage` in its paragraph (None: `passage` opens it, or is no sentence)."""
    return _beside_in_paragraph(passage, candidates, -1)


def _after_in_paragraph(passage: Passage, candidates: Sequence[Passage]) -> Passage | None:
    """The sentence after `passage` in its paragraph (None: `passage` ends it, or is no sentence)."""
    return _beside_in_paragraph(passage, candidates, 1)


def _beside_in_paragraph(passage: Passage, candidates: Sequence[Passage], step: int) -> Passage | None:
    """The candidate `step` places from the sentence `passage`, when it is a sentence of its paragraph."""
    at = next((n for n, p in enumerate(candidates) if p.position == passage.position), None)
    if at is None or passage.unit.kind != "prose" or not 0 <= at + step < len(candidates):
        return None
    beside = candidates[at + step]
    where = (beside.unit.kind, beside.rank, beside.unit.line)
    return beside if where == ("prose", passage.rank, passage.unit.line) else None


def _where_it_is_done(chosen: Sequence[Passage], candidates: Sequence[Passage]) -> list[Passage]:
    """The sentence after each chosen one in its paragraph that says where or how it is done (a
    menu path, `_MENU_PATH`, or a button to click, `_CLICK`), when the chosen one says neither (said
    to a how question): "Als plans Business i Enterprise pots convidar persones externes… a un únic
    projecte…" says what can be done, and "Es fa des de *Projecte > Configuració > … > Convida una
    persona externa*" how (fresh a114)."""
    out = []
    for passage in chosen:
        following = _after_in_paragraph(passage, candidates)
        if following is not None and not _says_where(passage.unit) and _says_where(following.unit):
            out.append(following)
    return out


def _says_where(unit: Unit) -> bool:
    """`unit` names a menu path or a button to click."""
    return _MENU_PATH.search(unit.text) is not None or _CLICK.search(fold(unit.text)) is not None


def _what_can_be_done_instead(chosen: Sequence[Passage], candidates: Sequence[Passage]) -> list[Passage]:
    """The sentences of each chosen denial's paragraph that say how only it can be done: "L'API no
    té cap endpoint `/clone`…" comes with "Duplicar un projecte només és possible des de l'aplicació
    web, a *Projecte > Configuració > Duplica el projecte*". Any "només" was too loose: "només
    llegint-ne el títol", "un enllaç de només lectura" came along."""
    out = []
    for passage in chosen:
        if passage.unit.kind == "prose" and holds_a_denial(passage.unit.text):
            out += [
                p
                for p in _list_of(passage, candidates)
                if p.unit.kind == "prose" and _ONLY_POSSIBLE.search(fold(p.unit.text))
            ]
    return out


def _where_the_other_button_is(chosen: Sequence[Passage], candidates: Sequence[Passage]) -> list[Passage]:
    """For each chosen sentence saying to use a button instead of another (`_INSTEAD_OF`), the
    sentence before it in its fragment that says where the other one is (said to a how question):
    "…fes servir **Suspèn** en lloc d'**Elimina**…" says nothing of where either is, and "Per
    eliminar un membre…, ves a *Configuració > Membres*, … i tria **Elimina de l'espai de treball**"
    does (tune a202)."""
    out = []
    for passage in chosen:
        other = _INSTEAD_OF.search(passage.unit.text)
        if other is None:
            continue
        button = f"**{other.group(1).strip()}"
        before = [
            p
            for p in candidates
            if p.rank == passage.rank
            and p.position < passage.position
            and button.casefold() in p.unit.text.casefold()
            and _MENU_PATH.search(p.unit.text)
        ]
        out += before[-1:]
    return out


def _introduced(chosen: Sequence[Passage], candidates: Sequence[Passage], enumerating: bool) -> list[Passage]:
    """The items of the list each chosen sentence ending in ":" introduces, up to MAX_STEPS, when
    none of them is chosen or the question asks which ones (`enumerating`): "La nova contrasenya ha
    de complir aquests requisits:" says nothing alone; with the one item asked for ("quina longitud
    mínima?") it says enough, but not to "quins requisits ha de tenir?"."""
    out = []
    for passage in chosen:
        if passage.unit.kind != "prose" or not passage.unit.text.endswith(":"):
            continue
        after = (p for p in candidates if p.rank == passage.rank and p.position > passage.position)
        following = next(after, None)
        if following is not None and following.unit.kind in ("list", "step"):
            items = _list_of(following, candidates)
            if enumerating or not any(item in chosen for item in items):
                out += items[:MAX_STEPS]
    return out


def _named_rows(chosen: Sequence[Passage], candidates: Sequence[Passage]) -> list[Passage]:
    """Every row of a table the question names by label, when one of them is chosen: "which error
    codes can the api send back with a 401?" names four rows, and three passages said three."""
    named = {id(row): row for p in chosen if p.unit.kind == "row" for row in _list_of(p, candidates)}
    return sorted(named.values(), key=_where)[:MAX_STEPS]


def _one_described_row_per_table(order: list[int], candidates: Sequence[Passage]) -> list[int]:
    """`order` (best first) keeping only the best row of each table whose rows the question does
    not name: the rows of one table score alike, and a second is another plan's or error's values
    ("how much storage on the business plan?", translated without "Business", got Enterprise's
    1 TB too)."""
    seen: set[tuple[int, int]] = set()
    kept = []
    for i in order:
        passage = candidates[i]
        if passage.unit.kind == DESCRIBED_ROW:
            where = (passage.rank, passage.unit.line)
            if where in seen:
                continue
            seen.add(where)
        kept.append(i)
    return kept


def _procedure(best: Passage, candidates: Sequence[Passage]) -> list[Passage]:
    """Every step of the numbered list `best` is a step of (none when it is not one): a procedure
    is said whole ("com activo…?" got its second step and a sentence about recovery codes)."""
    if best.unit.kind != "step":
        return []
    return _list_of(best, candidates)[:MAX_STEPS]


def _list_of(item: Passage, candidates: Sequence[Passage]) -> list[Passage]:
    """Every item of the list (or table, or paragraph) `item` is one of: its fragment's passages
    from its unit (the sentences of one line share it)."""
    return [p for p in candidates if p.rank == item.rank and p.unit.line == item.unit.line]


def _where(passage: Passage) -> int:
    return passage.position


def _sayable_code(unit: Unit) -> bool:
    """`unit` is a code block of up to MAX_CODE_LINES lines (its fences aside)."""
    return unit.kind == "code" and unit.text.count("\n") <= MAX_CODE_LINES + 1


def _one_line(unit: Unit) -> str | None:
    """The command of a code block that holds one short line (`/invite @Nubelia`), else None."""
    if unit.kind != "code":
        return None
    body = [line.strip() for line in unit.text.split("\n")[1:-1] if line.strip()]
    return body[0] if len(body) == 1 and len(body[0]) <= ONE_LINE_CODE and "`" not in body[0] else None


def _quotable(unit: Unit, question: str) -> tuple[str, list[str]]:
    """The passage kind of `unit`'s pieces (`step` for a numbered list's items, `row` for the
    table rows the question names, DESCRIBED_ROW for every row when it names none) and their texts."""
    if unit.kind == "prose":
        return unit.kind, [unit.text]
    if unit.kind == "list":
        kind = "step" if STEP.match(unit.text) else unit.kind
        return kind, [LIST_ITEM.sub("", line).strip() for line in unit.text.split("\n") if line.strip()]
    if unit.kind == "table":
        rows = quotable_rows(unit.text, question)
        if rows.instead:
            return INSTEAD_ROW, rows.named + rows.instead
        if rows.extreme:
            return EXTREME_ROW, rows.extreme
        return ("row", rows.named) if rows.named else (DESCRIBED_ROW, rows.every)
    if _sayable_code(unit):
        return unit.kind, [unit.text]
    return unit.kind, []


def docs_language(hits: Sequence[Hit]) -> str:
    """The language of the quoted fragments: what a question too short to tell is answered in."""
    return detect_language(" ".join(h.text for h in hits), fallback=DEFAULT_LANGUAGE)


def _confidence(score: float, threshold: float) -> str:
    if score >= threshold + 0.05:
        return "alta"
    return "mitjana" if score >= threshold + 0.02 else "baixa"
