"""`docubot ask`, `docubot logs`, `docubot chat` and the TOML configuration file, through the CLI."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings


@pytest.fixture
def home(sample_home, tmp_path, monkeypatch):
    copy = tmp_path / "home"
    shutil.copytree(sample_home, copy)
    monkeypatch.setenv("DOCUBOT_HOME", str(copy))
    monkeypatch.delenv("DOCUBOT_CONFIG", raising=False)
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    return copy


def test_ask_json_prints_the_contract_and_logs_the_call(home) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["ask", "Com exporto un informe de projecte a PDF?", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"categoria", "resposta", "fonts", "confianca", "sources", "outcome"} <= set(data)
    assert "wiki/guies/informes-i-exportacio" in data["fonts"]
    logs = json.loads(runner.invoke(app, ["logs", "--last", "1", "--json"]).stdout)
    assert logs[0]["question"] == "Com exporto un informe de projecte a PDF?"
    assert logs[0]["outcome"] == "answered" and logs[0]["provider"] == "none/extractive"
    assert len(logs[0]["retrieved"]) == 4
    assert logs[0]["checks"] == data["checks"] and logs[0]["checks"][0]["check"] == "refusal"


def test_ask_refuses_an_oversized_question_with_a_clear_error(home) -> None:
    result = CliRunner().invoke(app, ["ask", "x" * 100_000])
    assert result.exit_code == 2
    assert "characters long" in result.output


def test_ask_on_an_empty_store_says_to_ingest_first(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    result = CliRunner().invoke(app, ["ask", "Hola?"])
    assert result.exit_code == 2 and "docubot ingest" in result.output


def test_chat_answers_follow_ups_and_runs_its_commands(home) -> None:
    script = "Com convido un membre?\ni com l'elimino?\n/cost\n/policy nope\n/quit\n"
    result = CliRunner().invoke(app, ["chat", "--policy", "last_turns:3"], input=script)
    assert result.exit_code == 0, result.output
    assert "standalone question: Com convido un membre? i com l'elimino?" in result.output
    assert "wiki/administracio/membres-i-permisos" in result.output
    assert "unknown policy 'nope'" in result.output


def test_the_toml_file_is_read_and_the_environment_wins(tmp_path, monkeypatch) -> None:
    for name in ("DOCUBOT_LLM", "DOCUBOT_TOP_K", "DOCUBOT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path))
    (tmp_path / "config.toml").write_text('llm = "anthropic"\ntop_k = 7\n')
    settings = Settings()
    assert (settings.llm, settings.top_k) == ("anthropic", 7)
    monkeypatch.setenv("DOCUBOT_TOP_K", "3")
    assert Settings().top_k == 3
    (tmp_path / "config.toml").write_text("top_k = 0\n")
    monkeypatch.delenv("DOCUBOT_TOP_K")
    result = CliRunner().invoke(app, ["search", "hola"])
    assert result.exit_code == 2 and "invalid configuration" in result.output
