"""The edits that turn a document as read into the document its rounds of fixes made
(fix.rewrite.edits_between): as narrow as the data allows, or NotSpliceable; and the text
rewritten from them, located on the parse's trees where the block reader read a document whole."""

from __future__ import annotations

import pytest

from draguard.core.fixes import Op, apply_edits, set_value
from draguard.fix import splice
from draguard.fix.located import block_root
from draguard.fix.rewrite import edits_between, rewritten
from draguard.fix.splice import NotSpliceable, parse, splice_fixes, verified


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


STREAM = """# two workloads
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
  - name: c
    image: i
---
# the second
apiVersion: v1
kind: Pod
metadata:
  name: b
  labels:
    app: b
spec:
  containers:
  - name: c
    image: i
"""


def _fixed_in_memory(text: str):
    parsed = parse(text)
    documents = [apply_edits(d, [set_value(("spec", "terminationGracePeriodSeconds"), 30)])[0]
                 for d in parsed.documents]
    return parsed, documents


def test_a_block_streams_documents_are_rewritten_without_composing_them(monkeypatch):
    """`draguard fix` writes its rounds' documents into the text on the trees its parse built
    (fix.located), as the HTML report splices its diffs: composing each again was a third of
    the splice."""
    parsed, documents = _fixed_in_memory(STREAM)
    composed, _ = _composed_splice(STREAM, parsed, documents)
    located, _ = _refusing(monkeypatch, STREAM, parsed, documents)
    assert located == composed
    assert verified(located, parsed.problems, documents) is not None


def test_a_document_the_block_reader_did_not_read_whole_is_composed(monkeypatch):
    text = STREAM.replace("  name: b\n", "  name: b\n  name: b\n")  # a repeated key: its tree is not the text's
    parsed, documents = _fixed_in_memory(text)
    assert block_root(parsed.documents[0], parsed.lines[0]) is not None
    assert block_root(parsed.documents[1], parsed.lines[1]) is None
    with pytest.raises(AssertionError, match="composed"):
        _refusing(monkeypatch, text, parsed, documents)
    monkeypatch.undo()
    fixed, _ = rewritten(text, parsed, documents, [0, 1])
    assert verified(fixed, parsed.problems, documents) is not None


def test_a_block_root_is_taken_only_on_the_line_it_starts_on():
    tree = parse(STREAM).documents[1]
    assert block_root(tree, 12) is tree  # its first key, after the comment
    assert block_root(tree, 11) is None and block_root(dict(tree), 12) is None


def _composed_splice(text, parsed, documents):
    planned = [(k, tuple(edits_between(parsed.documents[k], documents[k]))) for k in reversed(range(len(documents)))]
    return splice_fixes(text, planned, parsed.lines)


def _refusing(monkeypatch, text, parsed, documents):
    """rewritten() with composing a document made an error."""
    def composing(*_):
        raise AssertionError("the document was composed")

    monkeypatch.setattr(splice, "_composed", composing)
    monkeypatch.setattr(splice, "document_node", composing)
    return rewritten(text, parsed, documents, list(range(len(documents))))
