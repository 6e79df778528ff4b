"""`docubot ingest` and `docubot search` through typer's CliRunner, on a DOCUBOT_HOME in tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.store.sql import SQLStore

if TYPE_CHECKING:  # the fixture's type; tests/ is not a package
    from conftest import PageWriter

SUMMARY_KEYS = {
    "files",
    "chunks",
    "added",
    "updated",
    "unchanged",
    "deleted",
    "embedded",
    "corpus_version",
    "warnings",
}


@pytest.fixture
def home(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    """DOCUBOT_HOME in tmp_path; the `settings` fixture has already cleaned other DOCUBOT_* variables."""
    monkeypatch.setenv("DOCUBOT_HOME", str(settings.home))
    return settings.home


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def pages(docs: Path, write_page: PageWriter, md: Callable[..., str]) -> Path:
    write_page(
        "api/autenticacio.md",
        md(
            "Autenticació",
            [("Tokens", "Els tokens d'accés caduquen als 30 dies i es revoquen des del perfil.")],
        ),
        url="wiki/api/auth",
        version="2026.2",
        date="2026-09-01",
    )
    write_page(
        "factures.md",
        md("Factures", [("PDF", "Les factures es generen el primer dia de cada mes en format PDF.")]),
    )
    return docs


def test_ingest_json_report(runner: CliRunner, home: Path, pages: Path) -> None:
    result = runner.invoke(app, ["ingest", str(pages), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= SUMMARY_KEYS
    assert {k: report[k] for k in SUMMARY_KEYS - {"warnings"}} == {
        "files": 2,
        "chunks": 2,
        "added": 2,
        "updated": 0,
        "unchanged": 0,
        "deleted": 0,
        "embedded": 2,
        "corpus_version": 1,
    }
    assert len(report["warnings"]) == 1 and report["warnings"][0].startswith("factures.md:")
    with Database(Settings(home=home)) as db:
        assert SQLStore(db).list_ids() == {"wiki-api-auth--tokens--00", "factures--pdf--00"}

    again = runner.invoke(app, ["ingest", str(pages), "--json"])
    assert again.exit_code == 0, again.output
    second = json.loads(again.stdout)
    assert (second["embedded"], second["added"], second["unchanged"], second["corpus_version"]) == (
        0,
        0,
        2,
        1,
    )


def test_ingest_missing_folder_exits_2(runner: CliRunner, home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-hi-es"
    result = runner.invoke(app, ["ingest", str(missing), "--json"])
    assert result.exit_code == 2
    assert "docs folder not found" in result.stderr
    assert "no-hi-es" in result.stderr
    assert result.stdout == ""


def test_ingest_refused_for_a_binary_page_exits_2(runner: CliRunner, home: Path, pages: Path) -> None:
    (pages / "dolenta.md").write_bytes(b"\x00\x00binari")
    result = runner.invoke(app, ["ingest", str(pages)])
    assert result.exit_code == 2
    assert "dolenta.md" in result.stderr and "--force" in result.stderr


def test_search_json_returns_fragments(runner: CliRunner, home: Path, pages: Path) -> None:
    assert runner.invoke(app, ["ingest", str(pages), "--json"]).exit_code == 0
    result = runner.invoke(app, ["search", "Quan es generen les factures?", "--json", "--k", "2"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert len(hits) == 2
    for hit in hits:
        assert set(hit) >= {"score", "url", "section"}
        assert isinstance(hit["score"], float) and 0 < hit["score"] <= 1
    assert hits[0]["url"] == "factures"
    assert hits[0]["section"] == "Factures > PDF"
    assert hits[0]["text"].startswith("[Factures > PDF]\n")
    assert hits[0]["score"] >= hits[1]["score"]


def test_search_on_an_empty_store_exits_2(runner: CliRunner, home: Path) -> None:
    result = runner.invoke(app, ["search", "Com canvio la contrasenya?", "--json"])
    assert result.exit_code == 2
    assert "store is empty" in result.stderr
    assert "docubot ingest" in result.stderr
