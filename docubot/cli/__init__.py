"""The `docubot` command line: one module per command group, all thin over the library."""

from __future__ import annotations

import typer

from docubot import __version__
from docubot.cli import ask as _ask
from docubot.cli import cache as _cache
from docubot.cli import chat as _chat
from docubot.cli import config as _config
from docubot.cli import cost as _cost
from docubot.cli import db as _db
from docubot.cli import eval as _eval
from docubot.cli import gaps as _gaps
from docubot.cli import ingest as _ingest
from docubot.cli import logs as _logs
from docubot.cli import pages as _pages
from docubot.cli import search as _search
from docubot.cli import serve as _serve
from docubot.cli import sessions as _sessions
from docubot.cli import store as _store

app = typer.Typer(
    name="docubot",
    help="Answers questions about your markdown documentation, with sources. Offline by default.",
    no_args_is_help=True,
    invoke_without_command=True,  # `docubot --version` alone
    pretty_exceptions_enable=False,
)
_ingest.register(app)
_search.register(app)
_ask.register(app)
_logs.register(app)
_eval.register(app)
_cost.register(app)
_chat.register(app)
_cache.register(app)
_sessions.register(app)
_serve.register(app)
_store.register(app)
_db.register(app)
_gaps.register(app)
_pages.register(app)
_config.register(app)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True),
) -> None:
    """Answers questions about your markdown documentation, with sources."""
    if version:
        typer.echo(f"docubot {__version__}")
        raise typer.Exit()


def main() -> None:
    app()
