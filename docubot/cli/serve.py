"""`docubot serve` and `docubot users add|list|remove`: the HTTP API and its API keys."""

from __future__ import annotations

import datetime as dt

import typer
from rich.table import Table

from docubot.cli.common import console, fail, load_settings, print_json
from docubot.db import Database, DatabaseError
from docubot.server.users import UserError, UserStore

users_app = typer.Typer(help="API users and their keys.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
    app.add_typer(users_app, name="users")


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Server processes on this port, sharing the database (docs/scale-out.md)."
    ),
) -> None:
    """Serve the HTTP API, its OpenAPI docs (/docs) and the web chat page (/)."""
    try:
        from docubot.server.app import create_app
        from docubot.server.run import WorkersError, prepare_workers, serve
    except ImportError:
        fail("the server needs its extra: pip install 'docubot[server]'")
    settings = load_settings()
    try:
        app = create_app(settings) if workers == 1 else prepare_workers(settings)
    except (DatabaseError, WorkersError) as exc:
        fail(str(exc))
    serve(app, host, port, workers)  # request-id logs; exits within seconds of SIGTERM even under load


def _store() -> UserStore:
    try:
        return UserStore(Database(load_settings()))
    except DatabaseError as exc:
        fail(str(exc))


@users_app.command("add")
def add_command(
    name: str,
    admin: bool = typer.Option(False, "--admin", help="May call POST /v1/ingest."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Create a user and print its API key, once: only its hash is kept."""
    try:
        user, key = _store().add(name, admin)
    except UserError as exc:
        fail(str(exc))
    if as_json:
        print_json({"user": user.name, "admin": user.admin, "api_key": key})
        return
    console.print(f"user [bold]{user.name}[/]{' (admin)' if admin else ''} created. API key (shown once):")
    console.print(key, highlight=False, markup=False)


@users_app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Users and when they were created (keys are never shown again)."""
    found = _store().list()
    if as_json:
        print_json([u.__dict__ for u in found])
        return
    table = Table()
    for column in ("user", "admin", "created"):
        table.add_column(column)
    for u in found:
        table.add_row(
            u.name, "yes" if u.admin else "", dt.datetime.fromtimestamp(u.created_at).strftime("%Y-%m-%d")
        )
    console.print(table)


@users_app.command("remove")
def remove_command(name: str) -> None:
    """Delete a user's key (their sessions stay until `docubot sessions delete --all --user NAME`)."""
    try:
        _store().remove(name)
    except UserError as exc:
        fail(str(exc))
    console.print(f"user {name} removed", highlight=False)
