"""`docubot cache stats|clear`: the answer caches of the data folder."""

from __future__ import annotations

from dataclasses import asdict

import typer
from rich.table import Table

from docubot.cache.answers import AnswerCache
from docubot.calllog import CallLog
from docubot.cli.common import console, load_settings, print_json
from docubot.db import Database
from docubot.embed import make_embedder
from docubot.store import open_store

cache_app = typer.Typer(help="The answer caches (exact and semantic).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")


@cache_app.command("stats")
def stats_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Entries, hit rates (exact / semantic, over the call log), tokens and seconds saved."""
    settings = load_settings()
    with Database(settings) as db:
        cache = AnswerCache(settings, make_embedder(settings), db)
        stats = asdict(cache.stats(open_store(db).corpus_version()))
        counts = CallLog(db).cache_counts()
    calls = counts["calls"] or 1
    stats.update(
        calls=counts["calls"],
        exact_hit_rate=round(counts["exact"] / calls, 4),
        semantic_hit_rate=round(counts["semantic"] / calls, 4),
        semantic_threshold=cache.threshold,
    )
    if as_json:
        print_json(stats)
        return
    table = Table(show_header=False)
    for name, value in stats.items():
        table.add_row(name.replace("_", " "), _shown(name, value))
    console.print(table)


@cache_app.command("clear")
def clear_command() -> None:
    """Delete every cached answer (all scopes, all corpus versions)."""
    settings = load_settings()
    with Database(settings) as db:
        removed = AnswerCache(settings, make_embedder(settings), db).clear()
    console.print(f"removed {removed} cached answers")


def _shown(name: str, value: object) -> str:
    if name.endswith("hit_rate") and isinstance(value, float):
        return f"{value:.1%}"
    return f"{value:,}" if isinstance(value, int) else str(value)
