"""`docubot logs`: the recent calls, to tell retrieval failures from generation failures."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict

import typer
from rich.table import Table

from docubot.calllog import CallLog
from docubot.cli.common import console, load_settings, print_json
from docubot.db import Database


def register(app: typer.Typer) -> None:
    app.command("logs")(logs_command)


def logs_command(
    last: int = typer.Option(20, "--last", min=1, help="How many calls."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Show the last calls: question, outcome, best similarity, tokens, latencies."""
    settings = load_settings()
    with Database(settings) as db:
        calls = CallLog(db).last(last)
    if as_json:
        print_json([asdict(c) for c in calls])
        return
    table = Table()
    for column in (
        "id",
        "time",
        "question",
        "outcome",
        "best sim",
        "provider",
        "tokens in/out",
        "first/total ms",
    ):
        table.add_column(column)
    for c in calls:
        best = f"{c.retrieved[0]['score']:.3f}" if c.retrieved else "-"
        first = f"{c.first_token_ms:.0f}" if c.first_token_ms is not None else "-"
        table.add_row(
            str(c.id),
            dt.datetime.fromtimestamp(c.ts).strftime("%Y-%m-%d %H:%M:%S"),
            c.question[:60],
            c.outcome + (" ⚠" if c.error else ""),
            best,
            c.provider,
            f"{c.tokens_in}/{c.tokens_out}",
            f"{first}/{c.total_ms:.0f}",
        )
    console.print(table)
