"""Sections → chunks that each fit the embedding model's window.

Every chunk is one section (or a piece of one), prefixed with its `[Page > Section > Subsection]`
breadcrumb. A section too long for one chunk is cut between blocks; a block too long is cut between
sentences (prose), rows (tables, repeating the header) or lines (code, re-fenced). Consecutive
pieces of the same section share an overlap of trailing sentences; nothing overlaps across headings.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from docubot.ingest.parse import Block, Page, Section

CHUNKER_VERSION = "1"
TokenCounter = Callable[[str], int]

_SENTENCE_END = re.compile(r"(?<=[.!?…:;])\s+(?=\S)")
_FENCE_OPEN = re.compile(r"^(\s{0,3})(`{3,}|~{3,})")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-{1,}")


@dataclass(frozen=True)
class ChunkLimits:
    """Sizes in model tokens: the target per chunk, the overlap, and the hard cap."""

    target: int = 300
    overlap: int = 60
    hard_cap: int = 500

    def __post_init__(self) -> None:
        if not 0 < self.target <= self.hard_cap:
            raise ValueError("chunk target must be positive and at most the hard cap")
        if self.overlap >= self.target // 2:
            raise ValueError("chunk overlap must be under half the chunk target")


@dataclass(frozen=True)
class Chunk:
    """A piece of a page ready to embed: `text` includes the breadcrumb."""

    id: str
    text: str
    url: str
    page_title: str
    section_title: str
    section_path: str
    version: str
    date: str
    source_path: str
    chunk_index: int
    content_hash: str
    chunker_version: str = CHUNKER_VERSION
    latest: bool = True
    """False for an archived older version of a page whose url has a newer one."""

    def metadata(self) -> dict[str, object]:
        """Everything but the id and the text, as stored beside the vector."""
        return {
            "url": self.url,
            "page_title": self.page_title,
            "section_title": self.section_title,
            "section_path": self.section_path,
            "version": self.version,
            "date": self.date,
            "source_path": self.source_path,
            "chunk_index": self.chunk_index,
            "content_hash": self.content_hash,
            "chunker_version": self.chunker_version,
            "latest": self.latest,
        }


def slugify(text: str) -> str:
    """Lowercase ASCII words joined by '-': 'Restablir la contrasenya' → 'restablir-la-contrasenya'."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_page(page: Page, count: TokenCounter, limits: ChunkLimits, page_key: str) -> list[Chunk]:
    """All chunks of a page. `page_key` is the id prefix (the url slug, version-qualified if needed)."""
    chunks: list[Chunk] = []
    used_slugs: set[str] = set()
    for section in page.sections:
        slug = _unique(slugify(" ".join(section.path)) or "intro", used_slugs)
        breadcrumb = "[" + " > ".join((page.title, *section.path)) + "]"
        for index, body in enumerate(_section_bodies(section, breadcrumb, count, limits)):
            text = f"{breadcrumb}\n{body}"
            chunks.append(
                Chunk(
                    id=f"{page_key}--{slug}--{index:02d}",
                    text=text,
                    url=page.meta.url,
                    page_title=page.title,
                    section_title=section.path[-1] if section.path else page.title,
                    section_path=" > ".join((page.title, *section.path)),
                    version=page.meta.version,
                    date=page.meta.date,
                    source_path=page.meta.source_path,
                    chunk_index=index,
                    content_hash=content_hash(text),
                )
            )
    return chunks


def _unique(slug: str, used: set[str]) -> str:
    """`slug`, or `slug-2`, `slug-3`… whichever is still free; remembered as used."""
    candidate, n = slug, 1
    while candidate in used:
        n += 1
        candidate = f"{slug}-{n}"
    used.add(candidate)
    return candidate


def _section_bodies(section: Section, breadcrumb: str, count: TokenCounter, limits: ChunkLimits) -> list[str]:
    """The section's text split into bodies that fit beside the breadcrumb."""
    budget = limits.target - count(breadcrumb)
    cap = limits.hard_cap - count(breadcrumb)
    if budget < 32:
        raise ValueError(f"heading path too long to leave room for text: {breadcrumb[:120]}")
    piece_budget = budget - limits.overlap
    units = [piece for block in section.blocks for piece in _fit_block(block, count, budget, piece_budget)]
    bodies = _pack(units, count, budget, limits.overlap)
    return [part for body in bodies for part in _enforce_cap(body, count, cap)]


