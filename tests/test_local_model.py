"""The embedded chat model itself (llama.cpp): the same prompt gets the same answer, a request's
instructions evaluated before are restored, not evaluated again, and a request's avoided words are
not written. Slow: `llm`."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from docubot.config import Settings
from docubot.llm.base import ChatRequest, Message, complete
from docubot.llm.local import _MESSAGE, LocalModel
from docubot.rag.query_translation import AVOID, translate_query
from docubot.rag.translate import TRANSLATOR_SYSTEM, translation_request
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


def test_a_reply_of_one_string_is_opened_in_the_prompt_and_parses_unless_cut(local_model) -> None:
    """A translation's reply, `{"resposta": "…"}`, is written without a grammar after its opening:
    it parses, quotes and all; one cut short by `max_tokens` is left open, as the grammar left it,
    so that a translation cut short is never taken for a whole one."""
    request = translation_request(
        TRANSLATOR_SYSTEM, 'L\'estat "En curs" vol dir que algú hi treballa ara mateix.', "ca", "en", 64, 0.0
    )
    pieces = [event.text for event in local_model.stream(request) if event.text]
    assert pieces[0] == '{ "resposta": "'  # handed on before the model writes a token
    reply = json.loads("".join(pieces))
    assert list(reply) == ["resposta"] and "working" in reply["resposta"]
    cut = complete(local_model, replace(request, max_tokens=9)).text
    assert cut.startswith('{ "resposta": "The') and not cut.endswith('"}')
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut)


def _translation(text: str, target: str = "en") -> ChatRequest:
    # temperature 1, as `_request`: a change of logits changes the words sampled
    return replace(translation_request(TRANSLATOR_SYSTEM, text, "ca", target, 48, 0.0), temperature=1.0)


def test_a_message_is_evaluated_in_two_blocks_around_its_first_blank_line(local_model) -> None:
    request = _translation("Obre *Configuració > API*.\n\nDesprés, fes clic a **Desa**.")
    message = _MESSAGE.format(role="user", content=request.messages[0].content)
    head, tail = local_model._blocks(message)
    assert local_model._tokenize(message) == [*head, *tail]
    assert local_model._llama.detokenize(list(tail)).decode().startswith("Catalan: Obre")
    assert len(local_model._blocks(_MESSAGE.format(role="user", content="No blank line here."))) == 1


def _evaluated_after_other_pairs(model: LocalModel, request: ChatRequest) -> list[int]:
    """How many tokens each evaluation of `request` by `model` took, after two requests of other
    pairs of languages (which leave the KV cache holding other blocks)."""
    complete(model, _translation("Com elimino un projecte?"))
    complete(model, _translation("Com elimino un projecte?", target="es"))
    evaluated: list[int] = []
    evaluate = model._llama.eval
    model._llama.eval = lambda tokens: (evaluated.append(len(tokens)), evaluate(tokens))[1]
    try:
        complete(model, request)
    finally:
        del model._llama.eval
    return evaluated


def _user_blocks(model: LocalModel, request: ChatRequest) -> list[tuple[int, ...]]:
    return model._blocks(_MESSAGE.format(role="user", content=request.messages[0].content))


def test_instructions_evaluated_before_another_request_are_restored_not_evaluated(local_model) -> None:
    """A translation's instructions are the same for every text of a pair of languages."""
    request = _translation("Quants dies dura la prova gratuïta?")
    evaluated = _evaluated_after_other_pairs(local_model, request)
    assert evaluated[0] == len(_user_blocks(local_model, request)[1])  # the text alone, then generation
    restored = complete(local_model, request).text
    local_model._loaded.saved.clear()
    local_model._loaded.cached.clear()
    assert complete(local_model, request).text == restored  # evaluated afresh: the same words


def test_a_model_that_saves_no_state_evaluates_every_block(local_model) -> None:
    """The baseline of bench/answer.py: with `saved_bytes=0` nothing is saved or restored, even
    the states another object on the same loaded model saved."""
    settings = Settings(models_dir=MODELS_DIR)
    baseline = LocalModel(settings.models_dir, settings.context_window, settings.cpu_threads(), saved_bytes=0)
    complete(local_model, _translation("Quants dies dura la prova gratuïta?"))  # its states saved
    request = _translation("Quants dies dura la prova gratuïta?")
    evaluated = _evaluated_after_other_pairs(baseline, request)
    assert evaluated[0] == len(_user_blocks(local_model, request)[0])  # the instructions, evaluated again


class _RefusingRestores:
    """llama_cpp's bindings, whose restore of a saved state reads nothing (a wrong size)."""

    def __init__(self, bindings: object) -> None:
        self._bindings = bindings

    def __getattr__(self, name: str) -> object:
        return getattr(self._bindings, name)

    def llama_state_seq_set_data(self, *_: object) -> int:
        return 0


def test_a_restore_that_fails_evaluates_every_block_again(local_model) -> None:
    """When llama.cpp refuses a saved state, the cache is emptied and the prompt evaluated from its
    first block: the same words as a fresh evaluation."""
    request = _translation("Quants dies dura la prova gratuïta?")
    complete(local_model, request)  # its instructions' state saved
    bindings = local_model._loaded.bindings
    local_model._loaded.bindings = _RefusingRestores(bindings)
    try:
        evaluated = _evaluated_after_other_pairs(local_model, request)
        refused = complete(local_model, request).text
    finally:
        local_model._loaded.bindings = bindings
    system = _MESSAGE.format(role="system", content=request.system)
    assert evaluated[0] == len(local_model._blocks(system)[0])  # from the system prompt's first block
    local_model._loaded.saved.clear()
    local_model._loaded.cached.clear()
    assert complete(local_model, request).text == refused
