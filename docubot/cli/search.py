"""`docubot search QUESTION`: the retrieved fragments, without any LLM."""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.table import Table
from rich.text import Text

from docubot.cli.common import console, fail, load_components, print_json
from docubot.config import Settings
from docubot.rag.retrieve import LATEST, RankedHit
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
    """Show the fragments retrieved for QUESTION in their fused order, with each ranking's score and
    rank, url, [Page > Section], version and text."""
    components = load_components(retrieval_mode=mode)
    try:
        if components.store.count() == 0:
            fail("the store is empty: run `docubot ingest PATH` first")
        result = components.retriever.search(question, version=version, k=k)
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
                for h in result.hits
            ]
        )
        return
    console.print(_order(result.mode, components.settings), highlight=False)
    console.print(_table(result.hits, RANK_COLUMN[result.mode]))


ORDER = {
    "dense": "Ordered by dense rank: cosine similarity of the question and the fragment.",
    "bm25": "Ordered by keyword rank: BM25 score of the question's words in the fragment.",
}
FUSED = {
    "zscore": "z-scored cosine ×{weight:.2f} + z-scored BM25 ×{rest:.2f}",
    "rrf": "reciprocal-rank fusion (k={rrf_k}) of the two rankings",
}


def _order(mode: str, settings: Settings) -> str:
    """The header saying which score orders the list."""
    if mode != "hybrid":
        return ORDER[mode]
    weight = settings.fusion_dense_weight
    how = FUSED[settings.fusion].format(weight=weight, rest=1 - weight, rrf_k=settings.rrf_k)
    return f"Ordered by fused rank: {how}."
RANK_COLUMN = {"hybrid": "fused\nrank", "dense": "dense\nrank", "bm25": "keyword\nrank"}


def _table(hits: Sequence[RankedHit], rank_column: str) -> Table:
    """One row per fragment: fused rank, each ranking's score and rank, then where it is and its text."""
    table = Table(show_lines=True)
    table.add_column(rank_column, justify="right")
    table.add_column("dense\ncosine (#)", justify="right")
    table.add_column("keyword\nBM25 (#)", justify="right")
    table.add_column("fragment")
    for hit in hits:
        body = hit.text.split("\n", 1)[-1].strip()
        excerpt = body[:300] + "…" if len(body) > 300 else body
        where = f"{hit.metadata['url']}  [{hit.metadata['section_path']}]  v{hit.metadata['version']}"
        fragment = Text(where, style="cyan")
        fragment.append("\n" + excerpt, style="default")
        table.add_row(
            str(hit.rank),
            _score(hit.score, hit.dense_rank, 3),
            _score(hit.keyword_score, hit.keyword_rank, 1),
            fragment,
        )
    return table


def _score(value: float | None, rank: int | None, digits: int) -> str:
    """`0.904 (1)`; `–` when that ranking did not take part or did not find the fragment."""
    if value is None or (rank is None and not value):
        return "–"
    return f"{value:.{digits}f} ({rank if rank is not None else '–'})"
