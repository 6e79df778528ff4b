"""`docubot eval rewrite|memory|answers|cache` on the sample sets, with real retrieval and models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docubot.chat.conversation import make_policy
from docubot.cli import app
from docubot.eval.answers import answers_summary, evaluate_answers
from docubot.eval.cache import evaluate_cache, load_cache_pairs
from docubot.eval.conversations import evaluate_memory
from docubot.eval.sets import EvalSetError, load_conversation_set, load_retrieval_set
from docubot.rag.answer import DocuBot

ROOT = Path(__file__).resolve().parents[1]
EVAL_SET = ROOT / "evals" / "nubelia"


@pytest.fixture
def cli_env(sample_home, monkeypatch, tmp_path):
    monkeypatch.setenv("DOCUBOT_HOME", str(sample_home))
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    monkeypatch.chdir(ROOT)
    return tmp_path / "reports"


def run_json(args: list[str]) -> dict:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_rewriting_follow_ups_recovers_most_of_the_gold_rewrites_recall(cli_env) -> None:
    metrics = run_json(["eval", "rewrite", "--reports", str(cli_env)])
    assert metrics["follow_ups"] >= 30
    assert metrics["raw.recall@5"] < metrics["docubot.recall@5"] <= metrics["gold.recall@5"]
    assert metrics["gold.recall@5"] >= 0.9 and metrics["docubot.recall@5"] >= 0.85
    assert metrics["skip_rate"] >= 0.7 and metrics["rewrite_rate"] >= 0.75
    assert (cli_env / "rewrite.md").exists() and (cli_env / "rewrite.png").exists()


def test_policies_differ_in_what_they_remember(sample_settings, embedder) -> None:
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    dialogues = load_conversation_set(EVAL_SET)
    assert any(
        len(d.turns) >= 7 and any(6 in t.depends_on or 0 in t.depends_on for t in d.turns[6:])
        for d in dialogues
    )
    names = ["full", "last_turns:1", "last_turns:3", "sliding_window:2"]
    results = {r.policy: r for r in evaluate_memory(dialogues, {n: make_policy(n, bot, None) for n in names})}
    assert results["full"].retention == 1.0 and results["full"].kept_in_summary == 0
    assert results["last_turns:1"].retention < 0.9  # early turns fall out of a one-turn window
    assert results["last_turns:1"].retention < results["last_turns:3"].retention < 1.0  # 2–3 turns back
    assert results["sliding_window:2"].kept_in_summary > 0  # the running summary carries them
    assert results["sliding_window:2"].retention > results["last_turns:1"].retention


def test_memory_command_reports_every_policy(cli_env) -> None:
    metrics = run_json(
        ["eval", "memory", "--reports", str(cli_env), "--policy", "full", "--policy", "relevant"]
    )
    assert set(metrics) == {"full.retention", "relevant.retention", "dependencies"}
    assert metrics["dependencies"] >= 40
    bad = CliRunner().invoke(app, ["eval", "memory", "--policy", "forever"])
    assert bad.exit_code == 2 and "unknown policy" in bad.stderr


def test_extractive_answers_are_valid_and_refusals_are_scored(sample_settings, embedder) -> None:
    cases = load_retrieval_set(EVAL_SET)
    picked = [c for c in cases if c.answerable][:6] + [c for c in cases if c.kind == "off-topic"][:3]
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    outcomes = evaluate_answers(picked, bot.ask)
    summary = answers_summary(outcomes)
    assert summary["questions"] == 9 and summary["contract_valid"] == 1.0
    assert summary["unanswerable_refused"] == 1.0  # off-topic questions fall under the threshold
    assert summary["answerable_answered"] == 1.0 and summary["sources_correct"] >= 0.5
    assert 0 < summary["facts_found"] <= 1 and summary["latency_p50_ms"] > 0


def test_answers_command_writes_its_report(cli_env) -> None:
    metrics = run_json(["eval", "answers", "--limit", "5", "--reports", str(cli_env)])
    assert metrics["questions"] == 5 and metrics["provider"] == "none/extractive"
    assert "| a001 |" in (cli_env / "answers.md").read_text() and (cli_env / "answers.png").exists()


@pytest.mark.llm
def test_answers_with_the_real_local_model(cli_env, monkeypatch) -> None:
    from tests.corpus_fixtures import MODELS_DIR

    monkeypatch.setenv("DOCUBOT_MODELS_DIR", str(MODELS_DIR))
    metrics = run_json(["eval", "answers", "--limit", "2", "--llm", "local", "--reports", str(cli_env)])
    assert metrics["provider"].startswith("local/") and metrics["contract_valid"] == 1.0
    # at least one of the two answerable questions answered: quality is what the eval reports, not
    # asserted here (a001 was refused in one of three whole runs, when the model's seed still varied)
    assert metrics["answerable_answered"] >= 0.5 and metrics["questions"] == 2


def test_the_cache_gate_keeps_false_hits_under_one_percent(embedder) -> None:
    evaluation = evaluate_cache(load_cache_pairs(EVAL_SET / "cache_pairs.jsonl"), embedder.embed_query, 0.90)
    hit, false_hit = evaluation.at(0.90)
    hit_alone, false_hit_alone = evaluation.at(0.90, gate=False)
    assert false_hit <= 0.01 and hit >= 0.5
    assert false_hit_alone > 0.5 and hit_alone > hit  # similarity alone: more hits, most of them wrong
    assert evaluation.recommended() is not None
    held_out = evaluate_cache(
        load_cache_pairs(EVAL_SET / "cache_pairs_holdout.jsonl"), embedder.embed_query, 0.90
    )
    assert held_out.at(0.90)[1] <= 0.01  # pairs written without seeing the gate


def test_cache_command_and_bad_sets(cli_env, tmp_path) -> None:
    metrics = run_json(["eval", "cache", "--reports", str(cli_env)])
    assert metrics["false_hit_rate"] <= 0.01 and metrics["false_hit_rate_no_gate"] > 0.5
    assert (cli_env / "cache.png").exists()
    broken = tmp_path / "pairs.jsonl"
    broken.write_text(
        '{"id": "p1", "a": "x", "b": "y", "same": true, "kind": "typo"}\n{"id": "p2", "a": "x"}\n'
    )
    result = CliRunner().invoke(app, ["eval", "cache", "--pairs", str(broken)])
    assert result.exit_code == 2 and "line 2" in result.stderr


def test_a_malformed_conversation_line_is_named(tmp_path) -> None:
    (tmp_path / "conversations.jsonl").write_text(
        '{"id": "c1", "turns": [{"user": "a", "standalone": "a", "depends_on": [0]}]}\n'
    )
    with pytest.raises(EvalSetError, match="line 1"):
        load_conversation_set(tmp_path)
