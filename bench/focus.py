"""Focused context without a model: `python bench/focus.py [--split tune|holdout|all]`.

For each answerable question of `evals/nubelia/answers.jsonl` (tune split by default: the holdout
is for final numbers only): retrieve with the default retriever over the sample docs, build the
fragments, focus them, and count the words of the documentation block and the gold facts (`facts`, as `docubot eval answers` judges
them) present in the full and in the focused context. Prints the totals and their ratio.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.eval.answers import load_answer_cases, normalise, states  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.rag.answer import DocuBot  # noqa: E402
from docubot.rag.focus import focus  # noqa: E402
from docubot.rag.prompt import documentation_block, fragments_from  # noqa: E402


def words(text: str) -> int:
    return len(text.split())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="tune", choices=["tune", "holdout", "all"])
    parser.add_argument("--home", type=Path, help="A data folder holding the sample docs (else ingested).")
    args = parser.parse_args()
    split = args.split
    cases = [
        c
        for c in load_answer_cases(ROOT / "evals" / "nubelia")
        if c.answerable and c.facts and (split == "all" or c.split == split)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=args.home or Path(tmp), llm="none", cache_enabled=False)
        embedder = E5Embedder()
        bot = DocuBot(settings, embedder=embedder, chat_model=None)
        if args.home is None:
            ingest(ROOT / "examples" / "docs_nubelia", settings, bot.store, embedder)
        count = words
        tokens = [0, 0]
        facts = [0, 0, 0]
        shown = [0, 0]
        for case in cases:
            result = bot.retriever.search(case.question)
            fragments = fragments_from(result.hits)
            focused = focus(
                case.question,
                fragments,
                lambda texts, vector=result.vector: embedder.embed_documents(texts) @ vector,
                count,
            )
            for i, block in enumerate(
                (documentation_block(fragments), documentation_block(focused.fragments))
            ):
                tokens[i] += count(block)
                facts[i + 1] += sum(states(normalise(block), fact) for fact in case.facts)
            facts[0] += len(case.facts)
            shown[0] += len(fragments)
            shown[1] += len(focused.fragments)
        bot.components.close()
    print(f"{len(cases)} answerable {split} questions, {facts[0]} gold facts")
    print(f"full:    {tokens[0]} documentation words, {shown[0]} fragments, {facts[1]} facts in the context")
    print(f"focused: {tokens[1]} documentation words, {shown[1]} fragments, {facts[2]} facts in the context")
    print(f"words ×{tokens[1] / tokens[0]:.2f}, facts kept {facts[2]}/{facts[1]}")


if __name__ == "__main__":
    main()
