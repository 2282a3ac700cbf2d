"""The byte-minimality check of `draguard fix`: every line of the original that no edit
touched is in the fixed text, byte for byte and in order."""

from __future__ import annotations

import difflib


def touched_lines(original: str, regions) -> set[int]:
    """0-based numbers of the original's lines that a replacement region overlaps (an
    insertion between two lines touches neither)."""
    starts = [0]
    for i, ch in enumerate(original):
        if ch == "\n":
            starts.append(i + 1)
    touched = set()
    for low, high in regions:
        first = max(i for i, s in enumerate(starts) if s <= low)
        if high == low:
            if low != starts[first]:
                touched.add(first)  # inserted inside a line
            continue
        last = max(i for i, s in enumerate(starts) if s < high)
        touched.update(range(first, last + 1))
    return touched


def untouched_lines_lost(original: str, fixed: str, regions) -> list[str]:
    """The untouched original lines that the fixed text does not keep in place (empty: the
    fix was byte-minimal)."""
    old, new = original.splitlines(keepends=True), fixed.splitlines(keepends=True)
    touched = touched_lines(original, regions)
    kept = set()
    for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    return [f"{i + 1}: {old[i]!r}" for i in range(len(old)) if i not in touched and i not in kept]
