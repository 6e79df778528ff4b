"""chunk_page: breadcrumbs, stable unique ids, overlap, hard cap, fences and tables kept usable.

Token counts come from the real e5 tokenizer (`embedder.count_tokens`); nothing is embedded here.
"""

from __future__ import annotations

import hashlib
import itertools
import re

import pytest

from docubot.embed.e5 import E5Embedder
from docubot.ingest.chunk import CHUNKER_VERSION, Chunk, ChunkLimits, chunk_page, content_hash, slugify
from docubot.ingest.parse import parse_page
from docubot.store.base import METADATA_FIELDS

SMALL = ChunkLimits(target=120, overlap=40, hard_cap=200)


def chunks_of(
    text: str, embedder: E5Embedder, limits: ChunkLimits = SMALL, path: str = "guia.md"
) -> list[Chunk]:
    return chunk_page(parse_page(text, path), embedder.count_tokens, limits, "guia")


def body(chunk: Chunk) -> str:
    """The chunk text without its breadcrumb line."""
    return chunk.text.split("\n", 1)[1]


def norm(text: str) -> str:
    return " ".join(text.split())


def overlap_chars(previous: str, following: str) -> int:
    """Length of the longest start of `following` that ends `previous` (whitespace-normalised)."""
    a, b = norm(previous), norm(following)
    return max((k for k in range(1, min(len(a), len(b)) + 1) if a.endswith(b[:k])), default=0)


def short_paragraphs(tag: str, n: int) -> str:
    return "\n\n".join(
        f"El pas {i} de {tag} obre el tauler {i}. Després cal desar el formulari {i}." for i in range(n)
    )


# -- breadcrumbs and metadata ----------------------------------------------------------------------


def test_prose_over_a_dash_rule_keeps_the_real_breadcrumb(embedder: E5Embedder) -> None:
    text = (
        "# Clúster\n\n## Actualitzar\n\nFeu una còpia abans.\n\n[NOTE]\n----\n"
        "En un clúster de producció, feu servir aquesta ordre amb precaució.\n----\n\nExecuteu l'ordre.\n"
    )
    chunks = chunks_of(text, embedder)
    assert [c.section_path for c in chunks] == ["Clúster > Actualitzar"]
    assert chunks[0].text.startswith("[Clúster > Actualitzar]\nFeu una còpia abans.")
    assert "En un clúster de producció" in chunks[0].text and "Executeu l'ordre." in chunks[0].text


def test_every_chunk_starts_with_its_breadcrumb(embedder: E5Embedder) -> None:
    text = (
        "# Seguretat\n\nIntroducció a la seguretat.\n\n## Contrasenyes\n\nCanvieu-la cada any.\n\n"
        "### Restablir\n\nFeu clic a Restablir.\n\n## Sessions\n\nTanqueu les sessions obertes.\n"
    )
    chunks = chunks_of(text, embedder)
    assert [c.text.split("\n", 1)[0] for c in chunks] == [
        "[Seguretat]",
        "[Seguretat > Contrasenyes]",
        "[Seguretat > Contrasenyes > Restablir]",
        "[Seguretat > Sessions]",
    ]
    assert [body(c) for c in chunks] == [
        "Introducció a la seguretat.",
        "Canvieu-la cada any.",
        "Feu clic a Restablir.",
        "Tanqueu les sessions obertes.",
    ]
    assert [c.section_title for c in chunks] == ["Seguretat", "Contrasenyes", "Restablir", "Sessions"]
    assert chunks[2].section_path == "Seguretat > Contrasenyes > Restablir"


def test_breadcrumb_on_every_piece_of_a_split_section(embedder: E5Embedder) -> None:
    chunks = chunks_of(f"# Guia\n\n## Passos\n\n### Detall\n\n{short_paragraphs('detall', 14)}\n", embedder)
    assert len(chunks) >= 3
    assert all(c.text.startswith("[Guia > Passos > Detall]\n") for c in chunks)


def test_metadata_fields(embedder: E5Embedder) -> None:
    text = (
        "<!-- url: wiki/seguretat | versio: 2026.2 | actualitzat: 2026-09-22 -->\n"
        "# Seguretat\n\n## Claus\n\nText.\n"
    )
    [chunk] = chunk_page(
        parse_page(text, "admin/seguretat.md"), embedder.count_tokens, SMALL, "wiki-seguretat"
    )
    meta = chunk.metadata()
    assert set(meta) == set(METADATA_FIELDS)
    assert meta == {
        "url": "wiki/seguretat",
        "page_title": "Seguretat",
        "section_title": "Claus",
        "section_path": "Seguretat > Claus",
        "version": "2026.2",
        "date": "2026-09-22",
        "source_path": "admin/seguretat.md",
        "chunk_index": 0,
        "content_hash": content_hash(chunk.text),
        "chunker_version": CHUNKER_VERSION,
        "latest": True,
    }
    assert chunk.id == "wiki-seguretat--claus--00"


