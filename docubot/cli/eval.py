"""`docubot eval retrieval|refusal`: measure on a labelled set, write a report, optionally calibrate."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import Progress

from docubot.cli.common import console, err_console, fail, load_settings, print_json
from docubot.config import Settings
from docubot.embed import make_embedder
from docubot.eval.report import plot_recall, plot_threshold, refusal_markdown, retrieval_markdown
from docubot.eval.retrieval import RetrievalReport, refusal_signals, run_cases
from docubot.eval.sets import EvalSetError, load_retrieval_set
from docubot.rag.keyword import KeywordIndex
from docubot.rag.retrieve import MODES, retrieve
from docubot.rag.threshold import refusal_threshold, write_threshold
from docubot.store import StoreError, open_store

eval_app = typer.Typer(
    help="Measure retrieval and refusal on a labelled set (evals/README.md).", no_args_is_help=True
)

SET_OPTION = typer.Option(Path("evals/nubelia"), "--set", help="Folder holding retrieval.jsonl.")
REPORTS_OPTION = typer.Option(Path("reports"), "--reports", help="Where the markdown and PNG reports go.")


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")


@eval_app.command("retrieval")
def retrieval_command(
    eval_set: Path = SET_OPTION,
    reports: Path = REPORTS_OPTION,
    mode: str = typer.Option(None, "--mode", help="dense | bm25 | hybrid | all (compare the three)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """recall@1/3/5/10 and MRR; the rank of the gold section per question; the misses."""
    settings = load_settings()
    modes = list(MODES) if mode == "all" else [mode or settings.retrieval_mode]
    if any(m not in MODES for m in modes):
        fail(f"unknown mode {mode!r}: dense, bm25, hybrid or all")
    reports.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in modes:
        report, _ = _run(eval_set, as_json, name, k=10)
        title = f"Retrieval on {eval_set} ({name})"
        (reports / f"retrieval-{name}.md").write_text(retrieval_markdown(report, title))
        plot_recall(report, reports / f"retrieval-{name}.png")
        results[name] = {**report.metrics, "misses": [o.case.id for o in report.misses]}
        if not as_json:
            console.print(retrieval_markdown(report, title), markup=False, highlight=False)
    if as_json:
        print_json(results[modes[0]] if len(modes) == 1 else results)
    else:
        err_console.print(f"reports in {reports}/")


@eval_app.command("refusal")
def refusal_command(
    eval_set: Path = SET_OPTION,
    reports: Path = REPORTS_OPTION,
    target: float = typer.Option(
        0.95, "--target", min=0.5, max=1.0, help="Minimum share of refusals that are right."
    ),
    write: bool = typer.Option(False, "--write", help="Store the chosen threshold for this embedding model."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Sweep the refusal threshold over answerable vs unanswerable questions; pick one for --target."""
    report, settings = _run(eval_set, as_json, None, k=None)
    if not any(not o.case.answerable for o in report.outcomes):
        fail("the set has no unanswerable questions; refusal cannot be measured")
    signals = refusal_signals(report, target)
    reports.mkdir(parents=True, exist_ok=True)
    markdown = refusal_markdown(signals, target, f"Refusal on {eval_set}")
    (reports / "refusal.md").write_text(markdown)
    plot_threshold(signals[0], reports / "refusal.png")
    best = signals[0]
    embedder_name = make_embedder(settings).name
    if write and best.chosen is not None:
        path = write_threshold(settings, embedder_name, best.chosen.threshold)
        err_console.print(f"threshold {best.chosen.threshold:.4f} written to {path}")
    if as_json:
        chosen = best.chosen
        print_json(
            {
                "auroc": best.auroc,
                "threshold": chosen.threshold if chosen else None,
                "kept_answerable": chosen.kept_answerable if chosen else None,
                "rejected_unanswerable": chosen.rejected_unanswerable if chosen else None,
                "refusal_precision": chosen.refusal_precision if chosen else None,
                "current_threshold": refusal_threshold(settings, embedder_name),
                "signals": {s.name: s.auroc for s in signals},
            }
        )
        return
    console.print(markdown, markup=False, highlight=False)
    if best.chosen is None:
        console.print(
            f"No threshold on the best similarity reaches {target:.0%} correct refusals: the signal cannot "
            "separate the classes alone; the model's own refusal path stays essential."
        )


def _run(eval_set: Path, quiet: bool, mode: str | None, k: int | None) -> tuple[RetrievalReport, Settings]:
    """Retrieve for every case; `k=None` means the answering depth (top_k), as refusal sees it."""
    settings = load_settings(retrieval_mode=mode)
    try:
        cases = load_retrieval_set(eval_set)
    except EvalSetError as exc:
        fail(str(exc))
    store = open_store(settings)
    if store.count() == 0:
        fail("the store is empty: ingest the docs the set is about first (docubot ingest PATH)")
    embedder = make_embedder(settings)
    try:
        store.check_embedding_model(embedder.name, embedder.dim)
        with Progress(console=err_console, disable=quiet, transient=True) as bar:
            task = bar.add_task("retrieving", total=len(cases))
            keyword_index = KeywordIndex(settings.keyword_index_dir)
            report = run_cases(
                cases,
                lambda q, depth: retrieve(
                    q,
                    embedder,
                    store,
                    depth,
                    mode=settings.retrieval_mode,
                    keyword_index=keyword_index,
                    rrf_k=settings.rrf_k,
                ),
                k=k or settings.top_k,
                progress=lambda: bar.advance(task),
            )
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    return report, settings
