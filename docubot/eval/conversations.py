"""Conversation evaluations on `conversations.jsonl` (format: evals/README.md).

`evaluate_rewrite`: retrieval of every labelled follow-up with the raw words, with DocuBot's rewrite
and with the gold standalone question; how often a question is (wrongly) left alone or rewritten.
`evaluate_memory`: per history policy, the share of the earlier turns a question depends on that
are still in what the policy sends.

In both, the history of a dialogue is its user turns, each followed by an assistant message that
restates the turn's gold standalone question (`Sobre: …`): the set has no gold answers, and a
placeholder keeps the history well-formed without inventing facts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from docubot.cache.answers import normalize_question
from docubot.chat.policies import ConversationState, HistoryPolicy
from docubot.chat.rewrite import needs_rewrite
from docubot.eval.metrics import mrr, recall_at
from docubot.eval.retrieval import gold_rank
from docubot.eval.sets import Dialogue
from docubot.llm import Message
from docubot.store import Hit
from docubot.text import DEFAULT_LANGUAGE, detect_language, tokenize

Search = Callable[[str, int], list[Hit]]
Rewriter = Callable[[str, list[Message]], str]
REWRITE_KS = (1, 3, 5)
MEMORY_POLICIES = (
    "full",
    "last_turns:1",
    "last_turns:3",
    "summary:4",
    "sliding_window:2",
    "sliding_window:4",
    "relevant",
    "token_budget:150",
    "token_budget:300",
)
"""The default `eval memory` policies. The set's histories are short (≈ 200 tokens after 7 turns), so
the token budgets are small enough to have to choose."""


def history_for(dialogue: Dialogue, upto: int) -> list[Message]:
    """The messages before turn `upto`: user words and a placeholder assistant reply."""
    messages: list[Message] = []
    for turn in dialogue.turns[:upto]:
        messages += [Message("user", turn.user), Message("assistant", f"Sobre: {turn.standalone}")]
    return messages


# -- rewrite ----------------------------------------------------------------------------------------


@dataclass
class RewriteOutcome:
    dialogue: str
    turn: int
    raw: str
    rewritten: str
    gold: str
    ranks: dict[str, int | None]
    """raw | docubot | gold → rank of the first gold section (None: not in the top 10)."""


@dataclass
class RewriteReport:
    outcomes: list[RewriteOutcome]
    standalone_skipped: list[bool]
    follow_ups_rewritten: list[bool]
    metrics: dict[str, float] = field(default_factory=dict)


def evaluate_rewrite(
    dialogues: Sequence[Dialogue],
    search: Search,
    rewrite: Rewriter,
    progress: Callable[[], None] | None = None,
) -> RewriteReport:
    outcomes: list[RewriteOutcome] = []
    skipped: list[bool] = []
    rewritten_flags: list[bool] = []
    previous: Dialogue | None = None
    for dialogue in dialogues:
        if previous is not None:  # a new topic after another conversation: must stand alone
            skipped.append(
                not needs_rewrite(dialogue.turns[0].user, history_for(previous, len(previous.turns)))
            )
        for index, turn in enumerate(dialogue.turns[1:], 1):
            history = history_for(dialogue, index)
            is_follow_up = normalize_question(turn.user) != normalize_question(turn.standalone)
            decided = needs_rewrite(turn.user, history)
            (rewritten_flags if is_follow_up else skipped).append(decided if is_follow_up else not decided)
            if not turn.gold:
                continue
            candidate = rewrite(turn.user, history) if decided else turn.user
            ranks = {
                name: gold_rank(search(question, 10), turn.gold)
                for name, question in (("raw", turn.user), ("docubot", candidate), ("gold", turn.standalone))
            }
            outcomes.append(RewriteOutcome(dialogue.id, index, turn.user, candidate, turn.standalone, ranks))
        previous = dialogue
        if progress:
            progress()
    report = RewriteReport(outcomes, skipped, rewritten_flags)
    for name in ("raw", "docubot", "gold"):
        found = [o.ranks[name] for o in outcomes]
        for k in REWRITE_KS:
            report.metrics[f"{name}.recall@{k}"] = round(recall_at(found, k), 4)
        report.metrics[f"{name}.mrr"] = round(mrr(found), 4)
    report.metrics["follow_ups"] = len(outcomes)
    report.metrics["skip_rate"] = round(sum(skipped) / len(skipped), 4) if skipped else 0.0
    report.metrics["rewrite_rate"] = (
        round(sum(rewritten_flags) / len(rewritten_flags), 4) if rewritten_flags else 0.0
    )
    return report


def rewrite_markdown(report: RewriteReport, title: str) -> str:
    m = report.metrics
    lines = [
        f"# {title}",
        "",
        f"{int(m['follow_ups'])} labelled follow-up turns.",
        "",
        "| question used for retrieval | recall@1 | recall@3 | recall@5 | MRR |",
        "|---|---|---|---|---|",
    ]
    for name, label in (("raw", "raw follow-up"), ("docubot", "DocuBot's rewrite"), ("gold", "gold rewrite")):
        lines.append(
            f"| {label} | {m[f'{name}.recall@1']:.3f} | {m[f'{name}.recall@3']:.3f} | "
            f"{m[f'{name}.recall@5']:.3f} | {m[f'{name}.mrr']:.3f} |"
        )
    lines += [
        "",
        f"Standalone questions left alone: {m['skip_rate']:.1%} of {len(report.standalone_skipped)}.",
        f"Follow-ups sent to the rewriter: {m['rewrite_rate']:.1%} of {len(report.follow_ups_rewritten)}.",
        "",
        "| dialogue | turn | raw | DocuBot's rewrite | rank raw / DocuBot / gold |",
        "|---|---|---|---|---|",
    ]
    for o in report.outcomes:
        ranks = " / ".join(str(o.ranks[n] or ">10") for n in ("raw", "docubot", "gold"))
        lines.append(f"| {o.dialogue} | {o.turn} | {o.raw} | {o.rewritten} | {ranks} |")
    return "\n".join(lines) + "\n"


# -- memory -----------------------------------------------------------------------------------------


@dataclass
class MemoryResult:
    policy: str
    dependencies: int
    kept_verbatim: int
    kept_in_summary: int

    @property
    def retention(self) -> float:
        return (self.kept_verbatim + self.kept_in_summary) / self.dependencies if self.dependencies else 1.0


def evaluate_memory(
    dialogues: Sequence[Dialogue],
    policies: dict[str, HistoryPolicy],
    progress: Callable[[], None] | None = None,
) -> list[MemoryResult]:
    """For every turn with dependencies, replay the dialogue under each policy and check each
    depended-on turn: its user message sent verbatim, or most of its content words (≥ 60 %) in the
    running summary."""
    results = []
    for name, policy in policies.items():
        result = MemoryResult(name, 0, 0, 0)
        for dialogue in dialogues:
            state = ConversationState([])
            for index, turn in enumerate(dialogue.turns):
                if index:
                    state.messages = history_for(dialogue, index)
                    selection = policy.select(state, turn.user)
                    sent = {m.content for m in selection.messages}
                    for dependency in turn.depends_on:
                        result.dependencies += 1
                        needed = dialogue.turns[dependency].user
                        if needed in sent:
                            result.kept_verbatim += 1
                        elif _covered(needed, selection.summary):
                            result.kept_in_summary += 1
        results.append(result)
        if progress:
            progress()
    return results


def memory_markdown(results: Sequence[MemoryResult], title: str) -> str:
    lines = [
        f"# {title}",
        "",
        "| policy | dependencies | kept verbatim | kept in the summary | retention |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.policy} | {r.dependencies} | {r.kept_verbatim} | {r.kept_in_summary} | {r.retention:.1%} |"
        )
    return "\n".join(lines) + "\n"


def _covered(text: str, summary: str) -> bool:
    """Most of the content words of `text` are in `summary` (both read in the summary's language)."""
    language = detect_language(summary, fallback=detect_language(text, DEFAULT_LANGUAGE))
    words = set(tokenize(text, language))
    return bool(words) and len(words & set(tokenize(summary, language))) / len(words) >= 0.6
