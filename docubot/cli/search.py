"""`docubot search QUESTION`: the retrieved fragments, without any LLM."""

from __future__ import annotations

import typer

from docubot.cli.common import console, fail, load_components, print_json
from docubot.rag.retrieve import LATEST
from docubot.store import StoreError


def register(app: typer.Typer) -> None:
    app.command("search")(search_command)


def search_command(
    question: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(4, "--k", min=1, max=50, help="How many fragments."),
    version: str = typer.Option(LATEST, "--version", help="'latest' (default), 'all', or a version."),
    mode: str = typer.Option(None, "--mode", help="dense | bm25 | hybrid (default: DOCUBOT_RETRIEVAL_MODE)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Show the fragments most similar to QUESTION, with similarity, url and [Page > Section]."""
    components = load_components(retrieval_mode=mode)
    try:
        if components.store.count() == 0:
            fail("the store is empty: run `docubot ingest PATH` first")
        hits = components.retriever.search(question, version=version, k=k).hits
    except StoreError as exc:
        fail(str(exc))
    finally:
        components.close()
    if as_json:
        print_json(
            [
                {
                    **h.logged(),
                    "url": h.metadata["url"],
                    "section": h.metadata["section_path"],
                    "version": h.metadata["version"],
                    "text": h.text,
                }
                for h in hits
            ]
        )
        return
    for hit in hits:
        console.print(
            f"[bold]{hit.rank}. {hit.score:.3f}[/]  [cyan]{hit.metadata['url']}[/]  "
            f"[{hit.metadata['section_path']}]  v{hit.metadata['version']}",
            highlight=False,
        )
        body = hit.text.split("\n", 1)[-1].strip()
        console.print(
            "   " + (body[:300] + "…" if len(body) > 300 else body).replace("\n", "\n   "), highlight=False
        )
