"""History policies over a scripted 100-turn conversation: `python bench/conversation.py`.

A fast fake model (it answers instantly with a fixed-size reply and counts tokens as characters/4)
stands in for the LLM, so the numbers are the policies' own: input tokens of each call (they must
plateau for every policy but `full`) and the time each policy adds to a turn, against the `full`
policy in the same run. Retrieval runs for real on the sample docs.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.chat.conversation import Conversation  # noqa: E402
from docubot.chat.policies import ConversationState  # noqa: E402
from docubot.config import Settings  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.llm import ChatRequest, StreamEvent, Usage  # noqa: E402
from docubot.rag.answer import DocuBot  # noqa: E402

POLICIES = ["full", "last_turns:6", "summary:8", "sliding_window:4", "relevant", "token_budget:1500"]
TURNS = 100
QUESTIONS = [
    "Com exporto un projecte a CSV?",
    "Quant costa el pla Business?",
    "Com convido un membre a l'espai?",
    "Com activo la verificació en dos passos?",
    "Com connecto Slack a un projecte?",
    "Quant dura un token de l'API?",
    "Com creo una tasca recurrent?",
    "Com sincronitzo el calendari amb Outlook?",
    "Com verifico la signatura d'un webhook?",
    "Què passa si fallo la contrasenya cinc vegades?",
]


class InstantModel:
    """Replies at once with a valid 60-word answer; usage counted as characters / 4."""

    name = "bench/instant"
    context_window = 32_768

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        prompt = request.system + "".join(m.content for m in request.messages)
        if request.json_schema is None or "pregunta" in request.json_schema.get("properties", {}):
            text = (
                json.dumps({"pregunta": "Com exporto un projecte a CSV?"})
                if request.json_schema
                else "Resum breu. " * 20
            )
        else:
            text = json.dumps(
                {
                    "fonts": [1],
                    "resposta": "Ves a Configuració > Membres. " * 10,
                    "categoria": "altres",
                    "confianca": "alta",
                }
            )
        yield StreamEvent(text=text)
        yield StreamEvent(usage=Usage(self.count_tokens(prompt), self.count_tokens(text)))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp), context_window=32_768)
        embedder = E5Embedder()
        store = DocuBot(settings, embedder=embedder, chat_model=None).store
        ingest(ROOT / "examples" / "docs_nubelia", settings, store, embedder)
        baseline = None
        for policy in POLICIES:
            conversation = Conversation(
                DocuBot(settings, embedder=embedder, store=store, chat_model=InstantModel()), policy
            )
            select_ms = []
            for turn in range(TURNS):
                conversation.send(QUESTIONS[turn % len(QUESTIONS)])
                state = conversation.state
                copy = ConversationState(list(state.messages), state.summary, state.summarized_turns)
                start = time.perf_counter()
                conversation.policy.select(copy, QUESTIONS[(turn + 1) % len(QUESTIONS)])
                select_ms.append((time.perf_counter() - start) * 1000)
            inputs = [t.input_tokens for t in conversation.ledger]
            per_turn = statistics.median(select_ms)
            baseline = baseline or per_turn
            print(
                f"{policy:18s} input tokens at turn 10/50/100: {inputs[9]:6d} {inputs[49]:6d} {inputs[99]:6d}  "
                f"cumulative {sum(inputs):8d}  calls {conversation.totals()['calls']:4d}  "
                f"policy time per turn p50 {per_turn:6.2f} ms (x{per_turn / baseline:.1f} vs full)"
            )
        store.close()


if __name__ == "__main__":
    main()
