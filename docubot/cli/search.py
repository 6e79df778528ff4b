"""`docubot search QUESTION`: the retrieved fragments, without any LLM."""

from __future__ import annotations

import typer

from docubot.cli.common import console, fail, load_settings, print_json
from docubot.db import Database
from docubot.embed import make_embedder
from docubot.rag.keyword import KeywordIndex
from docubot.rag.retrieve import LATEST, retrieve
from docubot.store import StoreError, open_store


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
    settings = load_settings(retrieval_mode=mode)
    db = Database(settings)
    store = open_store(db)
    try:
        if store.count() == 0:
            fail("the store is empty: run `docubot ingest PATH` first")
        embedder = make_embedder(settings)
        store.check_embedding_model(embedder.name, embedder.dim)
        hits = retrieve(
            question,
            embedder,
            store,
            k,
            version,
            mode=settings.retrieval_mode,
            keyword_index=KeywordIndex(settings.keyword_index_dir),
            rrf_k=settings.rrf_k,
        )
    except StoreError as exc:
        fail(str(exc))
    finally:
        db.close()
    if as_json:
        print_json(
            [
                {
                    "id": h.id,
                    "score": round(h.score, 4),
                    "bm25": None if h.keyword_score is None else round(h.keyword_score, 3),
                    "url": h.metadata["url"],
                    "section": h.metadata["section_path"],
                    "version": h.metadata["version"],
                    "text": h.text,
                }
                for h in hits
            ]
        )
        return
    for rank, hit in enumerate(hits, 1):
        console.print(
            f"[bold]{rank}. {hit.score:.3f}[/]  [cyan]{hit.metadata['url']}[/]  "
            f"[{hit.metadata['section_path']}]  v{hit.metadata['version']}",
            highlight=False,
        )
        body = hit.text.split("\n", 1)[-1].strip()
        console.print(
            "   " + (body[:300] + "…" if len(body) > 300 else body).replace("\n", "\n   "), highlight=False
        )
