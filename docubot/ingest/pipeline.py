"""`docubot ingest`: docs folder → chunks → (only what changed) embeddings → store, safely.

read → clean + metadata → chunk → skip unchanged chunks → embed the rest in batches → in one
transaction: upsert, purge orphans, new corpus version → keyword index + cache invalidation.
Guard-rails refuse, unless forced, an empty folder, pages that fail to read, and a purge of more
than half of the stored chunks.
"""

from __future__ import annotations

import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from docubot.config import Settings
from docubot.db import Database
from docubot.embed import Embedder
from docubot.ingest.chunk import Chunk, ChunkLimits, chunk_page, slugify
from docubot.ingest.files import PageFile, PageReadError, SkippedPath, find_pages, read_page
from docubot.ingest.lock import LockHeld, ingest_lock
from docubot.ingest.parse import UNKNOWN, Page, PageMeta, parse_page
from docubot.rag.keyword import open_keyword_index
from docubot.rag.synonyms import FILE_NAME, Synonyms, SynonymsError, store_synonyms
from docubot.store import Record, VectorStore
from docubot.store.page_ingests import record_ingests
from docubot.text import DEFAULT_LANGUAGE, corpus_languages

ProgressCallback = Callable[[int, int], None]
"""Called as (embedded so far, total to embed)."""
CorpusListener = Callable[[int], None]
"""Called with the new corpus version after a run changed the store."""

OUTLIER_FACTOR = 4
OUTLIER_MIN_CHUNKS = 8
LANGUAGE_SAMPLE = 200
"""Chunks whose language tells which stemmer reads the synonyms file's words."""


class IngestError(Exception):
    """Ingestion cannot start or was refused; nothing was changed."""


class IngestBusy(IngestError):
    """Another ingest holds the data folder's lock."""


class IngestRefused(IngestError):
    """A guard-rail stopped the run; `--force` overrides it."""


@dataclass
class FileReport:
    path: str
    chunks: int = 0
    error: str | None = None


@dataclass
class IngestReport:
    files: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    embedded: int = 0
    corpus_version: int = 0
    warnings: list[str] = field(default_factory=list)
    per_file: list[FileReport] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)
    """Paths not read: links out of the docs folder, loops, unreadable folders."""
    dry_run: bool = False
    synonyms: int | None = None
    """The rules of the docs folder's synonyms file (None: it has none)."""

    def summary(self) -> dict[str, object]:
        """The `--json` contract of `docubot ingest`."""
        keys = ("files", "chunks", "added", "updated", "unchanged", "deleted", "embedded", "corpus_version")
        data: dict[str, object] = {k: getattr(self, k) for k in keys}
        data["warnings"] = list(self.warnings)
        data["dry_run"] = self.dry_run
        data["synonyms"] = self.synonyms
        data["per_file"] = [asdict(f) for f in self.per_file]
        data["skipped"] = [{"path": s.relative, "reason": s.reason} for s in self.skipped]
        return data


@dataclass
class _Plan:
    chunks: list[Chunk]
    new: list[Chunk]
    changed_text: list[Chunk]
    changed_metadata: list[Chunk]
    unchanged: int
    orphans: list[str]


def ingest(
    folder: Path,
    settings: Settings,
    store: VectorStore,
    embedder: Embedder,
    *,
    force: bool = False,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
    corpus_listeners: Sequence[CorpusListener] = (),
    db: Database | None = None,
) -> IngestReport:
    """Bring the store in line with `folder`. Raises IngestError subclasses when refused.
    `corpus_listeners` are called with the new corpus version when the store changed (the
    deployment's: `Components.corpus_listeners`, which evict stale cached answers). With `db` (the
    deployment's database), the pages this run changed are recorded as ingested now
    (`docubot pages` shows when)."""
    settings.home.mkdir(parents=True, exist_ok=True)
    try:
        with ingest_lock(settings):
            return _ingest_locked(
                folder, settings, store, embedder, force, dry_run, progress, corpus_listeners, db
            )
    except LockHeld as exc:
        raise IngestBusy(f"another ingest is running on {exc}; wait for it to finish") from exc


