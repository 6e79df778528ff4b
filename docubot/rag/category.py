"""`categoria` from the cited page, not from the model's guess.

A chunk whose metadata carries `categoria` (or `category`) in the configured list gets that one.
Otherwise a rule reads the page's url, title and section path: each configured category has a few
word stems that name it (the defaults below; any other category is recognised by its own name),
and the category named earliest in the url (then in the titles) wins. Nothing matched → `altres`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from docubot.text import fold

CATEGORY_STEMS = {
    "compte": ("compte", "cuenta", "account", "perfil", "membre", "miembro", "member", "primers-passos"),
    "seguretat": ("seguretat", "segur", "security", "contrasenya", "password", "autenticacio-en-dos"),
    "facturacio": ("factura", "billing", "plans", "pagament", "preu", "price", "subscripc"),
    "tasques": ("tasque", "tasca", "task", "tarea", "gestio-de-tasques"),
    "informes": ("informe", "report", "exportacio"),
    "integracions": ("integraci", "slack", "calendari", "calendar"),
    "api": ("api", "webhook", "endpoint", "token"),
}


def page_category(metadata: Mapping[str, Any], categories: Sequence[str]) -> str:
    """The category of the page a chunk comes from."""
    declared = fold(str(metadata.get("categoria") or metadata.get("category") or ""))
    for category in categories:
        if declared and fold(category) == declared:
            return category
    for text in (str(metadata.get("url", "")), f"{metadata.get('section_path', '')}"):
        found = _earliest(fold(text), categories)
        if found:
            return found
    return "altres" if "altres" in categories else categories[-1]


def _earliest(text: str, categories: Sequence[str]) -> str | None:
    best: tuple[int, str] | None = None
    for category in categories:
        if category == "altres":
            continue
        for stem in CATEGORY_STEMS.get(category, (fold(category)[:6],)):
            match = re.search(rf"(?<![a-z]){re.escape(stem)}", text)
            if match and (best is None or match.start() < best[0]):
                best = (match.start(), category)
    return best[1] if best else None
