"""What a question asks, told by its words (folded text, Catalan, Spanish and English): whether
something can be done, whether it exists, and where a clause of time or condition sets the scene."""

from __future__ import annotations

import re

_CAN = (
    r"puc|podem|pots|pot|poden|es pot|es poden|hi ha (?:manera|forma)|es possible|permet"
    r"|can|could|is it possible|is there a way|puedo|podemos|puedes|puede|pueden|se puede|es posible"
)
_IS_THERE = (
    r"hi ha|teniu|podeu|existeix|funciona|accepta|admet|suporta|compatible|integracio|integra"
    r"|hay|teneis|podeis|existe|acepta|admite|soporta|integracion"
)
_RECOMMEND = r"recomanes|recomaneu|recomanaries|recomana|recomiendas|recomendais|recomienda|recommend"
"""Asking for a recommendation ("Em recomanes alguna sèrie…?"): whether the docs have one to give."""
ABILITY = re.compile(rf"\b(?:{_CAN})\b")
"""Whether something can be done ("puc…?", "can I…?", "¿se puede…?")."""
WHETHER = re.compile(rf"\b(?:{_CAN}|{_IS_THERE}|{_RECOMMEND})\b")
"""Whether something can be done, exists or is recommended ("hi ha…?", "teniu…?", "¿existe…?",
"em recomanes…?")."""
CONDITIONS = frozenset("si if quan when cuando mentre while".split())
"""Words opening a clause of condition or time."""
_SCENE_WORDS = CONDITIONS | frozenset("durant durante mientras abans antes despres despues".split())
SCENE = re.compile(rf"[?.!]|\b(?:{'|'.join(sorted(_SCENE_WORDS))})\b")
"""Where what a question asks for ends: its sentence's end, or a clause of time or condition that
sets the scene ("…tallar l'accés d'un treballador durant la baixa per maternitat…")."""