def _ingest_locked(
    folder: Path,
    settings: Settings,
    store: VectorStore,
    embedder: Embedder,
    force: bool,
    dry_run: bool,
    progress: ProgressCallback | None,
    corpus_listeners: Sequence[CorpusListener],
    db: Database | None,
) -> IngestReport:
    report = IngestReport(dry_run=dry_run)
    page_files, report.skipped = find_pages(folder)
    report.warnings += [f"{s.relative}: skipped, {s.reason}" for s in report.skipped]
    if not page_files and not force:
        raise IngestRefused(f"no markdown pages (*.md) under {folder}; refusing to empty the store (--force)")
    pages, failed_paths = _read_pages(page_files, settings.max_file_bytes, report)
    if failed_paths and not force:
        failures = "; ".join(f"{f.path}: {f.error}" for f in report.per_file if f.error)
        raise IngestRefused(
            f"{len(failed_paths)} page(s) could not be read: {failures}. Nothing was changed; fix them, "
            "or --force to ingest the rest (their stored chunks are kept)"
        )
    synonyms = _read_synonyms(folder)
    report.synonyms = None if synonyms is None else len(synonyms[1].rules)
    existing = store.all_metadata()
    kept = _kept_pages(existing, failed_paths)
    chunks = _chunk_pages(pages, kept, embedder, settings, report)
    if synonyms is not None:
        report.warnings += _short_stem_warnings(synonyms[1], chunks)
    plan = _plan(chunks, existing, failed_paths)
    report.files = len(page_files)
    report.chunks = len(chunks)
    report.added = len(plan.new)
    report.updated = len(plan.changed_text) + len(plan.changed_metadata)
    report.unchanged = plan.unchanged
    report.deleted = len(plan.orphans)
    if existing and len(plan.orphans) > settings.purge_guard_ratio * len(existing) and not force:
        raise IngestRefused(
            f"this run would delete {len(plan.orphans)} of the {len(existing)} stored chunks "
            f"(over {settings.purge_guard_ratio:.0%}); is this the right folder? --force to proceed"
        )
    if dry_run:
        report.corpus_version = store.corpus_version()
        report.embedded = len({c.content_hash for c in plan.new + plan.changed_text})
        return report
    store.check_embedding_model(embedder.name, embedder.dim)
    to_write = plan.new + plan.changed_text
    vectors, report.embedded = _vectors_for(to_write, store, embedder, settings.embed_batch_size, progress)
    if to_write or plan.changed_metadata or plan.orphans:
        report.corpus_version = store.apply(  # one transaction: chunks and version change together
            [Record(c.id, c.text, c.metadata(), vectors[c.content_hash]) for c in to_write],
            [Record(c.id, c.text, c.metadata()) for c in plan.changed_metadata],
            plan.orphans,
        )
        open_keyword_index(settings, store).rebuild(store)
        for listener in corpus_listeners:
            listener(report.corpus_version)
        if db is not None:
            changed, removed = _changed_pages(plan, existing, failed_paths)
            record_ingests(db, changed, removed, report.corpus_version, time.time())
    else:
        report.corpus_version = store.corpus_version()
    if synonyms is not None:
        _keep_synonyms(synonyms[0], db or getattr(store, "db", None), report)
    return report


def _read_synonyms(folder: Path) -> tuple[str, Synonyms] | None:
    """The docs folder's synonyms file, as text and as rules (None when it has none); IngestRefused
    when it cannot be read or holds a bad rule, before anything changes."""
    path = folder / FILE_NAME
    if not path.is_file():
        return None
    if not path.resolve().is_relative_to(folder.resolve()):
        raise IngestRefused(f"{FILE_NAME} links out of the docs folder; nothing was changed")
    try:
        text = path.read_text(encoding="utf-8")
        return text, Synonyms.parse(text, FILE_NAME)
    except (OSError, UnicodeDecodeError, SynonymsError) as exc:
        raise IngestRefused(f"the synonyms file cannot be used: {exc}. Nothing was changed") from exc


