"""`docubot pages` and `docubot pages remove URL`: the indexed pages, and removing one."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import typer
from rich.table import Table

from docubot.cache.invalidation import corpus_changed
from docubot.cli.common import console, fail, load_settings, print_json
from docubot.config import Settings
from docubot.db import Database
from docubot.rag.keyword import KeywordIndex
from docubot.store import VectorStore, open_store

pages_app = typer.Typer(
    help="The indexed pages: list them (the default), or remove one.", invoke_without_command=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(pages_app, name="pages")


def page_summaries(store: VectorStore, version: str | None = None) -> list[dict[str, Any]]:
    """One entry per page url: title, chunk count, versions, the page's own date; sorted by url."""
    by_url: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for metadata in store.all_metadata().values():
        if version is None or str(metadata["version"]) == version:
            by_url[metadata["url"]].append(metadata)
    return [
        {
            "url": url,
            "title": chunks[0]["page_title"],
            "chunks": len(chunks),
            "versions": sorted({str(c["version"]) for c in chunks}),
            "updated": max((str(c["date"]) for c in chunks if c["date"]), default=None),
            "source_path": chunks[0]["source_path"],
        }
        for url, chunks in sorted(by_url.items())
    ]


def remove_page(settings: Settings, store: VectorStore, url: str) -> tuple[int, int]:
    """Delete every chunk of `url` in one transaction that bumps the corpus version; the keyword
    index and the answer caches follow, as after an ingest. Returns (chunks removed, new version)."""
    ids = [chunk_id for chunk_id, metadata in store.all_metadata().items() if metadata["url"] == url]
    if not ids:
        return 0, store.corpus_version()
    version = store.apply([], [], ids)
    KeywordIndex(settings.keyword_index_dir).rebuild(store)
    corpus_changed(settings, version)
    return len(ids), version


@pages_app.callback()
def pages_command(
    ctx: typer.Context,
    version: str | None = typer.Option(None, "--version", help="Only chunks of this docs version."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List the indexed pages with their chunk counts, versions and dates."""
    if ctx.invoked_subcommand is not None:
        return
    settings = load_settings()
    with Database(settings) as db:
        store = open_store(db)
        pages, corpus_version = page_summaries(store, version), store.corpus_version()
    if as_json:
        print_json({"corpus_version": corpus_version, "pages": pages})
        return
    table = Table(title=f"{len(pages)} pages, corpus version {corpus_version}")
    for column in ("url", "title", "chunks", "versions", "updated"):
        table.add_column(column)
    for p in pages:
        table.add_row(p["url"], p["title"], str(p["chunks"]), ", ".join(p["versions"]), p["updated"] or "-")
    console.print(table)


@pages_app.command("remove")
def remove_command(
    url: str = typer.Argument(..., help="The page's url, as `docubot pages` shows it."),
) -> None:
    """Remove one page's chunks (until the next ingest of a folder that still holds it)."""
    settings = load_settings()
    with Database(settings) as db:
        removed, version = remove_page(settings, open_store(db), url)
    if not removed:
        fail(f"no indexed page has the url {url!r} (see `docubot pages`)")
    console.print(f"removed {removed} chunks of {url}; corpus version {version}", highlight=False)
