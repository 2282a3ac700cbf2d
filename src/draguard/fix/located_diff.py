"""The diff of a fix located on its document's block-read tree, written from the splice's
replacements themselves, for the HTML report (report.html._fix_diff): the fixes
fix.added_keys declines (rules/legacy.py's migrations: a `nvidia.com/gpu` limit removed,
claims appended, a ResourceClaimTemplate document added; 1,377 of the 2,125-file tree's
4,403 fixes) without the fixed text.

The replacements are the ones splice.splice_document makes first (splice.together, on the
document splice.located_document keeps: a document's key adds and these locate it once); the diff
is written from them (hunks.written_diff) rather than from the fixed text and the steps
that made it (hunks.splice_diff: the replacements applied one by one, the regions found
again from the steps, the new text cut up again). Declined (None), for the general way:
no tree, a text with CR or another line break than "\\n" (its style is not the one used
here), a `%` directive, what the tree does not say for certain (splice.together raises
Unlocated) and what the splice does not do together (NotSpliceable: it then composes the
document, or splices one edit at a time). tests/unit/fix/test_located_diff.py holds it to
the general path."""

from __future__ import annotations

from ..sources.yamlpos import has_directive
from .added_keys import BLOCK_STYLE, odd_breaks
from .hunks import other_breaks, written_diff
from .located import Unlocated
from .splice import NotSpliceable, located_document, together


def located_diff(display: str, text: str, start: int, end: int, line: int, edits: tuple, tree) -> str | None:
    """The diff of `edits` on the document `text[start:end]` (whose first line is line `line`
    of `text`, its block-read root `tree`), as splice_document and splice_diff write it;
    None where it is theirs to write."""
    if tree is None or odd_breaks(text):
        return None
    segment = text[start:end]
    if has_directive(segment):
        return None
    try:
        found = together(located_document(segment, BLOCK_STYLE, tree), [edits])
    except (NotSpliceable, Unlocated):
        return None
    if any(other_breaks(replacement.text) for replacement in found):
        return None
    return written_diff(display, text, start, end, [(r.start, r.end, r.text) for r in found], line)
