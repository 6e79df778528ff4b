"""`docubot db start|stop|status`: a local PostgreSQL (with pgvector) in `<home>/postgres`;
`docubot db migrate-to URL`: the data folder's SQLite database copied into PostgreSQL."""

from __future__ import annotations

import typer
from sqlalchemy.exc import SQLAlchemyError

from docubot.cli.common import fail, load_settings
from docubot.cli.db_move import MoveError, migrate_to
from docubot.db import Database, DatabaseError
from docubot.pgserver import LocalPostgres, PostgresServerError
from docubot.store import StoreError, open_store

db_app = typer.Typer(help="A local PostgreSQL with pgvector in the data folder.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")


def _server() -> LocalPostgres:
    return LocalPostgres(load_settings().home / "postgres")


def _print_url(url: str) -> None:
    typer.echo(f"export DOCUBOT_DATABASE_URL={url}")


@db_app.command("start")
def start_command(
    port: int = typer.Option(None, help="TCP port on 127.0.0.1 (first start: a free one)."),
) -> None:
    """Start it (initialised on first use) and print the DOCUBOT_DATABASE_URL to use."""
    try:
        _print_url(_server().start(port))
    except PostgresServerError as exc:
        fail(str(exc))


@db_app.command("stop")
def stop_command() -> None:
    """Stop it (the data stays)."""
    try:
        stopped = _server().stop()
    except PostgresServerError as exc:
        fail(str(exc))
    typer.echo("stopped" if stopped else "not running")


@db_app.command("status")
def status_command() -> None:
    """Say whether it runs; when it does, print the DOCUBOT_DATABASE_URL (exit 1 when it does not)."""
    url = _server().url()
    if url is None:
        typer.echo("not running")
        raise typer.Exit(1)
    _print_url(url)


@db_app.command("migrate-to")
def migrate_to_command(url: str = typer.Argument(..., help="postgresql://… of an empty database.")) -> None:
    """Copy the data folder's SQLite database (chunks with their vectors, sessions, users, call log,
    caches, calibration…) into PostgreSQL, nothing embedded again; print each table's row counts
    (exit 1 when they differ: then nothing was committed)."""
    settings = load_settings()
    try:
        counts = migrate_to(settings, url)
    except MoveError as exc:
        fail(str(exc), code=1)
    except (DatabaseError, SQLAlchemyError, OSError) as exc:
        fail(f"migrate-to failed, nothing was committed: {str(exc).splitlines()[0]}")
    width = max(len(c.table) for c in counts)
    for c in counts:
        typer.echo(f"{c.table:<{width}}  {c.source:>8} → {c.target:>8}")
    try:
        with Database(settings.with_overrides(database_url=url)) as db:
            open_store(db).close()  # pgvector's column filled from the copied vectors
    except StoreError as exc:
        fail(f"copied, but the store cannot open there: {exc}")
    typer.echo(f"copied; now: export DOCUBOT_DATABASE_URL={url}")
