"""parse_page: headings found by a real CommonMark parser, metadata line, cleaning."""

from __future__ import annotations

import pytest

from docubot.ingest.parse import UNKNOWN, Page, parse_page


def paths(page: Page) -> list[tuple[str, ...]]:
    return [s.path for s in page.sections]


def section(page: Page, path: tuple[str, ...]) -> str:
    """All block texts of the section with this path, joined."""
    matches = [s for s in page.sections if s.path == path]
    assert len(matches) == 1, f"expected one section {path}, got {paths(page)}"
    return "\n\n".join(b.text for b in matches[0].blocks)


# -- headings that are not headings -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fence",
    [
        "```\n# no és títol\n## tampoc\n```",
        "~~~bash\n# comentari de shell\n## no\n~~~",
        "````md\n```\n## dins d'una tanca interior\n```\n````",
    ],
    ids=["backticks", "tildes", "four-backticks"],
)
def test_hash_lines_inside_fences_are_not_headings(fence: str) -> None:
    page = parse_page(f"# Guia\n\n## Ordres\n\nExecuteu:\n\n{fence}\n\nI ja està.\n", "guia.md")
    assert paths(page) == [("Ordres",)]
    blocks = page.sections[0].blocks
    assert [b.kind for b in blocks] == ["paragraph", "code", "paragraph"]
    assert blocks[1].text == fence


def test_hash_without_space_is_not_a_heading() -> None:
    page = parse_page("# Guia\n\n## Etiquetes\n\n#etiqueta i #altra\n\n#nota\n", "guia.md")
    assert paths(page) == [("Etiquetes",)]
    assert section(page, ("Etiquetes",)) == "#etiqueta i #altra\n\n#nota"


def test_up_to_three_spaces_of_indent_is_a_heading_four_is_code() -> None:
    text = "# Guia\n\n   ## Amb tres espais\n\nText u.\n\n    ## Amb quatre espais\n\nText dos.\n"
    page = parse_page(text, "guia.md")
    assert paths(page) == [("Amb tres espais",)]
    blocks = page.sections[0].blocks
    assert [(b.kind, b.text) for b in blocks] == [
        ("paragraph", "Text u."),
        ("code", "    ## Amb quatre espais"),
        ("paragraph", "Text dos."),
    ]


def test_heading_like_line_inside_a_list_item_is_not_a_section() -> None:
    page = parse_page("# Guia\n\n- element\n\n  ## dins la llista\n\n## Real\n\nText.\n", "guia.md")
    assert paths(page) == [(), ("Real",)]
    assert "## dins la llista" in section(page, ())


# -- structure -------------------------------------------------------------------------------------


def test_leading_bom_is_removed() -> None:
    page = parse_page("\ufeff# Títol amb BOM\n\n## Secció\n\nText.\n", "x.md")
    assert page.title == "Títol amb BOM"
    assert paths(page) == [("Secció",)]


def test_leading_bom_before_metadata_line() -> None:
    text = "\ufeff<!-- url: wiki/x | versio: 2026.2 | actualitzat: 2026-09-22 -->\n# T\n\n## A\n\nText.\n"
    page = parse_page(text, "x.md")
    assert page.has_meta_line
    assert page.meta.url == "wiki/x"


def test_text_before_the_first_section_is_its_own_section() -> None:
    page = parse_page("# Guia\n\nIntroducció breu.\n\n## Primera\n\nCos.\n", "guia.md")
    assert paths(page) == [(), ("Primera",)]
    assert section(page, ()) == "Introducció breu."
    assert section(page, ("Primera",)) == "Cos."


def test_h3_nests_under_the_current_h2() -> None:
    text = "# Guia\n\n## A\n\na\n\n### A1\n\na1\n\n### A2\n\na2\n\n## B\n\nb\n\n### B1\n\nb1\n"
    page = parse_page(text, "guia.md")
    assert paths(page) == [("A",), ("A", "A1"), ("A", "A2"), ("B",), ("B", "B1")]
    assert section(page, ("A", "A2")) == "a2"


def test_h3_before_any_h2_is_a_top_level_section() -> None:
    page = parse_page("# Guia\n\n### Abans\n\nx\n\n## A\n\ny\n\n### A1\n\nz\n", "guia.md")
    assert paths(page) == [("Abans",), ("A",), ("A", "A1")]


def test_sibling_h3s_before_any_h2_are_siblings() -> None:
    page = parse_page("# Guia\n\n### U\n\nx\n\n### V\n\ny\n\n## A\n\nz\n", "guia.md")
    assert paths(page) == [("U",), ("V",), ("A",)]


