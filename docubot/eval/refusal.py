"""`docubot eval refusal`: each refusal signal alone and combined, fitted on one part of the labelled
questions and measured on another (`docubot/rag/refusal.py`).

Questions come from `retrieval.jsonl` (split by a hash of the id: every third question of each
class is held out) and, when present, `answers.jsonl` (its own `split`: `tune`, or held out:
`holdout`, `fresh`).
The combination is fitted on the tuning part only; the held-out part is reported apart, and a
3-fold cross-validation over all questions gives steadier numbers for so small a set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from docubot.eval.metrics import auroc
from docubot.eval.sets import EvalSetError, load_retrieval_set, read_jsonl
from docubot.rag.refusal import SIGNALS, RefusalModel, Vocabulary, fit, rule_things, signals
from docubot.store import Hit, VectorStore

Search = Callable[[str, int], list[Hit]]
KEEP_TARGET = 0.97
"""Share of answerable questions the chosen threshold must keep (on the tuning part)."""


@dataclass(frozen=True)
class LabelledQuestion:
    id: str
    question: str
    answerable: bool
    kind: str
    """near_topic | off_topic | empty for unanswerable ones; answerable ones keep their set's kind."""
    held_out: bool


@dataclass
class Row:
    item: LabelledQuestion
    values: list[float]
    best: float
    unknown_things: tuple[str, ...] = ()
    """What the unknown-thing rule refuses the question for (nothing: the model decides)."""


@dataclass
class RefusalEvaluation:
    rows: list[Row]
    model: RefusalModel
    signal_auroc: dict[str, dict[str, float]] = field(default_factory=dict)
    combined: dict[str, dict[str, float]] = field(default_factory=dict)
    """part (tune | holdout | cv | floor-…) → measures."""


def load_refusal_questions(folder: Path) -> list[LabelledQuestion]:
    """The labelled questions of `retrieval.jsonl` and, if present, `answers.jsonl`, once each."""
    questions: dict[str, LabelledQuestion] = {}
    cases = load_retrieval_set(folder)
    held = _every_third(
        [(c.id, (c.answerable, c.kind)) for c in cases]
    )  # stratified: every third of each class, in hash order
    for case in cases:
        kind = case.kind.replace("-", "_") if not case.answerable else "answerable"
        questions.setdefault(
            _key(case.question),
            LabelledQuestion(case.id, case.question, case.answerable, kind, case.id in held),
        )
    if (folder / "answers.jsonl").exists():
        for number, data in read_jsonl(folder / "answers.jsonl"):
            try:
                item = LabelledQuestion(
                    str(data["id"]),
                    str(data["question"]),
                    bool(data["answerable"]),
                    str(data.get("kind", "")) if not data["answerable"] else "answerable",
                    data.get("split", "tune") != "tune",
                )
            except KeyError as exc:
                raise EvalSetError(f"answers.jsonl line {number}: missing field {exc}") from exc
            questions.setdefault(_key(item.question), item)
    return [q for q in questions.values() if q.kind != "empty"]


def collect(
    questions: Sequence[LabelledQuestion],
    search: Search,
    k: int,
    store: VectorStore,
    progress: Callable[[], None] | None = None,
) -> list[Row]:
    """Retrieve for every question as DocuBot does (top `k`) and compute its signals."""
    vocabulary = Vocabulary()
    rows = []
    for item in questions:
        hits = search(item.question, k)
        unknown, unseen = rule_things(item.question, hits, store, vocabulary)
        rows.append(
            Row(
                item,
                signals(item.question, hits, store, vocabulary),
                max((h.score for h in hits), default=0.0),
                unknown + unseen,
            )
        )
        if progress:
            progress()
    return rows


def evaluate_refusal(
    rows: Sequence[Row], floor: float, mode: str, keep: float = KEEP_TARGET
) -> RefusalEvaluation:
    """Per-signal AUROC, the combination fitted on the tuning rows, measured on every part."""
    tune = [r for r in rows if not r.item.held_out]
    held = [r for r in rows if r.item.held_out]
    model = fit_model(tune, mode, keep)
    evaluation = RefusalEvaluation(list(rows), model)
    for index, name in enumerate(SIGNALS):
        sign = _direction([r.values[index] for r in tune], [r.item.answerable for r in tune])
        evaluation.signal_auroc[name] = {
            part: _auroc([sign * r.values[index] for r in subset], subset)
            for part, subset in (("tune", tune), ("holdout", held))
        }
    for part, subset in (("tune", tune), ("holdout", held)):
        probabilities = [model.probability(r.values) for r in subset]
        evaluation.combined[part] = _measures(subset, probabilities, model.threshold)
        evaluation.combined[f"{part} + unknown-thing rule"] = _measures(
            subset, _with_rule(subset, probabilities), model.threshold
        )
        evaluation.combined[f"floor {floor:.3f} ({part})"] = _measures(
            subset, [r.best for r in subset], floor
        )
    evaluation.combined["cv3"] = _cross_validated(rows, mode, keep)
    evaluation.signal_auroc["combined"] = {
        "tune": evaluation.combined["tune"]["auroc"],
        "holdout": evaluation.combined["holdout"]["auroc"],
    }
    return evaluation


def fit_model(rows: Sequence[Row], mode: str, keep: float = KEEP_TARGET) -> RefusalModel:
    """Logistic regression on `rows`; the threshold keeps `keep` of their answerable questions."""
    weights, bias, mean, scale = fit([r.values for r in rows], [r.item.answerable for r in rows])
    model = RefusalModel(tuple(weights), bias, tuple(mean), tuple(scale), 0.0, mode)
    kept = sorted(model.probability(r.values) for r in rows if r.item.answerable)
    allowed = int((1 - keep) * len(kept))
    threshold = kept[allowed] if kept else 0.5
    return RefusalModel(
        tuple(round(float(w), 5) for w in weights),
        round(float(bias), 5),
        tuple(round(float(m), 5) for m in mean),
        tuple(round(float(s), 5) for s in scale),
        round(float(threshold) - 1e-4, 5),
        mode,
    )


