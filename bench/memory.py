"""Long-conversation memory: evidence recall of history selection, and its latency at 700 turns.

    python bench/memory.py [--budget 2000] [--turns 700]

1. Evidence recall on `evals/memory/conversations.json` (synthetic, written by
   `evals/memory/make_set.py`; NOT LoCoMo): for each question, the history is every turn said
   before it; `token_budget:<budget>` chooses what to send (real e5 embedder, BM25, token counts of
   the e5 tokenizer), and an evidence message counts as kept when it is sent. Printed per split
   (tune / holdout) for the pair scoring of before (no dates), each change alone, and both: evidence
   recall, multi-hop questions with all evidence kept, and recall per kind of question.
2. Selection latency per question with `--turns` turns of history (the set's turns, repeated and
   re-dated to reach the count), each question asked of a restored session (a new policy over a
   memory restored from the store, as a restarted server or another process has them): p50 / p95
   with every message's vector, token count and BM25 term counts stored (now), against the same
   with the term counts tokenised again (before, on the server path), with token counts recounted
   as well (before that), and the first call with nothing stored (every message embedded).
   A policy that has already seen the history (a live session) is timed too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.chat.lexical import MessageAnalyzer  # noqa: E402
from docubot.chat.memory import MessageFeatures, MessageMemory  # noqa: E402
from docubot.chat.policies import ConversationState, FusedMessageScorer, TokenBudgetPolicy  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.llm import Message  # noqa: E402

SET = ROOT / "evals" / "memory" / "conversations.json"
VARIANTS = {
    "pairs, no dates (before)": (False, False),
    "per message, no dates": (True, False),
    "pairs, dates": (False, True),
    "per message + dates (now)": (True, True),
}


class CachedEmbedder:
    """The real e5 embedder, remembering document vectors by text (the bench embeds each text once)."""

    def __init__(self, inner: E5Embedder, saved: Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.vectors: dict[str, np.ndarray] = {}
        self.saved = saved
        if saved is not None and saved.exists():
            stored = json.loads(saved.read_text())
            self.vectors = {t: np.asarray(v, dtype=np.float32) for t, v in stored.items()}

    def save(self) -> None:
        if self.saved is not None:
            self.saved.write_text(json.dumps({t: v.tolist() for t, v in self.vectors.items()}))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            self.vectors.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return np.array([self.vectors[t] for t in texts])


@dataclass
class Score:
    evidence: int = 0
    kept: int = 0
    multi: int = 0
    multi_all: int = 0


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _state(conversation: dict, upto: float | None, memory: MessageMemory) -> ConversationState:
    turns = [t for t in conversation["turns"] if upto is None or _epoch(t["at"]) < upto]
    messages = [
        Message(role, t[key]) for t in turns for role, key in (("user", "user"), ("assistant", "assistant"))
    ]
    return ConversationState(messages, times=[_epoch(t["at"]) for t in turns], memory=memory)


def recall(
    data: dict,
    embedder: E5Embedder,
    cached: CachedEmbedder,
    budget: int,
    variants: dict[str, tuple[bool, bool]],
) -> None:
    analyzer = MessageAnalyzer("en")
    print(f"Evidence recall at token_budget:{budget} (synthetic set, not LoCoMo)")
    print(
        f"{'variant':28s} {'split':8s} {'recall':>7s} {'multi all':>10s} {'single':>7s} {'multi':>7s} {'date':>7s}"
    )
    for label, (per_message, dated) in variants.items():
        by_split: dict[str, Score] = {}
        by_kind: dict[tuple[str, str], Score] = {}
        for conversation in data["conversations"]:
            memory = MessageMemory()
            scorer = FusedMessageScorer(
                cached.embed_documents, embedder.embed_query, analyzer, cached.name, use_dates=dated
            )
            policy = TokenBudgetPolicy(
                scorer, embedder.count_tokens, budget=budget, tokenizer=embedder.name, per_message=per_message
            )
            for question in conversation["questions"]:
                asked = _epoch(question["asked_at"])
                state = _state(conversation, asked, memory)
                state.now = asked if dated else None
                sent = [
                    m.content for m in policy.select(state, question["question"]).messages if m.role == "user"
                ]
                wanted = [conversation["turns"][e["turn"] - 1]["user"] for e in question["evidence"]]
                kept = sum(any(s.endswith(w) for s in sent) for w in wanted)
                for score in (
                    by_split.setdefault(conversation["split"], Score()),
                    by_kind.setdefault((conversation["split"], question["kind"]), Score()),
                ):
                    score.evidence += len(wanted)
                    score.kept += kept
                    if question["kind"] == "multi":
                        score.multi += 1
                        score.multi_all += kept == len(wanted)
        for split, score in by_split.items():
            kinds = [by_kind[(split, k)] for k in ("single", "multi", "date")]
            print(
                f"{label:28s} {split:8s} {score.kept / score.evidence:7.3f} "
                f"{score.multi_all / score.multi:10.3f} "
                + " ".join(f"{k.kept / k.evidence:7.3f}" for k in kinds)
            )


def long_history(data: dict, turns: int) -> tuple[list[Message], list[float]]:
    """`turns` turns from the set's conversations, one after another, re-dated a day apart per session."""
    messages: list[Message] = []
    times: list[float] = []
    moment = datetime(2025, 1, 1)
    while len(times) < turns:
        for conversation in data["conversations"]:
            for t in conversation["turns"]:
                if len(times) == turns:
                    break
                messages += [Message("user", t["user"]), Message("assistant", t["assistant"])]
                moment += timedelta(minutes=3)
                times.append(moment.timestamp())
            moment += timedelta(days=1)
    return messages, times


