"""core.cached: a view computed once, and the bounded tables memos keep."""

from __future__ import annotations

from draguard.core.cached import cached, kept


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
