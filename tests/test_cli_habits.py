"""The CLI's usual habits: --version, shell completion, config show/path, pages list/remove, one-line
errors, progress lines off a terminal, the search table's headers, eval reports in the data folder,
and what `serve` says on start."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docubot import __version__
from docubot.cli import app
from docubot.cli.progress import Lines
from docubot.cli.serve import startup_lines
from docubot.config import Settings
from docubot.db import Database
from docubot.server.users import User
from docubot.store import open_store
from docubot.store.page_ingests import page_ingests
from tests.corpus_fixtures import SAMPLE_DOCS

REPORTS_URL = "wiki/guies/informes-i-exportacio"
EVALS = Path(__file__).resolve().parents[1] / "evals" / "nubelia"


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


def test_pages_say_when_an_ingest_last_changed_each_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS / "integracions", docs)
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "home"))
    for name in ("DOCUBOT_CONFIG", "DOCUBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    run("ingest", str(docs), "--json")
    first = {p["url"]: p for p in json.loads(run("pages", "--json"))["pages"]}
    assert len(first) == 2 and all(p["ingested_corpus_version"] == 1 for p in first.values())
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p["ingested"]) for p in first.values())
    assert "ingested" in run("pages") and " UTC" in run("pages")

    slack = docs / "slack.md"
    added = "\n## Novetat\n\nUn apartat nou.\n"
    slack.write_text(slack.read_text(encoding="utf-8") + added, encoding="utf-8")
    run("ingest", str(docs), "--json")
    run("ingest", str(docs), "--json")  # nothing changed: nothing is marked as ingested again
    second = {p["url"]: p for p in json.loads(run("pages", "--json"))["pages"]}
    assert second["wiki/integracions/slack"]["ingested_corpus_version"] == 2
    assert second["wiki/integracions/slack"]["ingested"] >= first["wiki/integracions/slack"]["ingested"]
    [other] = set(second) - {"wiki/integracions/slack"}
    assert second[other]["ingested"] == first[other]["ingested"]
    assert second[other]["ingested_corpus_version"] == 1

    (docs / "calendari.md").unlink()
    run("ingest", str(docs), "--json", "--force")  # a page gone from the folder: its record goes too
    with Database(Settings(home=tmp_path / "home")) as db:
        assert set(page_ingests(db)) == {"wiki/integracions/slack"} and other != "wiki/integracions/slack"
    run("pages", "remove", "wiki/integracions/slack")
    with Database(Settings(home=tmp_path / "home")) as db:
        assert page_ingests(db) == {}


def test_a_bad_mode_is_a_one_line_error(home: Path) -> None:
    result = CliRunner().invoke(app, ["search", "hola", "--mode", "foo"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "retrieval_mode" in lines[0] and "'foo'" in lines[0]


def complete(words: str) -> list[str]:
    """What bash completion offers for the command line `words` (cursor on its last word)."""
    env = {
        "_DOCUBOT_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    result = CliRunner().invoke(app, [], prog_name="docubot", env=env)
    assert result.exit_code == 0, result.output
    return result.stdout.split()


def test_shell_completion_is_offered_and_completes_commands_and_subcommands() -> None:
    assert "--install-completion" in run("--help") and "--show-completion" in run("--help")
    # `--show-completion` detects the shell from the process tree unless told not to; under a
    # `make test` whose parents are no known shell it failed with "Shell  not supported"
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "docubot"), "--show-completion", "bash"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"},
    )
    script = shown.stdout
    assert "_DOCUBOT_COMPLETE=complete_bash" in script and "complete " in script, shown.stderr
    assert complete("docubot ev") == ["eval"]
    assert complete("docubot eval re") == ["retrieval", "refusal", "rewrite"]


def test_ingest_prints_progress_lines_off_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS / "integracions", docs)
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DOCUBOT_EMBED_BATCH_SIZE", "1")
    result = CliRunner().invoke(app, ["ingest", str(docs)])
    assert result.exit_code == 0, result.output
    lines = re.findall(r"^embedded (\d+)/(\d+) chunks$", result.stderr, re.MULTILINE)
    total = int(lines[-1][1])
    assert total >= 10 and lines[-1] == (str(total), str(total))
    done = [int(d) for d, _ in lines]
    assert done == sorted(set(done)) and 5 <= len(done) <= 11  # a line per tenth, not one per chunk
    assert "━" not in result.stderr  # no bar off a terminal
    quiet = CliRunner().invoke(app, ["ingest", str(docs), "--force", "--json"])
    assert quiet.exit_code == 0 and "embedded" not in quiet.stderr
    assert json.loads(quiet.stdout)["files"] == 2


def test_progress_lines_come_every_tenth_or_every_few_seconds() -> None:
    printed: list[str] = []
    now = [0.0]
    lines = Lines(printed.append, "answered", "questions", 100, every_s=15.0, clock=lambda: now[0])
    for _ in range(100):
        lines.advance()
    assert printed == [f"answered {n}/100 questions" for n in range(10, 101, 10)]
    printed.clear()
    slow = Lines(printed.append, "answered", "questions", 100, every_s=15.0, clock=lambda: now[0])
    for _ in range(3):
        now[0] += 20.0  # a slow model: 20 s per answer
        slow.advance()
    assert printed == ["answered 1/100 questions", "answered 2/100 questions", "answered 3/100 questions"]


def test_eval_reports_go_to_the_data_folder_with_progress_lines(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    eval_set = tmp_path / "set"
    eval_set.mkdir()
    first_ten = (EVALS / "retrieval.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:10]
    (eval_set / "retrieval.jsonl").write_text("".join(first_ten), encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "retrieval", "--set", str(eval_set)])
    assert result.exit_code == 0, result.output
    assert (home / "reports" / "retrieval-hybrid.md").is_file() and not (elsewhere / "reports").exists()
    assert f"reports in {home / 'reports'}/" in result.stderr
    counts = re.findall(r"^retrieved (\d+)/10 questions$", result.stderr, re.MULTILINE)
    assert counts == [str(n) for n in range(1, 11)]
    chosen = tmp_path / "chosen"
    again = CliRunner().invoke(
        app, ["eval", "retrieval", "--set", str(eval_set), "--reports", str(chosen), "--json"]
    )
    assert again.exit_code == 0 and (chosen / "retrieval-hybrid.md").is_file()


def test_search_says_which_rank_orders_the_list_and_heads_each_score(home: Path) -> None:
    hybrid = run("search", "Com exporto un projecte a CSV?", "--k", "3")
    assert hybrid.startswith(
        "Ordered by fused rank: z-scored cosine ×0.50 + z-scored BM25 ×0.50."
    )
    for header in ("fused", "dense", "cosine (#)", "keyword", "BM25 (#)", "fragment"):
        assert header in hybrid
    assert "wiki/guies/informes-i-exportacio" in hybrid and re.search(r"0\.\d{3} \(\d+\)", hybrid)
    dense = run("search", "Com exporto un projecte a CSV?", "--k", "3", "--mode", "dense")
    assert dense.startswith("Ordered by dense rank: cosine similarity")
    assert re.search(r"│\s+1 │\s+0\.\d{3} \(1\) │\s+– │", dense), dense  # no keyword score in dense mode


def test_serve_says_where_to_open_the_page_and_how_to_make_a_key(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[tuple[str, int, int]] = []
    monkeypatch.setattr(
        "docubot.server.run.serve", lambda app_, host, port, workers: served.append((host, port, workers))
    )
    out = run("serve", "--port", "8123")
    assert served == [("127.0.0.1", 8123, 1)]
    assert "open http://127.0.0.1:8123/ (chat page)" in out and "http://127.0.0.1:8123/docs" in out
    assert "no API keys yet: make one with `docubot users add NAME`" in out
    anna = User("anna", admin=True, created_at=0.0)
    everywhere = startup_lines("0.0.0.0", 8000, [anna])
    assert "http://127.0.0.1:8000/" in everywhere[0] and "every interface" in everywhere[1]
    assert "1 API users (1 admin); a new key: docubot users add NAME [--admin]" in everywhere[2]
    assert "http://[::1]:9000/" in startup_lines("::1", 9000, [])[0]