def latency(
    data: dict, embedder: E5Embedder, cached: CachedEmbedder, budget: int, turns: int, first_call: bool
) -> None:
    messages, times = long_history(data, turns)
    questions = [q["question"] for c in data["conversations"] for q in c["questions"]]
    now = times[-1] + 86400
    analyzer = MessageAnalyzer("en")

    def policy(embed: object) -> TokenBudgetPolicy:
        scorer = FusedMessageScorer(embed, embedder.embed_query, analyzer, embedder.name)  # type: ignore[arg-type]
        return TokenBudgetPolicy(scorer, embedder.count_tokens, budget=budget, tokenizer=embedder.name)

    warm = MessageMemory()
    warming = policy(cached.embed_documents)
    history = ConversationState(messages, times=times, now=now, memory=warm)
    warming.select(history, "warm up")
    warming.remember(history)  # every message's features, as a session stores them after each turn

    def restored(with_tokens: bool, with_terms: bool) -> MessageMemory:
        memory = MessageMemory()
        for p, f in warm.entries.items():
            features = MessageFeatures(
                0,
                f.vector,
                f.embedding_model,
                f.tokens if with_tokens else None,
                f.tokenizer,
                f.terms if with_terms else None,
                f.analyzer,
            )
            memory.restore(p, messages[p].content, features)
        return memory

    rows = {}
    for label, with_tokens, with_terms in (
        ("restored: all features stored (now)", True, True),
        ("restored: terms tokenised (before)", True, False),
        ("restored: terms and tokens recomputed", False, False),
    ):
        timings = []
        for question in questions:
            state = ConversationState(messages, times=times, now=now, memory=restored(with_tokens, with_terms))
            chosen = policy(cached.embed_documents)  # a new Conversation's policy, as on the server
            start = time.perf_counter()
            chosen.select(state, question)
            timings.append((time.perf_counter() - start) * 1000)
        rows[label] = timings
    live = []
    for question in questions:
        start = time.perf_counter()
        warming.select(history, question)
        live.append((time.perf_counter() - start) * 1000)
    rows["live: a policy that saw the history"] = live
    base = statistics.quantiles(rows["restored: terms tokenised (before)"], n=20)[18]
    print(
        f"\nSelection latency per question, {turns} turns ({len(messages)} messages), {len(questions)} questions"
    )
    for label, timings in rows.items():
        p50, p95 = statistics.median(timings), statistics.quantiles(timings, n=20)[18]
        print(f"  {label:40s} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  (p95 x{p95 / base:.2f})")
    if not first_call:
        return
    start = time.perf_counter()
    policy(embedder.embed_documents).select(
        ConversationState(messages, times=times, now=now, memory=MessageMemory()), questions[0]
    )
    print(f"  {'nothing stored: first call':40s} {time.perf_counter() - start:7.1f} s (embeds every message)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=700)
    parser.add_argument("--skip-first-call", action="store_true", help="do not time embedding everything")
    parser.add_argument("--recall-only", action="store_true")
    parser.add_argument("--variants", nargs="*", help="only these variants (their names' first words)")
    parser.add_argument(
        "--vectors", type=Path, help="remember document vectors in this JSON file between runs"
    )
    parser.add_argument(
        "--threads", type=int, help="CPU threads of the embedder (DOCUBOT_THREADS; default: all cores)"
    )
    args = parser.parse_args()
    data = json.loads(SET.read_text())
    embedder = E5Embedder(args.threads)
    cached = CachedEmbedder(embedder, args.vectors)
    variants = {k: v for k, v in VARIANTS.items() if not args.variants or k.startswith(tuple(args.variants))}
    recall(data, embedder, cached, args.budget, variants)
    cached.save()
    if not args.recall_only:
        latency(data, embedder, cached, args.budget, args.turns, not args.skip_first_call)


if __name__ == "__main__":
    main()