def _short_stem_warnings(synonyms: Synonyms, chunks: Sequence[Chunk]) -> list[str]:
    """A warning for each synonyms rule's word searched by a stem so short that questions about
    anything hold it (`Synonyms.short_stems`, in the majority language of the first chunks, found as
    the keyword index finds the one the search stems with: `corpus_languages`)."""
    _, language = corpus_languages([c.text for c in chunks[:LANGUAGE_SAMPLE]], fallback=DEFAULT_LANGUAGE)
    return [
        f'{FILE_NAME}: "{words}" is searched by its stem "{stem}", which questions about anything hold; '
        "write another form of it"
        for words, stem in synonyms.short_stems(language)
    ]


def _keep_synonyms(text: str, db: Database | None, report: IngestReport) -> None:
    """Keep the synonyms file's `text` in `db`, the deployment's database (a warning without one)."""
    if db is None:
        report.warnings.append(f"{FILE_NAME}: not kept, no database to keep it in")
    else:
        store_synonyms(db, text)


def _changed_pages(
    plan: _Plan, existing: dict[str, dict[str, object]], failed_paths: set[str]
) -> tuple[set[str], set[str]]:
    """The urls whose chunks this plan adds, changes or deletes and that still have chunks; the urls
    left with none."""
    present = {c.url for c in plan.chunks} | {
        str(m["url"]) for m in existing.values() if m.get("source_path") in failed_paths
    }
    touched = {c.url for c in plan.new + plan.changed_text + plan.changed_metadata}
    touched |= {str(existing[chunk_id]["url"]) for chunk_id in plan.orphans}
    return touched & present, touched - present


def _read_pages(
    page_files: Sequence[PageFile], max_bytes: int, report: IngestReport
) -> tuple[list[Page], set[str]]:
    pages: list[Page] = []
    failed: set[str] = set()
    for page_file in page_files:
        entry = FileReport(page_file.relative)
        report.per_file.append(entry)
        try:
            text = read_page(page_file, max_bytes)
        except PageReadError as exc:
            entry.error = str(exc)
            failed.add(page_file.relative)
            continue
        if not text.strip():
            report.warnings.append(f"{page_file.relative}: empty file, nothing to ingest")
            continue
        page = parse_page(text, page_file.relative)
        if page.text_headings:
            report.warnings.append(
                f"{page_file.relative}: {len(page.text_headings)} line(s) underlined with ---/=== read as "
                f"text, not headings (prose or [NOTE]-style), e.g. {page.text_headings[0][:60]!r}"
            )
        if not page.has_meta_line:
            report.warnings.append(
                f"{page_file.relative}: no wiki metadata line; url '{page.meta.url}', version {UNKNOWN}"
            )
        pages.append(page)
    return pages, failed


def _kept_pages(existing: dict[str, dict[str, object]], failed_paths: set[str]) -> list[PageMeta]:
    """The stored pages of files that could not be read this time: kept as they are."""
    kept = {
        str(m["source_path"]): PageMeta(
            str(m["url"]), str(m["version"]), str(m["date"]), str(m["source_path"])
        )
        for m in existing.values()
        if m.get("source_path") in failed_paths
    }
    return list(kept.values())


