"""A fix's diff written from the splice's own replacements (fix.hunks) against the diff found
by comparing the texts (files.unified_diff, difflib where what a fix takes out and adds share
a line): on many generated documents and fixes it applies to give the spliced text, and it is
the same diff wherever the comparison does not pair a line one replacement took out with a
line another one added."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from draguard.core.fixes import Edit, EditError, Op
from draguard.fix.files import unified_diff
from draguard.fix.hunks import other_breaks, changes, regions, splice_diff, written_changes
from draguard.fix.splice import NotSpliceable, splice_fixes
from support.generated import random_value

from .test_diff import _patched

NAMES = ["name", "image", "limits", "claims", "gpu", "memory", "a", "b"]


def _value(rnd: random.Random, depth: int = 0):
    return random_value(rnd, NAMES, ["gpu", "1", 1, "8Gi", "memory: 8Gi", True, None, "x y"], 3, 3, depth)


def _document(rnd: random.Random) -> str:
    import yaml

    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{rnd.randint(0, 9)}"},
            "spec": {key: _value(rnd, 1) for key in rnd.sample(NAMES, rnd.randint(1, 4))}}
    return yaml.safe_dump(data, sort_keys=False, indent=rnd.choice([2, 4]))


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _paths(value, prefix + (index,))


def _edits(rnd: random.Random, data) -> tuple:
    paths = [p for p in _paths(data) if len(p) > 1]
    edits = []
    for _ in range(rnd.randint(1, 4)):
        path = rnd.choice(paths)
        op = rnd.choice([Op.SET, Op.SET, Op.REMOVE, Op.APPEND, Op.ADD_DOCUMENT])
        if op is Op.SET:
            edits.append(Edit(op, path if rnd.random() < 0.5 else path + (rnd.choice(NAMES),), _value(rnd, 1)))
        elif op is Op.APPEND:
            edits.append(Edit(op, path[:-1] + (rnd.choice(NAMES),), _value(rnd, 2)))
        elif op is Op.REMOVE:
            edits.append(Edit(op, path))
        else:
            edits.append(Edit(op, (), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
    return tuple(edits)


def _texts(rnd: random.Random) -> tuple[str, int, int, int]:
    """A stream of a few documents and one of them: (text, its start, its end, its first line)."""
    documents = [_document(rnd) for _ in range(rnd.randint(1, 3))]
    text = "---\n".join(documents)
    if rnd.random() < 0.15:
        text = text.rstrip("\n")
    which = rnd.randrange(len(documents))
    start = sum(len(d) + 4 for d in documents[:which])
    end = start + len(documents[which]) + (4 if which + 1 < len(documents) else 0)
    return text, start, min(end, len(text)), text.count("\n", 0, start) + 1


def _cases(count: int, seed: int):
    import yaml

    rnd = random.Random(seed)
    made = 0
    while made < count:
        text, start, end, line = _texts(rnd)
        piece = text[start:end]
        edits = _edits(rnd, yaml.safe_load(piece.split("---\n")[0]))
        try:
            fixed, steps = splice_fixes(piece, [(0, edits)], [1])
        except (NotSpliceable, EditError):
            continue
        made += 1
        yield text, start, end, line, fixed, steps


def _pairs_across(text: str, start: int, end: int, fixed: str) -> bool:
    """Whether the texts' comparison met lines taken out and added that share a line: only
    there may it pair them otherwise than the replacements do."""
    old, new = text[start:end].splitlines(True), fixed.splitlines(True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return not set(old[head:len(old) - tail]).isdisjoint(new[head:len(new) - tail])


def test_every_diff_applies_and_is_the_compared_one_where_nothing_pairs_across():
    same = across = 0
    for text, start, end, line, fixed, steps in _cases(500, 41):
        written = splice_diff("x", text, start, end, fixed, steps, line)
        new = text[:start] + fixed + text[end:]
        assert _patched(text, written) == new, (text[start:end], fixed, written)
        compared = unified_diff("x", text, new)
        if _pairs_across(text, start, end, fixed):
            across += 1
        else:
            assert written == compared, (text[start:end], fixed)
        same += written == compared
    assert across > 100 and same > 400, (same, across)  # both kinds were met


def test_a_removed_line_and_an_added_block_that_keeps_a_line_between_them():
    """The legacy pod's fix: `nvidia.com/gpu` taken out of `limits:`, `claims:` added after
    the line it keeps (`memory:`), a document added before the next one: the hunk difflib
    writes, every line where the splice put it."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: main\n"
           "    resources:\n      limits:\n        nvidia.com/gpu: 1\n        memory: 8Gi\n")
    text = pod + "---\n" + pod
    end = len(pod) + 4
    edits = (Edit(Op.REMOVE, ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")),
             Edit(Op.APPEND, ("spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
             Edit(Op.ADD_DOCUMENT, (), {"apiVersion": "v1", "kind": "ConfigMap"}))
    fixed, steps = splice_fixes(text[:end], [(0, edits)], [1])
    written = splice_diff("x", text, 0, end, fixed, steps, 1)
    assert written == unified_diff("x", text, fixed + text[end:])
    assert written.splitlines()[2:] == [
        "@@ -7,8 +7,12 @@", "   - name: main", "     resources:", "       limits:", "-        nvidia.com/gpu: 1",
        "         memory: 8Gi", "+      claims:", "+      - name: gpu", "+---", "+apiVersion: v1", "+kind: ConfigMap",
        " ---", " apiVersion: v1", " kind: Pod"]


@pytest.mark.parametrize("steps, length, expected", [
    ([(5, 0, 3)], 10, [(5, 5, 5, 8)]),  # an insertion
    ([(5, 2, 0)], 10, [(5, 7, 5, 5)]),  # a removal
    ([(8, 1, 2), (2, 3, 1)], 10, [(2, 5, 2, 3), (8, 9, 6, 8)]),  # from the last to the first (together)
    ([(2, 3, 1), (6, 1, 2)], 10, [(2, 5, 2, 3), (8, 9, 6, 8)]),  # one after another
    ([(5, 0, 3), (5, 0, 2)], 10, [(5, 5, 5, 10)]),  # two insertions at one point
    ([(2, 2, 4), (3, 2, 0)], 10, [(2, 4, 2, 4)]),  # the second takes out part of what the first wrote
])
def test_the_regions_of_the_steps_in_both_texts(steps, length, expected):
    assert regions(steps, length) == expected


def test_a_text_with_other_line_breaks_is_compared():
    text = "a: 1\rb: 2\n"
    fixed, steps = splice_fixes(text, [(0, (Edit(Op.SET, ("b",), 3),))], [1])
    assert splice_diff("x", text, 0, len(text), fixed, steps, 1) == unified_diff("x", text, fixed)


def test_the_regions_of_random_steps_rebuild_the_new_text_from_the_old():
    """Steps made in any order (one after another, each where the text then is): the old
    text with each region replaced by its new part is the new text, the regions in order
    and apart."""
    rnd = random.Random(5)
    for _ in range(2000):
        old = "".join(rnd.choice("ab\n") for _ in range(rnd.randint(0, 30)))
        new, steps = old, []
        for _ in range(rnd.randint(0, 4)):
            start = rnd.randint(0, len(new))
            removed = rnd.randint(0, len(new) - start)
            inserted = "".join(rnd.choice("xy\n") for _ in range(rnd.randint(0, 5)))
            new = new[:start] + inserted + new[start + removed:]
            steps.append((start, removed, len(inserted)))
        found = regions(steps, len(old))
        assert found is not None
        rebuilt, at = [], 0
        for old_start, old_end, new_start, new_end in found:
            assert at <= old_start <= old_end
            rebuilt += [old[at:old_start], new[new_start:new_end]]
            at = old_end
        assert "".join(rebuilt) + old[at:] == new, (old, steps)


#: the regular expression `unified` searched both texts with before: a line break other than
#: "\n" and "\r\n"
_OTHER_BREAK = re.compile(r"\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def test_a_text_with_other_line_breaks_is_told_as_the_regular_expression_told_it():
    rnd = random.Random(41)
    alphabet = ["a", " ", "\n", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028",
                "\u2029", "é", "\t"]
    texts = ["", "\n", "a", "a\n", "\r", "\r\n", "a\r\nb\n", "a\rb\n", "\u2028\n", "é\n", "\x1f\n"]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8))) for _ in range(20_000)]
    told = [other_breaks(text) for text in texts]
    assert told == [_OTHER_BREAK.search(text) is not None for text in texts]
    assert 0 < sum(told) < len(texts)  # both answers met


_PIECES = ["a: 1\n", "  b: [x]\n", "\n", "  - c\n", "d", "y\n", ", z"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=10), st.data())
def test_the_changes_written_from_replacements_are_the_changes_of_their_text(pieces, data):
    """written_changes of replacements in text order (some where the one before ends, some
    mid-line, some writing no line break) are hunks.changes of the text they make, found
    from the steps that make it (the splice's way, the last replacement first)."""
    old = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(old)), max_size=6)))
    replaced = [(start, end, data.draw(st.sampled_from(["", "y\n", "q: 2\n  - r\n", ", z"])))
                for start, end in zip(cuts[::2], cuts[1::2])]
    new, steps = old, []
    for start, end, written in reversed(replaced):
        new = new[:start] + written + new[end:]
        steps.append((start, end - start, len(written)))
    assert written_changes(old, replaced) == changes(old, new, regions(steps, len(old)))