def test_slugify_folds_catalan_accents() -> None:
    assert slugify("Facturació i pagaments · l'IVA") == "facturacio-i-pagaments-l-iva"


# -- ids -------------------------------------------------------------------------------------------


def test_ids_are_deterministic(embedder: E5Embedder) -> None:
    text = f"# Guia\n\nIntro.\n\n## Passos\n\n{short_paragraphs('x', 12)}\n\n## Final\n\nAdéu.\n"
    first = chunks_of(text, embedder)
    second = chunks_of(text, embedder)
    assert [c.id for c in first] == [c.id for c in second]
    assert [c.content_hash for c in first] == [c.content_hash for c in second]
    assert first[0].id == "guia--intro--00"
    assert [c.chunk_index for c in first if "--passos--" in c.id] == list(range(len(first) - 2))


def test_ids_are_unique_when_a_page_repeats_a_section_title(embedder: E5Embedder) -> None:
    text = (
        "# Guia\n\n## Notes\n\nu\n\n### Notes\n\nsub\n\n## Altres\n\nx\n\n"
        "## Notes\n\ndos\n\n## notes\n\ntres\n\n## Nòtes\n\nquatre\n"
    )
    chunks = chunks_of(text, embedder)
    ids = [c.id for c in chunks]
    assert len(ids) == 6
    assert len(set(ids)) == len(ids), ids


def test_ids_are_unique_when_a_repeat_suffix_matches_another_title(embedder: E5Embedder) -> None:
    chunks = chunks_of("# Guia\n\n## Notes\n\nu\n\n## Notes\n\ndos\n\n## Notes 2\n\ntres\n", embedder)
    ids = [c.id for c in chunks]
    assert len(set(ids)) == len(ids) == 3, ids


# -- splitting and overlap -------------------------------------------------------------------------


def test_long_section_is_split_with_overlap_and_none_across_headings(embedder: E5Embedder) -> None:
    text = (
        f"# Guia\n\n## Primera\n\n{short_paragraphs('alfa', 16)}\n\n"
        f"## Segona\n\n{short_paragraphs('beta', 16)}\n"
    )
    chunks = chunks_of(text, embedder)
    first = [c for c in chunks if "--primera--" in c.id]
    second = [c for c in chunks if "--segona--" in c.id]
    assert len(first) >= 3 and len(second) >= 3
    for group in (first, second):
        for previous, following in itertools.pairwise(group):
            assert overlap_chars(body(previous), body(following)) >= 30, (previous.text, following.text)
    # Across the heading: the first piece of "Segona" carries nothing of "Primera".
    assert "alfa" not in second[0].text
    assert overlap_chars(body(first[-1]), body(second[0])) == 0
    # All text is kept, in order.
    for tag in ("alfa", "beta"):
        joined = " ".join(c.text for c in chunks)
        assert all(f"El pas {i} de {tag} obre" in joined for i in range(16))


def test_one_long_paragraph_is_split_with_overlap(embedder: E5Embedder) -> None:
    sentences = " ".join(f"La frase {i} explica com configurar el projecte {i} pas a pas." for i in range(24))
    chunks = chunks_of(f"# Guia\n\n## Llarga\n\n{sentences}\n", embedder)
    assert len(chunks) >= 3
    for previous, following in itertools.pairwise(chunks):
        assert overlap_chars(body(previous), body(following)) >= 30


def test_long_paragraph_pieces_keep_every_sentence(embedder: E5Embedder) -> None:
    sentences = [f"La frase {i} explica com configurar el projecte {i} pas a pas." for i in range(24)]
    chunks = chunks_of(f"# Guia\n\n## Llarga\n\n{' '.join(sentences)}\n", embedder)
    assert len(chunks) >= 3
    joined = norm(" ".join(body(c) for c in chunks))
    positions = [joined.find(s) for s in sentences]
    assert -1 not in positions
    assert positions == sorted(positions)


@pytest.mark.parametrize("limits", [SMALL, ChunkLimits()], ids=["small", "default"])
def test_no_chunk_exceeds_the_hard_cap(embedder: E5Embedder, limits: ChunkLimits) -> None:
    long_sentence = " ".join(f"paraula{i}" for i in range(400))
    table = "| Clau | Valor |\n|---|---|\n" + "\n".join(
        f"| opció_{i} | valor llarg número {i} |" for i in range(80)
    )
    code = (
        "```python\n"
        + "\n".join(f"resultat_{i} = calcula(client_{i}, import_{i})" for i in range(120))
        + "\n```"
    )
    text = (
        f"# Guia\n\n## Prosa\n\n{short_paragraphs('prosa', 40)}\n\n{long_sentence}.\n\n"
        f"## Taula\n\n{table}\n\n## Codi\n\n{code}\n"
    )
    chunks = chunks_of(text, embedder, limits)
    assert len(chunks) > 5
    sizes = [embedder.count_tokens(c.text) for c in chunks]
    assert max(sizes) <= limits.hard_cap, sizes