def _chunk_pages(
    pages: list[Page], kept: list[PageMeta], embedder: Embedder, settings: Settings, report: IngestReport
) -> list[Chunk]:
    limits = ChunkLimits(
        target=settings.chunk_tokens,
        overlap=settings.chunk_overlap_tokens,
        hard_cap=embedder.max_tokens - 12,
    )
    keys, latest = _page_keys([p.meta for p in pages] + kept)
    by_file = {f.path: f for f in report.per_file}
    chunks: list[Chunk] = []
    for page in pages:
        page_chunks = chunk_page(page, embedder.count_tokens, limits, keys[page.meta.source_path])
        if not latest[page.meta.source_path]:
            page_chunks = [replace(c, latest=False) for c in page_chunks]
        by_file[page.meta.source_path].chunks = len(page_chunks)
        chunks.extend(page_chunks)
    report.warnings += _outlier_warnings(report.per_file)
    return chunks


def _page_keys(pages: list[PageMeta]) -> tuple[dict[str, str], dict[str, bool]]:
    """Id prefix per page (by source path) and whether it is the newest version of its url.

    The newest version of a url keeps the plain url slug, so ids survive version bumps; older
    versions of the same url (archives) get the version appended. Pages whose prefixes would
    still collide (urls that slugify alike) get their source path appended.
    """
    by_url: dict[str, list[PageMeta]] = defaultdict(list)
    for meta in sorted(pages, key=lambda m: m.source_path):
        by_url[meta.url].append(meta)
    keys: dict[str, str] = {}
    latest: dict[str, bool] = {}
    used: set[str] = set()
    for url in sorted(by_url):
        group = sorted(by_url[url], key=lambda m: (_version_key(m.version), m.source_path), reverse=True)
        for rank, meta in enumerate(group):
            key = slugify(url) or "page"
            if rank:
                key = f"{key}--v{slugify(meta.version) or 'x'}"
            if key in used:
                key = f"{key}--{slugify(meta.source_path)}"
            used.add(key)
            keys[meta.source_path] = key
            latest[meta.source_path] = rank == 0
    return keys, latest


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)) if version != UNKNOWN else ()


def _outlier_warnings(files: list[FileReport]) -> list[str]:
    counts = [f.chunks for f in files if f.chunks]
    if len(counts) < 3:
        return []
    median = statistics.median(counts)
    return [
        f"{f.path}: {f.chunks} chunks, far more than the median {median:g}; consider splitting the page"
        for f in files
        if f.chunks >= OUTLIER_MIN_CHUNKS and f.chunks > OUTLIER_FACTOR * median
    ]


def _plan(chunks: list[Chunk], existing: dict[str, dict[str, object]], failed_paths: set[str]) -> _Plan:
    new: list[Chunk] = []
    changed_text: list[Chunk] = []
    changed_metadata: list[Chunk] = []
    unchanged = 0
    for chunk in chunks:
        stored = existing.get(chunk.id)
        if stored is None:
            new.append(chunk)
        elif stored.get("content_hash") != chunk.content_hash:
            changed_text.append(chunk)
        elif stored != chunk.metadata():
            changed_metadata.append(chunk)
        else:
            unchanged += 1
    produced = {c.id for c in chunks}
    orphans = sorted(
        chunk_id
        for chunk_id, metadata in existing.items()
        if chunk_id not in produced and metadata.get("source_path") not in failed_paths
    )
    return _Plan(chunks, new, changed_text, changed_metadata, unchanged, orphans)


def _vectors_for(
    chunks: list[Chunk],
    store: VectorStore,
    embedder: Embedder,
    batch_size: int,
    progress: ProgressCallback | None,
) -> tuple[dict[str, np.ndarray], int]:
    """content_hash → vector: reused from the store when the same text is already there, else embedded."""
    texts = {c.content_hash: c.text for c in chunks}
    vectors = store.vectors_by_hash(texts)
    missing = [h for h in texts if h not in vectors]
    if progress:
        progress(0, len(missing))
    for start in range(0, len(missing), batch_size):
        batch = missing[start : start + batch_size]
        embedded = embedder.embed_documents([texts[h] for h in batch])
        vectors.update(zip(batch, embedded, strict=True))
        if progress:
            progress(min(start + batch_size, len(missing)), len(missing))
    return vectors, len(missing)
