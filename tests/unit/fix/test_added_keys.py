"""fix.added_keys: the diff of a fix that only adds keys, written from the edit and the tree,
is the general path's (splice.splice_document, then hunks.splice_diff) byte for byte, on
generated streams (test_located's documents: indentation steps, sequences indented or not,
comments and blank lines, quoted and folded scalars, one-line flow sequences, `{}`; with
comment and blank lines after a document, several documents a file, a last line with or
without its line break) and generated key-add edits (nested paths, mappings created along
the path, keys there or null, an index along the path); the runs of added lines placed as
fix.hunks places them where they equal the lines after them; and what it declines goes the
general way in the report."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import draguard.fix.added_keys as added_keys
import draguard.fix.located as located
import draguard.fix.splice as splice
from draguard.core.fixes import EditError, append, remove, set_value
from draguard.fix.added_keys import added_key_diff
from draguard.fix.hunks import splice_diff
from draguard.fix.located import block_root
from draguard.fix.splice import NotSpliceable, splice_document
from draguard.report import html
from draguard.sources.yamlpos import parse_stream_remembered

from .test_located import NAMES, STRINGS, _collections, _cuts, _document, _value


def _file(rnd: random.Random) -> str:
    """A stream of test_located's documents, some with comment or blank lines after them."""
    text = ""
    for number in range(rnd.randint(1, 3)):
        if number:
            text += rnd.choice(["---\n", "--- # next\n", "---\n# a comment\n\n"])
        text += _document(rnd) + "".join(rnd.sample(["# end\n", "  # indented\n", "\n", "    # deeper\n"],
                                                    rnd.choice([0, 0, 1, 2])))
    return text if rnd.random() < 0.75 else text.rstrip("\n")


def _documents(text: str):
    """(start, end, first line, tree) of each block-read document, cut out as the HTML report
    cuts it (report.lines.SourceLines.document_span) and given the tree it gives
    (report.html._block_read: fix.located.block_root)."""
    for start, end, document in _cuts(text):
        tree = block_root(document.data, document.start_line)
        if tree is not None:
            yield start, end, document.start_line, tree


def _key_added(rnd: random.Random, tree) -> tuple:
    """A set of a key, or sets of a few keys into one mapping: most under a mapping there
    (the document's last one often), some with mappings created along the path (sets into
    one such mapping joined by the splice), some of a key there or under something else."""
    paths = list(_collections(tree))
    if rnd.random() < 0.3:  # the document's last mapping: lines inserted at its end
        path, node = (), tree
        while isinstance(node, dict) and node:
            key = next(reversed(node))
            path, node = path + (key,), node[key]
        paths = [path[:-1]] if rnd.random() < 0.7 else [path]
    path = rnd.choice(paths) + tuple(rnd.choice(NAMES) for _ in range(rnd.choice([1, 1, 1, 2, 3])))
    if rnd.random() < 0.05:
        path = path[:-1] + (0,) + path[-1:]  # an index to create: declined
    keys = [path[-1]] + rnd.sample(NAMES, rnd.choice([0, 0, 0, 1, 2]))  # more: sets into one mapping
    return tuple(set_value(path[:-1] + (key,), rnd.choice([_value(rnd, 2), rnd.choice(STRINGS + [1, True, None])]))
                 for key in keys)


def _general(text: str, start: int, end: int, line: int, edits: tuple, tree) -> str | None:
    try:
        fixed, steps = splice_document(text[start:end], edits, tree)
    except (NotSpliceable, EditError):
        return None
    return splice_diff("f.yaml", text, start, end, fixed, steps, line)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_direct_diff_is_the_general_paths_on_generated_documents(rnd):
    text = _file(rnd)
    for start, end, line, tree in _documents(text):
        for _ in range(3):
            edits = _key_added(rnd, tree)
            direct = added_key_diff("f.yaml", text, start, end, line, edits, tree)
            if direct is not None:
                assert direct == _general(text, start, end, line, edits, tree), (text, start, edits)


