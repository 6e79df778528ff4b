"""The one retrieval path: `search`, `ask` and `eval retrieval` rank alike; stages plug in once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from docubot.calllog import CallLog
from docubot.cli import app
from docubot.components import Components
from docubot.config import Settings
from docubot.db import Database
from docubot.rag.answer import DocuBot
from docubot.rag.retrieve import CANDIDATES, RankedHit

QUESTIONS = {
    "q1": "Com exporto un informe de projecte a PDF?",
    "q2": "Quant temps duren els tokens d'accés a l'API?",
}


@pytest.fixture
def home(sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(sample_home, copy)
    monkeypatch.setenv("DOCUBOT_HOME", str(copy))
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    return copy


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_search_ask_and_eval_report_the_same_ranking(home: Path, tmp_path: Path, mode: str) -> None:
    eval_set = tmp_path / "set"
    eval_set.mkdir()
    (eval_set / "retrieval.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "question": q, "answerable": True, "gold": []}, ensure_ascii=False) + "\n"
            for i, q in QUESTIONS.items()
        )
    )
    reports = tmp_path / "reports"
    _cli("eval", "retrieval", "--set", str(eval_set), "--reports", str(reports), "--mode", mode, "--json")
    lines = (reports / f"retrieval-{mode}.jsonl").read_text().splitlines()
    per_question = [json.loads(line) for line in lines]
    assert [q["id"] for q in per_question] == list(QUESTIONS)
    for entry in per_question:
        searched = _cli("search", entry["question"], "--k", "4", "--mode", mode, "--json")
        asked = _cli("ask", entry["question"], "--mode", mode, "--json")
        ranking = [{k: h[k] for k in ("id", "score", "bm25", "rank")} for h in searched]
        assert len(ranking) == 4
        assert ranking == asked["retrieved"] == entry["retrieved"][:4]
        assert [h["rank"] for h in ranking] == [1, 2, 3, 4]
        with Database(Settings(home=home)) as db:
            assert CallLog(db).last(1)[0].retrieved == ranking  # the log keeps the ranking `ask` used


class _Reverse:
    """A post-retrieval stage for the test: sees every candidate, puts the last first."""

    name = "reverse"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, question: str, hits: list[RankedHit]) -> list[RankedHit]:
        self.seen.append(len(hits))
        return list(reversed(hits))


def test_a_stage_added_once_reaches_ask_search_and_the_call_log(sample_settings, embedder) -> None:
    stage = _Reverse()
    components = Components.from_settings(sample_settings, embedder=embedder, chat_model=None, stages=[stage])
    question = QUESTIONS["q1"]
    unstaged = Components.from_settings(sample_settings, embedder=embedder, chat_model=None).retriever
    plain = unstaged.search(question, k=CANDIDATES)
    staged = components.retriever.search(question, k=4)
    assert stage.seen == [CANDIDATES]  # the stage sees every candidate, not just k
    assert [h.id for h in staged.hits] == [h.id for h in reversed(plain.hits)][:4]
    assert [h.rank for h in staged.hits] == [CANDIDATES, CANDIDATES - 1, CANDIDATES - 2, CANDIDATES - 3]
    assert "reverse" in staged.timings_ms

    result = DocuBot(components).ask(question)
    assert stage.seen[-1] == CANDIDATES
    assert result.retrieval is not None
    assert [h.id for h in result.retrieval.hits] == [h.id for h in staged.hits]
    logged = next(c for c in components.call_log.last(5) if c.id == result.call_id)
    assert [r["rank"] for r in logged.retrieved] == [h.rank for h in staged.hits]


def test_hits_carry_dense_and_keyword_scores_and_ranks(sample_settings, embedder) -> None:
    retriever = Components.from_settings(sample_settings, embedder=embedder, chat_model=None).retriever
    result = retriever.search(QUESTIONS["q2"], mode="hybrid")
    assert result.mode == "hybrid" and result.filters == {"latest": True}
    assert [h.rank for h in result.hits] == [1, 2, 3, 4]
    assert all(0.5 < h.score <= 1 for h in result.hits)
    assert any(h.dense_rank and h.keyword_rank for h in result.hits)
    assert all(h.keyword_score is not None for h in result.hits)
    vector = result.vector
    again = retriever.search(QUESTIONS["q2"], mode="hybrid", query_vector=vector)
    assert again.timings_ms["embed"] == 0.0 and again.hits == result.hits
