"""Answering benchmark with the real local model, on the default path: `python bench/answer.py`.

By default (`DOCUBOT_ANSWER_FROM=auto`) the answer is the docs' passages: a Catalan question costs no
model call, a Spanish or English one the question's translation for the search (three calls for
English: directly and through Spanish) and the answer's translation (its opening, then the rest).
For two questions in each language: time to the first token and to the whole answer with the
embedded model's saved prompt states, and without them (`saved_bytes=0`), the baseline, asked in
turn on the same loaded model in the same run, after a question neither times. Then the answer
caches: the same question again (an exact hit) and a reworded one (a semantic hit), against the
answer made; and the extractive `none` provider, which translates nothing.
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
from docubot.rag.answer import AskResult, DocuBot  # noqa: E402

QUESTIONS = {
    "ca": {
        "Com restableixo la contrasenya?": "Em podria indicar com restableixo la contrasenya, si us plau?",
        "El pla Starter inclou l'exportació a CSV?": "L'exportació a CSV, el pla Starter la inclou?",
    },
    "es": {
        "¿Cómo elimino a un miembro del espacio de trabajo?": "como elimino un miembro del espacio de trabajo",
        "¿Cuántos días dura un token de acceso de la API?": "cuantos dias dura un token de la api",
    },
    "en": {
        "How long is an API access token valid?": "how long does an api access token last",
        "How do I reset my password?": "how can i reset my password",
    },
}
"""Per language, a question and the same question reworded (for the semantic cache)."""
WARM_UP = "¿Cómo cambio la contraseña?"
"""Asked of each bot first, not timed: the embedder's and the model's first calls, and the saved
states a running server holds (the translations' instructions)."""


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
        baseline = LocalModel(
            settings.models_dir, settings.context_window, settings.cpu_threads(), saved_bytes=0
        )
        uncached = settings.with_overrides(cache_enabled=False)
        bots = {
            "saved states": DocuBot(uncached, embedder=embedder, store=store, chat_model=model),
            "none saved": DocuBot(uncached, embedder=embedder, store=store, chat_model=baseline),
        }
        cached = DocuBot(settings, embedder=embedder, store=store, chat_model=model)
        extractive = DocuBot(uncached, embedder=embedder, store=store, chat_model=None)
        for bot in (*bots.values(), extractive):
            bot.ask(WARM_UP)
        timings: dict[tuple[str, str], list[AskResult]] = {}
        hits: list[tuple[str | None, float]] = []
        made: list[float] = []
        none: list[float] = []
        for n, (language, question, reworded) in enumerate(_questions()):
            order = list(bots) if n % 2 else list(reversed(bots))  # neither always asks first
            for name in order:
                timings.setdefault((language, name), []).append(bots[name].ask(question))
            first = cached.ask(question)
            exact, semantic = cached.ask(question), cached.ask(reworded)
            made.append(_s(first, "total"))
            hits += [(exact.cache, _s(exact, "total")), (semantic.cache, _s(semantic, "total"))]
            t = time.perf_counter()
            extractive.ask(question)
            none.append(time.perf_counter() - t)
            states, baseline_result = (timings[(language, name)][-1] for name in bots)
            print(
                f"{language} {question[:50]:50s} first token {_s(states, 'first_token'):5.2f} s "
                f"(none saved {_s(baseline_result, 'first_token'):5.2f} s), total {_s(states, 'total'):5.2f} s "
                f"(none saved {_s(baseline_result, 'total'):5.2f} s) | {states.outcome}"
            )
        for language in QUESTIONS:
            with_states, without = (timings[(language, name)] for name in bots)
            for key, label in (("first_token", "first token"), ("total", "whole answer")):
                now, before = _median(with_states, key), _median(without, key)
                print(
                    f"{language}: median {label} {now:.2f} s with saved states, {before:.2f} s without "
                    f"(x{before / max(now, 1e-3):.2f})"
                )
        served = [seconds for kind, seconds in hits if kind]
        made_s = statistics.median(made)
        if served:
            hit_s = statistics.median(served)
            print(
                f"answer-cache hits {len(served)}/{len(hits)}: median {hit_s * 1000:.0f} ms "
                f"vs the answer made {made_s:.2f} s (x{made_s / hit_s:.0f} faster)"
            )
        print(f"extractive `none` provider: median {statistics.median(none) * 1000:.0f} ms per answer")
        store.close()


def _questions() -> list[tuple[str, str, str]]:
    return [(lang, q, reworded) for lang, pairs in QUESTIONS.items() for q, reworded in pairs.items()]


def _median(results: list[AskResult], key: str) -> float:
    return statistics.median(_s(result, key) for result in results)


def _s(result: AskResult, key: str) -> float:
    return result.timings_ms.get(key, 0.0) / 1000


if __name__ == "__main__":
    main()
