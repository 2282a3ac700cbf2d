import pytest

from draguard.sources.scalars import char_position
from draguard.sources.yamlpos import parse_stream


def locate(text: str, offset: int):
    """Position of value character `offset` of key `e`, and the character found there."""
    docs, _ = parse_stream(text)
    data = docs[0].data
    data = data["k"] if "k" in data else data
    line, column = data.value_mark("e")
    lines = text.splitlines()
    l, c = char_position(lines, line, column, offset)
    return (l, c), lines[l - 1][c - 1], data["e"][offset]


@pytest.mark.parametrize("text, offset", [
    ("e: device.driver == 'x'\n", 7),
    ("e: 'it''s device.driver'\n", 8),
    ("e: \"a\\tb device.driver\"\n", 5),
    ("e: |\n  first line\n  second.line == 1\n", 17),
    ("e: >-\n  folded\n  text here\n", 9),
    ("k:\n  e: |\n    device.attributes['x'].y\n    && true\n", 28),
    ("e: plain\n  continued here\n", 12),
])
def test_offsets_land_on_the_same_character(text, offset):
    _, at_position, in_value = locate(text, offset)
    assert at_position == in_value


def test_block_scalar_positions_are_exact():
    text = "e: |\n  abc\n  defgh\n"
    (line, column), char, _ = locate(text, 6)
    assert (line, column, char) == (3, 5, "f")
