"""`docubot ask QUESTION`: a grounded answer, streamed on a terminal, with its sources."""

from __future__ import annotations

import sys

import typer

from docubot.cli.common import console, err_console, fail, load_settings, print_json
from docubot.llm import ProviderError
from docubot.llm.model_file import ModelFileError
from docubot.rag.answer import AskResult, DocuBot, EmptyStoreError, QuestionError
from docubot.rag.retrieve import LATEST
from docubot.store import StoreError


def register(app: typer.Typer) -> None:
    app.command("ask")(ask_command)


def ask_command(
    question: str = typer.Argument(..., help="The question, in any language."),
    llm: str = typer.Option(None, "--llm", help="local | openai | anthropic | none (default: DOCUBOT_LLM)."),
    version: str = typer.Option(LATEST, "--version", help="'latest' (default), 'all', or a version."),
    k: int = typer.Option(None, "--k", min=1, max=50, help="Fragments to retrieve."),
    mode: str = typer.Option(None, "--mode", help="dense | bm25 | hybrid (default: DOCUBOT_RETRIEVAL_MODE)."),
    as_json: bool = typer.Option(False, "--json", help="Print the contract and source details as JSON."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither look up nor fill the answer caches."),
) -> None:
    """Answer QUESTION from the ingested docs, or say the docs do not cover it."""
    settings = load_settings(
        llm=llm, top_k=k, retrieval_mode=mode, cache_enabled=False if no_cache else None
    )
    try:
        bot = DocuBot(settings)
    except (ProviderError, ModelFileError, StoreError) as exc:
        fail(str(exc))
    streaming = not as_json and sys.stdout.isatty()
    status = (lambda text: err_console.print(f"[dim]… {text}[/]", highlight=False)) if not as_json else None
    try:
        result = bot.ask(
            question,
            version=version,
            on_text=(lambda text: console.print(text, end="", highlight=False, markup=False))
            if streaming
            else None,
            on_status=status,
        )
    except (QuestionError, EmptyStoreError, StoreError) as exc:
        fail(str(exc))
    if as_json:
        print_json(result.to_dict())
    else:
        _print_answer(result, already_streamed=streaming)


def _print_answer(result: AskResult, already_streamed: bool) -> None:
    if already_streamed:
        console.print()
    else:
        console.print(result.answer.resposta, highlight=False, markup=False)
    badge = {"alta": "green", "mitjana": "yellow", "baixa": "red"}[result.answer.confianca]
    console.print(
        f"\n[{badge}]confiança {result.answer.confianca}[/] · {result.answer.categoria} · "
        f"{result.outcome} · {result.provider}"
        + (f" · from the {result.cache} cache" if result.cache else ""),
        highlight=False,
    )
    for source in result.sources:
        console.print(
            f"  [cyan]{source.url}[/]  [{source.section}]  v{source.version}  ({source.similarity:.3f})",
            highlight=False,
        )
