"""The embedded chat model itself (llama.cpp): the same prompt gets the same answer. Slow: `llm`."""

from __future__ import annotations

import pytest

from docubot.config import Settings
from docubot.llm.base import ChatRequest, Message, complete
from docubot.llm.local import LocalModel
from tests.corpus_fixtures import MODELS_DIR

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
