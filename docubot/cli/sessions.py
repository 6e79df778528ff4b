"""`docubot sessions list|show|delete|purge-expired|export`: administer stored conversations."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import typer
from rich.table import Table

from docubot.cli.common import console, fail, load_settings, print_json
from docubot.db import DatabaseError
from docubot.rag.answer import DocuBot
from docubot.sessions import InvalidSessionId, SessionManager, SessionNotFound

sessions_app = typer.Typer(help="Stored conversations: list, inspect, erase, export.", no_args_is_help=True)
USER = typer.Option(..., "--user", help="The user id (as authenticated by the server).")


def register(app: typer.Typer) -> None:
    app.add_typer(sessions_app, name="sessions")


def _manager() -> SessionManager:
    settings = load_settings(llm="none")
    try:
        bot = DocuBot(settings, chat_model=None)
        return SessionManager(settings, bot, bot.db)
    except DatabaseError as exc:
        fail(str(exc))


@sessions_app.command("list")
def list_command(user: str = USER, as_json: bool = typer.Option(False, "--json")) -> None:
    """The user's live sessions, most recently used first."""
    found = _manager().list(user)
    if as_json:
        print_json([s.__dict__ for s in found])
        return
    table = Table()
    for column in ("id", "title", "turns", "policy", "updated", "expires"):
        table.add_column(column)
    for s in found:
        table.add_row(s.id, s.title, str(s.turns), s.policy, _when(s.updated_at), _when(s.expires_at))
    console.print(table)


@sessions_app.command("show")
def show_command(session_id: str, user: str = USER, as_json: bool = typer.Option(False, "--json")) -> None:
    """One session's turns: questions, answers and sources."""
    manager = _manager()
    try:
        info, turns = manager.get(user, session_id), manager.turns(user, session_id)
    except (SessionNotFound, InvalidSessionId) as exc:
        fail(str(exc))
    if as_json:
        print_json({**info.__dict__, "turns_detail": [t.__dict__ for t in turns]})
        return
    console.print(f"[bold]{info.title or info.id}[/] · {info.turns} turns · {info.policy}", highlight=False)
    for t in turns:
        console.print(f"\n[cyan]{t.turn}. {t.question}[/]", highlight=False, markup=True)
        console.print(t.answer.get("resposta", ""), highlight=False, markup=False)
        for url in t.answer.get("fonts", []):
            console.print(f"  [dim]{url}[/]", highlight=False)
        if t.feedback:
            thumb = "👍" if t.feedback["rating"] == "up" else "👎"
            console.print(f"  {thumb} {t.feedback['comment'] or ''}".rstrip(), highlight=False, markup=False)


@sessions_app.command("delete")
def delete_command(
    session_id: str = typer.Argument(None, help="The session to delete (or --all)."),
    user: str = USER,
    everything: bool = typer.Option(False, "--all", help="Erase everything stored about the user."),
) -> None:
    """Delete one session, or with --all every trace of the user (sessions, call log, cached answers)."""
    manager = _manager()
    if everything:
        counts = manager.delete_user(user)
        console.print(", ".join(f"{n} {what}" for what, n in counts.items()) + " deleted", highlight=False)
        return
    if not session_id:
        fail("name a session id, or use --all to erase everything about the user")
    try:
        manager.delete(user, session_id)
    except (SessionNotFound, InvalidSessionId) as exc:
        fail(str(exc))
    console.print(f"session {session_id} deleted", highlight=False)


@sessions_app.command("purge-expired")
def purge_command() -> None:
    """Hard-delete every session past its expiry (DOCUBOT_SESSION_TTL_DAYS after its last turn)."""
    console.print(f"{_manager().purge_expired()} expired sessions deleted")


@sessions_app.command("export")
def export_command(
    user: str = USER,
    output: Path = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
) -> None:
    """Everything stored about the user, as JSON (sessions, turns, profile facts, usage, call log)."""
    data = _manager().export_user(user)
    if output is None:
        print_json(data)
        return
    output.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    console.print(f"wrote {output}", highlight=False)


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