def _pack(units: list[Block], count: TokenCounter, budget: int, overlap: int) -> list[str]:
    """Greedy packing of blocks into bodies; each new body starts with the previous one's tail."""
    bodies: list[list[str]] = [[]]
    used = 0
    previous_prose = ""
    for unit in units:
        size = count(unit.text)
        if bodies[-1] and used + size > budget:
            carry = _tail_sentences(previous_prose, count, overlap)
            carry_size = count(carry) if carry else 0
            if carry and carry_size + size <= budget:
                bodies.append([carry])
                used = carry_size
            else:
                bodies.append([])
                used = 0
        bodies[-1].append(unit.text)
        used += size
        previous_prose = unit.text if unit.kind in ("paragraph", "list", "quote") else ""
    return ["\n\n".join(parts) for parts in bodies if parts]


def _fit_block(block: Block, count: TokenCounter, budget: int, piece_budget: int) -> Iterator[Block]:
    """The block itself when it fits the budget, else pieces that do. Prose pieces get at most
    `piece_budget` tokens, leaving room for the overlap carried into the next chunk."""
    if count(block.text) <= budget:
        yield block
    elif block.kind == "code":
        yield from (Block("code", t) for t in _split_code(block.text, count, budget))
    elif block.kind == "table":
        yield from (Block("table", t) for t in _split_table(block.text, count, budget))
    else:
        yield from (Block(block.kind, t) for t in _split_prose(block.text, count, piece_budget))


def _split_prose(text: str, count: TokenCounter, budget: int) -> list[str]:
    """Sentences (or list items) grouped up to the budget; an overlong sentence is cut by words."""
    pieces = [p for line in text.split("\n") for p in _SENTENCE_END.split(line) if p.strip()]
    return _group(pieces, count, budget, " ", split_further=_split_words)


def _split_words(text: str, count: TokenCounter, budget: int) -> list[str]:
    """Words grouped up to the budget; a single word over it (a URL, base64) is cut by characters."""
    words = [piece for word in text.split() for piece in _split_chars(word, count, budget)]
    out: list[str] = []
    current: list[str] = []
    for word in words:
        if current and count(" ".join([*current, word])) > budget:
            out.append(" ".join(current))
            current = []
        current.append(word)
    if current:
        out.append(" ".join(current))
    return out


def _split_chars(word: str, count: TokenCounter, budget: int) -> list[str]:
    if count(word) <= budget:
        return [word]
    pieces = []
    while word:
        size = len(word)
        while size > 1 and count(word[:size]) > budget:
            size = max(1, size * budget // count(word[:size]) - 1)
        pieces.append(word[:size])
        word = word[size:]
    return pieces


def _split_table(text: str, count: TokenCounter, budget: int) -> list[str]:
    """Rows grouped up to the budget, each group under the table's header and delimiter rows."""
    rows = text.split("\n")
    head_len = 2 if len(rows) > 1 and _TABLE_DELIMITER.match(rows[1]) else 1
    header = "\n".join(rows[:head_len])
    groups = _group(rows[head_len:], count, budget - count(header), "\n", split_further=_split_words)
    return [f"{header}\n{group}" for group in groups]


def _split_code(text: str, count: TokenCounter, budget: int) -> list[str]:
    """Lines grouped up to the budget, each group wrapped again in the original fence."""
    lines = text.split("\n")
    opener = _FENCE_OPEN.match(lines[0])
    if not opener:
        return _group(lines, count, budget, "\n", split_further=_split_words)
    fence_open, fence_close = lines[0], opener.group(1) + opener.group(2)
    body = lines[1:-1] if lines[-1].strip().startswith(opener.group(2)) else lines[1:]
    inner = budget - count(f"{fence_open}\n\n{fence_close}")
    groups = _group(body, count, inner, "\n", split_further=_split_words)
    return [f"{fence_open}\n{group}\n{fence_close}" for group in groups]


def _group(
    pieces: list[str],
    count: TokenCounter,
    budget: int,
    joiner: str,
    split_further: Callable[[str, TokenCounter, int], list[str]],
) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if count(piece) > budget:
            if current:
                out.append(joiner.join(current))
                current = []
            out.extend(split_further(piece, count, budget))
            continue
        if current and count(joiner.join([*current, piece])) > budget:
            out.append(joiner.join(current))
            current = []
        current.append(piece)
    if current:
        out.append(joiner.join(current))
    return out


def _tail_sentences(text: str, count: TokenCounter, overlap: int) -> str:
    """The last sentences of `text` that fit in `overlap` tokens (empty when none fits)."""
    if overlap <= 0 or not text:
        return ""
    sentences = [s for s in _SENTENCE_END.split(text.replace("\n", " ")) if s.strip()]
    tail: list[str] = []
    for sentence in reversed(sentences):
        if count(" ".join([sentence, *tail])) > overlap:
            break
        tail.insert(0, sentence)
    return " ".join(tail)


def _enforce_cap(body: str, count: TokenCounter, cap: int) -> list[str]:
    """Guarantee the hard cap: token counts are not additive, so re-check the packed body."""
    if count(body) <= cap:
        return [body]
    return _split_words(body, count, cap)
