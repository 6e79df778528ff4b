"""`docubot cost simulate|report`: what history policies would cost, and what the call log did cost."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from docubot.chat.cost import (
    PRICES_FILE,
    PolicyError,
    Price,
    PriceError,
    Simulation,
    UsageReport,
    load_prices,
    parse_policy,
    price_for,
    simulate,
    usage,
    window_start,
)
from docubot.cli.common import console, err_console, fail, load_settings, print_json
from docubot.db import Database

cost_app = typer.Typer(
    help="Token and USD cost: simulated history policies, real usage.", no_args_is_help=True
)

ASSUMPTIONS = (
    "Each call sends system + the history the policy keeps + the question; a past turn is question + "
    "answer tokens. Summary calls (one per turn the window overflows: old summary + folded turn in, "
    "summary out) are not in the input columns."
)


def register(app: typer.Typer) -> None:
    app.add_typer(cost_app, name="cost")


@cost_app.command("simulate")
def simulate_command(
    turns: int = typer.Option(20, "--turns", min=1, help="Turns in the conversation."),
    system: int = typer.Option(600, "--system", min=0, help="System prompt tokens (with the context)."),
    question: int = typer.Option(50, "--question", min=0, help="Tokens per question."),
    answer: int = typer.Option(250, "--answer", min=0, help="Tokens per answer."),
    summary: int = typer.Option(200, "--summary", min=0, help="Tokens of the running summary."),
    policies: str = typer.Option(
        "full,last_turns:10,sliding_window:4",
        "--policies",
        help="Comma-separated: full, last_turns:N, sliding_window:N, summary:N.",
    ),
    model: str = typer.Option("gpt-4o-mini", "--model", help="Model whose price applies."),
    price_in: float | None = typer.Option(None, "--price-in", min=0, help="USD per million input tokens."),
    price_out: float | None = typer.Option(None, "--price-out", min=0, help="USD per million output tokens."),
    plot: Path | None = typer.Option(None, "--plot", help="PNG of cumulative input tokens per turn."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Input tokens of the last call and over all turns, per history policy, and their cost."""
    try:
        specs = {spec.label: spec for spec in map(parse_policy, policies.split(","))}
    except PolicyError as exc:
        fail(str(exc))
    sims = [simulate(spec, turns, system, question, answer, summary) for spec in specs.values()]
    settings = load_settings()
    price = _price(price_for(model, _prices(settings.home)), price_in, price_out)
    if plot is not None:
        _plot(sims, plot)
    if as_json:
        print_json({"turns": turns, "policies": {s.policy.label: _simulation_json(s, price) for s in sims}})
        return
    console.print(_simulation_table(sims, turns, system, question, answer, summary, price))
    console.print(ASSUMPTIONS, highlight=False)
    if price is None:
        console.print(
            f"Cost unknown: no price for {model}; pass --price-in and --price-out or add it to "
            f"{settings.home / PRICES_FILE}.",
            highlight=False,
        )
    else:
        console.print(
            f"Cost at ${price[0]:g} in / ${price[1]:g} out per million tokens ({model}): answering calls "
            "(input + answer) plus summary calls.",
            highlight=False,
        )
    if plot is not None:
        err_console.print(f"plot in {plot}")


