"""The extract's latency (the answer with the embedded model under `auto`, no model call for a
question in the docs' language): `python bench/extract.py`.

The answer set's Catalan answerable questions are answered twice through `DocuBot.ask` with no
chat model and the answer caches off: first with a passage-vector memo emptied before every
question (each answer embeds all its passages: the baseline), then with the memo kept across
questions, as a running server keeps it. Prints p50/p95 per answer for both and their ratio.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.components import Components  # noqa: E402
from docubot.config import Settings  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.rag.answer import DocuBot  # noqa: E402

ANSWERS = ROOT / "evals" / "nubelia" / "answers.jsonl"


def main() -> None:
    rows = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [r["question"] for r in rows if r["answerable"] and r["lang"] == "ca" and r["split"] == "tune"]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp), cache_enabled=False)
        parts = Components.from_settings(settings, chat_model=None)
        ingest(ROOT / "examples" / "docs_nubelia", settings, parts.store, parts.embedder)
        bot = DocuBot(parts)
        bot.ask(questions[0])  # models loaded, indexes built
        cold = [_timed(bot, q, parts.passage_vectors.clear) for q in questions]
        parts.passage_vectors.clear()
        warm = [_timed(bot, q) for q in questions]
        parts.close()
    for name, times in (("memo emptied per answer (baseline)", cold), ("memo kept across answers", warm)):
        print(f"{name:36s} {len(times)} answers: p50 {_p(times, 50):6.0f} ms, p95 {_p(times, 95):6.0f} ms")
    print(f"kept / emptied: p50 x{_p(warm, 50) / _p(cold, 50):.2f}, p95 x{_p(warm, 95) / _p(cold, 95):.2f}")


def _timed(bot: DocuBot, question: str, before: Callable[[], None] = lambda: None) -> float:
    before()
    start = time.perf_counter()
    bot.ask(question)
    return (time.perf_counter() - start) * 1000


def _p(times: list[float], percentile: int) -> float:
    return statistics.quantiles(times, n=100)[percentile - 1] if len(times) > 1 else times[0]


if __name__ == "__main__":
    main()
