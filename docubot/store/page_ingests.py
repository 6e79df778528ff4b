"""When an ingest last changed each page: one `meta` row per page url (`page_ingested:<url>`), whatever
the vector store, since the deployment's database always has the `meta` table.

Written by `docubot ingest` (and `POST /v1/ingest`) for the pages whose chunks it added, changed or
deleted, and dropped with a page (`docubot pages remove`, or an ingest after which the url has no
chunk). A page ingested before this record existed has none until an ingest changes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, select

from docubot.db import Database
from docubot.store.sql import meta, set_meta

PREFIX = "page_ingested:"


@dataclass(frozen=True)
class PageIngest:
    at: float
    """Unix time of the ingest."""
    corpus_version: int
    """The corpus version that ingest made."""


def record_ingests(
    db: Database, changed: Iterable[str], removed: Iterable[str], corpus_version: int, at: float
) -> None:
    """Mark the `changed` urls as ingested now (at `corpus_version`) and forget the `removed` ones."""
    rows = {
        PREFIX + url: json.dumps({"at": at, "corpus_version": corpus_version}) for url in sorted(set(changed))
    }
    gone = [PREFIX + url for url in sorted(set(removed))]
    if not rows and not gone:
        return
    with db.write() as conn:
        if gone:
            conn.execute(delete(meta).where(meta.c.key.in_(gone)))
        if rows:
            set_meta(conn, rows)


def page_ingests(db: Database) -> dict[str, PageIngest]:
    """url → when an ingest last changed that page."""
    with db.read() as conn:
        rows = conn.execute(
            select(meta.c.key, meta.c.value).where(meta.c.key.startswith(PREFIX, autoescape=True))
        ).all()
    out: dict[str, PageIngest] = {}
    for key, value in rows:
        data = json.loads(value)
        out[key[len(PREFIX) :]] = PageIngest(float(data["at"]), int(data["corpus_version"]))
    return out
