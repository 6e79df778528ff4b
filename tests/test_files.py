"""find_pages / read_page: the docs folder walked safely, bad files refused with actionable reasons."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docubot.ingest.files import DocsFolderError, PageFile, PageReadError, find_pages, read_page


def page_file(path: Path, root: Path) -> PageFile:
    return PageFile(path, path.relative_to(root).as_posix())


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(DocsFolderError, match="not found") as info:
        find_pages(tmp_path / "no-existeix")
    assert "no-existeix" in str(info.value)


def test_a_file_is_not_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "pagina.md"
    target.write_text("# Pàgina\n", encoding="utf-8")
    with pytest.raises(DocsFolderError, match="not a folder"):
        find_pages(target)


def test_pages_are_found_sorted_with_relative_paths(docs: Path) -> None:
    for rel in ("guies/b.md", "a.md", "guies/a.MARKDOWN", "notes.txt", "api/c.md"):
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text("# x\n", encoding="utf-8")
    pages, skipped = find_pages(docs)
    assert [p.relative for p in pages] == ["a.md", "api/c.md", "guies/a.MARKDOWN", "guies/b.md"]
    assert all(p.path.is_file() for p in pages)
    assert skipped == []


def test_hidden_files_and_folders_are_ignored(docs: Path) -> None:
    for rel in (
        ".git/HEAD.md",
        ".obsidian/plantilla.md",
        "guies/.esborrany.md",
        "guies/.ocult/x.md",
        "guies/bona.md",
    ):
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text("# x\n", encoding="utf-8")
    pages, _ = find_pages(docs)
    assert [p.relative for p in pages] == ["guies/bona.md"]


def test_symlink_loop_is_reported_and_pages_found_once(docs: Path) -> None:
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    (docs / "sub").mkdir()
    (docs / "sub" / "b.md").write_text("# B\n", encoding="utf-8")
    os.symlink("..", docs / "sub" / "bucle", target_is_directory=True)
    pages, skipped = find_pages(docs)
    assert [p.relative for p in pages] == ["a.md", "sub/b.md"]
    assert len(skipped) == 1
    assert skipped[0].relative == "sub/bucle"
    assert "loop" in skipped[0].reason


def test_broken_symlink_is_reported(docs: Path) -> None:
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    os.symlink(docs / "desapareguda.md", docs / "trencat.md")
    pages, skipped = find_pages(docs)
    assert [p.relative for p in pages] == ["a.md"]
    assert [(s.relative, s.reason) for s in skipped] == [("trencat.md", "broken symlink")]


def test_read_page_returns_the_text(docs: Path) -> None:
    path = docs / "a.md"
    path.write_text("# Guia\n\nÀrea de facturació.\n", encoding="utf-8")
    assert read_page(page_file(path, docs), max_bytes=1000) == "# Guia\n\nÀrea de facturació.\n"


def test_binary_page_is_refused(docs: Path) -> None:
    path = docs / "imatge.md"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(PageReadError, match="binary"):
        read_page(page_file(path, docs), max_bytes=100_000)


def test_non_utf8_page_names_the_encoding_and_line(docs: Path) -> None:
    path = docs / "llati1.md"
    path.write_bytes("# Guia\n\nTot bé aquí.\nCafè amb llet\n".encode("latin-1"))
    with pytest.raises(PageReadError) as info:
        read_page(page_file(path, docs), max_bytes=100_000)
    message = str(info.value)
    assert "UTF-8" in message
    assert "line 3" in message
    assert "0xe9" in message


def test_page_over_a_small_limit_is_refused(docs: Path) -> None:
    path = docs / "gran.md"
    path.write_text("# Gran\n\n" + "Una frase més.\n" * 200, encoding="utf-8")
    with pytest.raises(PageReadError) as info:
        read_page(page_file(path, docs), max_bytes=1000)
    assert "limit" in str(info.value)
    assert "DOCUBOT_MAX_FILE_BYTES" in str(info.value)


def test_small_limit_message_states_the_limit(docs: Path) -> None:
    path = docs / "gran.md"
    path.write_text("x" * 3000, encoding="utf-8")
    with pytest.raises(PageReadError) as info:
        read_page(page_file(path, docs), max_bytes=1000)
    assert "0.0 MB" not in str(info.value)


def test_real_20_mb_page_is_refused_at_the_default_limit(docs: Path) -> None:
    path = docs / "enorme.md"
    path.write_bytes(b"# Enorme\n" + b"a" * (20_000_000 - 9))
    try:
        assert path.stat().st_size == 20_000_000
        with pytest.raises(PageReadError) as info:
            read_page(page_file(path, docs), max_bytes=2_000_000)
        assert "20.0 MB" in str(info.value)
        assert "2.0 MB limit" in str(info.value)
    finally:
        path.unlink()


# -- symlinks never lead out of the docs folder ------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the docs folder, holding a secret config and a page."""
    folder = tmp_path / "fora"
    folder.mkdir()
    (folder / "config.toml").write_text('llm_api_key = "sk-secret"\n', encoding="utf-8")
    (folder / "pagina.md").write_text("# Fora\n\nText de fora.\n", encoding="utf-8")
    return folder


def test_a_file_link_out_of_the_docs_folder_is_skipped_and_reported(docs: Path, outside: Path) -> None:
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    os.symlink(outside / "config.toml", docs / "config.md")
    os.symlink("/etc/passwd", docs / "passwd.md")
    pages, skipped = find_pages(docs)
    assert [p.relative for p in pages] == ["a.md"]
    assert [s.relative for s in skipped] == ["config.md", "passwd.md"]
    assert all("outside the docs folder" in s.reason for s in skipped)


def test_a_folder_link_out_of_the_docs_folder_is_not_walked(docs: Path, outside: Path) -> None:
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    os.symlink(outside, docs / "extern", target_is_directory=True)
    pages, skipped = find_pages(docs)
    assert [p.relative for p in pages] == ["a.md"]
    assert [s.relative for s in skipped] == ["extern"]
    assert "outside the docs folder" in skipped[0].reason


def test_a_link_that_hops_out_through_another_link_is_skipped(docs: Path, outside: Path) -> None:
    os.symlink(outside / "config.toml", docs / "pas.toml")
    os.symlink("pas.toml", docs / "secret.md")
    pages, skipped = find_pages(docs)
    assert pages == []
    assert [s.relative for s in skipped] == ["secret.md"]


def test_links_that_stay_inside_the_docs_folder_are_read(docs: Path) -> None:
    (docs / "guies").mkdir()
    (docs / "guies" / "real.md").write_text("# Real\n", encoding="utf-8")
    os.symlink("guies/real.md", docs / "drecera.md")
    pages, skipped = find_pages(docs)
    assert [p.relative for p in pages] == ["drecera.md", "guies/real.md"]
    assert skipped == []
    assert read_page(pages[0], max_bytes=1000) == "# Real\n"


def test_a_docs_folder_that_is_itself_a_link_works(tmp_path: Path, docs: Path) -> None:
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    os.symlink(docs, tmp_path / "enllac", target_is_directory=True)
    pages, skipped = find_pages(tmp_path / "enllac")
    assert [p.relative for p in pages] == ["a.md"] and skipped == []


def test_a_page_swapped_for_an_outside_link_after_the_walk_is_refused(docs: Path, outside: Path) -> None:
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    pages, _ = find_pages(docs)
    (docs / "a.md").unlink()
    os.symlink(outside / "config.toml", docs / "a.md")
    with pytest.raises(PageReadError, match="outside the docs folder"):
        read_page(pages[0], max_bytes=1000)