@cost_app.command("report")
def report_command(
    days: int = typer.Option(30, "--days", min=1, help="Window: today and the days before it (UTC)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Real usage from the call log per day and provider, its cost, and a monthly projection."""
    settings = load_settings()
    with Database(settings) as db:
        report = usage(db, window_start(days, time.time()), _prices(settings.home))
    empty = f"No calls recorded in the last {days} days ({settings.db_path})."
    if as_json:
        if not report.rows:
            err_console.print(empty, highlight=False)
        print_json(_report_json(report))
        return
    if not report.rows:
        console.print(empty, highlight=False)
        return
    table = Table(title=f"Usage over the last {days} days (UTC)")
    for column in ("date", "provider", "calls", "tokens in", "tokens out", "cost USD"):
        table.add_column(column, justify="left" if column in ("date", "provider") else "right")
    for row in report.rows:
        table.add_row(
            row.day,
            row.provider,
            str(row.calls),
            f"{row.tokens_in:,}",
            f"{row.tokens_out:,}",
            _money(row.cost_usd),
        )
    table.add_section()
    table.add_row(
        "total",
        "",
        str(report.calls),
        f"{report.tokens_in:,}",
        f"{report.tokens_out:,}",
        _money(report.cost_usd),
    )
    console.print(table)
    console.print(
        f"Monthly projection: {_money(report.monthly_projection_usd)} (average daily cost over the "
        f"{len(report.days)} days with calls in the window × 30; days without calls are left out).",
        highlight=False,
    )
    if report.unpriced:
        console.print(
            f"No price for {', '.join(report.unpriced)}: their cost is unknown and left out of the totals; "
            f"add them to {settings.home / PRICES_FILE}.",
            highlight=False,
        )


def _simulation_table(
    sims: list[Simulation],
    turns: int,
    system: int,
    question: int,
    answer: int,
    summary: int,
    price: Price | None,
) -> Table:
    table = Table(
        title=f"{turns} turns · system {system} · question {question} · answer {answer} · "
        f"summary {summary} tokens"
    )
    for column in ("policy", "last call in", "total in", "summary calls", "summary tokens", "cost USD"):
        table.add_column(
            column, justify="left" if column == "policy" else "right", no_wrap=column == "policy"
        )
    for s in sims:
        table.add_row(
            s.policy.label,
            f"{s.last_call_input:,}",
            f"{s.cumulative_input:,}",
            str(s.summary_calls),
            f"{s.summary_tokens:,}",
            _money(s.cost_usd(price)),
        )
    return table


def _prices(home: Path) -> dict[str, Price]:
    try:
        return load_prices(home)
    except PriceError as exc:
        fail(str(exc))


def _price(listed: Price | None, price_in: float | None, price_out: float | None) -> Price | None:
    """The flags where given, else the price table's entry; None when either rate is missing."""
    rate_in = price_in if price_in is not None else (listed[0] if listed else None)
    rate_out = price_out if price_out is not None else (listed[1] if listed else None)
    return None if rate_in is None or rate_out is None else (rate_in, rate_out)


def _simulation_json(sim: Simulation, price: Price | None) -> dict[str, Any]:
    return {
        "last_call_input": sim.last_call_input,
        "cumulative_input": sim.cumulative_input,
        "cost_usd": sim.cost_usd(price),
        "summary_calls": sim.summary_calls,
        "summary_tokens": sim.summary_tokens,
    }


def _report_json(report: UsageReport) -> dict[str, Any]:
    days = [
        {
            "date": day,
            **_totals(report.on(day)),
            "providers": [{"provider": r.provider, **_totals(UsageReport([r]))} for r in report.on(day).rows],
        }
        for day in report.days
    ]
    totals = {**_totals(report), "days_with_calls": len(report.days), "unpriced_providers": report.unpriced}
    return {"days": days, "totals": totals, "monthly_projection_usd": report.monthly_projection_usd}


def _totals(report: UsageReport) -> dict[str, Any]:
    return {
        "calls": report.calls,
        "tokens_in": report.tokens_in,
        "tokens_out": report.tokens_out,
        "cost_usd": report.cost_usd,
    }


def _plot(sims: list[Simulation], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("--plot needs matplotlib: pip install 'docubot[eval]'")
    fig, ax = plt.subplots(figsize=(8, 5))
    for sim in sims:
        ax.plot(range(1, len(sim.inputs) + 1), sim.cumulative_inputs, label=sim.policy.label)
    ax.set_xlabel("turn")
    ax.set_ylabel("cumulative input tokens")
    ax.legend()
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"
