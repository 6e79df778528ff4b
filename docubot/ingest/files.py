"""Finding and reading the markdown pages of a docs folder, refusing bad files with clear reasons.

Symlinks are followed only while they stay inside the docs folder: a link (to a file or a folder)
whose real path is outside it is never read, and is reported as skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MARKDOWN_SUFFIXES = (".md", ".markdown")
OUTSIDE = "symlink to a path outside the docs folder; not read"


class DocsFolderError(Exception):
    """The docs folder itself cannot be read (missing, not a folder)."""


@dataclass(frozen=True)
class PageFile:
    """A page to read: `path` on disk, `relative` to the docs folder, `root` the docs folder's real path
    (when given, reading re-checks that the page has not become a link out of it)."""

    path: Path
    relative: str
    root: Path | None = None


@dataclass(frozen=True)
class SkippedPath:
    """A path that was not read, and why (symlink loop, unreadable folder…)."""

    relative: str
    reason: str


def find_pages(folder: Path) -> tuple[list[PageFile], list[SkippedPath]]:
    """All markdown files under `folder`, sorted; symlinks are followed while they stay inside it, never
    around a loop."""
    if not folder.exists():
        raise DocsFolderError(f"docs folder not found: {folder}")
    if not folder.is_dir():
        raise DocsFolderError(f"not a folder: {folder}")
    root = folder.resolve()
    pages: list[PageFile] = []
    skipped: list[SkippedPath] = []
    for path in _walk(root, root, set(), skipped):
        pages.append(PageFile(path, path.relative_to(root).as_posix(), root))
    return sorted(pages, key=lambda p: p.relative), skipped


def _walk(
    root: Path, folder: Path, visited: set[tuple[int, int]], skipped: list[SkippedPath]
) -> Iterator[Path]:
    try:
        stat = folder.stat()
    except OSError as exc:
        skipped.append(SkippedPath(_rel(root, folder), f"cannot read folder: {exc.strerror}"))
        return
    key = (stat.st_dev, stat.st_ino)
    if key in visited:
        skipped.append(SkippedPath(_rel(root, folder), "symlink loop: this folder was already visited"))
        return
    visited.add(key)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        skipped.append(SkippedPath(_rel(root, folder), f"cannot list folder: {exc.strerror}"))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = folder / entry.name
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
        except OSError as exc:
            skipped.append(SkippedPath(_rel(root, path), f"cannot stat: {exc.strerror}"))
            continue
        if not (is_dir or is_file):
            if entry.is_symlink():
                skipped.append(SkippedPath(_rel(root, path), "broken symlink"))
            continue
        if is_file and path.suffix.lower() not in MARKDOWN_SUFFIXES:
            continue
        if entry.is_symlink() and not _inside(root, path.resolve()):
            skipped.append(SkippedPath(_rel(root, path), OUTSIDE))
        elif is_dir and entry.is_symlink():
            target = path.resolve()
            reason = (
                "symlink loop: it points to a folder that contains it"
                if _inside(target, path.parent)
                else f"symlink to {_rel(root, target)}, read there instead"
            )
            skipped.append(SkippedPath(_rel(root, path), reason))
        elif is_dir:
            yield from _walk(root, path, visited, skipped)
        else:
            yield path


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


class PageReadError(Exception):
    """A page that cannot be used as text: binary, not UTF-8, too large, unreadable."""


def read_page(page: PageFile, max_bytes: int) -> str:
    """The page's text, or PageReadError with a reason a person can act on."""
    real = page.path.resolve()
    if page.root is not None and not _inside(page.root, real):
        raise PageReadError("symlink to a file outside the docs folder; not read")
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise PageReadError(
                    f"file is {_size(size)}, over the {_size(max_bytes)} limit "
                    "(DOCUBOT_MAX_FILE_BYTES); split the page or raise the limit"
                )
            data = handle.read()
    except OSError as exc:
        raise PageReadError(f"cannot read file: {exc.strerror}") from exc
    if b"\x00" in data[:8192]:
        raise PageReadError("binary file (contains NUL bytes), not markdown text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PageReadError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at line {line}); re-save the file as UTF-8"
        ) from exc


def _size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1_000 else f"{n} bytes"
