"""`docubot serve --workers N` (issue 16): N processes on one port sharing the database; refused,
with a clear message, where several processes are not safe."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.server.users import UserStore
from tests.conftest import isolate_environment
from tests.corpus_fixtures import MODELS_DIR, with_sample_corpus
from tests.servers import DocuBotServer, docubot_env
from tests.test_server import PDF, events


def worker_pids(parent: int) -> list[int]:
    """The processes uvicorn's supervisor `parent` started to serve (multiprocessing's spawn)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == parent and b"spawn_main" in cmdline:
            found.append(int(stat.parent.name))
    return found


def test_two_workers_on_sqlite_share_sessions_and_stop_together(sample_settings: Settings, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = with_sample_corpus(sample_settings, f"sqlite:///{home / 'docubot.db'}")
    with Database(settings) as db:
        _, key = UserStore(db).add("anna")
    server = DocuBotServer(
        docubot_env(home, llm="none", models_dir=str(MODELS_DIR)), tmp_path / "server.log", workers=2
    )
    try:
        server.start().wait_ready()
        assert server.process is not None
        workers = worker_pids(server.process.pid)
        assert len(workers) == 2, server.log_tail()
        questions = [PDF, "Com restableixo la contrasenya?"]

        def client() -> httpx.Client:
            """A new connection: either worker may take it."""
            return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=120)

        def session(_: int) -> tuple[str, list[int]]:
            """A session of two turns, each on a connection of its own."""
            with client() as own:
                session_id = own.post("/v1/sessions").json()["id"]
            turns = []
            for question in questions:
                with client() as own:
                    name, data = events(
                        own.post(f"/v1/sessions/{session_id}/messages", json={"content": question})
                    )[-1]
                    assert name == "done", data
                    turns.append(data["turn"])
            return session_id, turns

        with ThreadPoolExecutor(8) as pool:
            done = list(pool.map(session, range(16)))
        assert all(turns == [1, 2] for _, turns in done)
        with client() as own:
            for session_id, _ in done:
                stored = own.get(f"/v1/sessions/{session_id}").json()["messages"]
                assert [m["question"] for m in stored] == questions
        started = time.monotonic()
        assert server.stop() == 0
        assert time.monotonic() - started < 15
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"DOCUBOT_VECTOR_STORE": "chroma"}, "embedded Chroma"),
        # SQLite with the dot-file locking VFS (file systems without POSIX locks) cannot use WAL
        ({"DOCUBOT_DATABASE_URL": "sqlite:///file:{home}/x.db?vfs=unix-dotfile&uri=true"}, "WAL mode"),
    ],
)
def test_several_workers_are_refused_where_they_are_not_safe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, setting: dict[str, str], message: str
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    env = {"DOCUBOT_HOME": str(tmp_path), **{k: v.format(home=tmp_path) for k, v in setting.items()}}
    result = CliRunner().invoke(app, ["serve", "--workers", "2", "--port", "9"], env=env)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "serve with one worker" in result.output
