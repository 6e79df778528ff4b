"""Translation benchmark with the real local model: `python bench/translation.py`.

Every Spanish or English answer is the docs' passages translated, and every such question is
translated for the search, so translation is where the embedded model spends its time. An answer's
translation is one string, `{"resposta": "…"}`, that the model writes after an opening written into
the prompt, without a grammar (`free_string`, now), against the same request constrained by the
JSON grammar from its first token (`string_grammar=True`, the baseline). Question translations keep
the grammar (their words, written without it, lost answers: README, stop 53); they are timed both
ways too, as measured and not kept. Both ways run on the same loaded model in the same run, in turn,
each request after a warm-up of its kind. Printed per kind: the median time to the translation's
first word and to its end, the ratio, and how many translations came out the same.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.llm.base import ChatRequest, complete  # noqa: E402
from docubot.llm.local import LocalModel  # noqa: E402
from docubot.rag.query_translation import query_request  # noqa: E402
from docubot.rag.translate import TRANSLATOR_SYSTEM, translation_request  # noqa: E402

QUESTIONS = {
    ("en", "ca"): [
        "which event should our endpoint listen to if we only care about when a task gets marked as done?",
        "how long does the free trial last and do we need a credit card?",
        "can a viewer comment on tasks or only look at them?",
        "what happens to the api tokens of someone we remove from the workspace?",
    ],
    ("en", "es"): [
        "how many requests per minute can we make to the api before getting blocked?",
        "where do i change the card we pay with?",
    ],
    ("es", "ca"): [
        "¿Cuánto tiempo tengo para aceptar una invitación al espacio de trabajo?",
        "¿Se pueden exportar los informes a Excel o solo a CSV?",
        "¿Qué pasa con las tareas si borro una etiqueta?",
    ],
}
EXTRACTS = {
    ("ca", "en"): [
        "Amb el pagament anual, el pla Starter queda a 4,80 € per usuari i mes, el Business a 9,60 € i "
        "l'Enterprise a 17,60 €.",
        "Quan passes a un pla superior, el canvi és immediat i es cobra la part proporcional del període.",
        "Els tokens caduquen als 90 dies. Pots rotar un token des de *Configuració > API > Tokens*.",
    ],
    ("ca", "es"): [
        "Tots els espais de treball nous tenen 14 dies de prova gratuïta del pla Business, sense "
        "necessitat d'introduir cap targeta.",
        "Un lector pot veure els projectes als quals té accés i comentar-hi, però no pot crear ni "
        "modificar tasques.",
        "En eliminar una etiqueta, desapareix de totes les tasques que la tenien, però les tasques no "
        "s'esborren.",
    ],
}
_OPENED = re.compile(r'":\s*"\s*\S')
"""The reply holds its string's first word."""


def main() -> None:
    settings = Settings(models_dir=Path.home() / ".cache" / "docubot" / "models")
    free = LocalModel(settings.models_dir, settings.context_window, settings.cpu_threads())
    grammar = LocalModel(
        settings.models_dir, settings.context_window, settings.cpu_threads(), string_grammar=True
    )
    models = {"without grammar": free, "grammar": grammar}
    kinds = {
        "answer": [
            translation_request(TRANSLATOR_SYSTEM, text, s, t, 350, 0.1)
            for (s, t), texts in EXTRACTS.items()
            for text in texts
        ],
        "question (not kept)": [
            replace(query_request(q, s, t, TRANSLATOR_SYSTEM, 0.1), free_string=True)
            for (s, t), qs in QUESTIONS.items()
            for q in qs
        ],
    }
    for requests in kinds.values():  # warm-up: the instructions' saved states, the first calls
        for model in models.values():
            complete(model, requests[0])
    for kind, requests in kinds.items():
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
        same = 0
        for n, request in enumerate(requests):
            order = list(models) if n % 2 else list(reversed(models))  # neither always first
            texts = {}
            for name in order:
                first, total, texts[name] = _timed(models[name], request)
                times[name].append((first, total))
            same += len(set(texts.values())) == 1
        for index, label in ((0, "first word"), (1, "whole translation")):
            now, before = (statistics.median(t[index] for t in times[name]) for name in models)
            print(
                f"{kind} translations ({len(requests)}): median {label} {now:.2f} s without the grammar, "
                f"{before:.2f} s with it (x{before / max(now, 1e-3):.2f})"
            )
        print(f"{kind} translations the same both ways: {same} of {len(requests)}")


def _timed(model: LocalModel, request: ChatRequest) -> tuple[float, float, str]:
    """Seconds to the reply's first word and to its end, and the translated text."""
    start = time.perf_counter()
    said: list[str] = []
    first: list[float] = []
    completion = complete(model, request, _noting_first_word(said, first, start))
    total = time.perf_counter() - start
    reply = json.loads(completion.text)
    return (first[0] if first else total), total, next(iter(reply.values()))


def _noting_first_word(said: list[str], first: list[float], start: float) -> Callable[[str], None]:
    def on_text(text: str) -> None:
        said.append(text)
        if not first and _OPENED.search("".join(said)):
            first.append(time.perf_counter() - start)

    return on_text


if __name__ == "__main__":
    main()
