"""What the web page is sent: answers rendered from markdown (safely), source links, section texts,
example questions."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from docubot.db import Database
from docubot.ingest.parse import parse_page
from docubot.server.examples import example_questions
from docubot.server.rendering import render_markdown
from docubot.server.sources import heading_anchor, section_chunks, section_text, source_href
from docubot.store.sql import SQLStore
from tests.corpus_fixtures import SAMPLE_DOCS


class Tags(HTMLParser):
    """Every start tag and its attributes."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_answers_render_bold_lists_code_and_tables() -> None:
    html = render_markdown(
        "Ves a **Informes > Exportar**:\n\n1. Obre l'informe.\n2. Tria *CSV*.\n\n"
        "```bash\ncurl -H 'Authorization: Bearer x' https://api.nubelia.cat/v1/projects\n```\n\n"
        "| Pla | Preu |\n|---|---|\n| Business | 12 € |\n\nVegeu [la guia](https://docs.nubelia.cat/guia)."
    )
    assert "<strong>Informes &gt; Exportar</strong>" in html
    assert "<ol>" in html and "<em>CSV</em>" in html
    assert '<pre><code class="language-bash">curl' in html
    assert "<td>Business</td>" in html
    assert '<a href="https://docs.nubelia.cat/guia" target="_blank" rel="noopener noreferrer">' in html


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>document.title='pwned'</script>",
        "<img src=x onerror=\"document.title='pwned'\">",
        '<a href="javascript:alert(1)">clic</a>',
        "[clic](javascript:alert(1))",
        "[clic](JaVaScRiPt:alert(1))",
        "[clic](&#106;avascript:alert(1))",
        "[clic](<javascript:alert(1)>)",
        "[clic](vbscript:msgbox(1))",
        "[clic](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[clic](file:///etc/passwd)",
        "<javascript:alert(1)>",
        "[clic][r]\n\n[r]: javascript:alert(1)",
        "![x](javascript:alert(1))",
        "![x](https://tracker.example/pixel.png)",
        '[x](https://ok.cat "a" onmouseover="alert(1)")',
        "<iframe src=https://evil.example></iframe>",
        "<svg onload=alert(1)>",
        "`<b>code</b>` and <b onclick=alert(1)>bold</b>",
    ],
)
def test_injected_html_and_script_links_stay_inert(markdown: str) -> None:
    tags = Tags(render_markdown(markdown)).tags
    assert {tag for tag, _ in tags} <= {"p", "a", "code", "strong", "em"}
    for tag, attrs in tags:
        assert not [name for name in attrs if name.startswith("on") or name in ("src", "style")]
        if tag == "a":
            assert str(attrs["href"]).startswith("https://")


@pytest.mark.parametrize(
    ("markdown", "href"),
    [
        ("[a](https://x.cat/a)", "https://x.cat/a"),
        ("[a](#restablir)", "#restablir"),
        ("[a](../guia.md)", "../guia.md"),
    ],
)
def test_web_relative_and_anchor_links_are_kept(markdown: str, href: str) -> None:
    assert [attrs["href"] for tag, attrs in Tags(render_markdown(markdown)).tags if tag == "a"] == [href]


def test_heading_anchors_are_the_ones_mkdocs_gives() -> None:
    assert heading_anchor("Restablir la contrasenya") == "restablir-la-contrasenya"
    assert heading_anchor("Convidar l'equip") == "convidar-lequip"
    assert heading_anchor("Què es sincronitza") == "que-es-sincronitza"
    assert heading_anchor("API i webhooks (v2)") == "api-i-webhooks-v2"


def test_source_links_follow_the_page_then_the_base_url_else_none() -> None:
    section = "Seguretat i accés > Restablir la contrasenya"
    url = "wiki/administracio/seguretat-i-acces"
    assert source_href(url, section, None) is None
    assert (
        source_href(url, section, "https://docs.nubelia.cat/")
        == "https://docs.nubelia.cat/wiki/administracio/seguretat-i-acces#restablir-la-contrasenya"
    )
    assert source_href(url, "Seguretat i accés", "https://docs.nubelia.cat") == (
        "https://docs.nubelia.cat/wiki/administracio/seguretat-i-acces"  # the intro: no anchor
    )
    own = "https://ajuda.nubelia.cat/seguretat"  # the page's metadata line names its own address
    assert source_href(own, section, "https://docs.nubelia.cat") == f"{own}#restablir-la-contrasenya"
    assert source_href(f"{own}#top", section, None) == f"{own}#top"


def test_a_metadata_line_with_an_absolute_url_is_the_pages_address() -> None:
    page = parse_page(
        "<!-- url: https://ajuda.nubelia.cat/seguretat | versio: 3 -->\n# Seguretat\n\nText.", "s.md"
    )
    assert page.meta.url == "https://ajuda.nubelia.cat/seguretat"


def test_every_sample_section_reads_back_exactly_as_written(sample_settings) -> None:
    """Chunks in order, breadcrumbs and the overlap between pieces removed: the section's blocks."""
    with Database(sample_settings) as db:
        store = SQLStore(db)
        sections = section_chunks(store.all_metadata())
        written = {}
        for path in sorted(SAMPLE_DOCS.rglob("*.md")):
            page = parse_page(path.read_text(encoding="utf-8"), str(path.relative_to(SAMPLE_DOCS)))
            for section in page.sections:
                key = (page.meta.url, " > ".join((page.title, *section.path)), page.meta.version)
                written[key] = "\n\n".join(block.text for block in section.blocks)
        assert set(sections) == set(written) and len(sections) > 100
        assert max(len(ids) for ids in sections.values()) > 10  # a long section, many overlapping chunks
        for key, chunk_ids in sections.items():
            assert section_text(store, chunk_ids) == written[key], key
        assert section_text(store, ["no-such-chunk"]) is None


def _meta(url: str, *sections: str, latest: bool = True) -> list[dict[str, object]]:
    return [{"url": url, "section_path": f"Pàgina > {s}", "latest": latest} for s in sections]


def test_example_questions_follow_the_documented_rule() -> None:
    metadata = [
        *_meta("a", "Rols i permisos", "Eliminar un membre", "Convidar membres"),
        *_meta("b", "Límits de peticions"),  # no infinitive: only if there are too few others
        *_meta("c", "Crear un token d'accés"),
        *_meta("d", "Exportar informes"),
        *_meta("e", "Revocar un token", latest=False),  # an archived version: ignored
        *_meta("f", "API i webhooks"),
        *_meta("g", "Connectar Slack"),
        {"url": "h", "section_path": "Només la introducció", "latest": True},  # an intro: ignored
    ]
    assert example_questions(metadata) == [
        "Com puc convidar membres?",  # the first of a, c, d, g …
        "Com puc crear un token d'accés?",  # … the middle …
        "Com puc connectar Slack?",  # … and the last
    ]
    assert example_questions(metadata[:4]) == [
        "Com puc convidar membres?",
        "Què he de saber sobre límits de peticions?",
    ]
    assert example_questions(_meta("f", "API i webhooks")) == ["Què he de saber sobre API i webhooks?"]
    assert example_questions(list(reversed(metadata))) == example_questions(metadata)
