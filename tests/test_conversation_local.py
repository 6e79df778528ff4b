"""Two-turn dialogues with the real local model on the sample docs (slow: marked `llm`)."""

from __future__ import annotations

import pytest

from docubot.chat.conversation import Conversation
from docubot.config import Settings
from docubot.rag.answer import DocuBot
from docubot.text import fold
from tests.corpus_fixtures import MODELS_DIR

pytestmark = pytest.mark.llm


@pytest.fixture
def conversation(sample_home, embedder, local_model):
    settings = Settings(
        home=sample_home, llm="local", models_dir=MODELS_DIR, llm_backoff_s=0.001, cache_enabled=False
    )
    return Conversation(DocuBot(settings, embedder=embedder, chat_model=local_model), "sliding_window:4")


def test_this_refers_to_csv_export_and_the_answer_denies_it_from_a_page_that_says_so(conversation) -> None:
    conversation.send("Com exporto un projecte a CSV?")
    result = conversation.send("I això està disponible al pla Starter?")
    rewrite = fold(conversation.ledger[-1].rewrite or "")
    assert "csv" in rewrite or "export" in rewrite, rewrite
    # Both pages say it (the plans table, and the export section: "al pla Starter, el menú
    # *Exportar* es mostra desactivat"); answers.jsonl's a004 has both as gold.
    cited = set(result.answer.fonts)
    assert cited & {"wiki/administracio/plans-i-facturacio", "wiki/guies/informes-i-exportacio"}, cited
    said = fold(result.answer.resposta)
    assert not said.startswith(("si,", "si ", "yes")), said  # the docs deny it
    assert "business" in said or "desactivat" in said or "no " in said, said


def test_how_do_i_remove_them_retrieves_the_members_page(conversation) -> None:
    conversation.send("com convido un membre?")
    result = conversation.send("i com l'elimino?")
    call = next(c for c in conversation.bot.call_log.last(20) if c.id == result.call_id)
    assert call.retrieval_question and "membre" in fold(call.retrieval_question)
    assert any(
        r["id"].startswith("wiki-administracio-membres-i-permisos--eliminar-un-membre")
        for r in call.retrieved
    )
