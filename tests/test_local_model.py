"""The embedded chat model itself (llama.cpp): the same prompt gets the same answer, and a
request's avoided words are not written. Slow: `llm`."""

from __future__ import annotations

import re

import pytest

from docubot.config import Settings
from docubot.llm.base import ChatRequest, Message, complete
from docubot.llm.local import LocalModel
from docubot.rag.query_translation import AVOID, translate_query
from docubot.rag.translate import TRANSLATOR_SYSTEM
from tests.corpus_fixtures import MODELS_DIR, SAMPLE_DOCS

pytestmark = pytest.mark.llm

SYSTEM = "Answer in one short sentence."
QUESTION = Message("user", "Invent a name for a project-management app and say why.")


def _request(*messages: Message) -> ChatRequest:
    # temperature 1: the sampler, not the argmax, picks most words, so any change of seed or logits shows
    return ChatRequest(SYSTEM, messages, max_tokens=24, temperature=1.0)


def test_the_same_prompt_gets_the_same_answer_whatever_ran_before(local_model) -> None:
    first = complete(local_model, _request(QUESTION)).text
    complete(local_model, _request(Message("user", "Name a colour.")))
    assert complete(local_model, _request(QUESTION)).text == first
    follow_up = (QUESTION, Message("assistant", first), Message("user", "Shorter, please."))
    complete(local_model, _request(*follow_up))  # caches the question, then two messages more
    assert complete(local_model, _request(QUESTION)).text == first


def test_two_model_objects_on_one_file_share_its_cache_safely(local_model) -> None:
    settings = Settings(models_dir=MODELS_DIR)  # as the fixture's: the same loaded model
    other = LocalModel(settings.models_dir, settings.context_window, settings.cpu_threads())
    first = complete(local_model, _request(QUESTION)).text
    complete(other, _request(Message("user", "Name a colour.")))
    assert complete(local_model, _request(QUESTION)).text == first


def test_a_question_translated_into_catalan_is_not_written_in_spanish(local_model) -> None:
    """tune a028: asked for Catalan, the model wrote "¿Existe un límite de filas por exportación y
    qué planes pueden exportar reportes?", refused as Spanish, and the English was searched."""
    question = "Is there a max number of rows per export, and which plans can export reports at all?"
    translated = translate_query(question, "en", "ca", local_model, TRANSLATOR_SYSTEM, 0.1)
    assert translated.text is not None, translated.check
    words = set(re.findall(r"[^\W\d_]+|¿", translated.text.lower()))
    assert not words & set(AVOID["ca"])


def test_no_avoided_token_begins_a_word_of_the_sample_docs(local_model) -> None:
    """Banning a token that also begins a longer word would bar that word ("con" begins
    "contrasenya" as a token): the avoided Spanish words must begin none of the docs' words."""
    banned = local_model._word_tokens(AVOID["ca"])
    text = " ".join(page.read_text(encoding="utf-8") for page in SAMPLE_DOCS.rglob("*.md"))
    barred = {
        word
        for word in set(re.findall(r"[^\W\d_][\w·'’-]*", text))
        for form in (f" {word}", word.capitalize(), f" {word.capitalize()}")
        if len(tokens := local_model._tokenize(form)) > 1 and tokens[0] in banned
    }
    assert banned and barred == set()
