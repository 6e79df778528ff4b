"""The inside of a JSON string a model writes without a grammar, made valid (`docubot.llm.json_string`)."""

from __future__ import annotations

import json

from docubot.llm.json_string import StringContent


def _string(*pieces: str) -> tuple[str, bool]:
    """The JSON string the pieces make, decoded, and whether a closing quote came."""
    content = StringContent()
    inside = "".join(content.feed(piece) for piece in pieces) + content.rest()
    return json.loads(f'"{inside}"'), content.closed


def test_plain_text_passes_unchanged() -> None:
    assert _string("Fes clic a ", "**Desa**.") == ("Fes clic a **Desa**.", False)


def test_the_first_quote_not_escaped_ends_the_string_and_nothing_after_it_is_kept() -> None:
    assert _string('Click **Save**.", "note', ': "x"}') == ("Click **Save**.", True)


def test_escapes_are_kept_even_split_between_pieces() -> None:
    assert _string("Say \\", '"yes\\"', " \\u00e9\\n") == ('Say "yes" é\n', False)


def test_a_control_character_is_escaped() -> None:
    assert _string("one\ntwo\tthree") == ("one\ntwo\tthree", False)


def test_a_backslash_that_begins_no_escape_is_written_as_one() -> None:
    assert _string("C:\\docs\\x", "\\") == ("C:\\docs\\x\\", False)
