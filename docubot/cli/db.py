"""`docubot db start|stop|status`: a local PostgreSQL (with pgvector) in `<home>/postgres`."""

from __future__ import annotations

import typer

from docubot.cli.common import fail, load_settings
from docubot.pgserver import LocalPostgres, PostgresServerError

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
