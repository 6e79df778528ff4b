"""Answers' markdown as safe HTML for the web page, rendered on the server with markdown-it-py.

CommonMark plus tables. Raw HTML in the text is escaped (`html: False`), images are not rendered
(the page loads nothing from elsewhere), and a link survives only when it goes to http(s), a
relative path or an anchor (`#…`): any other scheme (`javascript:`, `data:`, `vbscript:`, `file:`,
`mailto:`…) is not a link: its markdown stays as plain text. Links open in a new tab without a referrer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
_ALLOWED_SCHEMES = {"http", "https"}


def allowed_link(url: str) -> bool:
    """http(s), relative or `#` links only (the url as markdown-it normalised it)."""
    scheme = _SCHEME.match(url.strip())
    return scheme is None or scheme.group(1).lower() in _ALLOWED_SCHEMES


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        return allowed_link(url)


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if not href.startswith("#"):
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer")
    return str(self.renderToken(tokens, idx, options, env))


def _parser() -> MarkdownIt:
    md = _SafeMarkdown("commonmark", {"html": False}).enable("table").disable("image")
    md.add_render_rule("link_open", _link_open)
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """`text` (an answer, a section of the docs) as HTML safe to insert in the page."""
    return str(_MD.render(text))
