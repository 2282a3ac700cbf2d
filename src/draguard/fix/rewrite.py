"""Writing what a file's rounds of fixes made of its documents, held in memory, into its text
once: the edits that turn each document as read into the document as fixed (edits_between),
spliced together on the text as read (splice.splice_fixes: located on the tree its parse
built where the block reader read the document whole, else on one composition of it), then
verified by one parse (fix.run). Rounds build on one another (the migration makes the claims that the
teardown rules then judge); splicing and parsing the text after each round cost a
composition and a parse of every changed file per round.

What no edit writes exactly (an item inserted inside a list, a document replaced whole) is
NotSpliceable: the caller then fixes that file again round by round, each round spliced and
verified (the way every file went before)."""

from __future__ import annotations

import operator
from difflib import SequenceMatcher
from itertools import count

from ..core.fixes import Edit, add_document, append, remove, set_value
from .located import block_root
from .splice import NotSpliceable, Parsed, splice_fixes


def rewritten(text: str, parsed: Parsed, documents: list, origins: list) -> tuple[str, list]:
    """(`text` made to hold `documents`, the replacements made in order). `parsed` is `text`'s
    parse; `origins[k]` is the document of `text` that `documents[k]` was made from, None for
    a document a fix added (after the one it was made with, as apply_edits places them)."""
    planned = []
    for position in reversed(range(len(origins))):  # the last document first: additions renumber none before
        origin = origins[position]
        if origin is None:
            continue
        added = []
        following = position + 1
        while following < len(origins) and origins[following] is None:
            added.append(add_document(documents[following]))
            following += 1
        edits = edits_between(parsed.documents[origin], documents[position]) + added
        if edits:
            planned.append((origin, tuple(edits)))
    return splice_fixes(text, planned, parsed.lines, _block_roots(parsed, planned))


def _block_roots(parsed: Parsed, planned: list) -> dict:
    """The planned documents' trees that the block reader read whole from `text`'s lines
    (fix.located.block_root), to locate their edits on rather than compose them again."""
    roots = {}
    for document, _ in planned:
        tree = block_root(parsed.documents[document], parsed.lines[document])
        if tree is not None:
            roots[document] = tree
    return roots


def edits_between(before, after, path: tuple = ()) -> list[Edit]:
    """Edits that make `after` of `before`, each as narrow as the data allows: a key added or
    removed, a scalar replaced, list items appended at the end or taken out; a list whose
    items are modified in place is edited item by item."""
    if before is after:  # apply_edits shares what no edit passed through
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        edits = [remove(path + (key,)) for key in before if key not in after]
        for key, value in after.items():
            if key not in before:
                edits.append(set_value(path + (key,), value))
            elif before[key] is not value:
                edits += edits_between(before[key], value, path + (key,))
        return edits
    if isinstance(before, list) and isinstance(after, list):
        return _list_edits(before, after, path)
    if _identical(before, after):
        return []
    if not path:
        raise NotSpliceable("a document replaced whole")
    return [set_value(path, after)]


def _identical(a, b) -> bool:
    """Equal as YAML data: 1, 1.0 and True are equal in Python, not in a manifest."""
    if a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_identical(value, b[key]) for key, value in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_identical, a, b))
    return type(a) is type(b) and a == b


def _list_edits(before: list, after: list, path: tuple) -> list[Edit]:
    kept = len(before)
    if len(after) >= kept and all(map(operator.is_, before, after)):  # the common case: items appended
        return [append(path, item) for item in after[kept:]]
    # each item as a number to match (dicts are not hashable): a scalar by its type and value;
    # a mapping or list of `before` by its index, and one of `after` by the index of that very
    # item (apply_edits shares what it did not change) or of one equal to it
    numbers: dict = {}
    for k, item in enumerate(before):
        numbers.setdefault(id(item) if isinstance(item, (dict, list)) else (type(item), item), k)
    fresh = count(len(before))

    def number(item) -> int:
        if isinstance(item, (dict, list)):
            found = numbers.get(id(item))
            if found is None:
                found = next((k for k, seen in enumerate(before) if _identical(seen, item)), None)
        else:
            found = numbers.get((type(item), item))
        return found if found is not None else next(fresh)

    old, new = [number(item) for item in before], [number(item) for item in after]
    edits = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "delete":
            edits += [remove(path + (index,)) for index in range(i1, i2)]
        elif tag == "insert" and i1 == len(before):
            edits += [append(path, item) for item in after[j1:j2]]
        elif tag == "replace" and i2 - i1 == j2 - j1:  # items changed in place: the paths name them as they were
            for k in range(i2 - i1):
                edits += edits_between(before[i1 + k], after[j1 + k], path + (i1 + k,))
        elif tag != "equal":
            raise NotSpliceable("an item inserted inside a list")
    return edits
