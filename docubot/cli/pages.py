"""`docubot pages` and `docubot pages remove URL`: the indexed pages, and removing one."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import typer
from rich.table import Table

from docubot.cli.common import console, fail, load_components, print_json
from docubot.components import Components
from docubot.store import VectorStore
from docubot.store.page_ingests import PageIngest, page_ingests, record_ingests

pages_app = typer.Typer(
    help="The indexed pages: list them (the default), or remove one.", invoke_without_command=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(pages_app, name="pages")


def page_summaries(
    store: VectorStore, version: str | None = None, ingests: dict[str, PageIngest] | None = None
) -> list[dict[str, Any]]:
    """One entry per page url: title, chunk count, versions, the page's own date, when an ingest last
    changed it (from `ingests`; None when unknown); sorted by url."""
    ingests = ingests or {}
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
            "ingested": _iso(ingests[url].at) if url in ingests else None,
            "ingested_corpus_version": ingests[url].corpus_version if url in ingests else None,
        }
        for url, chunks in sorted(by_url.items())
    ]


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def remove_page(components: Components, url: str) -> tuple[int, int]:
    """Delete every chunk of `url` in one transaction that bumps the corpus version; the keyword
    index and the corpus listeners follow, as after an ingest. Returns (chunks removed, new version)."""
    store = components.store
    ids = [chunk_id for chunk_id, metadata in store.all_metadata().items() if metadata["url"] == url]
    if not ids:
        return 0, store.corpus_version()
    version = store.apply([], [], ids)
    components.keyword_index.rebuild(store)
    for listener in components.corpus_listeners:
        listener(version)
    record_ingests(components.db, [], [url], version, 0.0)
    return len(ids), version


@pages_app.callback()
def pages_command(
    ctx: typer.Context,
    version: str | None = typer.Option(None, "--version", help="Only chunks of this docs version."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List the indexed pages with their chunk counts, versions, dates and last ingest."""
    if ctx.invoked_subcommand is not None:
        return
    components = load_components()
    try:
        pages = page_summaries(components.store, version, page_ingests(components.db))
        corpus_version = components.store.corpus_version()
    finally:
        components.close()
    if as_json:
        print_json({"corpus_version": corpus_version, "pages": pages})
        return
    table = Table(title=f"{len(pages)} pages, corpus version {corpus_version}")
    for column in ("url", "title", "chunks", "versions", "updated", "ingested"):
        table.add_column(column)
    for p in pages:
        ingested = p["ingested"].replace("T", " ")[:16] + " UTC" if p["ingested"] else "-"
        table.add_row(
            p["url"], p["title"], str(p["chunks"]), ", ".join(p["versions"]), p["updated"] or "-", ingested
        )
    console.print(table)


@pages_app.command("remove")
def remove_command(
    url: str = typer.Argument(..., help="The page's url, as `docubot pages` shows it."),
) -> None:
    """Remove one page's chunks (until the next ingest of a folder that still holds it)."""
    components = load_components()
    try:
        removed, version = remove_page(components, url)
    finally:
        components.close()
    if not removed:
        fail(f"no indexed page has the url {url!r} (see `docubot pages`)")
    console.print(f"removed {removed} chunks of {url}; corpus version {version}", highlight=False)
