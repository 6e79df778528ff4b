"""`docubot eval retrieval|refusal|rewrite|memory|answers|cache`: measure on a labelled set, write a
report (markdown + PNG), optionally calibrate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

import typer

from docubot.cache.answers import semantic_threshold
from docubot.chat.conversation import Conversation, make_policy
from docubot.chat.policies import PolicyError
from docubot.cli.common import console, err_console, fail, load_settings, print_json
from docubot.cli.progress import progress
from docubot.config import Settings
from docubot.embed import make_embedder
from docubot.eval.answers import (
    ANSWER_SHARES,
    answers_markdown,
    answers_summary,
    evaluate_answers,
    flat_summary,
    load_answer_cases,
    sample,
)
from docubot.eval.cache import cache_markdown, evaluate_cache, load_cache_pairs, plot_cache_sweep
from docubot.eval.conversations import (
    MEMORY_POLICIES,
    evaluate_memory,
    evaluate_rewrite,
    memory_markdown,
    rewrite_markdown,
)
from docubot.eval.refusal import collect, evaluate_refusal, load_refusal_questions, refusal_combined_markdown
from docubot.eval.report import (
    plot_bars,
    plot_recall,
    plot_threshold,
    refusal_markdown,
    retrieval_markdown,
)
from docubot.eval.retrieval import MISS_DEPTH, RetrievalReport, refusal_signals, run_cases
from docubot.eval.sets import EvalSetError, load_conversation_set, load_retrieval_set
from docubot.llm import ProviderError
from docubot.llm.model_file import ModelFileError
from docubot.rag.answer import DocuBot
from docubot.rag.retrieve import MODES, Mode
from docubot.rag.threshold import refusal_threshold, write_refusal_model, write_threshold
from docubot.store import Hit, StoreError

T = TypeVar("T")

eval_app = typer.Typer(
    help="Measure retrieval and refusal on a labelled set (evals/README.md).", no_args_is_help=True
)

SET_OPTION = typer.Option(Path("evals/nubelia"), "--set", help="Folder holding retrieval.jsonl.")
RETRIEVAL_SET_OPTION = typer.Option(
    Path("evals/nubelia"), "--set", help="Folder holding retrieval.jsonl, or a .jsonl file in its format."
)
REPORTS_OPTION = typer.Option(
    None, "--reports", help="Where the markdown and PNG reports go (default: <home>/reports)."
)


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")


@eval_app.command("retrieval")
def retrieval_command(
    eval_set: Path = RETRIEVAL_SET_OPTION,
    reports: Path | None = REPORTS_OPTION,
    mode: str = typer.Option(None, "--mode", help="dense | bm25 | hybrid | all (compare the three)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """recall@1/3/5/10, MRR@10 and the top-20 miss rate, per split when the set has them; the rank
    of the gold section per question; the misses. Each question's ranking (20 deep) goes to
    retrieval-<mode>.jsonl (as `docubot search --json` shows it)."""
    settings = load_settings(llm="none")
    chosen = list(MODES) if mode == "all" else [mode or settings.retrieval_mode]
    if any(m not in MODES for m in chosen):
        fail(f"unknown mode {mode!r}: dense, bm25, hybrid or all")
    modes = cast(list[Mode], chosen)
    bot = _bot(settings)
    reports = _reports_folder(reports, settings)
    results = {}
    for name in modes:
        report = _run(eval_set, bot, as_json, name, k=MISS_DEPTH)
        title = f"Retrieval on {eval_set} ({name})"
        (reports / f"retrieval-{name}.md").write_text(retrieval_markdown(report, title))
        (reports / f"retrieval-{name}.jsonl").write_text(
            "".join(json.dumps(o.logged(), ensure_ascii=False) + "\n" for o in report.outcomes)
        )
        plot_recall(report, reports / f"retrieval-{name}.png")
        results[name] = {**report.flat_metrics(), "misses": [o.case.id for o in report.misses]}
        if not as_json:
            console.print(retrieval_markdown(report, title), markup=False, highlight=False)
    if as_json:
        print_json(results[modes[0]] if len(modes) == 1 else results)
    else:
        err_console.print(f"reports in {reports}/", soft_wrap=True, highlight=False)


@eval_app.command("refusal")
def refusal_command(
    eval_set: Path = SET_OPTION,
    reports: Path | None = REPORTS_OPTION,
    target: float = typer.Option(
        0.95, "--target", min=0.5, max=1.0, help="Minimum share of refusals that are right."
    ),
    write: bool = typer.Option(False, "--write", help="Store the chosen threshold for this embedding model."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Sweep the refusal threshold over answerable vs unanswerable questions; pick one for --target."""
    bot = _bot(load_settings(llm="none"))
    report = _run(eval_set, bot, as_json, None, k=None)
    settings, embedder_name = bot.settings, bot.embedder.name
    if not any(not o.case.answerable for o in report.outcomes):
        fail("the set has no unanswerable questions; refusal cannot be measured")
    signals = refusal_signals(report, target)
    questions = _load(load_refusal_questions, eval_set)
    with progress("measured", "questions", len(questions), quiet=as_json) as tracker:
        rows = collect(questions, _search(bot), settings.top_k, bot.store, progress=tracker.advance)
    combined = evaluate_refusal(rows, bot.threshold, settings.retrieval_mode)
    reports = _reports_folder(reports, settings)
    markdown = (
        refusal_markdown(signals, target, f"Refusal on {eval_set}")
        + "\n"
        + refusal_combined_markdown(combined)
    )
    (reports / "refusal.md").write_text(markdown)
    plot_threshold(signals[0], reports / "refusal.png")
    best = signals[0]
    if write and best.chosen is not None:
        path = write_threshold(settings, embedder_name, best.chosen.threshold, bot.db)
        err_console.print(f"threshold {best.chosen.threshold:.4f} written to {path}")
    if write:
        path = write_refusal_model(settings, embedder_name, combined.model.to_json(), bot.db)
        err_console.print(f"refusal model (threshold {combined.model.threshold:.4f}) written to {path}")
    if as_json:
        chosen = best.chosen
        print_json(
            {
                "auroc": best.auroc,
                "threshold": chosen.threshold if chosen else None,
                "kept_answerable": chosen.kept_answerable if chosen else None,
                "rejected_unanswerable": chosen.rejected_unanswerable if chosen else None,
                "refusal_precision": chosen.refusal_precision if chosen else None,
                "current_threshold": refusal_threshold(settings, embedder_name, bot.db),
                "signals": {s.name: s.auroc for s in signals},
                "combined": {"auroc": combined.signal_auroc, "parts": combined.combined},
            }
        )
        return
    console.print(markdown, markup=False, highlight=False)
    if best.chosen is None:
        console.print(
            f"No threshold on the best similarity reaches {target:.0%} correct refusals: the signal cannot "
            "separate the classes alone; the model's own refusal path stays essential."
        )


