"""Claims in an answer checked against its evidence, across languages.

An answer may be in Spanish or English while the docs are in Catalan, so words are not compared.
What is compared is what survives translation and what small models get wrong: numbers (digits or
number words, prices, durations), menu paths (`A > B`), identifiers (`code`, `X-Header`,
`task.created`, `/v1/projects`, CSV), plan names, negations and restrictions ("no", "només",
"only", "solo"), a yes that the evidence contradicts, a table number read from another row, and an
answer that only repeats the question. Every problem is named so that the model can be told.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from docubot.rag.numbers import numbers
from docubot.text import content_stems, fold, sentences, stopwords
from docubot.text.edits import common_prefix_length

NEGATIONS = frozenset(
    "no not never cannot cant dont doesnt isnt arent wont mai cap ni tampoc tampoco nunca ningun ninguna "
    "ninguno sense sin without nor none".split()
)
POLARITY_NEGATIONS = frozenset("no not never cannot cant dont doesnt isnt arent wont mai nunca".split())
"""Negations that deny the main statement (not "sense"/"without", which qualify it)."""
_READ_ONLY = re.compile(r"\b(?:nomes|solo|solament) (?:de )?lectura\b")
RESTRICTIONS = frozenset("nomes solo solament solamente unicament unicamente only just exclusivament".split())
_AFFIRMATIVE_START = re.compile(r"^\W*(sí\b|si\s*[,.!]|yes\b)", re.IGNORECASE)
"""'Sí', 'Si,' or 'Yes' (a bare 'si' is 'if' in Catalan and Spanish)."""
_NEGATIVE_START = re.compile(r"^\W*no\s*[,.:;!]", re.IGNORECASE)
MENU_ICON = "menuicon"
"""What "⋯" (a task's or a member's menu, "**⋯ > Duplica**") reads as in a path."""
_PATH_EDGE = re.compile(r"([\w·'’-]+)[*_`\"»”]*\s*(?:>|→|›)\s*[*_`\"«“]*([\w·'’-]+)")
_IDENTIFIER = re.compile(
    r"`([^`\n]{2,60})`"  # code spans
    r"|(?<![\w/])(/[\w{}.-]+(?:/[\w{}.-]+)+)"  # endpoint paths
    r"|\b([A-Za-z][\w]*(?:[._][\w]+)+)\b"  # dotted or snake identifiers: task.created
    r"|\b([A-Z][A-Za-z0-9]*(?:-[A-Z0-9][A-Za-z0-9]*)+)\b"  # X-Nubelia-Signature
    r"|\b([A-Z]{2,}[0-9]*)\b"  # CSV, HMAC, SHA256, SSO
)
_PLAN = re.compile(r"\b(?:pla|plan|plans|planes)\s+\**([A-Z][\w]+)|\b([A-Z][\w]+)\**(?=\s+plans?\b)")
_NOT_PLANS = frozenset({"qualsevol", "any", "all", "our", "tots", "todos"}).union(
    *(stopwords(language) for language in ("ca", "es", "en"))
)
"""Words before "plans" that name none ("Als plans Business…" has no plan "Als")."""


@dataclass(frozen=True)
class Claim:
    kind: str
    """number | path | identifier | plan | negation | restriction | polarity | table | echo"""
    text: str

    def describe(self) -> str:
        return f"{self.kind} «{self.text}»"


@dataclass
class ClaimReport:
    unsupported: list[Claim] = field(default_factory=list)
    checked: int = 0

    @property
    def supported(self) -> bool:
        return not self.unsupported

    def problem(self) -> str:
        return "; ".join(c.describe() for c in self.unsupported)


def check_claims(
    answer: str, evidence: Sequence[str], question: str, focus: Sequence[str] | None = None
) -> ClaimReport:
    """The answer's claims that `evidence` (the cited texts) does not support.

    `focus` are the sentences the answer rests on (verified quotes); polarity and dropped
    restrictions are judged on them, or on the evidence sentences closest to the answer."""
    report = ClaimReport()
    text = " ".join(evidence)
    folded_evidence = _folded(text)
    folded_question = _folded(question)
    folded_answer = _folded(answer)
    close = list(focus) if focus else _closest_sentences(answer, evidence)
    checks = (
        _numbers(answer, text, question),
        _paths(folded_answer, folded_evidence),
        _identifiers(answer, folded_evidence, folded_question),
        _plans(answer, folded_evidence),
        _negations(answer, folded_evidence, close, wrong_premise=bool(numbers(question) - numbers(text))),
        _tables(answer, evidence),
        _echo(answer, question),
    )
    for checked, unsupported in checks:
        report.checked += checked
        report.unsupported += unsupported
    return report


def left_out(quote: str, answer: str, question: str, plans: Collection[str] = ()) -> list[Claim]:
    """The numbers, menu-path steps, identifiers and plan names of `quote` that `answer` does not
    state (the claim check turned around: the answer as the evidence). `plans`: the corpus's plan
    names (`plan_names`), which the answer must say as many times as `quote`, "pla" before them or
    not ("el Business a 9,60 € i l'Enterprise a 17,60 €" was translated "la Empresa a 17,60 €")."""
    folded_answer, folded_question = _folded(answer), _folded(question)
    checks = (
        _numbers(quote, answer, question),
        _paths(_folded(quote), folded_answer),
        _identifiers(quote, folded_answer, folded_question),
        _plans(quote, f"{folded_answer} {folded_question}"),
        _plans_said_fewer_times(quote, f"{folded_answer} {folded_question}", plans),
    )
    return [claim for _, unsupported in checks for claim in unsupported]


def holds_a_denial(text: str) -> bool:
    """Whether `text` holds one of the POLARITY_NEGATIONS (folded words; "**no" counts)."""
    return bool(set(re.findall(r"\w+", fold(text))) & POLARITY_NEGATIONS)


def plan_names(text: str) -> set[str]:
    """The names `text` gives plans ("el pla Starter", "Business plan"), as written."""
    return {n for m in _PLAN.finditer(text) for n in m.groups() if n and fold(n) not in _NOT_PLANS}


def _numbers(answer: str, evidence: str, question: str) -> tuple[int, list[Claim]]:
    claimed = numbers(answer)
    allowed = numbers(evidence) | numbers(question)
    missing = sorted(n for n in claimed if not any(abs(n - a) < 1e-9 for a in allowed))
    return len(claimed), [Claim("number", _show(n)) for n in missing]


def _paths(answer: str, evidence: str) -> tuple[int, list[Claim]]:
    """Each `A > B` step of the answer must be a step of a path in the evidence."""
    edges = _edges(answer)
    known = _edges(evidence)
    bad = [e for e in edges if not any(_same_word(e[0], k[0]) and _same_word(e[1], k[1]) for k in known)]
    return len(edges), [Claim("path", f"{a} > {b}") for a, b in bad]


def _identifiers(answer: str, evidence: str, question: str) -> tuple[int, list[Claim]]:
    found = {next(g for g in m.groups() if g) for m in _IDENTIFIER.finditer(answer)}
    bad = sorted(i for i in found if _folded(i) not in evidence and _folded(i) not in question)
    return len(found), [Claim("identifier", i) for i in bad]


def _plans(answer: str, evidence: str) -> tuple[int, list[Claim]]:
    names = plan_names(answer)
    bad = sorted(n for n in names if not re.search(rf"\b{re.escape(fold(n))}\b", evidence))
    return len(names), [Claim("plan", n) for n in bad]


def _plans_said_fewer_times(
    quote: str, folded_answer: str, known: Collection[str]
) -> tuple[int, list[Claim]]:
    """The `known` plan names the answer says fewer times than `quote` does: a translation keeps
    every mention ("Enterprise — Preu…" and "…i l'Enterprise a 17,60 €" came back "Enterprise —
    Precio…" and "…y la Empresa a 17,60 €")."""
    said = {n: _times_said(n, fold(quote)) for n in known}
    bad = sorted(n for n, times in said.items() if times and _times_said(n, folded_answer) < times)
    return sum(1 for times in said.values() if times), [Claim("plan", n) for n in bad]


def _times_said(name: str, folded: str) -> int:
    return len(re.findall(rf"\b{re.escape(fold(name))}\b", folded))


def _negations(
    answer: str, evidence: str, close: Sequence[str], wrong_premise: bool
) -> tuple[int, list[Claim]]:
    """A negation needs one in the evidence; a yes must not contradict a no; 'only' must survive.
    A "No" correcting a question's own number (`wrong_premise`) needs no "no" in the evidence."""
    words = set(re.split(r"[\s-]+", _folded(answer)))
    close_text = _folded(" ".join(close))
    close_words = set(_READ_ONLY.sub(" ", close_text).split())
    evidence_words = set(evidence.split())
    problems: list[Claim] = []
    negated = bool(words & NEGATIONS) or "n't" in answer
    if negated and not wrong_premise and not evidence_words & NEGATIONS:
        problems.append(Claim("negation", "the answer denies what the evidence never denies"))
    says_yes = bool(_AFFIRMATIVE_START.match(answer))
    if says_yes and close_words & POLARITY_NEGATIONS and not negated:
        problems.append(Claim("polarity", "the answer says yes where the evidence says no"))
    if _NEGATIVE_START.match(answer) and not wrong_premise and not close_words & (NEGATIONS | RESTRICTIONS):
        problems.append(Claim("polarity", "the answer says no where the evidence does not"))
    if close_words & RESTRICTIONS and not words & (RESTRICTIONS | NEGATIONS):
        problems.append(Claim("restriction", "the evidence says «només/only», the answer drops it"))
    return 1 + says_yes, problems


def _tables(answer: str, evidence: Sequence[str]) -> tuple[int, list[Claim]]:
    """A number said of a table row's label must be in that row (or in prose about that label)."""
    rows = [row for text in evidence for row in _table_rows(text)]
    prose = [s for text in evidence for s in sentences(text) if not s.startswith("|")]
    checked, problems = 0, []
    for sentence in sentences(answer):
        folded = fold(sentence)
        labels = [r for r in rows if _mentions(folded, r[0])]
        if len(labels) != 1:
            continue  # no row, or several rows named in one sentence: nothing to pin down
        row = labels[0]
        allowed = numbers(" ".join(row)) | {
            n for s in prose if _mentions(fold(s), row[0]) for n in numbers(s)
        }
        for n in numbers(sentence):
            checked += 1
            if n not in allowed and n in numbers(" ".join(" ".join(r) for r in rows)):
                problems.append(Claim("table", f"{_show(n)} is not in the row «{row[0]}»"))
    return checked, problems


def _echo(answer: str, question: str) -> tuple[int, list[Claim]]:
    """An answer made only of the question's own words: no other content word, number, path
    or negation (a "Sí, …" / "No, …" answers a yes/no question even in its own words)."""
    said = content_stems(answer)
    if _AFFIRMATIVE_START.match(answer) or _NEGATIVE_START.match(answer):
        return 1, []
    folded_answer, folded_question = _folded(answer), _folded(question)
    adds = (
        said - content_stems(question)
        or numbers(answer) - numbers(question)
        or set(_edges(folded_answer)) - set(_edges(folded_question))
        or (set(folded_answer.split()) - set(folded_question.split())) & POLARITY_NEGATIONS
    )
    if not said or adds:
        return 1, []
    return 1, [Claim("echo", "the answer repeats the question instead of answering it")]


def _closest_sentences(answer: str, evidence: Sequence[str], keep: int = 2) -> list[str]:
    stems = content_stems(answer)
    candidates = [s for text in evidence for s in sentences(text)]
    ranked = sorted(candidates, key=lambda s: -len(content_stems(s) & stems))
    return ranked[:keep]


def _edges(folded: str) -> list[tuple[str, str]]:
    """(word before, word after) each '>' of a menu path, elisions (d', l') dropped."""
    return [(_unelided(a), _unelided(b)) for a, b in _PATH_EDGE.findall(folded)]


def _unelided(word: str) -> str:
    return re.sub(r"^(?:[dls]|qu)'", "", word.strip("'’-"))


def _same_word(a: str, b: str) -> bool:
    """Equal, or the same word in a sibling language (Configuració / Configuración)."""
    if a == b:
        return True
    common = common_prefix_length(a, b)
    return common >= 5 and common >= 0.75 * max(len(a), len(b))


def _table_rows(text: str) -> list[list[str]]:
    """The body rows of the markdown tables in `text` (header and separator rows left out)."""
    lines = [line.strip() for line in text.split("\n")]
    rows = []
    for i, line in enumerate(lines):
        if not line.startswith("|") or _is_separator(line):
            continue
        if i + 1 < len(lines) and _is_separator(lines[i + 1]):
            continue  # a header row
        cells = _cells(line)
        if len(cells) > 1:
            rows.append(cells)
    return rows


def _is_separator(line: str) -> bool:
    return line.startswith("|") and set(line) <= set("|-: ")


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*") for c in line.strip().strip("|").split("|")]


def _mentions(folded_text: str, label: str) -> bool:
    label = fold(label).strip()
    return bool(label) and re.search(rf"\b{re.escape(label)}\b", folded_text) is not None


def _folded(text: str) -> str:
    """`text` folded and made plain (`_plain`), the menu icon "⋯" read as a word (`MENU_ICON`): the
    folding drops it, and the word before it became a path's first step."""
    return _plain(fold(text.replace("⋯", f" {MENU_ICON} ")))


def _plain(folded: str) -> str:
    """Folded text without markdown emphasis or quotes and with single spaces, '>' kept."""
    text = re.sub(r"[*_`\"«»“”]", " ", folded.replace("’", "'"))
    text = re.sub(r"[^\w\s>'/.,:;%€$-]", " ", text)
    text = re.sub(r"(?<=\w)[.,:;](?=\s|$)", " ", text)
    return " ".join(text.split())


def _show(n: float) -> str:
    return str(int(n)) if n == int(n) else str(n).replace(".", ",")