def refusal_combined_markdown(evaluation: RefusalEvaluation) -> str:
    lines = [
        "## Combined refusal (docubot/rag/refusal.py)",
        "",
        "| signal | AUROC tune | AUROC holdout |",
        "|---|---|---|",
    ]
    for name, values in evaluation.signal_auroc.items():
        lines.append(f"| {name} | {values['tune']:.3f} | {values['holdout']:.3f} |")
    lines += [
        "",
        f"Threshold on P(answerable): {evaluation.model.threshold:.4f} "
        f"(keeps {KEEP_TARGET:.0%} of the tuning answerables).",
        "",
        "| part | questions | kept answerable | refused near-topic | refused off-topic | AUROC |",
        "|---|---|---|---|---|---|",
    ]
    for part, m in evaluation.combined.items():
        lines.append(
            f"| {part} | {m['questions']:.0f} | {m['kept_answerable']:.3f} | {m['refused_near_topic']:.3f} | "
            f"{m['refused_off_topic']:.3f} | {m['auroc']:.3f} |"
        )
    model = evaluation.model
    answered = [
        (r, model.probability(r.values) >= model.threshold and not r.unknown_things) for r in evaluation.rows
    ]
    refused = [r for r, kept in answered if r.item.answerable and not kept]
    missed = [r for r, kept in answered if not r.item.answerable and kept]
    lines += [
        "",
        *_listed("Answerable questions refused", refused),
        *_listed("Unanswerable questions answered", missed),
    ]
    return "\n".join(lines) + "\n"


def _listed(title: str, rows: Sequence[Row]) -> list[str]:
    """`rows` named by their questions when they are tuning questions, and only counted when held
    out: whoever tunes reads held-out questions as numbers, never as words."""
    tuning = [r.item.question for r in rows if not r.item.held_out]
    held = len(rows) - len(tuning)
    named = json.dumps(tuning, ensure_ascii=False)
    return [f"{title}, tuning part ({len(tuning)}): {named}; held out: {held}."]


def _with_rule(rows: Sequence[Row], probabilities: Sequence[float]) -> list[float]:
    """The model's probabilities, with those the unknown-thing rule refuses set below any threshold."""
    return [-1.0 if r.unknown_things else p for r, p in zip(rows, probabilities, strict=True)]


def _cross_validated(rows: Sequence[Row], mode: str, keep: float, folds: int = 3) -> dict[str, float]:
    """Out-of-fold decisions: each fold judged by a model fitted on the others."""
    ordered = sorted(rows, key=lambda r: (r.item.answerable, r.item.kind, _digest(r.item.id)))
    probabilities: dict[str, tuple[float, float]] = {}
    for fold in range(folds):
        test = [r for i, r in enumerate(ordered) if i % folds == fold]
        train = [r for i, r in enumerate(ordered) if i % folds != fold]
        model = fit_model(train, mode, keep)
        probabilities.update({r.item.id: (model.probability(r.values), model.threshold) for r in test})
    decided = [probabilities[r.item.id][0] - probabilities[r.item.id][1] for r in rows]
    return _measures(rows, decided, 0.0)


def _measures(rows: Sequence[Row], scores: Sequence[float], threshold: float) -> dict[str, float]:
    """Refuse when score < threshold: shares kept / refused per class, and AUROC of the score."""

    def share(kind: Callable[[Row], bool], refused: bool) -> float:
        chosen = [s for r, s in zip(rows, scores, strict=True) if kind(r)]
        return (
            round(sum((s < threshold) == refused for s in chosen) / len(chosen), 4)
            if chosen
            else float("nan")
        )

    good = [s for r, s in zip(rows, scores, strict=True) if r.item.answerable]
    bad = [s for r, s in zip(rows, scores, strict=True) if not r.item.answerable]
    return {
        "questions": len(rows),
        "kept_answerable": share(lambda r: r.item.answerable, False),
        "refused_near_topic": share(lambda r: r.item.kind == "near_topic", True),
        "refused_off_topic": share(lambda r: r.item.kind == "off_topic", True),
        "refused_unanswerable": share(lambda r: not r.item.answerable, True),
        "auroc": round(auroc(good, bad), 4),
    }


def _auroc(values: Sequence[float], rows: Sequence[Row]) -> float:
    good = [v for v, r in zip(values, rows, strict=True) if r.item.answerable]
    bad = [v for v, r in zip(values, rows, strict=True) if not r.item.answerable]
    return round(auroc(good, bad), 4)


def _direction(values: Sequence[float], answerable: Sequence[bool]) -> float:
    """+1 when answerable questions score higher on average, else -1 (decided on tuning data)."""
    good = [v for v, a in zip(values, answerable, strict=True) if a]
    bad = [v for v, a in zip(values, answerable, strict=True) if not a]
    return 1.0 if not good or not bad or np.mean(good) >= np.mean(bad) else -1.0


def _every_third(items: Sequence[tuple[str, object]]) -> set[str]:
    """Ids held out: every third of each class, in the order of their hashes."""
    classes: dict[object, list[str]] = {}
    for item_id, label in items:
        classes.setdefault(label, []).append(item_id)
    return {i for ids in classes.values() for n, i in enumerate(sorted(ids, key=_digest)) if n % 3 == 0}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _key(question: str) -> str:
    return " ".join(question.casefold().split())
