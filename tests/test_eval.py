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
from docubot.eval.retrieval import CaseOutcome, measure, refusal_signals, run_cases
from docubot.eval.sets import EvalSetError, Gold, RetrievalCase, load_retrieval_set
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
    retriever = Retriever(
        embedder,
        store,
        index,
        mode="hybrid",
        fusion=settings.fusion,
        dense_weight=settings.fusion_dense_weight,
        rrf_k=settings.rrf_k,
    )
    report = run_cases(cases, retriever)
    yield report, settings, embedder
    store.close()


def test_retrieval_stays_above_the_committed_floors(hybrid_report) -> None:
    report, _, _ = hybrid_report
    assert report.metrics["questions"] >= 80
    assert report.metrics["recall@5"] >= FLOORS["recall@5"], report.metrics
    assert report.metrics["mrr"] >= FLOORS["mrr"], report.metrics
    assert report.metrics["miss@20"] <= FLOORS["top20_miss_at_most"], report.metrics


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


def test_the_report_gives_deep_misses_and_each_split_apart() -> None:
    def outcome(case_id: str, split: str, rank: int | None, answerable: bool = True) -> CaseOutcome:
        gold = (Gold("u", "S"),) if answerable else ()
        return CaseOutcome(RetrievalCase(case_id, "q", "en", answerable, gold, (), split=split), rank, [])

    outcomes = [
        outcome("a", "tune", 1),
        outcome("b", "tune", 12),
        outcome("c", "tune", None),
        outcome("d", "holdout", 2),
        outcome("e", "holdout", None, answerable=False),
    ]
    report = measure(outcomes, depth=20)
    assert report.metrics["miss@20"] == 0.25 and report.metrics["questions"] == 4
    assert list(report.splits) == ["tune", "holdout"]
    assert report.splits["tune"]["recall@10"] == pytest.approx(1 / 3, abs=1e-4)
    assert report.splits["tune"]["miss@20"] == pytest.approx(1 / 3, abs=1e-4)
    assert report.splits["holdout"] == {**report.splits["holdout"], "recall@1": 0.0, "miss@20": 0.0}
    assert report.flat_metrics()["holdout.mrr"] == 0.5
    assert "miss@20" not in measure(outcomes, depth=10).metrics  # not measured that deep
    assert measure(outcomes[:2], depth=20).splits.keys() == {"tune"}


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
    assert {"recall@1", "recall@3", "recall@5", "recall@10", "mrr", "miss@20", "misses"} <= set(metrics)
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


def test_cli_takes_a_set_file_and_reports_its_splits(sample_home, tmp_path, monkeypatch) -> None:
    # A .jsonl file such as evals/nubelia/retrieval_typos.jsonl was refused: --set took folders only.
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    monkeypatch.setenv("DOCUBOT_HOME", str(home))
    lines = (EVAL_SET / "retrieval_typos.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    splits = ["tune", "tune", "tune", "holdout"]
    rows = [{**json.loads(line), "split": split} for line, split in zip(lines, splits, strict=True)]
    typos = tmp_path / "typos.jsonl"
    typos.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    reports = tmp_path / "reports"
    arguments = ["eval", "retrieval", "--set", str(typos), "--mode", "dense", "--reports", str(reports)]
    result = CliRunner().invoke(app, [*arguments, "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["questions"] == sum(r["answerable"] for r in rows)
    assert {"tune.recall@5", "tune.miss@20", "holdout.mrr"} <= set(metrics)
    markdown = (reports / "retrieval-dense.md").read_text()
    assert "top-20 misses" in markdown and "| tune (" in markdown and "| holdout (" in markdown
    assert len(json.loads((reports / "retrieval-dense.jsonl").read_text().splitlines()[0])["retrieved"]) == 20
