"""What conversations cost: token arithmetic per history policy, a price table, usage from the call log.

Simulation assumptions: every call sends the system prompt + the history the policy keeps + the new
question; each past turn weighs question + answer tokens. Windowed policies with a summary fold the
oldest turn into it on every turn where the history overflows the window; those summary calls are
counted apart from the answering calls.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from sqlalchemy import select

from docubot.calllog import calls
from docubot.chat.policies import PolicyError
from docubot.db import Database

Price = tuple[float, float]
"""USD per million tokens: (input, output)."""

DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
}
FREE_PROVIDERS = ("local", "none")
PRICES_FILE = "prices.json"

WINDOWED = ("last_turns", "sliding_window", "summary")
SUMMARISED = ("sliding_window", "summary")
KNOWN_POLICIES = ("full", "last_turns:N", "sliding_window:N", "summary:N")
DAY_SECONDS = 86_400


class PriceError(ValueError):
    """A prices file that cannot be read."""


@dataclass(frozen=True)
class PolicySpec:
    """A history policy as the simulation sees it: its kind and, for windowed kinds, N turns kept."""

    kind: str
    window: int | None = None

    @property
    def label(self) -> str:
        return self.kind if self.window is None else f"{self.kind}:{self.window}"


@dataclass(frozen=True)
class Simulation:
    """Input tokens of each answering call, plus the summary calls kept apart."""

    policy: PolicySpec
    inputs: list[int]
    answer: int
    summary_calls: int
    summary_input: int
    summary_output: int

    @property
    def last_call_input(self) -> int:
        return self.inputs[-1]

    @property
    def cumulative_input(self) -> int:
        return sum(self.inputs)

    @property
    def cumulative_inputs(self) -> list[int]:
        """Running total of input tokens after each turn."""
        return list(accumulate(self.inputs))

    @property
    def summary_tokens(self) -> int:
        return self.summary_input + self.summary_output

    def cost_usd(self, price: Price | None) -> float | None:
        """Answering calls (input + one answer each) plus summary calls; None without a price."""
        tokens_in = self.cumulative_input + self.summary_input
        tokens_out = len(self.inputs) * self.answer + self.summary_output
        return cost_usd(tokens_in, tokens_out, price)


def parse_policy(text: str) -> PolicySpec:
    """`full`, `last_turns:N`, `sliding_window:N` or `summary:N` (N ≥ 1) → a PolicySpec."""
    kind, sep, arg = text.strip().partition(":")
    known = ", ".join(KNOWN_POLICIES)
    if kind == "full":
        if sep:
            raise PolicyError(f"policy {text!r}: `full` takes no :N")
        return PolicySpec("full")
    if kind not in WINDOWED:
        raise PolicyError(f"unknown policy {text!r}; known: {known}")
    if not arg.isdigit() or int(arg) < 1:
        raise PolicyError(f"policy {text!r} needs :N, a whole number of turns ≥ 1 (e.g. {kind}:4)")
    return PolicySpec(kind, int(arg))


def simulate(
    policy: PolicySpec, turns: int, system: int, question: int, answer: int, summary: int
) -> Simulation:
    """Input tokens of calls 1..turns under `policy`, and the summary calls its folds need."""
    if turns < 1 or min(system, question, answer, summary) < 0:
        raise ValueError("turns must be ≥ 1 and token sizes ≥ 0")
    turn = question + answer
    inputs = []
    folds = 0
    for t in range(1, turns + 1):
        past = t - 1
        kept = past if policy.window is None else min(past, policy.window)
        overflow = policy.kind in SUMMARISED and past > kept
        folds += overflow
        inputs.append(system + kept * turn + question + (summary if overflow else 0))
    return Simulation(policy, inputs, answer, folds, folds * (summary + turn), folds * summary)


def cost_usd(tokens_in: int, tokens_out: int, price: Price | None) -> float | None:
    if price is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000


def load_prices(home: Path) -> dict[str, Price]:
    """DEFAULT_PRICES, overridden and extended by `<home>/prices.json` ({"model": [in, out]})."""
    prices = dict(DEFAULT_PRICES)
    path = home / PRICES_FILE
    if not path.exists():
        return prices
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PriceError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise PriceError(f'{path}: expected an object {{"model": [in, out]}}')
    for model, pair in data.items():
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(p, int | float) and not isinstance(p, bool) and p >= 0 for p in pair)
        ):
            raise PriceError(f"{path}: {model!r} needs [input, output] USD per million tokens, both ≥ 0")
        prices[model] = (float(pair[0]), float(pair[1]))
    return prices


def price_for(provider: str, prices: dict[str, Price]) -> Price | None:
    """The price of `provider/model` (or a bare model name); local and none cost 0; unknown → None."""
    vendor, sep, model = provider.partition("/")
    if not sep:
        return prices.get(provider)
    return (0.0, 0.0) if vendor in FREE_PROVIDERS else prices.get(model)


@dataclass(frozen=True)
class Usage:
    """Calls of one provider/model on one UTC day."""

    day: str
    provider: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None


@dataclass(frozen=True)
class UsageReport:
    rows: list[Usage]

    @property
    def days(self) -> list[str]:
        return sorted({r.day for r in self.rows})

    def on(self, day: str) -> UsageReport:
        return UsageReport([r for r in self.rows if r.day == day])

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.rows)

    @property
    def tokens_in(self) -> int:
        return sum(r.tokens_in for r in self.rows)

    @property
    def tokens_out(self) -> int:
        return sum(r.tokens_out for r in self.rows)

    @property
    def cost_usd(self) -> float | None:
        """Sum over the priced rows; None when no row has a price."""
        return _sum_known(r.cost_usd for r in self.rows)

    @property
    def unpriced(self) -> list[str]:
        return sorted({r.provider for r in self.rows if r.cost_usd is None})

    @property
    def monthly_projection_usd(self) -> float | None:
        """Average daily cost over the days that have calls, × 30."""
        total = self.cost_usd
        return None if total is None else total / len(self.days) * 30


def window_start(days: int, now: float) -> float:
    """Unix time of 00:00 UTC, `days - 1` days before the day of `now`: the window includes today."""
    today = dt.datetime.fromtimestamp(now, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today.timestamp() - (days - 1) * DAY_SECONDS


def usage(db: Database, since: float, prices: dict[str, Price]) -> UsageReport:
    """Calls since `since` grouped by UTC day and provider, with their cost."""
    c = calls.c
    with db.read() as conn:
        rows = conn.execute(select(c.ts, c.provider, c.tokens_in, c.tokens_out).where(c.ts >= since)).all()
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for ts, provider, tokens_in, tokens_out in rows:
        day = dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat()
        total = totals[(day, provider)]
        total[0] += 1
        total[1] += tokens_in
        total[2] += tokens_out
    return UsageReport(
        [
            Usage(day, provider, n, tin, tout, cost_usd(tin, tout, price_for(provider, prices)))
            for (day, provider), (n, tin, tout) in sorted(totals.items())
        ]
    )


def _sum_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None