@pytest.mark.parametrize(
    "content",
    [
        "Vegeu https://exemple.cat/?token=" + "abcdef0123456789" * 60 + " per a més detalls.",
        "```\n" + "QUJD" * 500 + "\n```",
    ],
    ids=["long-url", "base64-in-fence"],
)
def test_an_unbreakable_token_still_respects_the_hard_cap(embedder: E5Embedder, content: str) -> None:
    chunks = chunks_of(f"# Guia\n\n## Llarg\n\n{content}\n", embedder)
    assert max(embedder.count_tokens(c.text) for c in chunks) <= SMALL.hard_cap


# -- fences and tables -----------------------------------------------------------------------------


def test_a_code_fence_that_fits_is_never_split(embedder: E5Embedder) -> None:
    fence = "```bash\n" + "\n".join(f"docubot ingest carpeta_{i} --json" for i in range(6)) + "\n```"
    text = f"# Guia\n\n## Codi\n\n{short_paragraphs('codi', 3)}\n\n{fence}\n\n{short_paragraphs('fi', 3)}\n"
    chunks = chunks_of(text, embedder)
    assert len(chunks) >= 2
    holding = [c for c in chunks if fence in c.text]
    assert len(holding) == 1
    assert all(c.text.count("```") % 2 == 0 for c in chunks)
    assert all("docubot ingest" not in c.text for c in chunks if c is not holding[0])


@pytest.mark.parametrize("marker", ["```", "~~~"])
def test_an_overlong_code_fence_is_split_into_closed_fences(embedder: E5Embedder, marker: str) -> None:
    lines = [f"resultat_{i} = calcula_factura(client_{i}, import_{i})" for i in range(40)]
    fence = f"{marker}python\n" + "\n".join(lines) + f"\n{marker}"
    chunks = chunks_of(f"# Guia\n\n## Codi\n\n{fence}\n", embedder)
    assert len(chunks) >= 3
    seen: list[str] = []
    for chunk in chunks:
        piece = body(chunk).split("\n")
        assert piece[0] == f"{marker}python"
        assert piece[-1] == marker
        assert all(line in lines for line in piece[1:-1])
        seen += piece[1:-1]
    assert seen == lines


def test_an_overlong_table_is_split_by_rows_repeating_the_header(embedder: E5Embedder) -> None:
    header = ["| Pla | Preu | Usuaris |", "|---|---:|---|"]
    rows = [f"| Pla {i} | {i * 7} € | {i * 3} usuaris |" for i in range(40)]
    table = "\n".join(header + rows)
    chunks = chunks_of(f"# Guia\n\n## Preus\n\n{table}\n", embedder)
    assert len(chunks) >= 3
    seen: list[str] = []
    for chunk in chunks:
        piece = body(chunk).split("\n")
        assert piece[:2] == header
        assert piece[2:] and all(re.fullmatch(r"\| Pla \d+ \| \d+ € \| \d+ usuaris \|", r) for r in piece[2:])
        seen += piece[2:]
    assert seen == rows


# -- hashes ----------------------------------------------------------------------------------------


def test_content_hash_follows_the_text(embedder: E5Embedder) -> None:
    before = chunks_of("# Guia\n\n## A\n\nEl termini és de 30 dies.\n\n## B\n\nText fix.\n", embedder)
    after = chunks_of("# Guia\n\n## A\n\nEl termini és de 60 dies.\n\n## B\n\nText fix.\n", embedder)
    assert [c.id for c in before] == [c.id for c in after]
    assert before[0].content_hash != after[0].content_hash
    assert before[1].content_hash == after[1].content_hash
    for chunk in before + after:
        assert chunk.content_hash == hashlib.sha256(chunk.text.encode("utf-8")).hexdigest()


def test_renaming_a_heading_changes_the_hash(embedder: E5Embedder) -> None:
    before = chunks_of("# Guia\n\n## A\n\nText.\n", embedder)
    after = chunks_of("# Guia nova\n\n## A\n\nText.\n", embedder)
    assert before[0].id == after[0].id
    assert before[0].content_hash != after[0].content_hash


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        ChunkLimits(target=100, overlap=50, hard_cap=200)
    with pytest.raises(ValueError):
        ChunkLimits(target=300, overlap=10, hard_cap=200)
