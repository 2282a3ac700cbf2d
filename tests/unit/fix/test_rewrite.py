"""The edits that turn a document as read into the document its rounds of fixes made
(fix.rewrite.edits_between): as narrow as the data allows, or NotSpliceable."""

from __future__ import annotations

import pytest

from draguard.core.fixes import Op, apply_edits
from draguard.fix.rewrite import edits_between
from draguard.fix.splice import NotSpliceable


def _round_trip(before, after):
    edits = edits_between(before, after)
    assert apply_edits(before, edits)[0] == after
    return [(edit.op, edit.path) for edit in edits]


def test_keys_added_removed_and_scalars_replaced():
    before = {"a": 1, "b": {"c": 2, "d": 3}}
    after = {"a": 1, "b": {"c": 4, "e": 5}}
    assert _round_trip(before, after) == [(Op.REMOVE, ("b", "d")), (Op.SET, ("b", "c")), (Op.SET, ("b", "e"))]


def test_a_shared_subtree_is_not_walked():
    shared = {"deep": [1, 2, 3]}
    assert edits_between({"x": shared}, {"x": shared}) == []


def test_yaml_types_that_python_calls_equal_are_told_apart():
    assert _round_trip({"a": True}, {"a": 1}) == [(Op.SET, ("a",))]


def test_list_items_taken_out_and_appended_and_changed_in_place():
    env = [{"name": "A"}, {"name": "CUDA_VISIBLE_DEVICES"}, {"name": "B"}]
    assert _round_trip({"env": env}, {"env": [env[0], env[2], {"name": "C"}]}) == [
        (Op.REMOVE, ("env", 1)), (Op.APPEND, ("env",))]
    containers = [{"name": "a"}, {"name": "b"}]
    assert _round_trip({"c": containers}, {"c": [{"name": "a", "x": 1}, containers[1]]}) == [
        (Op.SET, ("c", 0, "x"))]


def test_what_no_edit_writes_is_refused():
    with pytest.raises(NotSpliceable):
        edits_between({"l": [1, 2]}, {"l": [1, 3, 2]})  # an item inserted inside the list
    with pytest.raises(NotSpliceable):
        edits_between({"a": 1}, [1])  # a document replaced whole