def test_most_key_adds_are_written_directly():
    """Not vacuous: the direct path answers most generated key adds, and every answer is the
    general path's (1,495 of 3,000 when written)."""
    direct, _ = answered(random.Random(10), 3000, _key_added, added_key_diff)
    assert direct >= 1200, direct


def answered(rnd: random.Random, count: int, fix_for, direct_path) -> tuple[int, int]:
    """(fixes `direct_path` answered, tried) of `count` generated files' documents, each with
    the edits `fix_for(rnd, tree)` makes; every answer held to the general path's."""
    direct = tried = 0
    while tried < count:
        text = _file(rnd)
        for start, end, line, tree in _documents(text):
            edits = fix_for(rnd, tree)
            found = direct_path("f.yaml", text, start, end, line, edits, tree)
            tried += 1
            if found is not None:
                direct += 1
                assert found == _general(text, start, end, line, edits, tree), (text, start, edits)
    return direct, tried


_LINES = st.sampled_from(["a: 1\n", "  b: 2\n", "# c\n", "\n", "  - d\n"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=12), st.lists(_LINES, max_size=12), st.lists(_LINES, max_size=12),
       st.lists(_LINES, min_size=1, max_size=4), st.integers(0, 12), st.sampled_from([None, "x", "a: 1", "  b: 2"]))
def test_added_lines_are_placed_as_the_general_diff_places_them(above, lines, below, added, cut, unbroken):
    """Lines inserted into a document among others (equal lines on purpose: a run moves down
    past the old lines equal to its first), at a line start, or (`unbroken`: the document the
    text's last, its last line without a line break) after that last line, which is taken out
    and written again with one."""
    if unbroken is not None:
        lines, below = lines + [unbroken], []
    document = "".join(lines)
    start = len("".join(above))
    text = "".join(above) + document + "".join(below)
    line = 1 + text.count("\n", 0, start)
    at = len(document) if unbroken is not None else sum(map(len, lines[:cut]))
    inserted = ("\n" if unbroken is not None else "") + "".join(added)
    fixed = document[:at] + inserted + document[at:]
    expected = splice_diff("f.yaml", text, start, start + len(document), fixed, [(at, 0, len(inserted))], line)
    if unbroken is None:
        found = added_keys._diff("f.yaml", text, start + at, [], added, line + document.count("\n", 0, at))
    else:
        kept = start + at - len(unbroken)
        found = added_keys._diff("f.yaml", text, kept, [unbroken], [unbroken + "\n"] + added,
                                 line + document.count("\n"))
    assert found == expected


POD = "kind: Pod\nmetadata:\n  name: p\n  labels: {}\nspec:\n  x: null\n  image: i\n  containers:\n  - name: c\n"


@pytest.mark.parametrize("text, edits", [
    (POD, (set_value(("spec", "a"), 1), set_value(("spec", "b"), 2))),  # several edits into a mapping there
    (POD, (set_value(("spec", "a", "b"), 1), set_value(("spec", "c", "d"), 2))),  # into two new mappings
    (POD, (append(("spec", "containers"), {"name": "d"}),)),  # not a set
    (POD, (remove(("spec", "image")),)),
    (POD, (set_value(("spec", "image"), "j"),)),  # a key there: replaced
    (POD, (set_value(("spec", "x"), {"y": 1}),)),  # a key there, null
    (POD, (set_value(("spec", "x", "y"), 1),)),  # created under a key there, null
    (POD, (set_value(("spec", "image", "y"), 1),)),  # under a scalar
    (POD, (set_value(("metadata", "labels", "a"), "b"),)),  # under `{}`, a flow mapping
    (POD, (set_value(("spec", "containers", "a"), 1),)),  # under a list
    (POD, (set_value(("spec", "new", 0, "a"), 1),)),  # an index created
    (POD, (set_value(("spec", 0), 1),)),  # an index set
    (POD.replace("\n", "\r\n"), (set_value(("spec", "a"), 1),)),  # CRLF
    (POD.replace("name: p", "name: p\x0c"), (set_value(("spec", "a"), 1),)),  # another line break
    ("%YAML 1.1\n---\n" + POD, (set_value(("spec", "a"), 1),)),  # a directive in the document's text
    (POD.replace("x: null", "q: null"), (set_value(("spec", "a"), 1),)),  # a tree of another text: Unlocated
])
def test_what_it_declines_goes_the_general_way(monkeypatch, text, edits):
    tree = parse_stream_remembered(POD)[0][0].data  # the plain pod's tree, whatever the text
    start = 0 if text.startswith("%") else text.index("kind")
    line = 1 + text.count("\n", 0, start)
    assert added_key_diff("f.yaml", text, start, len(text), line, edits, tree) is None
    finding = SimpleNamespace(file="f.yaml", location=SimpleNamespace(document=0), fix=SimpleNamespace(edits=edits))
    lines = SimpleNamespace(text=lambda _: text, document_span=lambda *_: (start, len(text), line))
    monkeypatch.setattr(html, "_block_read", lambda *_: tree)
    shown = html._fix_diff(finding, lines)  # type: ignore[arg-type]
    general = _general(text, start, len(text), line, edits, tree)
    assert shown == (general if general is not None else
                     "".join(f"{edit.op} {'.'.join(map(str, edit.path))}\n" for edit in edits))


