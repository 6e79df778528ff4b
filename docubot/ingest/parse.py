"""Markdown page → title, metadata and sections of blocks, with a real CommonMark parser.

A page is a wiki export: an optional first line `<!-- url: … | versio: … | actualitzat: … -->`,
then `# Title` and `##`/`###` sections. Headings are found by markdown-it-py, so a `#` inside a
code fence, `#tag` without a space, or a heading-like line inside a list are never headings.

A paragraph underlined with `---`/`===` is a setext heading in CommonMark, but docs converted from
AsciiDoc (`[NOTE]` then `----`) and authors who use `---` as a rule underline prose. Such an underline
under text that is clearly not a title (see `_is_prose`) is dropped and the text stays in the body,
under the real heading path; the page lists those lines in `text_headings`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

UNKNOWN = "desconeguda"
_META_LINE = re.compile(r"^\s*<!--(?P<body>.*?)-->\s*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_BLANK_RUNS = re.compile(r"\n{3,}")
_SETEXT_MARKUP = ("=", "-")
_PLACEHOLDER = re.compile(r"<[^<>\s]+>|\{[^{}\s]+\}")
_BLOCK_ATTRIBUTE = re.compile(r"^\[[^\]]*\]$")
_PROSE_ENDINGS = (".", ":", ",", ";")
MAX_SETEXT_WORDS = 10
MAX_SETEXT_CHARS = 80

_parser = MarkdownIt("commonmark").enable("table")


@dataclass(frozen=True)
class PageMeta:
    """Where a page comes from: its wiki url, version and last-update date."""

    url: str
    version: str
    date: str
    source_path: str


@dataclass(frozen=True)
class Block:
    """One markdown block kept as its source text: paragraph, list, fence, table, quote…"""

    kind: str
    text: str


@dataclass
class Section:
    """The blocks under one heading path, e.g. ("Seguretat", "Restablir la contrasenya")."""

    path: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Page:
    title: str
    meta: PageMeta
    sections: list[Section]
    has_meta_line: bool
    text_headings: list[str] = field(default_factory=list)
    """Setext-underlined lines read as body text, not headings (prose, AsciiDoc block attributes)."""


def parse_page(text: str, source_path: str) -> Page:
    """Parse one markdown page; `source_path` is its path relative to the docs folder."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    meta, has_meta_line, text = _split_meta_line(text, source_path)
    lines = text.split("\n")
    title: str | None = None
    sections = [Section(path=())]
    current_h2: str | None = None
    text_headings: list[str] = []
    tokens = _parser.parse(text)
    for i, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or token.map is None:
            continue
        if token.type == "heading_open" and token.markup in _SETEXT_MARKUP:
            heading = tokens[i + 1].content.strip()
            if _is_prose(heading):
                text_headings.append(heading)
                start, end = token.map
                block = _text_block("paragraph", lines[start : end - 1])  # without the underline
                if block is not None:
                    sections[-1].blocks.append(block)
                continue
        if token.type == "heading_open":
            heading = tokens[i + 1].content.strip()
            if token.tag == "h1" and title is None:
                title = heading
                continue
            if token.tag in ("h1", "h2"):
                current_h2 = heading
                sections.append(Section(path=(heading,)))
                continue
            if token.tag == "h3":
                sections.append(Section(path=(current_h2, heading) if current_h2 else (heading,)))
                continue
        block = _block(token, lines)
        if block is not None:
            sections[-1].blocks.append(block)
    page_title = title or _title_from_path(source_path)
    return Page(
        title=page_title,
        meta=meta,
        sections=[s for s in sections if s.blocks],
        has_meta_line=has_meta_line,
        text_headings=text_headings,
    )


def _is_prose(heading: str) -> bool:
    """Whether the text over a setext underline is clearly not a title: several lines, long, ending
    like a sentence, holding a placeholder (`<name>`, `{x}`), or an AsciiDoc block attribute (`[NOTE]`)."""
    return (
        "\n" in heading
        or len(heading.split()) > MAX_SETEXT_WORDS
        or len(heading) > MAX_SETEXT_CHARS
        or heading.endswith(_PROSE_ENDINGS)
        or bool(_PLACEHOLDER.search(heading))
        or bool(_BLOCK_ATTRIBUTE.match(heading))
    )


def _split_meta_line(text: str, source_path: str) -> tuple[PageMeta, bool, str]:
    first, _, rest = text.partition("\n")
    match = _META_LINE.match(first)
    fields = _meta_fields(match.group("body")) if match else {}
    if "url" not in fields:
        return PageMeta(_url_from_path(source_path), UNKNOWN, UNKNOWN, source_path), False, text
    meta = PageMeta(
        url=fields["url"],
        version=fields.get("versio", UNKNOWN) or UNKNOWN,
        date=fields.get("actualitzat", UNKNOWN) or UNKNOWN,
        source_path=source_path,
    )
    return meta, True, rest


def _meta_fields(body: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for part in body.split("|"):
        key, sep, value = part.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip()
    return fields


def _block(token: Token, lines: list[str]) -> Block | None:
    assert token.map is not None
    start, end = token.map
    if token.type in ("fence", "code_block"):
        raw = "\n".join(line.rstrip() for line in lines[start:end]).strip("\n")
        return Block("code", raw) if raw.strip() else None
    kind = {
        "paragraph_open": "paragraph",
        "bullet_list_open": "list",
        "ordered_list_open": "list",
        "table_open": "table",
        "blockquote_open": "quote",
        "heading_open": "heading",
    }.get(token.type, "other")
    return _text_block(kind, lines[start:end])


def _text_block(kind: str, lines: list[str]) -> Block | None:
    """A block of source lines without HTML comments, trailing spaces and blank runs (None if empty)."""
    raw = "\n".join(line.rstrip() for line in lines).strip("\n")
    uncommented = "\n".join(line.rstrip() for line in _HTML_COMMENT.sub("", raw).split("\n"))
    cleaned = _BLANK_RUNS.sub("\n\n", uncommented).strip()
    return Block(kind, cleaned) if cleaned else None


def _url_from_path(source_path: str) -> str:
    return str(PurePosixPath(source_path).with_suffix(""))


def _title_from_path(source_path: str) -> str:
    stem = PurePosixPath(source_path).stem
    return stem.replace("-", " ").replace("_", " ").strip().capitalize() or stem
