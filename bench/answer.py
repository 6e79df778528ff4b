"""Answering benchmark with the real local model: `python bench/answer.py`.

For 5 questions: time to first token, total time, prompt and answer tokens. The prefix cache is
measured by asking each question twice in a row with the answer caches off (the second call reuses
the KV cache of the whole prompt prefix) and against the first call of the process (nothing cached).
Then the answer caches: the same question again (exact hit) and a reworded one (semantic hit). The
extractive `none` provider is the baseline, in the same run.
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

QUESTIONS = {
    "Com exporto un informe de projecte a PDF?": "com puc exportar un informe de projecte a pdf",
    "Com restableixo la contrasenya?": "Em podria indicar com restableixo la contrasenya, si us plau?",
    "Quant de temps dura un token d'accés de l'API?": "quant temps dura un token d'acces de l'API",
    "¿Cómo elimino a un miembro del espacio de trabajo?": "como elimino un miembro del espacio de trabajo",
    "El pla Starter inclou l'exportació a CSV?": "L'exportació a CSV, el pla Starter la inclou?",
}


def main() -> None:
    models = Path.home() / ".cache" / "docubot" / "models"
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp), models_dir=models)
        embedder = E5Embedder()
        store = DocuBot(settings, embedder=embedder, chat_model=None).store
        ingest(ROOT / "examples" / "docs_nubelia", settings, store, embedder)
        start = time.perf_counter()
        model = LocalModel(settings.models_dir, settings.context_window, settings.cpu_threads())
        print(f"model load: {time.perf_counter() - start:.1f} s")
        uncached = settings.with_overrides(cache_enabled=False)
        cached = DocuBot(settings, embedder=embedder, store=store, chat_model=model)
        local = DocuBot(uncached, embedder=embedder, store=store, chat_model=model)
        extractive = DocuBot(uncached, embedder=embedder, store=store, chat_model=None)
        rows = []
        hits = []
        for question, reworded in QUESTIONS.items():
            t = time.perf_counter()
            extractive.ask(question)
            none_s = time.perf_counter() - t
            first = cached.ask(question)
            again = local.ask(question)
            exact = cached.ask(question)
            semantic = cached.ask(reworded)
            rows.append((question, first, again, none_s))
            hits += [(exact.cache, _s(exact, "total")), (semantic.cache, _s(semantic, "total"))]
            print(
                f"{question[:48]:48s} prompt {first.usage.input_tokens:5d} tok, "
                f"answer {first.usage.output_tokens:4d} tok | first token {_s(first, 'first_token'):5.1f} s, "
                f"total {_s(first, 'total'):5.1f} s | repeated: first token {_s(again, 'first_token'):5.2f} s "
                f"| none {none_s * 1000:.0f} ms | {first.outcome} | cache: {exact.cache} "
                f"{_s(exact, 'total') * 1000:.0f} ms, reworded: {semantic.cache} {_s(semantic, 'total') * 1000:.0f} ms"
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
        served = [seconds for kind, seconds in hits if kind]
        if served:
            hit_s = statistics.median(served)
            print(
                f"answer-cache hits {len(served)}/{len(hits)}: median {hit_s * 1000:.0f} ms "
                f"vs a full answer {total:.1f} s (x{total / hit_s:.0f} faster)"
            )
        store.close()


def _s(result, key: str) -> float:
    return result.timings_ms.get(key, 0.0) / 1000


if __name__ == "__main__":
    main()
