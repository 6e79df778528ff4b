"""The lexical gate of the semantic cache: may an answer to question `a` be served for `b`?

Embedding similarity cannot tell "Com activo el 2FA?" from "Com desactivo el 2FA?" (e5 scores such
pairs up to 0.99, above most true paraphrases), so a semantic hit also needs the two questions to
say the same thing word for word, up to what never changes the meaning: word order, inflection,
typos, politeness and question words, and a short list of synonyms. Everything else blocks the hit:
a negation on one side only, a different number, a different name, a word on one side only, or two
content words that are not synonyms. A miss costs one LLM call; a false hit serves a confident wrong
answer, so the gate errs on the side of missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from docubot.text import fold, language_probabilities, tokenize

_NEGATIONS = frozenset(
    fold(w)
    for w in """no ni mai cap sense tampoc gens res not never without none nor cannot can't don't
    doesn't isn't aren't won't nunca nada ningún ninguna sin tampoco""".split()
)
_NUMBER_WORDS = frozenset(
    fold(w)
    for w in """zero dos dues tres quatre cinc sis set vuit nou deu onze dotze vint trenta
    cent mil one two three four five six seven eight nine ten twenty hundred thousand dos tres
    cuatro cinco seis siete ocho nueve diez veinte cien doble triple primer primera segon segona
    tercer tercera""".split()
)
_NEUTRAL = """podria podries podríeu podeu pot puc pots poden vull voldria voldríem saber sapiguer
indicar indiqués indiquéssiu indica explicar expliqui expliqueu explica dir digui digueu agrairia
agrairíem disculpi disculpeu perdoni perdó favor plau si us siusplau gràcies hola bon dia quin
quina quins quines quant quanta quants quantes manera forma mode fer possible cal haig he hauria
algú qualsevol concret concreta em m me li ens nos
please could would tell know thanks hello how which what way""".split()
"""Politeness, modal and question words: adding or dropping them does not change the question."""
_SYNONYMS = [
    "cost preu costa",
    "eliminar elimino treure trec esborrar esborro suprimir suprimeixo",
    "restablir restableixo reiniciar reinicio recuperar recupero",
    "descarregar descarrego baixar baixo",
    "connectar connecto integrar integro vincular vinculo enllaçar enllaço",
    "duplicar duplico clonar clono copiar copio",
    "crear creo afegir afegeixo",
    "límit limit màxim maxim",
    "fitxer arxiu document",
    "rebre rebo arribar arriba",
    "canviar canvio modificar modifico",
    "configurar configuro establir estableixo",
]
"""Groups of words that ask the same thing in a support question (stems compared)."""


_SURE_LANGUAGE = 0.9


@dataclass(frozen=True)
class GateVerdict:
    passed: bool
    reason: str


def lexical_gate(a: str, b: str) -> GateVerdict:
    """Whether `a` and `b` ask the same thing as far as their words can tell (see the module doc)."""
    language, other = _languages(a, b)
    if other is not None:
        return GateVerdict(False, "different languages")
    words_a, words_b = _words(a), _words(b)
    if (words_a & _NEGATIONS) != (words_b & _NEGATIONS):
        return GateVerdict(False, "negation on one side only")
    if _numbers(words_a) != _numbers(words_b):
        return GateVerdict(False, "different numbers")
    if not (_names_found(_names(a), words_b) and _names_found(_names(b), words_a)):
        return GateVerdict(False, "different names")
    left, right = _unmatched(_content(a, language), _content(b, language))
    if left or right:
        return GateVerdict(False, f"different words: {sorted(left)} / {sorted(right)}")
    return GateVerdict(True, "same content words")


def _languages(a: str, b: str) -> tuple[str, str | None]:
    """The language both questions are read in (the surer side's), and the other side's when both are
    sure and differ. Short Catalan questions read as Spanish up to 0.83 ("Com duplico una tasca?"), so
    only surer verdicts count; a Spanish look-alike still differs in its words ("com" / "cómo")."""
    (best_a, p_a), (best_b, p_b) = _best(a), _best(b)
    if best_a != best_b and min(p_a, p_b) >= _SURE_LANGUAGE:
        return best_a, best_b
    return (best_a if p_a >= p_b else best_b), None


def _best(text: str) -> tuple[str, float]:
    probabilities = language_probabilities(text)
    best = max(probabilities, key=probabilities.__getitem__)
    return best, probabilities[best]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", fold(text)))


def _numbers(words: set[str]) -> set[str]:
    return {w.replace(".", "") for w in words if w.isdigit() or w in _NUMBER_WORDS}


def _names(text: str) -> set[str]:
    """Product, plan and format names: capitalised words past the first, and acronyms."""
    tokens = re.findall(r"[\w·'-]+", text)
    names = {t for t in tokens if len(t) >= 2 and t.isupper()}
    names |= {t for t in tokens[1:] if t[:1].isupper() and not t.isupper()}
    return {fold(n) for n in names}


def _names_found(names: set[str], words: set[str]) -> bool:
    """Every name appears among the other question's words, whatever its case, or with a typo."""
    return all(any(_typo(name, w) for w in words) for name in names)


def _content(text: str, language: str) -> set[tuple[str, str]]:
    """(canonical stem, folded word) of each content word."""
    neutral = _neutral_stems(language)
    pairs = set()
    for word in re.findall(r"\w+", fold(text.replace("·", ""))):
        stems = tokenize(word, language)  # [] for a stopword
        if stems and (stem := _canonical(stems[0])) not in neutral:
            pairs.add((stem, word))
    return pairs


def _unmatched(
    left: set[tuple[str, str]], right: set[tuple[str, str]]
) -> tuple[set[str], set[str]]:
    """The words of each side that match none of the other side (same stem, prefix or typo)."""
    only_left = {w for s, w in left if not any(_close((s, w), other) for other in right)}
    only_right = {w for s, w in right if not any(_close((s, w), other) for other in left)}
    return only_left, only_right


def _close(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Same stem, a stemmer inconsistency (one stem a prefix of the other) or a typo."""
    (stem_a, word_a), (stem_b, word_b) = a, b
    if stem_a == stem_b:
        return True
    shorter, longer = sorted((stem_a, stem_b), key=len)
    if longer.startswith(shorter) and (len(shorter) >= 4 or len(longer) - len(shorter) <= 4):
        return len(shorter) >= 3
    return _typo(word_a, word_b)


def _typo(a: str, b: str) -> bool:
    """One edit apart (two for long words that start alike): 'contrasnya', 'combido'."""
    if min(len(a), len(b)) < 4:
        return a == b
    limit = 2 if min(len(a), len(b)) >= 7 and a[:2] == b[:2] else 1
    return _edit_distance(a, b) <= limit


def _edit_distance(s: str, t: str) -> int:
    previous = list(range(len(t) + 1))
    for i, cs in enumerate(s, 1):
        current = [i]
        for j, ct in enumerate(t, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (cs != ct)))
        previous = current
    return previous[-1]


@lru_cache(maxsize=3)
def _neutral_stems(language: str) -> frozenset[str]:
    return frozenset(tokenize(" ".join(_NEUTRAL), language))


@lru_cache(maxsize=3)
def _synonym_map(language: str) -> dict[str, str]:
    """Stem → the first stem of its synonym group."""
    mapping: dict[str, str] = {}
    for group in _SYNONYMS:
        stems = tokenize(group, language)
        for stem in stems:
            mapping.setdefault(stem, stems[0])
    return mapping


def _canonical(stem: str) -> str:
    return _synonym_map("ca").get(stem, stem)
