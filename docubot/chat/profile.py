"""The user profile: facts about the user gathered as the conversation goes, kept deterministically.

Facts are extracted by rules, not by the model (the small local model drops names from summaries),
appended with a timestamp; for each kind of fact the latest wins. The profile is rendered into the
system prompt, so no history policy or summary can lose it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from docubot.text import guess_language

_PLANS = ("Starter", "Business", "Enterprise")
_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "nom",
        re.compile(
            r"\b(?:em dic|el meu nom és|me llamo|my name is|sóc (?:en|na|l'))\s*([A-ZÀ-Ý][\wà-ÿ'-]+)", re.I
        ),
    ),
    (
        "empresa",
        re.compile(
            r"\b(?:treballo a|treballo per|trabajo en|i work (?:at|for))\s+"
            r"([A-ZÀ-Ý][\w&-]*(?: [A-ZÀ-Ý][\w&-]*)*)"
        ),
    ),
    ("projecte", re.compile(r"\b(?:projecte|proyecto|project)\s+[«\"']?([A-ZÀ-Ý][\wà-ÿ-]+)")),
    ("projecte", re.compile(r"[«\"]([^»\"]{2,40})[»\"]")),
]
_PLAN = re.compile(
    r"\b(?:pla|plan)\s+(" + "|".join(_PLANS) + r")\b|\b(" + "|".join(_PLANS) + r")\s+plan\b", re.I
)
_OWNERSHIP = re.compile(
    r"\b(tinc|tenim|faig servir|fem servir|uso|usamos|tengo|tenemos|"
    r"we use|we have|i have|i'm on|estem|estic)\b",
    re.I,
)
LABELS = {"nom": "nom", "empresa": "empresa", "pla": "pla", "projecte": "projectes", "idioma": "idioma"}


@dataclass(frozen=True)
class Fact:
    kind: str
    value: str
    at: float


@dataclass
class UserProfile:
    """Append-only facts; `current()` gives the latest value per kind (projects accumulate)."""

    facts: list[Fact] = field(default_factory=list)

    def observe(self, text: str, now: float | None = None) -> list[Fact]:
        """Extract facts from a user message and append them; returns the new ones."""
        at = time.time() if now is None else now
        found = [Fact(kind, m.group(1).strip(), at) for kind, rule in _RULES for m in rule.finditer(text)]
        plan = _PLAN.search(text)
        if plan and _OWNERSHIP.search(text):
            found.append(Fact("pla", (plan.group(1) or plan.group(2)).capitalize(), at))
        if language := guess_language(text):
            found.append(Fact("idioma", language, at))
        new = [f for f in found if self.current().get(f.kind) != f.value and f.value not in self.projects()]
        self.facts.extend(new)
        return new

    def current(self) -> dict[str, str]:
        latest: dict[str, str] = {}
        for fact in self.facts:
            latest[fact.kind] = fact.value
        return latest

    def projects(self) -> list[str]:
        return list(dict.fromkeys(f.value for f in self.facts if f.kind == "projecte"))

    def render(self) -> str:
        """The profile as a line for the system prompt ('' when nothing is known)."""
        current = self.current()
        parts = [f"{LABELS[k]}: {v}" for k, v in current.items() if k not in ("projecte", "idioma")]
        if self.projects():
            parts.append(f"projectes: {', '.join(self.projects())}")
        if not parts:
            return ""
        return "Perfil de l'usuari (dades que ha dit ell mateix): " + "; ".join(parts) + "."
