"""Parsing model output into the contract, and sources taken from metadata."""

import pytest

from docubot.rag.contract import ContractError, is_refusal_text, parse_model_output, sources_for
from docubot.rag.prompt import REFUSAL_TEXT, Fragment, fragments_from
from docubot.rag.stream_json import FieldStreamer
from docubot.store import Hit


def _fragment(url: str) -> Fragment:
    return Fragment(url=url, section="P > S", text="text", hits=())


def test_plain_json_parses() -> None:
    out = parse_model_output('{"categoria":"informes","resposta":"Sí.","fonts":[1],"confianca":"alta"}')
    assert (out.resposta, out.fonts, out.confianca, out.evidencia) == ("Sí.", [1], "alta", None)


def test_evidence_quotes_parse_with_tolerant_fragment_numbers() -> None:
    text = (
        '{"evidencia": [{"fragment": "Fragment 2", "cita": "Cal fer A."}, "Frase sense número."], '
        '"resposta": "Fes A.", "confianca": "alta"}'
    )
    out = parse_model_output(text)
    assert [(q.fragment, q.cita) for q in out.evidencia] == [(2, "Cal fer A."), (0, "Frase sense número.")]


def test_code_fence_and_prose_around_json_are_tolerated() -> None:
    payload = '{"categoria": "compte", "resposta": "Fes {això}.", "fonts": ["2"], "confianca": "mitjana"}'
    text = f"Aquí tens:\n```json\n{payload}\n```\nFi."
    out = parse_model_output(text)
    assert out.resposta == "Fes {això}."
    assert out.fonts == [2]


def test_fragment_labels_become_numbers() -> None:
    text = '{"categoria":"compte","resposta":"x","fonts":["Fragment 3", 1],"confianca":"alta"}'
    out = parse_model_output(text)
    assert out.fonts == [3, 1]


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
        parse_model_output(text)


def test_sources_are_sorted_urls_of_valid_cited_fragments() -> None:
    fragments = [_fragment("wiki/b"), _fragment("wiki/a"), _fragment("wiki/b")]
    assert sources_for([3, 2, 9, 0], fragments) == (["wiki/a", "wiki/b"], [2, 3])


def test_no_valid_citation_falls_back_to_all_retrieved_urls() -> None:
    fragments = [_fragment("wiki/b"), _fragment("wiki/a")]
    assert sources_for([7], fragments) == (["wiki/a", "wiki/b"], [])


def test_refusal_text_is_recognised_inside_a_longer_reply() -> None:
    assert is_refusal_text("Ho sento. " + REFUSAL_TEXT.upper())
    assert not is_refusal_text("Pots exportar a CSV des d'Informes.")


def test_field_streamer_decodes_resposta_across_arbitrary_deltas() -> None:
    raw = (
        '{"evidencia": [{"fragment": 1, "cita": "Diu \\"resposta\\": \\"no\\"."}], '
        '"resposta": "Ves a \\"Configuraci\\u00f3\\"\\nrapid", "confianca": "alta"}'
    )
    for size in (1, 2, 3, 5, 64):
        streamer = FieldStreamer("resposta")
        text = "".join(streamer.feed(raw[i : i + size]) for i in range(0, len(raw), size))
        assert text == 'Ves a "Configuració"\nrapid'


def test_chunks_of_one_section_are_stitched_in_order_without_their_overlap() -> None:
    def hit(index: int, body: str, score: float) -> Hit:
        meta = {"url": "wiki/s", "version": "1", "section_path": "S > A", "chunk_index": index}
        return Hit(f"s--a--{index:02d}", f"[S > A]\n{body}", meta, score)

    other = Hit(
        "o--00", "[O]\nAltre.", {"url": "wiki/o", "version": "1", "section_path": "O", "chunk_index": 0}, 0.8
    )
    first = "Primer paràgraf llarg. Aquesta frase es repeteix al principi del següent."
    second = "Aquesta frase es repeteix al principi del següent. I el final diu 24 hores."
    fragments = fragments_from([hit(1, second, 0.9), other, hit(0, first, 0.85)])
    assert [f.url for f in fragments] == ["wiki/s", "wiki/o"]
    assert fragments[0].text == first + " I el final diu 24 hores."
    assert len(fragments[0].hits) == 2
