"""fix.hunks' diffs, written from a splice's replacements, held to difflib's unified diff of
the two texts (the way they were compared before, `\\ No newline at end of file` marked as
fix.files.unified_diff marks it) on generated texts and line edits: CRLF lines, a text
without a final line break, edits at the first and the last line, edits next to each other
(one hunk), edits whose context overlaps, a document cut out of a longer text. Every old
line is unlike the others and the lines an edit adds are never an old line: fix.hunks keeps
each replacement's lines where it put them, where a comparison may pair a line with an equal
one elsewhere (an inserted line equal to the line after it: difflib puts it before that
line, fix.hunks after it; the base's code does the same)."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from draguard.fix.hunks import splice_diff, steps_diff

_OLD_LINES = st.sampled_from(["a", "key: ", "  - x"])
_NEW_LINES = st.sampled_from(["A", "B", "new: 2", "  - Y"])


@st.composite
def _edited(draw):
    """(old text, new text, the splice's steps: (start, removed, inserted), last edit first)."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    count = draw(st.integers(0, 14))
    words = draw(st.lists(_OLD_LINES, min_size=count, max_size=count))
    lines = [f"{word}{number}{newline}" for number, word in enumerate(words)]  # each line once
    if lines and draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\r\n") or "z"  # no final line break
    cuts = sorted(draw(st.lists(st.integers(0, count), max_size=6)))
    edits = []  # (first line, last line + 1, the lines put there), in text order, apart
    for first, last in zip(cuts[::2], cuts[1::2]):
        if edits and first < edits[-1][1]:
            continue
        added = draw(st.lists(_NEW_LINES, max_size=3))
        edits.append((first, last, [line + newline for line in added]))
    if edits and lines and not lines[-1].endswith("\n") and edits[-1][1] == count and edits[-1][2] \
            and draw(st.booleans()):
        edits[-1][2][-1] = edits[-1][2][-1].rstrip("\r\n")  # the new text's last line without one too
    old = "".join(lines)
    new, steps, at = [], [], 0
    for first, last, added in edits:
        start, end = sum(map(len, lines[:first])), sum(map(len, lines[:last]))
        new.append(old[at:start] + "".join(added))
        steps.append((start, end - start, len("".join(added))))
        at = end
    new.append(old[at:])
    return old, "".join(new), steps[::-1]


def _compared(old: str, new: str, first_line: int = 1) -> str:
    """difflib's unified diff of the texts, its lines numbered from `first_line`."""
    written = difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/f.yaml", "b/f.yaml")
    lines = []
    for line in written:
        if line.startswith("@@") and first_line != 1:
            line = _renumbered(line, first_line - 1)
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _renumbered(header: str, by: int) -> str:
    def moved(part: str) -> str:
        start, _, length = part[1:].partition(",")
        return part[0] + str(int(start) + by) + ("," + length if length else "")

    _, old, new, _ = header.split(" ", 3)
    return f"@@ {moved(old)} {moved(new)} @@\n"


@settings(max_examples=400, deadline=None)
@given(_edited())
def test_a_diff_written_from_the_steps_is_difflibs(edited):
    old, new, steps = edited
    assert steps_diff("f.yaml", old, new, steps) == _compared(old, new)


@settings(max_examples=400, deadline=None)
@given(_edited(), st.integers(0, 5), st.integers(0, 5))
def test_a_documents_diff_among_other_lines_is_difflibs(edited, above, below):
    piece, fixed, steps = edited
    newline = "\r\n" if "\r\n" in piece else "\n"
    if piece and not piece.endswith("\n"):
        below = 0  # a piece without a final line break ends the text
    before, after = "".join(f"p{i}{newline}" for i in range(above)), "".join(f"s{i}{newline}" for i in range(below))
    text = before + piece + after
    expected = _compared(text, before + fixed + after)
    assert splice_diff("f.yaml", text, len(before), len(before) + len(piece), fixed, steps, above + 1) == expected
