"""A real PostgreSQL server for the test session (loaded as a pytest plugin).

It uses Debian's `postgresql` package (`make system-deps` installs it): a throw-away cluster is
initialised in a temporary folder, started on 127.0.0.1 at a free port, and stopped at the end. When
the binaries are missing the tests that need it fail with that message: they never skip.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers import free_port

MISSING = "PostgreSQL server binaries not found: run `make system-deps` (Debian package postgresql)"


class PostgresUnavailable(RuntimeError):
    """The server binaries are missing or the server did not start."""


def _binaries() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise PostgresUnavailable(MISSING)
    return Path(found[-1]).parent


def _as_owner(command: list[str]) -> list[str]:
    """Run as the `postgres` OS user when we are root (initdb refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


@contextmanager
def postgres_server() -> Iterator[str]:
    """A throw-away PostgreSQL server and database; yields its postgresql:// URL."""
    bin_dir = _binaries()
    root = Path(tempfile.mkdtemp(prefix="docubot-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()

    def run(*args: str) -> None:
        subprocess.run(_as_owner(list(args)), check=True, capture_output=True, text=True)

    try:
        run(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off -c max_connections=200"
        run(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "server.log"),
            "-w",
            "-o",
            options,
            "start",
        )
    except subprocess.CalledProcessError as exc:
        log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"PostgreSQL did not start: {exc.stderr}\n{log}") from exc
    try:
        run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "docubot")
        yield f"postgresql://postgres@127.0.0.1:{port}/docubot"
    finally:
        stop = [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"]
        subprocess.run(_as_owner(stop), check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fresh_postgres_url(postgres_url: str) -> Iterator[str]:
    """postgresql://… of a new, empty database on the test server, dropped afterwards."""
    import psycopg

    name = f"t{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """postgresql://… of a fresh server and database, for the whole test session."""
    try:
        with postgres_server() as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))
