"""`docubot cost`: policy token arithmetic, the price table, and usage read back from a real call log."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from docubot.calllog import CallLog, CallRecord
from docubot.chat.cost import (
    DEFAULT_PRICES,
    PolicyError,
    PolicySpec,
    PriceError,
    load_prices,
    parse_policy,
    price_for,
    simulate,
    usage,
    window_start,
)
from docubot.cli.cost import register
from docubot.config import Settings
from docubot.db import Database

S, Q, A, SUM = 600, 50, 250, 200
DAY = 86_400
LOCAL = "local/qwen2.5-coder-1.5b-instruct-q4_k_m"


def reference(kind: str, n: int, turns: int) -> tuple[list[int], int]:
    """Input tokens per call and summary calls, by replaying a conversation turn by turn."""
    verbatim: list[int] = []
    has_summary = False
    folds = 0
    inputs = []
    for _ in range(turns):
        if kind != "full" and len(verbatim) > n:
            verbatim.pop(0)
            if kind in ("sliding_window", "summary"):
                folds += 1
                has_summary = True
        inputs.append(S + (SUM if has_summary else 0) + sum(verbatim) + Q)
        verbatim.append(Q + A)
    return inputs, folds


def run(spec: str, turns: int):  # type: ignore[no-untyped-def]
    return simulate(parse_policy(spec), turns, S, Q, A, SUM)


@pytest.mark.parametrize(
    ("spec", "last_call"),
    [("full", 600 + 11 * 300 + 50), ("last_turns:10", 600 + 10 * 300 + 50), ("sliding_window:4", 2050)],
)
def test_last_call_matches_hand_computed_values(spec: str, last_call: int) -> None:
    assert run(spec, 12).last_call_input == last_call


@pytest.mark.parametrize("spec", ["full", "last_turns:10", "last_turns:1", "sliding_window:4", "summary:3"])
@pytest.mark.parametrize("turns", [1, 2, 5, 12, 40])
def test_per_turn_inputs_match_a_replayed_conversation(spec: str, turns: int) -> None:
    kind, _, n = spec.partition(":")
    inputs, folds = reference(kind, int(n or 0), turns)
    sim = run(spec, turns)
    assert sim.inputs == inputs
    assert sim.cumulative_input == sum(inputs)
    assert sim.cumulative_inputs[-1] == sum(inputs) and len(sim.cumulative_inputs) == turns
    assert sim.summary_calls == folds


def test_full_cumulative_hand_computed() -> None:
    assert run("full", 12).cumulative_input == 12 * 650 + 300 * sum(range(12))


def test_windowed_policies_plateau_while_full_keeps_growing() -> None:
    for spec in ("last_turns:10", "sliding_window:4", "summary:4"):
        assert run(spec, 100).last_call_input == run(spec, 50).last_call_input
    assert run("full", 100).last_call_input == run("full", 50).last_call_input + 50 * 300


def test_summary_calls_are_counted_apart_from_the_answering_calls() -> None:
    sim = run("sliding_window:4", 12)
    assert sim.summary_calls == 7  # turns 6..12 each fold the oldest turn
    assert (sim.summary_input, sim.summary_output, sim.summary_tokens) == (7 * 500, 7 * 200, 7 * 700)
    assert sim.cumulative_input == sum(reference("sliding_window", 4, 12)[0])
    assert run("sliding_window:4", 5).summary_calls == 0
    assert run("last_turns:4", 12).summary_calls == 0 and run("full", 12).summary_calls == 0


def test_summary_policy_has_the_sliding_window_arithmetic() -> None:
    assert run("summary:4", 30) == simulate(PolicySpec("summary", 4), 30, S, Q, A, SUM)
    assert run("summary:4", 30).inputs == run("sliding_window:4", 30).inputs


def test_cost_counts_answers_and_summary_calls() -> None:
    sim = run("sliding_window:4", 12)
    expected = ((sim.cumulative_input + 3500) * 0.15 + (12 * 250 + 1400) * 0.60) / 1e6
    assert sim.cost_usd((0.15, 0.60)) == pytest.approx(expected)
    assert sim.cost_usd(None) is None


def test_parse_policy() -> None:
    assert parse_policy("last_turns:10") == PolicySpec("last_turns", 10)
    assert parse_policy(" full ") == PolicySpec("full")
    assert parse_policy("sliding_window:4").label == "sliding_window:4"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bogus", "known: full, last_turns:N, sliding_window:N, summary:N"),
        ("", "unknown policy"),
        ("last_turns", "needs :N"),
        ("last_turns:0", "≥ 1"),
        ("last_turns:x", "needs :N"),
        ("sliding_window:-1", "needs :N"),
        ("full:3", "takes no :N"),
    ],
)
def test_parse_policy_errors(text: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        parse_policy(text)


def test_simulate_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError):
        simulate(PolicySpec("full"), 0, S, Q, A, SUM)
    with pytest.raises(ValueError):
        simulate(PolicySpec("full"), 3, S, -1, A, SUM)


def test_price_lookup_strips_the_provider() -> None:
    assert price_for("openai/gpt-4o-mini", DEFAULT_PRICES) == (0.15, 0.60)
    assert price_for("anthropic/claude-haiku-4-5", DEFAULT_PRICES) == (1.00, 5.00)
    assert price_for("gpt-4o", DEFAULT_PRICES) == (2.50, 10.00)
    assert price_for(LOCAL, DEFAULT_PRICES) == (0.0, 0.0)
    assert price_for("none/extractive", DEFAULT_PRICES) == (0.0, 0.0)
    assert price_for("fake/scripted", DEFAULT_PRICES) is None


def test_prices_file_overrides_and_extends(tmp_path: Path) -> None:
    assert load_prices(tmp_path) == DEFAULT_PRICES
    (tmp_path / "prices.json").write_text(json.dumps({"gpt-4o-mini": [1, 2], "my-model": [0.5, 0.25]}))
    prices = load_prices(tmp_path)
    assert prices["gpt-4o-mini"] == (1.0, 2.0) and prices["my-model"] == (0.5, 0.25)
    assert prices["gpt-4o"] == DEFAULT_PRICES["gpt-4o"]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"m": [1]}', '{"m": [1, -2]}', '{"m": "1"}'])
def test_bad_prices_file(tmp_path: Path, content: str) -> None:
    (tmp_path / "prices.json").write_text(content)
    with pytest.raises(PriceError, match=r"prices\.json"):
        load_prices(tmp_path)


# --- the CLI ---------------------------------------------------------------------------------------


@pytest.fixture
def home(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    """DOCUBOT_HOME in tmp_path; the `settings` fixture has already cleaned other DOCUBOT_* variables."""
    monkeypatch.setenv("DOCUBOT_HOME", str(settings.home))
    return settings.home


def invoke(*args: str):  # type: ignore[no-untyped-def]
    app = typer.Typer()
    register(app)
    return CliRunner().invoke(app, ["cost", *args])


SIMULATE = ["simulate", "--turns", "12", "--system", "600", "--question", "50", "--answer", "250"]


def test_simulate_json(home: Path) -> None:
    result = invoke(*SIMULATE, "--summary", "200", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["turns"] == 12
    assert list(data["policies"]) == ["full", "last_turns:10", "sliding_window:4"]
    full, window = data["policies"]["full"], data["policies"]["sliding_window:4"]
    assert full == {
        "last_call_input": 3950,
        "cumulative_input": 27600,
        "cost_usd": pytest.approx((27600 * 0.15 + 12 * 250 * 0.60) / 1e6),
        "summary_calls": 0,
        "summary_tokens": 0,
    }
    assert (window["last_call_input"], window["summary_calls"], window["summary_tokens"]) == (2050, 7, 4900)
    assert data["policies"]["last_turns:10"]["last_call_input"] == 3650


def test_simulate_prices_from_flags_model_or_nowhere(home: Path) -> None:
    def cost(*extra: str) -> float | None:
        result = invoke(*SIMULATE, "--policies", "full", "--json", *extra)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["policies"]["full"]["cost_usd"]

    assert cost("--price-in", "1", "--price-out", "0") == pytest.approx(27600 / 1e6)
    assert cost("--model", "claude-sonnet-4-5") == pytest.approx((27600 * 3 + 3000 * 15) / 1e6)
    assert cost("--model", LOCAL) == 0
    assert cost("--model", "mystery-model") is None
    assert cost("--model", "mystery-model", "--price-in", "1") is None
    home.mkdir(parents=True, exist_ok=True)
    (home / "prices.json").write_text(json.dumps({"mystery-model": [1, 0]}))
    assert cost("--model", "mystery-model") == pytest.approx(27600 / 1e6)


def test_simulate_table(home: Path) -> None:
    result = invoke(*SIMULATE)
    assert result.exit_code == 0, result.output
    for text in ("full", "last_turns:10", "sliding_window:4", "3,950", "3,650", "2,050", "not in the input"):
        assert text in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policies", "full,everything"], "known: full, last_turns:N"),
        (["--policies", "last_turns"], "needs :N"),
        (["--turns", "0"], "--turns"),
        (["--answer", "-5"], "--answer"),
    ],
)
def test_simulate_bad_input_exits_2(home: Path, args: list[str], message: str) -> None:
    result = invoke("simulate", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_simulate_plot_writes_a_png(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "plots" / "cost.png"
    result = invoke(*SIMULATE, "--plot", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_simulate_plot_without_matplotlib_fails_clearly(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = invoke(*SIMULATE, "--plot", str(tmp_path / "cost.png"))
    assert result.exit_code == 2
    assert "needs matplotlib" in result.output
    assert not (tmp_path / "cost.png").exists()


def today_start() -> float:
    return float(int(time.time()) // DAY * DAY)


def record(home: Path, provider: str, ts: float, tokens_in: int, tokens_out: int) -> None:
    call = CallRecord(
        question="q",
        filters={},
        retrieved=[],
        prompt_version="v1",
        provider=provider,
        outcome="answered",
        answer={},
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        ts=ts,
    )
    with Database(Settings(home=home)) as db:
        CallLog(db).record(call)


@pytest.fixture
def two_days(home: Path) -> tuple[str, str]:
    """Today: gpt-4o-mini 600k + 400k in, local; yesterday: gpt-4o-mini 1M out, local; 40 days ago: old."""
    today, yesterday = today_start() + 1, today_start() - DAY + 3600
    record(home, "openai/gpt-4o-mini", today, 600_000, 0)
    record(home, "openai/gpt-4o-mini", today, 400_000, 0)
    record(home, LOCAL, today, 5_000, 300)
    record(home, "openai/gpt-4o-mini", yesterday, 0, 1_000_000)
    record(home, LOCAL, yesterday, 1_000, 100)
    record(home, "openai/gpt-4o-mini", today_start() - 40 * DAY, 9_000_000, 0)
    day = time.strftime("%Y-%m-%d", time.gmtime(today))
    return day, time.strftime("%Y-%m-%d", time.gmtime(yesterday))


def report_json(*args: str) -> dict:
    result = invoke("report", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_report_groups_by_day_and_provider(two_days: tuple[str, str]) -> None:
    today, yesterday = two_days
    data = report_json()
    assert [d["date"] for d in data["days"]] == [yesterday, today]
    old, new = data["days"]
    assert new["providers"] == [
        {"provider": LOCAL, "calls": 1, "tokens_in": 5_000, "tokens_out": 300, "cost_usd": 0.0},
        {
            "provider": "openai/gpt-4o-mini",
            "calls": 2,
            "tokens_in": 1_000_000,
            "tokens_out": 0,
            "cost_usd": pytest.approx(0.15),
        },
    ]
    assert (new["calls"], new["tokens_in"], new["cost_usd"]) == (3, 1_005_000, pytest.approx(0.15))
    assert (old["calls"], old["tokens_out"], old["cost_usd"]) == (2, 1_000_100, pytest.approx(0.60))
    totals = data["totals"]
    assert (totals["calls"], totals["tokens_in"], totals["tokens_out"]) == (5, 1_006_000, 1_000_400)
    assert totals["cost_usd"] == pytest.approx(0.75) and totals["days_with_calls"] == 2
    assert data["monthly_projection_usd"] == pytest.approx(0.75 / 2 * 30)


def test_report_window(two_days: tuple[str, str]) -> None:
    data = report_json("--days", "1")
    assert [d["date"] for d in data["days"]] == [two_days[0]]
    assert data["monthly_projection_usd"] == pytest.approx(0.15 * 30)
    assert report_json("--days", "60")["totals"]["tokens_in"] == 10_006_000
    assert window_start(1, today_start() + 5) == today_start()


def test_report_uses_the_prices_file(home: Path, two_days: tuple[str, str]) -> None:
    (home / "prices.json").write_text(json.dumps({"gpt-4o-mini": [1.0, 2.0]}))
    data = report_json()
    assert [d["cost_usd"] for d in data["days"]] == [pytest.approx(2.0), pytest.approx(1.0)]
    assert data["monthly_projection_usd"] == pytest.approx(3.0 / 2 * 30)


def test_report_unknown_model_costs_null(home: Path, two_days: tuple[str, str]) -> None:
    record(home, "fake/scripted", today_start() + 2, 50_000, 50_000)
    record(home, "openai/gpt-5-nano", today_start() - 3 * DAY, 1_000, 1_000)
    data = report_json()
    scripted = [p for p in data["days"][-1]["providers"] if p["provider"] == "fake/scripted"]
    assert scripted[0]["cost_usd"] is None
    assert data["days"][0]["cost_usd"] is None  # a day with unpriced calls only
    assert data["totals"]["cost_usd"] == pytest.approx(0.75)
    assert data["totals"]["unpriced_providers"] == ["fake/scripted", "openai/gpt-5-nano"]
    assert data["monthly_projection_usd"] == pytest.approx(0.75 / 3 * 30)


def test_report_only_unpriced_calls_projects_null(home: Path) -> None:
    record(home, "fake/scripted", today_start() + 2, 10, 10)
    data = report_json()
    assert data["totals"]["cost_usd"] is None and data["monthly_projection_usd"] is None


def test_report_table(home: Path, two_days: tuple[str, str]) -> None:
    result = invoke("report")
    assert result.exit_code == 0, result.output
    assert "openai/gpt-4o-mini" in result.stdout and two_days[1] in result.stdout
    assert "Monthly projection: $11.2500" in result.stdout
    assert "× 30" in result.stdout


def test_report_bad_prices_file_exits_2(home: Path, two_days: tuple[str, str]) -> None:
    (home / "prices.json").write_text("{")
    result = invoke("report")
    assert result.exit_code == 2 and "prices.json" in result.output


def test_report_empty_log(home: Path) -> None:
    result = invoke("report")
    assert result.exit_code == 0, result.output
    assert "No calls recorded in the last 30 days" in result.stdout
    data = report_json()
    assert data["days"] == [] and data["totals"]["calls"] == 0
    assert data["monthly_projection_usd"] is None


def test_usage_reads_the_log_directly(home: Path, two_days: tuple[str, str]) -> None:
    with Database(Settings(home=home)) as db:
        report = usage(db, window_start(2, time.time()), DEFAULT_PRICES)
    assert report.calls == 5 and report.days == sorted(two_days)
