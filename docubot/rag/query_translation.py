"""A question asked in another language than the docs', translated into theirs for retrieval.

Multilingual e5 ranks an English question about Catalan docs far worse than the same question in
Catalan, and BM25 finds nothing across languages: on the sample docs' English questions the gold
section fell from 1st to 14th ("Apple Calendar") and to 19th ("account lockout"). One short call to
the chat model (the same system prompt, so llama.cpp's prefix cache keeps it) translates the
question; retrieval searches the translation (BM25) and the mean of its embedding and the asked
question's (a wrong translation then hides nothing the asked words find), the refusal decision and
the focus step read the translation, and the answer is still written in the question's language.
A translation that is empty, too long, in the wrong language, not a question, that changes a number
or that adds or loses a name is not used: a name capitalised in the question, or a word the docs
write only as a name, however the question writes it ("whats the storage cap on enterprise?" became
"Quina capa de stockage té l'entitat?", and its search missed the plans table). Translating into
Catalan, the embedded model may not write the Spanish words it wrote instead (`AVOID`). With the
embedded model an English question is also translated through Spanish (`THROUGH`), which it
translates into Catalan far better, and retrieval searches both translations (`also`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from docubot.llm import ChatModel, ChatRequest, Message, ProviderError, complete
from docubot.rag.contract import ContractError
from docubot.rag.numbers import numbers
from docubot.rag.refusal import PREFIX, question_terms
from docubot.rag.translate import LANGUAGE_NAMES, parse_translation, translation_schema
from docubot.text import fold, guess_language

MAX_TOKENS = 96
"""Room for a translated question (questions are at most a few sentences)."""
FIELD = "pregunta"
"""The reply's field (`resposta`, the field of an answer's translation, invited an answer)."""
MAX_GROWTH = 3
"""A translation more than this many times longer than the question is not one."""


@dataclass(frozen=True)
class QueryTranslation:
    """The question in the docs' language (None when it was not translated) and the log entry."""

    text: str | None
    check: dict[str, Any]
    input_tokens: int = 0
    output_tokens: int = 0
    also: str | None = None
    """A second translation, made through a language the model translates better (`THROUGH`),
    searched beside the first (None: none made, or none passed the checks)."""


def translate_query(
    question: str,
    source: str,
    target: str,
    model: ChatModel,
    system: str,
    temperature: float,
    names: Collection[str] = (),
) -> QueryTranslation:
    """`question` (written in `source`) translated into `target` by `model`, checked; `names`
    (folded) are the words the docs write only as names, which a translation must keep when the
    question uses them, however it writes them."""
    check: dict[str, Any] = {"check": "query_translation", "from": source, "to": target}
    try:
        completion = complete(model, query_request(question, source, target, system, temperature))
        text = parse_translation(completion.text, FIELD)
    except (ProviderError, ContractError) as exc:
        return QueryTranslation(None, {**check, "ok": False, "why": str(exc)})
    used = (completion.usage.input_tokens, completion.usage.output_tokens)
    problem = _problem(question, text, source, target, names)
    if problem is not None:
        return QueryTranslation(None, {**check, "ok": False, "why": problem, "text": text}, *used)
    return QueryTranslation(text, {**check, "ok": True, "text": text}, *used)


def translate_through(
    question: str,
    source: str,
    via: str,
    target: str,
    model: ChatModel,
    system: str,
    temperature: float,
    names: Collection[str] = (),
) -> QueryTranslation:
    """`question` translated into `via`, then that into `target`, each step checked as
    `translate_query` checks one; the `via` text when only the second step fails (a language close
    to `target` is searched as it is, `CLOSE`)."""
    first = translate_query(question, source, via, model, system, temperature, names)
    check: dict[str, Any] = {"check": "query_translation", "from": source, "through": via, "to": target}
    if first.text is None:
        return QueryTranslation(
            None,
            {**check, "ok": False, "why": f"{via}: {first.check['why']}"},
            first.input_tokens,
            first.output_tokens,
        )
    second = translate_query(first.text, via, target, model, system, temperature, names)
    used = (first.input_tokens + second.input_tokens, first.output_tokens + second.output_tokens)
    if second.text is None:
        return QueryTranslation(
            first.text, {**check, "ok": True, "text": first.text, "why": second.check["why"]}, *used
        )
    return QueryTranslation(second.text, {**check, "ok": True, "text": second.text, via: first.text}, *used)


