"""Evaluation on the labelled sample set: the CI floors, the metrics, and the CLI reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.db import Database
from docubot.eval.metrics import auroc, mrr, pick_threshold, recall_at, sweep
from docubot.eval.retrieval import refusal_signals, run_cases
from docubot.eval.sets import EvalSetError, load_retrieval_set
from docubot.rag.keyword import KeywordIndex
from docubot.rag.retrieve import Retriever
from docubot.rag.threshold import refusal_threshold
from docubot.store.sql import SQLStore

ROOT = Path(__file__).resolve().parents[1]
EVAL_SET = ROOT / "evals" / "nubelia"
FLOORS = json.loads((EVAL_SET / "floors.json").read_text())


@pytest.fixture(scope="module")
def hybrid_report(sample_home, embedder):
    from docubot.config import Settings

    settings = Settings(home=sample_home)
    store = SQLStore(Database(settings))
    index = KeywordIndex(settings.keyword_index_dir)
    cases = load_retrieval_set(EVAL_SET)
    report = run_cases(cases, Retriever(embedder, store, index, mode="hybrid", rrf_k=settings.rrf_k))
    yield report, settings, embedder
    store.close()


def test_retrieval_stays_above_the_committed_floors(hybrid_report) -> None:
    report, _, _ = hybrid_report
    assert report.metrics["questions"] >= 80
    assert report.metrics["recall@5"] >= FLOORS["recall@5"], report.metrics
    assert report.metrics["mrr"] >= FLOORS["mrr"], report.metrics


def test_default_refusal_threshold_stays_above_the_committed_floors(hybrid_report) -> None:
    report, settings, embedder = hybrid_report
    threshold = refusal_threshold(settings, embedder.name)
    answerable = [o.best for o in report.outcomes if o.case.answerable]
    unanswerable = [o.best for o in report.outcomes if not o.case.answerable]
    refused_right = sum(s < threshold for s in unanswerable)
    refused_wrong = sum(s < threshold for s in answerable)
    assert refused_right / (refused_right + refused_wrong) >= FLOORS["refusal_precision_at_default_threshold"]
    assert 1 - refused_wrong / len(answerable) >= FLOORS["answerable_kept_at_default_threshold"]


def test_a_threshold_reaching_95_percent_correct_refusals_exists(hybrid_report) -> None:
    report, _, _ = hybrid_report
    best = refusal_signals(report, 0.95)[0]
    assert best.name == "best_similarity"
    assert best.chosen is not None and best.chosen.refusal_precision >= 0.95
    assert 0.7 < best.auroc <= 1.0


def test_metric_functions_on_known_values() -> None:
    ranks = [1, 3, None, 6]
    assert recall_at(ranks, 1) == 0.25 and recall_at(ranks, 5) == 0.5
    assert mrr(ranks) == pytest.approx((1 + 1 / 3 + 1 / 6) / 4)
    assert auroc([0.9, 0.8], [0.7, 0.8]) == pytest.approx(0.875)
    points = sweep([0.9, 0.85, 0.8], [0.7, 0.82])
    chosen = pick_threshold(points, 0.95)
    assert chosen is not None and chosen.threshold == pytest.approx(0.8)
    assert (chosen.kept_answerable, chosen.rejected_unanswerable) == (1.0, 0.5)


def test_a_malformed_set_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "retrieval.jsonl").write_text('{"id": "a", "question": "q", "answerable": true}\n{oops\n')
    with pytest.raises(EvalSetError, match="line 2"):
        load_retrieval_set(tmp_path)
    with pytest.raises(EvalSetError, match="not found"):
        load_retrieval_set(tmp_path / "missing")


def test_cli_writes_reports_and_calibrates(sample_home, tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    monkeypatch.setenv("DOCUBOT_HOME", str(home))
    monkeypatch.delenv("DOCUBOT_REFUSAL_THRESHOLD", raising=False)
    reports = tmp_path / "reports"
    runner = CliRunner()
    result = runner.invoke(
        app, ["eval", "retrieval", "--set", str(EVAL_SET), "--reports", str(reports), "--json"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert {"recall@1", "recall@3", "recall@5", "recall@10", "mrr", "misses"} <= set(metrics)
    assert (reports / "retrieval-hybrid.md").read_text().startswith("# Retrieval on")
    assert (reports / "retrieval-hybrid.png").read_bytes()[:4] == b"\x89PNG"

    result = runner.invoke(
        app, ["eval", "refusal", "--set", str(EVAL_SET), "--reports", str(reports), "--json", "--write"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["refusal_precision"] >= 0.95 and 0 < data["threshold"] < 1
    assert data["current_threshold"] == pytest.approx(round(data["threshold"], 4))
    assert (reports / "refusal.png").exists() and "AUROC" in (reports / "refusal.md").read_text()