def test_the_report_writes_keys_added_directly(monkeypatch):
    """report.html._fix_diff answers keys added into a new mapping from fix.added_keys, not
    the splice."""
    tree = parse_stream_remembered(POD)[0][0].data
    finding = SimpleNamespace(file="f.yaml", location=SimpleNamespace(document=0),
                              fix=SimpleNamespace(edits=(set_value(("spec", "a", "b"), 1), set_value(("spec", "a", "c"), 2))))
    lines = SimpleNamespace(text=lambda _: POD, document_span=lambda *_: (0, len(POD), 1))
    monkeypatch.setattr(html, "_block_read", lambda *_: tree)
    expected = _general(POD, 0, len(POD), 1, finding.fix.edits, tree)
    monkeypatch.setattr("draguard.fix.splice.splice_document", None)
    assert html._fix_diff(finding, lines) == expected  # type: ignore[arg-type]
    assert "+  a:\n+    b: 1\n+    c: 2\n" in expected


def test_a_documents_fixes_of_both_kinds_locate_it_once(monkeypatch):
    """A key add and a fix that goes the general way on one document share the splice's
    located document (splice.located_document keeps the last): its root is located once, and its
    style and its collections' ends are found once for both."""
    tree = parse_stream_remembered(POD)[0][0].data
    located_texts: list = []
    real = located._Text.__init__
    monkeypatch.setattr(located._Text, "__init__", lambda self, *args: located_texts.append(args) or real(self, *args))
    added = added_key_diff("f.yaml", POD, 0, len(POD), 1, (set_value(("spec", "a"), 1),), tree)
    fixed, _ = splice_document(POD, (remove(("spec", "image")),), tree)
    assert added is not None and "+  a: 1\n" in added and "image" not in fixed
    assert len(located_texts) == 1


def test_the_lines_of_a_key_add_are_written_once_for_its_entry_column_and_style(monkeypatch):
    """A block the same entry writes at the same column in a document of the same style is
    written once (_lines_written): the same hooks and grace periods go into every workload;
    another column writes it again."""
    monkeypatch.setattr(added_keys, "_WRITTEN", {})
    written: list = []
    real = splice.block_text
    monkeypatch.setattr(splice, "block_text", lambda *args: written.append(args) or real(*args))
    edits = (set_value(("spec", "a"), {"b": 1}),)
    job = POD.replace("kind: Pod", "kind: Job").replace("image: i", "image: j")
    for text in (POD, job):
        tree = parse_stream_remembered(text)[0][0].data
        assert "+  a:\n+    b: 1\n" in added_key_diff("f.yaml", text, 0, len(text), 1, edits, tree)
    assert len(written) == 1
    at_root = added_key_diff("f.yaml", job, 0, len(job), 1, (set_value(("a",), {"b": 1}),),
                             parse_stream_remembered(job)[0][0].data)
    assert "+a:\n+  b: 1\n" in at_root and len(written) == 2
