"""`docubot ingest PATH`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from docubot.cli.common import console, err_console, fail, load_components, print_json
from docubot.cli.progress import progress
from docubot.ingest.files import DocsFolderError
from docubot.ingest.pipeline import IngestError, IngestReport, ingest
from docubot.store import StoreError


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest_command)


def ingest_command(
    path: Path = typer.Argument(..., help="Folder of markdown pages."),
    force: bool = typer.Option(False, "--force", help="Override the guard-rails."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan; change nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Chunk, embed (only what changed) and store a folder of markdown docs."""
    components = load_components()
    try:
        with progress("embedded", "chunks", quiet=as_json) as tracker:
            report = ingest(
                path,
                components.settings,
                components.store,
                components.embedder,
                force=force,
                dry_run=dry_run,
                progress=tracker.update,
                corpus_listeners=components.corpus_listeners,
                db=components.db,
            )
    except (IngestError, DocsFolderError, StoreError) as exc:
        fail(str(exc))
    finally:
        components.close()
    if as_json:
        print_json(report.summary())
    else:
        _print_report(report)
    if any(f.error for f in report.per_file):
        raise typer.Exit(1)


def _print_report(report: IngestReport) -> None:
    table = Table(title="Pages" + (" (dry run: nothing changed)" if report.dry_run else ""))
    table.add_column("page")
    table.add_column("chunks", justify="right")
    for entry in report.per_file:
        table.add_row(entry.path, f"[red]{entry.error}[/]" if entry.error else str(entry.chunks))
    console.print(table)
    console.print(
        f"{report.files} files, {report.chunks} chunks: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.deleted} deleted; {report.embedded} embedded; "
        f"corpus version {report.corpus_version}"
    )
    if report.synonyms is not None:
        console.print(f"synonyms: {report.synonyms} rules from the docs folder's synonyms.txt")
    for warning in report.warnings:
        err_console.print(f"[yellow]warning:[/] {warning}", highlight=False)
