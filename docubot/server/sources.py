"""Sources as the web page shows them: a link to the published docs, or the section's own text.

A source's `href` is where its page is published, with the section's heading anchor:
- a page whose metadata line gives an absolute url (`<!-- url: https://docs.example.cat/… -->`)
  links there (the per-page override);
- otherwise, with `DOCUBOT_DOCS_BASE_URL`, the base joined with the page's url;
- otherwise none: the page offers the section's text instead (`section_text`, read back from
  its chunks).
The anchor is the heading's slug as Python-Markdown and MkDocs make it (`#restablir-la-contrasenya`);
an intro (a source naming only the page) gets none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from docubot.server.rendering import render_markdown
from docubot.store import VectorStore

SECTION_SEPARATOR = " > "
_ABSOLUTE = re.compile(r"^https?://", re.IGNORECASE)


def heading_anchor(title: str) -> str:
    """The heading's id in Python-Markdown's `toc` (MkDocs): ASCII, lowercase, hyphens."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    words = re.sub(r"[^\w\s-]", "", folded).strip().lower()
    return re.sub(r"[-\s]+", "-", words)


def source_href(url: str, section: str, base_url: str | None) -> str | None:
    """Where the source is published (see the module doc); None when that is unknown."""
    if _ABSOLUTE.match(url):
        page = url
    elif base_url:
        page = f"{base_url.rstrip('/')}/{url.lstrip('/')}"
    else:
        return None
    headings = section.split(SECTION_SEPARATOR)
    if len(headings) < 2 or "#" in page:
        return page
    return f"{page}#{heading_anchor(headings[-1])}"


def for_page(answer: dict[str, Any], base_url: str | None) -> dict[str, Any]:
    """An answer as the page needs it: `html` (the rendered `resposta`) and each source's `href`."""
    sources = [
        {**s, "href": source_href(s["url"], s["section"], base_url)} for s in answer.get("sources", [])
    ]
    return {**answer, "html": render_markdown(answer.get("resposta", "")), "sources": sources}


SectionKey = tuple[str, str, str]
"""(url, section path, version): one indexed section."""


def section_chunks(metadata: Mapping[str, Mapping[str, Any]]) -> dict[SectionKey, list[str]]:
    """Every section's chunk ids, in order, from the store's id → metadata map."""
    pieces: dict[SectionKey, list[tuple[int, str]]] = {}
    for chunk_id, meta in metadata.items():
        key = (str(meta["url"]), str(meta["section_path"]), str(meta["version"]))
        pieces.setdefault(key, []).append((int(meta["chunk_index"]), chunk_id))
    return {key: [chunk_id for _, chunk_id in sorted(found)] for key, found in pieces.items()}


def section_text(store: VectorStore, chunk_ids: Sequence[str]) -> str | None:
    """The markdown of one section from its chunks in order (breadcrumbs and the overlap between
    pieces removed); None when none of them is stored any more."""
    records = {r.id: r for r in store.get(chunk_ids)}
    bodies = [_body(records[i].text) for i in chunk_ids if i in records]
    if not bodies:
        return None
    text = bodies[0]
    for previous, body in pairwise(bodies):
        text += "\n\n" + _without_overlap(previous, body)
    return text


def _body(chunk_text: str) -> str:
    """A chunk's text without its first line, the `[Page > Section]` breadcrumb."""
    return chunk_text.partition("\n")[2].strip()


def _without_overlap(previous: str, body: str) -> str:
    """`body` without the sentences it repeats from the end of `previous` (the chunker carries them
    over as the body's first paragraph, newlines turned to spaces)."""
    head, sep, rest = body.partition("\n\n")
    if sep and head.strip() and " ".join(previous.split()).endswith(" ".join(head.split())):
        return rest
    return body
