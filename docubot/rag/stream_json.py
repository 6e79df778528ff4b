"""Streams the text of one string field (`resposta`) out of JSON that is still being generated."""

from __future__ import annotations

import json
import re

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class FieldStreamer:
    """Feed raw JSON deltas; get back the newly decoded characters of the field's string value."""

    def __init__(self, field: str = "resposta") -> None:
        self._opening = re.compile(r'"' + re.escape(field) + r'"\s*:\s*"')
        self._buffer = ""
        self._position: int | None = None
        self._done = False

    def feed(self, delta: str) -> str:
        self._buffer += delta
        if self._done:
            return ""
        if self._position is None:
            match = self._opening.search(self._buffer)
            if not match:
                return ""
            self._position = match.end()
        out: list[str] = []
        i = self._position
        while i < len(self._buffer):
            ch = self._buffer[i]
            if ch == '"':
                self._done = True
                i += 1
                break
            if ch != "\\":
                out.append(ch)
                i += 1
                continue
            if i + 1 >= len(self._buffer):
                break
            code = self._buffer[i + 1]
            if code == "u":
                if i + 6 > len(self._buffer):
                    break
                out.append(json.loads(f'"{self._buffer[i : i + 6]}"'))
                i += 6
            else:
                out.append(_ESCAPES.get(code, code))
                i += 2
        self._position = i
        return "".join(out)