def test_h4_stays_as_text_of_its_section() -> None:
    page = parse_page("# Guia\n\n## A\n\n#### Detall\n\ntext\n", "guia.md")
    assert paths(page) == [("A",)]
    assert section(page, ("A",)) == "#### Detall\n\ntext"


def test_a_second_h1_becomes_a_section() -> None:
    page = parse_page("# Guia\n\n## A\n\na\n\n# Segona part\n\nb\n\n### C\n\nc\n", "guia.md")
    assert page.title == "Guia"
    assert paths(page) == [("A",), ("Segona part",), ("Segona part", "C")]


def test_setext_headings() -> None:
    text = "Títol setext\n============\n\nIntro.\n\nSecció setext\n-------------\n\nCos.\n"
    page = parse_page(text, "guia.md")
    assert page.title == "Títol setext"
    assert paths(page) == [(), ("Secció setext",)]
    assert section(page, ("Secció setext",)) == "Cos."


def test_short_setext_headings_survive_beside_prose_ones() -> None:
    text = "# Guia\n\nInstal·lació\n---\n\nCos u.\n\nCom canvio la contrasenya?\n---\n\nCos dos.\n"
    page = parse_page(text, "guia.md")
    assert paths(page) == [("Instal·lació",), ("Com canvio la contrasenya?",)]
    assert page.text_headings == []


# -- underlines under prose are not headings (AsciiDoc conversions, `---` used as a rule) ------------

ASCIIDOC_EN = """# Upgrading the cluster

## Before you start

Back up the configuration first.

[NOTE]
----
On a production cluster, use this command with caution, because it restarts every node.
----

Run the upgrade command:

```
upgrade --all
```

## Rolling back

[WARNING]
====
Rolling back deletes the data written since the upgrade.
====

Use `rollback --to <version>` to go back.
"""


def test_asciidoc_admonitions_stay_text_under_the_real_heading() -> None:
    page = parse_page(ASCIIDOC_EN, "upgrade.md")
    assert page.title == "Upgrading the cluster"
    assert paths(page) == [("Before you start",), ("Rolling back",)]
    before = section(page, ("Before you start",))
    assert before.startswith("Back up the configuration first.\n\n[NOTE]\n\nOn a production cluster")
    assert "Run the upgrade command:" in before and "----" not in before
    back = section(page, ("Rolling back",))
    assert "[WARNING]\n\nRolling back deletes the data" in back and "====" not in back
    assert page.text_headings == [
        "[NOTE]",
        "On a production cluster, use this command with caution, because it restarts every node.",
        "[WARNING]",
        "Rolling back deletes the data written since the upgrade.",
    ]


ASCIIDOC_CA = """# Còpies de seguretat

## Programar còpies

Les còpies es programen des del tauler d'administració.
---

[IMPORTANT]
----
En un clúster de producció, executeu aquesta ordre fora d'hores.
----

Substituïu <nom> pel nom de l'espai
---

Còpia {data}
---

La còpia diària
comença a les dues de la matinada
---

### Restaurar

Restaureu des de la pestanya Còpies.
"""


def test_catalan_prose_underlined_with_dashes_is_text() -> None:
    page = parse_page(ASCIIDOC_CA, "copies.md")
    assert paths(page) == [("Programar còpies",), ("Programar còpies", "Restaurar")]
    body = section(page, ("Programar còpies",))
    for text in (
        "Les còpies es programen des del tauler d'administració.",
        "En un clúster de producció, executeu aquesta ordre fora d'hores.",
        "Substituïu <nom> pel nom de l'espai",
        "Còpia {data}",
        "La còpia diària\ncomença a les dues de la matinada",
    ):
        assert text in body
    assert "---" not in body
    assert len(page.text_headings) == 6


@pytest.mark.parametrize(
    "line",
    [
        "Aquesta és una frase prou llarga com per no ser mai el títol d'una secció",
        "A heading line that goes on and on, past eighty characters, is surely a sentence",
        "Configure the proxy as follows:",
        "Per exemple,",
    ],
    ids=["many-words", "long", "colon", "comma"],
)
def test_long_or_punctuated_setext_lines_are_text(line: str) -> None:
    page = parse_page(f"# Guia\n\n## Real\n\nCos.\n\n{line}\n---\n\nMés.\n", "guia.md")
    assert paths(page) == [("Real",)]
    assert section(page, ("Real",)) == f"Cos.\n\n{line}\n\nMés."
    assert page.text_headings == [line]


