"""core.cached: a view computed once, the bounded tables memos keep, the memo of a value read."""

from __future__ import annotations

import pytest

from draguard.core.cached import by_value, cached, kept


def test_a_kept_table_never_holds_more_than_its_limit():
    table: dict = {}
    for key in range(1000):  # keys from the input: unbounded
        assert kept(table, key, str(key), 64) == str(key)
        assert len(table) <= 64 and table[key] == str(key)


def test_a_view_is_computed_once():
    calls = []

    class View:
        @cached
        def value(self) -> int:
            calls.append(1)
            return 7

    view = View()
    assert (view.value, view.value, len(calls)) == (7, 7, 1)


def test_a_value_read_is_remembered_by_its_value_and_type_and_never_for_a_float():
    """True, 1 and 1.0 are one key to a dict, and 0.0 and -0.0 one key of one type: each is
    answered for itself whichever came first; a value no dict can hold gets the function's
    own answer; a value asked again is not computed again."""
    calls = []

    @by_value(maxsize=16)
    def written(value, suffix="") -> str:
        calls.append(value)
        return repr(value) + suffix

    for first, second in ((1, True), (True, 1.0), (0.0, -0.0), (-0.0, 0.0)):
        assert (written(first), written(second)) == (repr(first), repr(second))
    assert written([1], suffix="!") == "[1]!" and written({"a": 1}) == "{'a': 1}"
    asked = len(calls)
    assert written(1) == "1" and written("x", suffix="?") == written("x", suffix="?") == "'x'?"
    assert len(calls) == asked + 1  # "x" computed once, 1 not again
    with pytest.raises(TypeError):
        written((1, [2]))  # hashable on its face, not within: as lru_cache
