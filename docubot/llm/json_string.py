"""The inside of a JSON string as a model writes it without a grammar, made what a grammar allows.

The embedded model writes a reply of one string (`{"resposta": "…"}`) with the reply's opening
already in its prompt and no grammar (`docubot/llm/local.py`). What a JSON grammar would have
forbidden is mended here: a control character is escaped, a backslash that begins no escape is
doubled, and the first quote not escaped ends the string, as the grammar would have ended it.
"""

from __future__ import annotations

import json

_ESCAPED = frozenset('"\\/bfnrtu')
"""What may follow a backslash in a JSON string."""


class StringContent:
    """Fed a model's text piece by piece, gives back each piece as the valid inside of a JSON
    string, up to the first quote that is not escaped (`closed` once it came)."""

    def __init__(self) -> None:
        self.closed = False
        self._backslash = False

    def feed(self, text: str) -> str:
        """`text` (the next piece the model wrote) as valid string content, up to its closing quote."""
        kept: list[str] = []
        for char in text:
            if self.closed:
                break
            if self._backslash:
                self._backslash = False
                kept.append("\\" + char if char in _ESCAPED else "\\\\" + _valid(char))
            elif char == "\\":
                self._backslash = True
            elif char == '"':
                self.closed = True
            else:
                kept.append(_valid(char))
        return "".join(kept)

    def rest(self) -> str:
        """What a backslash written last and never followed stands for (nothing otherwise)."""
        return "\\\\" if self._backslash else ""


def _valid(char: str) -> str:
    """`char` as it may stand in a JSON string: a control character escaped."""
    return json.dumps(char)[1:-1] if char < " " else char
