"""A sentence giving each plan its own amount, cut to the plans a question asks about.

"Amb el pagament anual, el pla Starter queda a 4,80 € per usuari i mes, el Business a 9,60 € i
l'Enterprise a 17,60 €" answers "si paguem l'starter anual, a quant ens surt cada usuari?" with
two prices nobody asked for, which a reader takes for the answer as often as the right one. Cut,
it says "Amb el pagament anual, el pla Starter queda a 4,80 € per usuari i mes." A plan the
question moves away from ("si passem de Starter a Business…") is not one it asks about.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from docubot.rag.numbers import numbers
from docubot.text import fold

_CLAUSE_BREAK = r"(?:,\s+|;\s+|\s+(?:i|y|and)\s+)"
"""What separates one plan's clause from the next ("…i mes, el Business…", "… i l'Enterprise…")."""
_ARTICLE = r"(?:(?:el|la|the)\s+|l['’])?(?:(?:pla|plan)\s+)?\**"
"""What may stand before a plan's name in its clause ("el pla ", "l'", "**")."""
_FROM_TO = (
    r"\b(?:de|del|desde|from)\s+(?:el\s+|la\s+|l['’]|the\s+)?(?:pla\s+|plan\s+)?{plan}\b"
    r"(?=.*?\b(?:a|al|to)\b)"
)
"""A plan the question moves away from (folded): "de Starter a…", "del business al…", "from X to"."""


def plans_asked(question: str, plans: Collection[str]) -> set[str]:
    """The plans (folded) `question` names, less one it moves away from ("de Starter a Business")
    when it names another."""
    asked = fold(question)
    named = {fold(p) for p in plans if re.search(rf"\b{re.escape(fold(p))}\b", asked)}
    left = {p for p in named if re.search(_FROM_TO.format(plan=re.escape(p)), asked)}
    return (named - left) or named


def cut_to_plans(sentence: str, asked: Collection[str], plans: Collection[str]) -> str:
    """`sentence` with only the clauses of the `asked` plans (folded), when it gives two or more
    of `plans` each its own amount and the question asks about some of them, not all; else as it is."""
    mentions = _mentions(sentence, plans)
    named = {plan for _, _, plan in mentions}
    if len(named) < 2 or not named & set(asked) or named <= set(asked):
        return sentence
    body = sentence.rstrip()
    end = body.rstrip(".")
    ends = [brk for brk, _, _ in mentions[1:]] + [len(end)]
    clauses = [(plan, sentence[begin:stop]) for (_, begin, plan), stop in zip(mentions, ends, strict=True)]
    if not all(numbers(text) for _, text in clauses):
        return sentence  # plans listed ("als plans Business i Enterprise"), not each given an amount
    lead = sentence[: mentions[0][1]]
    said = ", ".join(text for plan, text in clauses if plan in asked)
    if not lead:
        said = said[:1].upper() + said[1:]
    return f"{lead}{said}{body[len(end) :]}"


def _mentions(sentence: str, plans: Collection[str]) -> list[tuple[int, int, str]]:
    """Each plan mention that opens a clause: where its clause break begins, where the mention
    (with its article) begins, and the plan (folded)."""
    names = "|".join(re.escape(p) for p in sorted(plans, key=len, reverse=True))
    if not names:
        return []
    pattern = rf"(?:^|{_CLAUSE_BREAK})({_ARTICLE}({names}))\b"
    return [(m.start(), m.start(1), fold(m.group(2))) for m in re.finditer(pattern, sentence, re.IGNORECASE)]