def query_request(question: str, source: str, target: str, system: str, temperature: float) -> ChatRequest:
    """The request for the translation: the answering system prompt (so the prefix cache keeps
    it), an English instruction with two examples, and a reply `{"pregunta": "…"}`. With the
    answers' translation request ("Translate this text…", a `resposta` field) the local model
    answered the question instead, inventing prices and menus, in 12 of 18 questions."""
    prompt = (
        f"Translate the {LANGUAGE_NAMES[source]} question below into {LANGUAGE_NAMES[target]}. Do not "
        f"answer it and add nothing: write the same question in {LANGUAGE_NAMES[target]}, keeping names, "
        "numbers and technical terms as they are.\n"
        f"Example: «{EXAMPLES['en']}» → «{EXAMPLES[target]}»\n"
        f"Example: «{EXAMPLES['es']}» → «{EXAMPLES[target]}»\n\n"
        f"Question: {question}"
    )
    return ChatRequest(
        system,
        (Message("user", prompt),),
        translation_schema(FIELD),
        MAX_TOKENS,
        temperature,
        avoid=AVOID.get(target, ()),
    )


THROUGH = {("en", "ca"): "es"}
"""(asked, docs) → the language a second translation goes through. The embedded model translates
English into Catalan poorly ("the signing secret of our webhook got leaked" → "el segreto del web
hook … ha estat perdut") and English into Spanish, and Spanish into Catalan, far better (Spanish
questions were fully correct 32 times in 35, English ones 26 in 37, README stop 48)."""
CLOSE = frozenset({("es", "ca"), ("ca", "es")})
"""(written, wanted): a translation written in the first language of a pair, asked for the second,
is near enough to search with."""
EXAMPLES = {
    "ca": "Com elimino un projecte?",
    "es": "¿Cómo elimino un proyecto?",
    "en": "How do I delete a project?",
}
"""One question in each language, for the instruction's examples."""
AVOID: dict[str, tuple[str, ...]] = {
    "ca": tuple(
        (
            "¿ y los las qué cómo cuál hay puedo puede pueden tiene tengo por mi mis está también pero "
            "cuando tarea tareas proyecto proyectos usuario usuarios cuenta desde otro otra hacer "
            "nuestro nuestros quiero todos todas ya sin más muy"
        ).split()
    ),
}
"""Per target language, the words of a close language the local model writes instead of it: asked
for Catalan, it wrote Spanish for 22 of 98 question translations (13 with these avoided). Only Spanish
words that begin no word of the sample docs as a token ("con" begins "contrasenya", "para"
"paraules"); a word of the question such a token begins stays writable (`LocalModel`)."""


def _problem(question: str, text: str, source: str, target: str, names: Collection[str] = ()) -> str | None:
    """Why `text` cannot stand for `question` (written in `source`) in retrieval (None: it can).

    A translation written in a language close to the one asked for (`CLOSE`) is used: asked for
    Catalan, the local model wrote Spanish for 8 of 45 English questions ("Si duplico una tare, se
    copian comentarios e adjuntos?"). Searched with it, tune a217 found "La còpia conserva…, però
    no els comentaris ni els adjunts" and near-topic a189 was refused; searching with each of the
    13 translations refused as "written in es" changed no other answer without the model, and with
    it fresh a102's found the webhook retries instead of the timestamp check (README, stop 44).
    Written in the question's own language (a Spanish question left in Spanish), it is none."""
    if len(text) > MAX_GROWTH * len(question) + 40:
        return "longer than a translation of the question"
    example, asked_example = _gist(EXAMPLES.get(target, "")), _gist(EXAMPLES.get(source, ""))
    if example and example <= _gist(text) and not asked_example & _gist(question):
        return "the instruction's example"  # "¿Cómo puedo eliminar un proyecto?" (of rate limits)
    if question.rstrip().endswith(("?", "？")) and not text.rstrip().endswith("?"):
        return "not a question"  # an answer (or a refusal) instead of the translation
    written = guess_language(text)
    if written is not None and written != target and (written == source or (written, target) not in CLOSE):
        return f"written in {written}"
    asked, translated = fold(question), fold(text)
    terms = question_terms(question)
    kept = dict.fromkeys([*terms.salient, *(word for word in terms.content if word in names)])
    lost = [term for term in kept if term not in translated]
    if lost:
        return f"lost {', '.join(lost)}"  # a name the refusal decision and BM25 must still see
    added = [term for term in question_terms(text).salient if term not in asked]
    if added:
        return f"added {', '.join(added)}"
    changed = numbers(text) ^ numbers(question)
    if changed:
        return f"numbers changed: {', '.join(f'{n:g}' for n in sorted(changed))}"
    return None


def _gist(text: str) -> set[str]:
    """The first PREFIX letters of each word of `text` at least that long (folded), which say which
    word it is, as they do for the refusal's vocabulary ("elimino", "eliminar"): a translation
    holding all of the example's, of a question holding none of them, wrote the example back."""
    return {word[:PREFIX] for word in re.findall(r"\w+", fold(text)) if len(word) >= PREFIX}
