"""core.jsonindent writes the bytes json.dumps(indent=N, ensure_ascii=False) writes, faster."""

from __future__ import annotations

import enum
import json
from collections import OrderedDict

import pytest

from draguard.core import jsonindent

NAN, INF = float("nan"), float("inf")


class _Text(str):
    """A string of a subclass: a leaf the C encoder writes, not a text placed as it is."""


class _Level(enum.IntEnum):
    ONE = 1

VALUES = [
    0, -7, 10**30, 1.5, -0.0, 1e300, NAN, INF, -INF, True, False, None,
    "", "plain", 'quote " backslash \\ newline \n tab \t nul \0 unit \x1f', "é ü 漢 \u2028 \U0001f600",
    "%s %d %% {} [] , : \\u0000", [], {}, [[]], [{}], {"a": {}}, {"a": []},
    [1, "two", None, [3, [4, []]], {"five": 5}],
    {1: "int", 2.5: "float", False: "false", None: "null", "%s": "percent key", "\0": "nul key"},
    {True: "true", INF: "infinite key"},
    {"a": (1, (2, 3)), "b": ({"c": ()},)},
    OrderedDict([("z", 1), ("a", OrderedDict([("y", [1])]))]),
    {"finding": {"rule": "r", "line": 3, "object": {"kind": "Pod"}, "fix": None,
                 "edits": [{"op": "set", "path": "spec.x", "value": {"k": [1, 2.0, "3"]}}]}},
    {"text": _Text("sub"), "level": _Level.ONE, "empty": [], "none": {}, "nested": {"k": [_Text("x"), _Level.ONE]}},
]


@pytest.mark.parametrize("indent", [2, 4])
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_same_bytes_as_json_dumps(value, indent):
    assert jsonindent.dumps(value, indent=indent) == json.dumps(value, indent=indent, ensure_ascii=False)


@pytest.mark.parametrize("value", [{(1,): 2}, [object()], {"a": {"b": {1, 2}}}], ids=["tuple key", "object", "set"])
def test_what_json_refuses_is_refused_the_same_way(value):
    with pytest.raises(TypeError) as expected:
        json.dumps(value, indent=2)
    with pytest.raises(TypeError) as got:
        jsonindent.dumps(value)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("value", [v for v in VALUES if isinstance(v, (dict, list)) and v], ids=str)
def test_a_value_nested_levels_down_reads_as_json_dumps_indents_it(value):
    document = json.dumps({"a": [value]}, indent=2, ensure_ascii=False)
    assert "[\n    " + jsonindent.dumps(value, level=2) + "\n  ]" in document


@pytest.mark.parametrize("value", [v for v in VALUES if isinstance(v, (dict, list)) and v], ids=str)
def test_text_encoded_already_is_placed_as_it_is_at_its_depth(value):
    """A part many items share is encoded once (report.json_report) and placed as it is: the
    document reads as json.dumps writes it whole, in a mapping and in a list, at any depth."""
    for document, shared in (({"a": 1, "b": value, "c": [2]}, {"a": 1, "b": None, "c": [2]}),
                             ([value, "x"], [None, "x"])):
        for level in (0, 2):
            key = "b" if isinstance(document, dict) else 0
            shared[key] = jsonindent.Encoded(jsonindent.dumps(value, level=level + 1))
            expected = json.dumps({"a": [document]}, indent=2, ensure_ascii=False) if level else \
                json.dumps(document, indent=2, ensure_ascii=False)
            written = jsonindent.dumps(shared, level=level)
            assert (written if not level else "[\n    " + written + "\n  ]") in expected


def test_an_encoded_text_alone_is_itself_and_a_plain_string_is_still_encoded():
    assert jsonindent.dumps(jsonindent.Encoded('{"k": 1}')) == '{"k": 1}'
    assert jsonindent.dumps({"k": '{"k": 1}'}) == json.dumps({"k": '{"k": 1}'}, indent=2)


def test_percent_signs_in_nested_keys_and_values_are_written_as_they_are():
    value = {"%d": [{"%s": "%", "k%%": {"%": ["%s", 1]}}], "b": {"c": "%%"}}
    assert jsonindent.dumps(value, level=1) == json.dumps({"x": value}, indent=2, ensure_ascii=False)[9:-2]


