"""The CLI's usual habits: --version, config show/path, pages list/remove, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docubot import __version__
from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.store import open_store

REPORTS_URL = "wiki/guies/informes-i-exportacio"


@pytest.fixture
def home(sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(sample_home, copy)
    for name in ("DOCUBOT_CONFIG", "DOCUBOT_DATABASE_URL", "DOCUBOT_LLM_API_KEY", "DOCUBOT_TOP_K"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCUBOT_HOME", str(copy))
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    return copy


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_version() -> None:
    assert run("--version").strip() == f"docubot {__version__}"


def test_config_show_says_where_each_setting_came_from_and_masks_secrets(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "config.toml").write_text('top_k = 6\nllm_api_key = "sk-secret-123"\n', encoding="utf-8")
    monkeypatch.setenv("DOCUBOT_DATABASE_URL", "postgresql://docubot:hunter2@db.example/docubot")
    rows = {r["name"]: r for r in json.loads(run("config", "show", "--json"))}
    assert rows["top_k"] == {"name": "top_k", "value": 6, "source": "config file"}
    assert rows["llm"] == {"name": "llm", "value": "none", "source": "env"}
    assert rows["rrf_k"]["source"] == "default"
    assert rows["llm_api_key"]["value"] == "****" and rows["llm_api_key"]["source"] == "config file"
    assert rows["database_url"]["value"] == "postgresql://docubot:****@db.example/docubot"
    text = run("config", "show")
    assert "sk-secret-123" not in text and "hunter2" not in text
    assert run("config", "path").strip() == str(home / "config.toml")


def test_config_path_says_when_the_file_is_absent(home: Path) -> None:
    assert run("config", "path").strip() == f"{home / 'config.toml'}  (not present)"


def test_pages_lists_every_page_with_its_chunks(home: Path) -> None:
    listing = json.loads(run("pages", "--json"))
    with Database(Settings(home=home)) as db:
        metadata = open_store(db).all_metadata().values()
    urls = {m["url"] for m in metadata}
    assert [p["url"] for p in listing["pages"]] == sorted(urls)
    assert sum(p["chunks"] for p in listing["pages"]) == len(metadata)
    reports = next(p for p in listing["pages"] if p["url"] == REPORTS_URL)
    assert reports["chunks"] == sum(1 for m in metadata if m["url"] == REPORTS_URL)
    assert reports["versions"] and reports["title"]
    version = reports["versions"][0]
    only = json.loads(run("pages", "--version", version, "--json"))["pages"]
    assert only and all(version in p["versions"] and len(p["versions"]) == 1 for p in only)
    assert f"{len(listing['pages'])} pages, corpus version {listing['corpus_version']}" in run("pages")


def test_pages_remove_drops_one_page_and_bumps_the_corpus_version(home: Path) -> None:
    before = json.loads(run("pages", "--json"))
    out = run("pages", "remove", REPORTS_URL)
    assert f"of {REPORTS_URL}" in out
    after = json.loads(run("pages", "--json"))
    assert after["corpus_version"] == before["corpus_version"] + 1
    assert [p["url"] for p in after["pages"]] == [
        p["url"] for p in before["pages"] if p["url"] != REPORTS_URL
    ]
    hits = json.loads(run("search", "Com exporto un informe a PDF?", "--json"))
    assert hits and all(h["url"] != REPORTS_URL for h in hits)  # dense and keyword search alike
    again = CliRunner().invoke(app, ["pages", "remove", REPORTS_URL])
    assert again.exit_code == 2 and "no indexed page" in again.output


def test_a_bad_mode_is_a_one_line_error(home: Path) -> None:
    result = CliRunner().invoke(app, ["search", "hola", "--mode", "foo"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "retrieval_mode" in lines[0] and "'foo'" in lines[0]
