"""`docubot store copy --to chroma|sqlite`: move the configured store's corpus without re-embedding."""

from __future__ import annotations

from pathlib import Path

import typer

from docubot.cli.common import console, fail, load_settings, print_json
from docubot.config import Settings
from docubot.db import Database
from docubot.embed import make_embedder
from docubot.store import StoreError, open_store
from docubot.store.copy import copy_store

store_app = typer.Typer(help="Manage the vector store.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")


@store_app.command("copy")
def copy_command(
    to: str = typer.Option(..., "--to", help="sqlite | chroma: the backend to copy into."),
    chroma_path: Path = typer.Option(None, "--chroma-path", help="Embedded Chroma folder to copy into."),
    chroma_url: str = typer.Option(None, "--chroma-url", help="Chroma server to copy into."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Copy every chunk, with its vector, from the configured store (DOCUBOT_VECTOR_STORE) into another."""
    settings = load_settings()
    if to not in ("sqlite", "chroma"):
        fail(f"unknown store {to!r}: sqlite or chroma")
    target_settings = settings.with_overrides(vector_store=to, chroma_path=chroma_path, chroma_url=chroma_url)
    if _describe(target_settings) == _describe(settings):
        fail(f"the target is the configured store itself ({_describe(settings)})")
    embedder = make_embedder(settings)
    with Database(settings) as source_db, Database(target_settings) as target_db:
        try:
            report = copy_store(open_store(source_db), open_store(target_db), (embedder.name, embedder.dim))
        except StoreError as exc:
            fail(str(exc))
    if as_json:
        print_json(
            {
                "copied": report.copied,
                "removed": report.removed,
                "corpus_version": report.corpus_version,
                "target": _describe(target_settings),
            }
        )
    else:
        console.print(
            f"copied {report.copied} chunks into {_describe(target_settings)} "
            f"(removed {report.removed}; corpus version {report.corpus_version})"
        )


def _describe(settings: Settings) -> str:
    if settings.vector_store == "sqlite":
        return "the DOCUBOT_DATABASE_URL database" if settings.database_url else f"sqlite {settings.db_path}"
    return f"chroma {settings.chroma_url or settings.chroma_dir}"
