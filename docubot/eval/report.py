"""Writing evaluation reports: markdown plus PNG plots (matplotlib, when installed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from docubot.eval.retrieval import KS, MISS_DEPTH, RetrievalReport, SignalResult


def retrieval_markdown(report: RetrievalReport, title: str) -> str:
    """The measures over all answerable questions and per split (one row each), then the misses."""
    miss = f"miss@{MISS_DEPTH}"
    columns = [*(f"recall@{k}" for k in KS), "MRR@10"]
    deep = miss in report.metrics
    if deep:
        columns.append(f"top-{MISS_DEPTH} misses")
    lines = [f"# {title}", "", "| questions | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for name, m in [("all", report.metrics), *report.splits.items()]:
        cells = [f"{m[f'recall@{k}']:.3f}" for k in KS] + [f"{m['mrr']:.3f}"]
        if deep:
            cells.append(f"{m[miss]:.1%}")
        lines.append(f"| {name} ({int(m['questions'])} answerable) | " + " | ".join(cells) + " |")
    depth = max((len(o.hits) for o in report.outcomes), default=0)
    lines += [
        "",
        "## Misses (gold not in the top 5)",
        "",
        "| id | question | gold rank | retrieved first |",
        "|---|---|---|---|",
    ]
    for o in report.misses:
        first = o.top_sections[0] if o.top_sections else ""
        lines.append(f"| {o.case.id} | {o.case.question} | {o.rank or f'>{depth}'} | {first} |")
    return "\n".join(lines) + "\n"


def refusal_markdown(signals: Sequence[SignalResult], min_precision: float, title: str) -> str:
    lines = [f"# {title}", "", f"Target: refusals right at least {min_precision:.0%} of the time.", ""]
    lines += ["| signal | AUROC | threshold | kept answerable | rejected unanswerable | refusal precision |"]
    lines += ["|---|---|---|---|---|---|"]
    for s in signals:
        c = s.chosen
        if c is None:
            lines.append(f"| {s.name} | {s.auroc:.3f} | none reaches the target | | | |")
        else:
            lines.append(
                f"| {s.name} | {s.auroc:.3f} | {c.threshold:.4f} | {c.kept_answerable:.1%} | "
                f"{c.rejected_unanswerable:.1%} | {c.refusal_precision:.1%} |"
            )
    return "\n".join(lines) + "\n"


def plot_recall(report: RetrievalReport, path: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    values = [report.metrics[f"recall@{k}"] for k in KS]
    ax.bar([f"@{k}" for k in KS], values, color="#3b6ea8")
    ax.set_ylim(0, 1)
    ax.set_ylabel("recall")
    for i, v in enumerate(values):
        ax.text(i, v + 0.02, f"{v:.2f}", ha="center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_bars(values: dict[str, float], ylabel: str, path: Path) -> Path | None:
    """One bar per name, values in 0..1, labelled."""
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(values) + 1.5), 3.4))
    ax.bar(list(values), list(values.values()), color="#3b6ea8")
    ax.set_ylim(0, 1.1)
    ax.set_ylabel(ylabel)
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    for i, v in enumerate(values.values()):
        ax.text(i, v + 0.02, f"{v:.2f}", ha="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_threshold(signal: SignalResult, path: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    xs = [p.threshold for p in signal.points]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(xs, [p.kept_answerable for p in signal.points], label="answerable kept")
    ax.plot(xs, [p.rejected_unanswerable for p in signal.points], label="unanswerable refused")
    ax.plot(xs, [p.refusal_precision for p in signal.points], label="refusal precision", linestyle="--")
    if signal.chosen:
        ax.axvline(signal.chosen.threshold, color="grey", linewidth=0.8)
    ax.set_xlabel(signal.name)
    ax.set_ylim(0, 1.05)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def pyplot():
    """matplotlib.pyplot with the file-only backend, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt
