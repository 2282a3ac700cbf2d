"""The diff of a fix that only adds keys, written straight from the edit and the document's
block-read tree, for the HTML report (report.html._fix_diff): no splice, no fixed text, no
comparison of texts.

Such a fix (a `set` of a key that is not there, under a block mapping that is, with any
mappings missing along the path created, or sets of keys into one such new mapping: 3,026
of the 2,125-file tree's 4,403 fixes) is one
insertion of whole lines, and its diff is those lines with the original's around them. What
is written is what fix.splice writes for it (`_set`, `_Document.insert_after`): the lines go
after the mapping's last line (fix.located finds it from the tree), at its first key's
column, the block written in the document's sequence style and indentation step, on the
document the splice located (splice.located_document: the general way's, for a document with fixes
of both kinds); a last line without a line break gets one. As fix.hunks.changes places
added lines, the run moves down past the old lines equal to its first (difflib's placement).

Anything else is declined (None) and goes the general way (splice.splice_document, then
hunks.splice_diff): several edits (but sets of keys into one mapping that is not there,
which the splice joins into one set), another edit than a set, a key that is there (even as
null), a parent that is not a non-empty block mapping, an index along the created path, no
tree (a JSON or flow document, one the block reader did not read), a `%` directive, a text
with CR or another line break than "\\n", whatever fix.located cannot place for certain.
tests/unit/fix/test_added_keys.py holds it to the general path on generated documents."""

from __future__ import annotations

from ..core.cached import kept
from ..core.fixes import Op
from ..sources.yamlpos import YMap, has_directive
from .hunks import Change, _context_end, _context_start, _moved_down, other_breaks, unified
from .located import Unlocated, first_key_column, tree_node, value_at
from .splice import TextStyle, located_document


def added_key_diff(display: str, text: str, start: int, end: int, line: int, edits: tuple, tree) -> str | None:
    """The diff of `edits` on the document `text[start:end]` (whose first line is line `line`
    of `text`, its block-read root `tree`) when they only add a key; None otherwise."""
    if tree is None or odd_breaks(text):
        return None
    one = _one_set(edits, tree)
    if one is None:
        return None
    path, value = one
    depth = len(path) - 1
    while (parent := value_at(tree, path[:depth])) is None:  # absent or null: created with the key (splice._set)
        depth -= 1
    if not isinstance(parent, YMap) or not parent or path[depth] in parent:
        return None  # a set into something else than a block mapping, or of a key there: the general way
    for part in path[depth:]:
        if not isinstance(part, str):
            return None  # an index along the path created
    for key in reversed(path[depth + 1:]):
        value = {key: value}
    try:
        found = _insertion(text[start:end], tree, parent, {path[depth]: value})
    except Unlocated:
        return None
    if found is None:
        return None
    at, removed, added = found
    return _diff(display, text, start + at, removed, added, line + text.count("\n", start, start + at))


def _one_set(edits: tuple, tree) -> tuple[tuple, object] | None:
    """The one set `edits` are to the splice, (its path, its value): a set of a key; or sets
    of keys into one mapping that is not there, which splice._creating_sets joins into one set
    of that mapping (the keys in the edits' order, a key set twice where it was set first, as
    a dict takes them). None for anything else."""
    if not edits:
        return None
    for edit in edits:
        if edit.op is not Op.SET or not edit.path or not isinstance(edit.path[-1], str):
            return None
    if len(edits) == 1:
        return edits[0].path, edits[0].value
    parent = edits[0].path[:-1]
    if not parent or any(edit.path[:-1] != parent for edit in edits) or value_at(tree, parent) is not None:
        return None
    return parent, {edit.path[-1]: edit.value for edit in edits}


#: the texts this path takes are written with "\n" (odd_breaks declines the others) and are no JSON
#: (a block-read root is a block mapping): the style the splice finds for them (TextStyle.of)
BLOCK_STYLE = TextStyle("\n", False)


def _insertion(segment: str, tree, parent, entry: dict) -> tuple[int, list[str], list[str]] | None:
    """Where in `segment` the lines change when `entry` goes into the block mapping `parent`
    of `tree`: (that index, the lines taken out, the lines put there); None where `segment`
    has a `%` directive (the general way composes it) or the lines a break of another kind.
    The document is the splice's (splice.located_document keeps the last one): a document's fixes,
    these and the general way's, locate its root, walk it for its style and find its
    collections' ends once."""
    if has_directive(segment):
        return None
    doc = located_document(segment, BLOCK_STYLE, tree)
    node = tree_node(parent, doc.root)
    column = first_key_column(node)
    found = segment.find("\n", doc.content_end(node))
    lines = _lines_written(doc, entry, column)
    if lines is None:
        return None
    if found < 0:  # the document's last line, without a line break: written again with one
        at = segment.rfind("\n") + 1
        return at, [segment[at:]], [segment[at:] + "\n"] + lines
    return found + 1, [], lines


#: the lines key adds wrote (_lines_written), by what they wrote and where
_WRITTEN: dict[tuple, list[str] | None] = {}


def _lines_written(doc, entry: dict, column: int) -> list[str] | None:
    """The lines the splice writes for `entry` at `column` of `doc` (_Document.block), None
    where they hold a CR or another line break; remembered by the entry's repr (as
    splice._block_yaml remembers a dump: fix values are plain data) and the document's
    style: the 2,125-file tree's 3,026 key adds write 8 blocks, and each block written cost
    its dump looked up, its lines indented and joined, checked and split again."""
    key = (repr(entry), column, doc.indented_sequences, doc.indent_step)
    if key in _WRITTEN:
        return _WRITTEN[key]
    written = " " * column + doc.block(entry, column)
    return kept(_WRITTEN, key, None if "\r" in written or other_breaks(written) else written.splitlines(True), 4096)


def _diff(display: str, text: str, at: int, removed: list[str], added: list[str], number: int) -> str:
    """The unified diff of the lines at `at` of `text` (a line start, on line `number`)
    replaced: `removed` by `added`; lines only added moved down past the old lines equal to
    their first, as fix.hunks.changes moves them."""
    if not removed:
        moved, added = _moved_down(text, at, added, False, len(text))
        number += text.count("\n", at, moved)
        at = moved
    before = _context_start(text, at)
    shown = text.count("\n", before, at)
    old = text[before:_context_end(text, at)]
    return unified(display, old, [Change(shown, removed, added)], number - shown, checked=True)


_checked: list = [None, False]  # the text looked at last, and whether it had CR or another break


def odd_breaks(text: str) -> bool:
    """Whether `text` has a CR or a line break other than "\\n" (a file's findings come
    together: looked for once a file)."""
    if _checked[0] is not text:
        _checked[:] = text, "\r" in text or other_breaks(text)
    return _checked[1]
