"""`docubot gaps`: the questions the docs did not answer well, grouped by topic, for docs writers."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from docubot.cli.common import console, fail, load_components, print_json
from docubot.gaps import DEFAULT_THRESHOLD, GapReport, gap_report


def register(app: typer.Typer) -> None:
    app.command("gaps")(gaps_command)


def gaps_command(
    days: float = typer.Option(30, "--days", min=0.001, help="How far back the call log is read."),
    threshold: float = typer.Option(
        DEFAULT_THRESHOLD, "--threshold", min=0.0, max=1.0, help="Cosine above which questions group."
    ),
    as_json: bool = typer.Option(False, "--json"),
    plot: Path | None = typer.Option(None, "--plot", help="Also draw the largest groups to this PNG."),
) -> None:
    """Group the refused, low-confidence and 👎 questions of the last DAYS days by similarity."""
    components = load_components()
    try:
        report = gap_report(components.db, components.store, components.embedder, days, threshold)
    finally:
        components.close()
    if plot is not None:
        _plot(report, plot)
    if as_json:
        print_json(report.to_dict())
        return
    _print(report)


def _print(report: GapReport) -> None:
    sources = ", ".join(f"{reason} {count}" for reason, count in report.sources.items())
    console.print(
        f"{report.questions} questions since {report.since} in {len(report.clusters)} groups ({sources})",
        highlight=False,
    )
    table = Table()
    for column in ("count", "representative question", "last seen", "why", "nearest page"):
        table.add_column(column)
    for c in report.clusters:
        why = ", ".join(f"{k} {v}" for k, v in c.reasons.items())
        page = f"{c.nearest_page['url']} ({c.nearest_page['similarity']:.2f})" if c.nearest_page else "-"
        question = "\n".join([c.representative, *(f"👎 “{comment}”" for comment in c.comments[:3])])
        table.add_row(str(c.count), Text(question), c.last_seen, why, Text(page))
    console.print(table)


def _plot(report: GapReport, path: Path) -> None:
    """A horizontal bar per group (the 20 largest), labelled with its representative question."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("--plot needs matplotlib: pip install 'docubot[eval]'")
    top = report.clusters[:20][::-1]
    figure, axes = plt.subplots(figsize=(10, 0.4 * len(top) + 1.5))
    axes.barh([c.representative[:70] for c in top], [c.count for c in top])
    axes.set_xlabel("questions")
    axes.set_title(f"Docs gaps since {report.since[:10]}")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
