"""Answering benchmark with the real local model: `python bench/answer.py`.

For 5 questions: time to first token, total time, prompt and answer tokens. The prefix cache is
measured by asking each question twice in a row (the second call reuses the KV cache of the whole
prompt prefix) and against the first call of the process (nothing cached). The extractive `none`
provider is the baseline, in the same run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.llm.local import LocalModel  # noqa: E402
from docubot.rag.answer import DocuBot  # noqa: E402
from docubot.store.sqlite import SQLiteStore  # noqa: E402

QUESTIONS = [
    "Com exporto un informe de projecte a PDF?",
    "Com restableixo la contrasenya?",
    "Quant de temps dura un token d'accés de l'API?",
    "¿Cómo elimino a un miembro del espacio de trabajo?",
    "El pla Starter inclou l'exportació a CSV?",
]


def main() -> None:
    models = Path.home() / ".cache" / "docubot" / "models"
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp), models_dir=models)
        embedder = E5Embedder()
        store = SQLiteStore(settings.db_path)
        ingest(ROOT / "examples" / "docs_nubelia", settings, store, embedder)
        start = time.perf_counter()
        model = LocalModel(settings.model_dir, settings.context_window, settings.cpu_threads())
        print(f"model load: {time.perf_counter() - start:.1f} s")
        local = DocuBot(settings, embedder=embedder, store=store, chat_model=model)
        extractive = DocuBot(settings, embedder=embedder, store=store, chat_model=None)
        rows = []
        for question in QUESTIONS:
            t = time.perf_counter()
            extractive.ask(question)
            none_s = time.perf_counter() - t
            first = local.ask(question)
            again = local.ask(question)
            rows.append((question, first, again, none_s))
            print(
                f"{question[:48]:48s} prompt {first.usage.input_tokens:5d} tok, "
                f"answer {first.usage.output_tokens:4d} tok | first token {_s(first, 'first_token'):5.1f} s, "
                f"total {_s(first, 'total'):5.1f} s | repeated: first token {_s(again, 'first_token'):5.2f} s "
                f"| none {none_s * 1000:.0f} ms | {first.outcome}"
            )
        ttft = statistics.median(_s(r[1], "first_token") for r in rows)
        cached = statistics.median(_s(r[2], "first_token") for r in rows)
        total = statistics.median(_s(r[1], "total") for r in rows)
        none = statistics.median(r[3] for r in rows)
        print(
            f"median first token {ttft:.1f} s; with the prompt cached {cached:.2f} s (x{ttft / max(cached, 1e-3):.0f})"
        )
        print(
            f"median total {total:.1f} s vs the extractive baseline {none * 1000:.0f} ms (x{total / none:.0f})"
        )
        store.close()


def _s(result, key: str) -> float:
    return result.timings_ms.get(key, 0.0) / 1000


if __name__ == "__main__":
    main()
