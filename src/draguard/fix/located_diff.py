"""The diff of a fix located on its document's block-read tree, written from its replacements,
for the HTML report (report.html._fix_diff): the fixes fix.added_keys declines
(rules/legacy.py's migrations: a `nvidia.com/gpu` limit removed, claims appended, a
ResourceClaimTemplate document added; 1,377 of the 2,125-file tree's 4,403 fixes) without
the fixed text.

The replacements are the ones splice.splice_document makes first (splice.together, on the
document splice.located_document keeps: a document's key adds and these locate it once),
and the diff is written from them (hunks.written_diff) rather than from the fixed text and
the steps that made it (hunks.splice_diff). The migrations' own edits are read straight from
the tree's marks (`_written`): a key or an item of a block collection removed (its whole
lines; a sequence item's first key up to the next), an item appended to a block sequence
there or added with its key, a key set where there is none (after a block mapping's last
line, or into `{}`) or over a scalar, the documents added after the root's last line; each
is the replacement splice writes for it (`splice._remove`, `_append`, `_set`,
`_Document.insert_after`, `_add_documents`), found without the located nodes, their marks and
the walks to their ends that splice's writers make (fix.located: the last entry's value,
then its last, while they are block collections: `_end`, each collection's end found once a
document). Any other edit is splice's (`splice.spliced`, on the same document: of the
2,125-file tree's 1,343 answered, the 17 that empty a mapping). Declined (None), for the
general way: no tree, a text with CR or another line break than "\\n" (its style is not the
one used here), a `%` directive, what the tree does not say for certain (Unlocated) and what
the splice does not do together (NotSpliceable: it then composes the document, or splices
one edit at a time). tests/unit/fix/test_located_diff.py holds it to the general path."""

from __future__ import annotations

from itertools import islice

from ..core.fixes import Op
from ..sources.yamlpos import _PAIR, _QUAD, YMap, YSeq, has_directive
from .added_keys import BLOCK_STYLE, odd_breaks
from .hunks import other_breaks, written_diff
from .located import Unlocated, key_index, quoting, scalar_end, tree_end
from .splice import NotSpliceable, Replacement, documents_after, filled, located_document, spliced, together


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
        found = together(located_document(segment, BLOCK_STYLE, tree), [edits], _written, _documents)
    except (NotSpliceable, Unlocated):
        return None
    if any(other_breaks(replacement.text) for replacement in found):
        return None
    return written_diff(display, text, start, end, [(r.start, r.end, r.text) for r in found], line)


def _written(doc, edit, ordered: list) -> Replacement:
    """The replacement of one of the fix's edits: read from the tree's marks where it is a
    migration's, else splice's."""
    op, path = edit.op, edit.path
    if op is Op.REMOVE:
        found = _removed(doc, path, ordered)
    elif op is Op.APPEND:
        found = _appended(doc, path, edit.value)
    elif op is Op.SET and path and path[-1].__class__ is str:
        found = _set(doc, doc.tree_value(path[:-1]), path[-1], edit.value)
    else:
        found = None
    return found if found is not None else spliced(doc, edit, ordered)


def _removed(doc, path: tuple, ordered: list) -> Replacement | None:
    """A key of a block mapping, or an item of a block sequence, that keeps a sibling (or one
    the fix writes below it): its lines, from the line its key or dash is on to the end of the
    line its value ends on, where nothing else is on them (splice._remove)."""
    parent, key = doc.tree_value(path[:-1]), path[-1]
    at, text = doc.root.at, doc.text
    if isinstance(parent, YMap) and parent and key.__class__ is str and key in parent:
        index = list(parent).index(key)
        _, column = _PAIR.unpack_from(parent.marks)
        kl, kc, line, first_column = _QUAD.unpack_from(parent.marks, _PAIR.size + index * _QUAD.size)
        first, mark = key_index(key, at, kl, kc), ""
        last = _end(doc, parent[key], line, first_column, column - 1)
        if len(parent) > 1 and text[text.rfind("\n", 0, first) + 1:first].strip() == "-":
            return _first_key_removed(at, parent, index, first)
    elif parent.__class__ is YSeq and key.__class__ is int and 0 <= key < len(parent):
        line, column = _PAIR.unpack_from(parent.marks)
        if text.startswith("[", at.index(line, column)):
            return None
        item_line, item_column = _PAIR.unpack_from(parent.marks, _PAIR.size * (key + 1))
        first, mark = at.index(item_line, item_column), "-"
        last = _end(doc, parent[key], item_line, item_column, column - 1)
    else:
        return None
    if len(parent) == 1 and len(path) > 1 and not filled(path[:-1], ordered):
        return None  # emptied: `{}` or `[]` written
    start = text.rfind("\n", 0, first) + 1
    if text[start:first].strip() != mark or not doc.ends_line(last):
        return None
    return Replacement(start, doc.after_line(last), "")


