"""Parsing model output into the contract, and sources taken from metadata."""

import pytest

from docubot.rag.contract import ContractError, is_refusal_text, parse_model_output, sources_for
from docubot.rag.prompt import REFUSAL_TEXT
from docubot.rag.stream_json import FieldStreamer
from docubot.store import Hit

CATEGORIES = ["compte", "informes", "altres"]


def _hit(url: str) -> Hit:
    return Hit(
        id=url,
        text="[P > S]\ntext",
        metadata={"url": url, "section_path": "P > S", "version": "1"},
        score=0.9,
    )


def test_plain_json_parses() -> None:
    out = parse_model_output(
        '{"categoria":"informes","resposta":"Sí.","fonts":[1],"confianca":"alta"}', CATEGORIES
    )
    assert (out.categoria, out.resposta, out.fonts, out.confianca) == ("informes", "Sí.", [1], "alta")


def test_code_fence_and_prose_around_json_are_tolerated() -> None:
    payload = '{"categoria": "compte", "resposta": "Fes {això}.", "fonts": ["2"], "confianca": "mitjana"}'
    text = f"Aquí tens:\n```json\n{payload}\n```\nFi."
    out = parse_model_output(text, CATEGORIES)
    assert out.resposta == "Fes {això}."
    assert out.fonts == [2]


def test_fragment_labels_become_numbers() -> None:
    text = '{"categoria":"compte","resposta":"x","fonts":["Fragment 3", 1],"confianca":"alta"}'
    out = parse_model_output(text, CATEGORIES)
    assert out.fonts == [3, 1]


def test_unknown_category_becomes_altres() -> None:
    out = parse_model_output('{"categoria":"cuina","resposta":"x","fonts":[],"confianca":"alta"}', CATEGORIES)
    assert out.categoria == "altres"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("No ho sé.", "no JSON object"),
        ('{"categoria": "compte", "resposta": "x", "fonts": [1], "confianca": "segura"}', "confianca"),
        ('{"categoria": "compte", "fonts": [1], "confianca": "alta"}', "resposta"),
        ("[1, 2]", "no JSON object"),
        ('{"categoria": "compte", "resposta": "x", "fonts": [1], "confianca": "alta"', "no JSON object"),
    ],
)
def test_invalid_output_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ContractError, match=problem):
        parse_model_output(text, CATEGORIES)


def test_sources_are_sorted_urls_of_valid_cited_fragments() -> None:
    hits = [_hit("wiki/b"), _hit("wiki/a"), _hit("wiki/b")]
    assert sources_for([3, 2, 9, 0], hits) == (["wiki/a", "wiki/b"], [2, 3])


def test_no_valid_citation_falls_back_to_all_retrieved_urls() -> None:
    hits = [_hit("wiki/b"), _hit("wiki/a")]
    assert sources_for([7], hits) == (["wiki/a", "wiki/b"], [])


def test_refusal_text_is_recognised_inside_a_longer_reply() -> None:
    assert is_refusal_text("Ho sento. " + REFUSAL_TEXT.upper())
    assert not is_refusal_text("Pots exportar a CSV des d'Informes.")


def test_field_streamer_decodes_resposta_across_arbitrary_deltas() -> None:
    raw = '{"categoria": "compte", "resposta": "Ves a \\"Configuraci\\u00f3\\"\\nrapid", "fonts": [1]}'
    for size in (1, 2, 3, 5, 64):
        streamer = FieldStreamer("resposta")
        text = "".join(streamer.feed(raw[i : i + size]) for i in range(0, len(raw), size))
        assert text == 'Ves a "Configuració"\nrapid'