def test_a_setext_h1_made_of_an_admonition_is_not_the_title() -> None:
    text = "[NOTE]\n====\nThis page is generated.\n====\n\n## Usage\n\nText.\n"
    page = parse_page(text, "guides/cli-usage.md")
    assert page.title == "Cli usage"
    assert paths(page) == [(), ("Usage",)]


def test_title_from_the_file_name_without_h1() -> None:
    page = parse_page("## A\n\ntext\n", "guies/primers-passos.md")
    assert page.title == "Primers passos"


def test_sections_without_blocks_are_dropped() -> None:
    page = parse_page("# Guia\n\n## Buida\n\n## Plena\n\nText.\n", "guia.md")
    assert paths(page) == [("Plena",)]


# -- metadata line ---------------------------------------------------------------------------------


def test_metadata_line_is_parsed_and_removed() -> None:
    text = (
        "<!-- url: wiki/api/webhooks | versio: 2026.2 | actualitzat: 2026-09-22 -->\n"
        "# Webhooks\n\n## A\n\nx\n"
    )
    page = parse_page(text, "api/webhooks.md")
    assert page.has_meta_line
    assert page.meta.url == "wiki/api/webhooks"
    assert page.meta.version == "2026.2"
    assert page.meta.date == "2026-09-22"
    assert page.meta.source_path == "api/webhooks.md"
    assert page.title == "Webhooks"
    assert all("url:" not in b.text for s in page.sections for b in s.blocks)


def test_metadata_keys_are_case_and_space_insensitive() -> None:
    page = parse_page("<!--URL:wiki/a|  Versio :  3.1  -->\n# A\n\n## S\n\nx\n", "a.md")
    assert (page.meta.url, page.meta.version, page.meta.date) == ("wiki/a", "3.1", UNKNOWN)


def test_without_metadata_line_url_is_the_relative_path() -> None:
    page = parse_page("# Calendari\n\n## Sincronitzar\n\nx\n", "integracions/calendari.md")
    assert not page.has_meta_line
    assert page.meta.url == "integracions/calendari"
    assert page.meta.version == UNKNOWN == "desconeguda"
    assert page.meta.date == UNKNOWN


def test_a_first_line_comment_without_url_is_not_metadata() -> None:
    page = parse_page("<!-- esborrany -->\n# Guia\n\n## A\n\nx\n", "guia.markdown")
    assert not page.has_meta_line
    assert page.meta.url == "guia"
    assert paths(page) == [("A",)]
    assert section(page, ("A",)) == "x"


# -- cleaning --------------------------------------------------------------------------------------


def test_html_comments_are_removed() -> None:
    text = "# Guia\n\n## A\n\nAbans <!-- nota interna --> després.\n\n<!--\nbloc\nsencer\n-->\n\nFinal.\n"
    page = parse_page(text, "guia.md")
    body = section(page, ("A",))
    assert "<!--" not in body and "nota interna" not in body and "bloc" not in body
    assert "Abans" in body and "després." in body and "Final." in body


def test_runs_of_blank_lines_are_collapsed() -> None:
    page = parse_page("# Guia\n\n## A\n\n- u\n\n\n\n\n- dos\n\n\n\n\nFinal.\n", "guia.md")
    body = section(page, ("A",))
    assert "\n\n\n" not in body
    assert [b.text for b in page.sections[0].blocks] == ["- u\n\n- dos", "Final."]


def test_blank_runs_left_by_removed_comments_are_collapsed() -> None:
    page = parse_page("# Guia\n\n## A\n\n- a\n\n  <!-- nota -->\n\n- b\n", "guia.md")
    body = section(page, ("A",))
    assert all(line.strip() or not line for line in body.split("\n"))
    assert "\n\n\n" not in body.replace(" ", "")


def test_crlf_and_cr_line_endings() -> None:
    text = "# Guia\r\n\r\n## A\r\n\r\nLínia u\r\nlínia dos\r\n\r\n\r\n\r\nAltre\rparàgraf\r\n"
    page = parse_page(text, "guia.md")
    assert paths(page) == [("A",)]
    texts = [b.text for b in page.sections[0].blocks]
    assert texts == ["Línia u\nlínia dos", "Altre\nparàgraf"]
    assert all("\r" not in t for t in texts)


def test_code_fence_keeps_its_inner_blank_lines() -> None:
    page = parse_page("# Guia\n\n## A\n\n```\nu\n\n\n\ndos\n```\n", "guia.md")
    assert page.sections[0].blocks[0].text == "```\nu\n\n\n\ndos\n```"