def test_a_nested_value_has_its_leaves_encoded_by_one_call_once_its_shape_is_known(monkeypatch):
    """A fix's edits (a migrated pod's claim template: 17 lists and mappings) cost a C call and a
    template each; the leaves of a value of a shape met before are encoded by one call."""
    def fix(name):
        return {"title": "migrate", "edits": [{"op": "add-document", "value": {"metadata": {"name": name},
                                                                                 "spec": {"requests": [{"count": 1}]}}},
                                              {"op": "remove", "path": "spec.limits"}]}
    jsonindent.dumps(fix("first"), level=3)
    calls = []
    leaves = jsonindent._LEAVES
    monkeypatch.setattr(jsonindent, "_LEAVES", lambda value: calls.append(value) or leaves(value))
    assert jsonindent.dumps(fix("second"), level=3) == jsonindent.dumps(fix("first"), level=3).replace("first", "second")
    assert len(calls) == 2


def test_keys_equal_to_a_cache_but_written_apart_keep_their_own_texts():
    """True, 1 and 1.0 are one key to a dict of templates but are written "true", "1" and
    "1.0" (a YAML `on:` key is True), as 0.0 and -0.0 (of one type) are written "0.0" and
    "-0.0": each mapping of one shape is written with its own keys, one after another in a
    process and side by side in one value, nested or with texts placed."""
    keys = [1, True, 1.0, "1", None, "null", False, 0, "\"1\"", 0.0, -0.0]
    for key in keys:
        for value in ({key: {"a": [1]}}, [{key: "x"}, {"k": [key]}]):
            assert jsonindent.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
        placed = {key: jsonindent.Encoded("[]"), "b": 2}
        assert jsonindent.dumps(placed) == json.dumps({key: [], "b": 2}, indent=2, ensure_ascii=False)
    side_by_side = [{key: {"a": [1]}} for key in keys]
    assert jsonindent.dumps(side_by_side) == json.dumps(side_by_side, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("level", [0, 2])
def test_a_mapping_of_leaves_with_texts_placed_after_them_reads_as_json_dumps_writes_it_whole(level):
    """report.json_report's finding: its leaves by one call, its object's and fix's texts after them."""
    leaves = {"rule": "r%s", "line": 3, "help": None, "%d": 1.5, "ok": True, "quote": 'a "b" \n é'}
    placed = {"object": {"kind": "Pod", "name": "%s"}, "fix": None, "edits": [{"op": "set", "value": [1, {}]}]}
    texts = [(key, jsonindent.dumps(value, level=level + 1)) for key, value in placed.items()]
    expected = json.dumps({"a": [{**leaves, **placed}]} if level else {**leaves, **placed}, indent=2,
                          ensure_ascii=False)
    written = jsonindent.mapping(leaves, texts, level=level)
    assert (written if not level else '{\n  "a": [\n    ' + written + "\n  ]\n}") == expected


RECORD = {"time": 0.5, "what": "scheduled %s", "pod": "llm-2-1\0", "detail": "gpu-0 é"}
ROWS = [[], [RECORD], [RECORD, {**RECORD, "time": NAN, "pod": None, "detail": True}] * 3, [{1: "int", INF: 2.5}] * 2,
        [{"a": 1}, {"b": 2}], [{"a": 1, "b": 2}, {"b": 2, "a": 1}], [{"a": 1}, {"a": 1, "b": 2}], [{"a": [1]}], [{}],
        [{"a": _Text("sub")}], [{"%s": 1, "b": None}]]


@pytest.mark.parametrize("indent", [2, 4])
@pytest.mark.parametrize("rows", ROWS, ids=range(len(ROWS)))
def test_rows_of_one_shape_or_not_read_as_json_dumps_writes_them(rows, indent):
    assert jsonindent.rows(rows, indent=indent) == json.dumps(rows, indent=indent, ensure_ascii=False)
    nested = json.dumps({"a": rows}, indent=indent, ensure_ascii=False)
    assert nested == "{\n" + " " * indent + '"a": ' + jsonindent.rows(rows, indent=indent, level=1) + "\n}"


def test_rows_of_one_shape_have_their_leaves_encoded_by_one_call(monkeypatch):
    calls = []
    encode = jsonindent._LEAVES
    jsonindent.rows([RECORD])  # the keys' texts and the record's template, made once
    monkeypatch.setattr(jsonindent, "_LEAVES", lambda value: calls.append(value) or encode(value))
    assert jsonindent.rows([RECORD] * 1000) == json.dumps([RECORD] * 1000, indent=2, ensure_ascii=False)
    assert len(calls) == 1