@eval_app.command("rewrite")
def rewrite_command(
    eval_set: Path = SET_OPTION,
    reports: Path | None = REPORTS_OPTION,
    llm: str = typer.Option(None, "--llm", help="Rewrite with this provider (none: the rule rewrite)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Retrieval of follow-ups: raw words vs DocuBot's rewrite vs the gold rewrite; skip rates."""
    settings = load_settings(llm=llm)
    dialogues = _load(load_conversation_set, eval_set)
    bot = _bot(settings)
    conversation = Conversation(bot)

    with progress("evaluated", "dialogues", len(dialogues), quiet=as_json) as tracker:
        report = evaluate_rewrite(dialogues, _search(bot), conversation.rewrite, progress=tracker.advance)
    reports = _reports_folder(reports, settings)
    markdown = rewrite_markdown(report, f"Follow-up rewriting on {eval_set} ({bot.provider})")
    (reports / "rewrite.md").write_text(markdown)
    plot_bars(
        {name: report.metrics[f"{name}.recall@5"] for name in ("raw", "docubot", "gold")},
        "recall@5",
        reports / "rewrite.png",
    )
    _emit(as_json, report.metrics, markdown, reports)


@eval_app.command("memory")
def memory_command(
    eval_set: Path = SET_OPTION,
    reports: Path | None = REPORTS_OPTION,
    policy: list[str] = typer.Option(None, "--policy", help="A history policy (repeatable)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Per history policy: the share of the turns later questions depend on still in what is sent."""
    settings = load_settings(llm="none")
    dialogues = _load(load_conversation_set, eval_set)
    bot = _bot(settings)
    try:
        policies = {name: make_policy(name, bot, None) for name in policy or MEMORY_POLICIES}
    except PolicyError as exc:
        fail(str(exc))
    with progress("evaluated", "policies", len(policies), quiet=as_json) as tracker:
        results = evaluate_memory(dialogues, policies, progress=tracker.advance)
    reports = _reports_folder(reports, settings)
    markdown = memory_markdown(results, f"Memory of the history policies on {eval_set}")
    (reports / "memory.md").write_text(markdown)
    plot_bars({r.policy: r.retention for r in results}, "retention", reports / "memory.png")
    metrics = {f"{r.policy}.retention": round(r.retention, 4) for r in results}
    metrics["dependencies"] = results[0].dependencies if results else 0
    _emit(as_json, metrics, markdown, reports)


@eval_app.command("answers")
def answers_command(
    eval_set: Path = SET_OPTION,
    reports: Path | None = REPORTS_OPTION,
    llm: str = typer.Option(None, "--llm", help="local | openai | anthropic | none (default: DOCUBOT_LLM)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    sample_size: int = typer.Option(None, "--sample", min=1, help="N questions spread over the set."),
    split: str = typer.Option(
        None,
        "--split",
        help="tune | holdout | fresh | blind | unseen | sealed | hidden (answers.jsonl): that part.",
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The whole answering path per question: contract, refusals, sources, facts, forbidden values,
    language, time to first token and latency (answers.jsonl when the set has one)."""
    settings = load_settings(llm=llm, cache_enabled=False)
    cases = [c for c in _load(load_answer_cases, eval_set) if split is None or c.split == split]
    cases = sample(cases, sample_size)[:limit]
    bot = _bot(settings)
    with progress("answered", "questions", len(cases), quiet=as_json) as tracker:
        outcomes = evaluate_answers(cases, bot.ask, progress=tracker.advance)
    reports = _reports_folder(reports, settings)
    markdown = answers_markdown(outcomes, bot.provider, f"Answers on {eval_set}")
    (reports / "answers.md").write_text(markdown)
    summary = answers_summary(outcomes)
    plot_bars(
        {name: float(summary[name] or 0.0) for name in ANSWER_SHARES},
        "share of questions",
        reports / "answers.png",
    )
    _emit(as_json, {**flat_summary(outcomes), "provider": bot.provider}, markdown, reports)


@eval_app.command("cache")
def cache_command(
    pairs: Path = typer.Option(
        Path("evals/nubelia/cache_pairs.jsonl"), "--pairs", help="A cache-pairs file (evals/README.md)."
    ),
    reports: Path | None = REPORTS_OPTION,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Semantic cache: hits on same-meaning pairs, false hits on look-alikes, with and without the gate."""
    settings = load_settings()
    try:
        cases = load_cache_pairs(pairs)
    except EvalSetError as exc:
        fail(str(exc))
    embedder = make_embedder(settings)
    threshold = semantic_threshold(settings, embedder.name)
    with progress("checked", "pairs", len(cases), quiet=as_json) as tracker:
        evaluation = evaluate_cache(cases, embedder.embed_query, threshold, progress=tracker.advance)
    reports = _reports_folder(reports, settings)
    markdown = cache_markdown(evaluation, f"Semantic cache on {pairs}")
    (reports / "cache.md").write_text(markdown)
    plot_cache_sweep(evaluation, reports / "cache.png")
    _emit(as_json, evaluation.summary(), markdown, reports)


def _emit(as_json: bool, metrics: dict, markdown: str, reports: Path) -> None:
    if as_json:
        print_json(metrics)
    else:
        console.print(markdown, markup=False, highlight=False)
        err_console.print(f"reports in {reports}/", soft_wrap=True, highlight=False)


def _reports_folder(reports: Path | None, settings: Settings) -> Path:
    """`--reports`, else the data folder's `reports/` (not the current folder), created if missing."""
    folder = reports or settings.home / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _load(loader: Callable[[Path], list[T]], eval_set: Path) -> list[T]:
    try:
        return loader(eval_set)
    except EvalSetError as exc:
        fail(str(exc))


def _bot(settings: Settings) -> DocuBot:
    try:
        bot = DocuBot(settings)
    except (ProviderError, ModelFileError, StoreError) as exc:
        fail(str(exc))
    if bot.store.count() == 0:
        fail("the store is empty: ingest the docs the set is about first (docubot ingest PATH)")
    return bot


def _run(eval_set: Path, bot: DocuBot, quiet: bool, mode: Mode | None, k: int | None) -> RetrievalReport:
    """Retrieve for every case; `k=None` means the answering depth (top_k), as refusal sees it."""
    cases = _load(load_retrieval_set, eval_set)
    with progress("retrieved", "questions", len(cases), quiet=quiet) as tracker:
        try:
            return run_cases(
                cases, bot.retriever, k=k or bot.retriever.top_k, mode=mode, progress=tracker.advance
            )
        except StoreError as exc:
            fail(str(exc))


def _search(bot: DocuBot) -> Callable[[str, int], list[Hit]]:
    """The `k` best hits for a question, through the same retriever as `ask`."""

    def search(question: str, k: int) -> list[Hit]:
        return list(bot.retriever.search(question, k=k).hits)

    return search