def _first_key_removed(at, mapping, index: int, first: int) -> Replacement | None:
    """The first key of a sequence item (`- deviceClassName: x`, the key `index` of `mapping`,
    at `first`): from it to the next key, which moves up onto the dash's line
    (splice._remove_first_key)."""
    if index + 1 >= len(mapping):
        return None
    column = _QUAD.unpack_from(mapping.marks, _PAIR.size + index * _QUAD.size)[1]
    next_line, next_column = _QUAD.unpack_from(mapping.marks, _PAIR.size + (index + 1) * _QUAD.size)[:2]
    if next_column != column:
        return None
    return Replacement(first, key_index(next(islice(mapping, index + 1, None)), at, next_line, next_column), "")


def _appended(doc, path: tuple, item) -> Replacement | None:
    """An item after the last line of a block sequence there, at its first dash's column; or
    the sequence added with its key (splice._append)."""
    found = doc.tree_value(path)
    if found.__class__ is YSeq and found:
        line, column = _PAIR.unpack_from(found.marks)
        if doc.text.startswith("[", doc.root.at.index(line, column)):
            return None
        return _inserted(doc, found, line, column, column - 1, [item])
    if found is None and path and path[-1].__class__ is str:
        return _added(doc, doc.tree_value(path[:-1]), path[-1], [item])
    return None


def _set(doc, parent, key: str, value) -> Replacement | None:
    """`key` set to `value` under the block mapping `parent` of the tree: added where it is
    not there, a scalar there replaced by one (splice._set, _replace_entry; not an empty one,
    which has no token to replace: `key:x` would be one plain scalar)."""
    if not isinstance(parent, YMap) or not parent or key not in parent:
        return _added(doc, parent, key, value)
    found = parent[key]
    if found.__class__ is YSeq or isinstance(found, YMap):
        return None
    at = doc.root.at
    index = list(parent).index(key)
    _, column = _PAIR.unpack_from(parent.marks)
    line, value_column = _QUAD.unpack_from(parent.marks, _PAIR.size + index * _QUAD.size)[2:]
    start = at.index(line, value_column)
    style = quoting(at.text, start)
    end = scalar_end(at.text, start, style, column - 1, False)
    written = doc.scalar(value, style)
    if written is None or end == start:  # an empty value (`key:`): its line written again, by splice
        return None
    return Replacement(start, end, written)


def _added(doc, parent, key: str, value) -> Replacement | None:
    """`key` set to `value` under the mapping `parent` of the tree that has no such key: after
    a block mapping's last line, at its first key's column; inside `{}` in flow style
    (splice._set)."""
    if not isinstance(parent, YMap) or key in parent:
        return None
    if not parent:  # `{}` (the block reader reads no other flow mapping)
        at = doc.root.at.index(*_PAIR.unpack_from(parent.marks)) + 1
        if doc.text[at:at + 1] != "}":
            return None
        return Replacement(at, at, f"{doc.scalar(key)}: {doc.flow(value)}")
    line, column = _PAIR.unpack_from(parent.marks)
    kl, kc = _PAIR.unpack_from(parent.marks, _PAIR.size)
    key_index(next(iter(parent)), doc.root.at, kl, kc)
    return _inserted(doc, parent, line, column, kc - 1, {key: value})


def _inserted(doc, collection, line: int, column: int, indent: int, value) -> Replacement:
    """A block entry or item after the last line of the tree's `collection` at (`line`,
    `column`), at 0-based column `indent` (splice._Document.insert_after)."""
    return doc.inserted_after(_end(doc, collection, line, column, 0), indent, value)


def _documents(doc, values: list) -> Replacement:
    """The documents the fix adds, after the root's last line (splice._add_documents)."""
    tree = doc.tree
    line, column = _PAIR.unpack_from(tree.marks)
    return documents_after(doc, doc.after_line(_end(doc, tree, line, column, 0)), values)


def _end(doc, value, line: int, column: int, indent: int) -> int:
    """Where the last token of the tree's `value` at (`line`, `column`) ends (located.tree_end),
    each collection's end found once a document (its `lasts`, which splice's writers read too)."""
    return tree_end(value, doc.root.at, line, column, indent, doc.lasts)
