"""The nodes of a block-read document for the splice (fix.splice), found from the positioned
tree the loader already built (sources.blockyaml, `yamlpos.BlockMap`), not by composing the
document again with libyaml: composing was a third of the HTML report's fix diffs (docs/
performance.md, ninth round).

The tree holds where each key, value and item starts; these nodes are libyaml's composed
nodes (yaml.nodes) for what the splice reads of them, made only for the entries an edit
reaches, with each scalar's end found in the text when it is asked for (a plain scalar
over lines, a quoted one, an item of a one-line flow sequence, `{}`). What the tree cannot
answer for certain (the end of a block collection, which libyaml places at the next token)
raises Unlocated, and the caller composes the document as before. tests/unit/fix/
test_located.py compares the splices made on both with generated documents."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.cached import cached
from ..sources.blockyaml import closing
from ..sources.spans import content_end
from ..sources.yamlpos import _PAIR, _QUAD, BlockMap, YMap, YSeq

_STR, _NULL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null"
#: a scalar's tag by its value's type, as the composer resolves it (the splice asks only
#: whether it is null)
_TAGS = {type(None): _NULL, bool: "tag:yaml.org,2002:bool", int: "tag:yaml.org,2002:int",
         float: "tag:yaml.org,2002:float", str: _STR}


class Unlocated(Exception):
    """The tree does not say where this is for certain: compose the document."""


class Mark:
    """Where a node starts or ends in the document's text, as yaml.Mark has it (0-based)."""

    __slots__ = ("index", "line", "column")

    def __init__(self, index: int, line: int, column: int):
        self.index, self.line, self.column = index, line, column


class _Text:
    """The document's text and where each of its lines starts; `first`: the tree's number
    of its first line."""

    __slots__ = ("text", "first", "starts")

    def __init__(self, text: str, first: int):
        self.text, self.first = text, first
        # each line's end, a last line without a line break included (the block reader's
        # texts break lines at "\n" only)
        self.starts = [0, *accumulate(map(len, (text + "\n").splitlines(True)))]

    def index(self, line: int, column: int) -> int:
        """The index in the text of the tree's 1-based (line, column)."""
        local = line - self.first
        if not 0 <= local < len(self.starts) - 1:
            raise Unlocated("a position outside the document's text")
        return self.starts[local] + column - 1

    def mark(self, line: int, column: int) -> Mark:
        """The tree's 1-based (line, column) in the text."""
        return Mark(self.index(line, column), line - self.first, column - 1)

    def mark_at(self, index: int) -> Mark:
        """The mark of an index of the text."""
        line = bisect_right(self.starts, index) - 1
        return Mark(index, line, index - self.starts[line])


def block_root(data, line: int) -> BlockMap | None:
    """`data` when it is a root the block reader read whole (yamlpos.BlockMap) whose first
    key is on `line`, the line the caller's piece of text starts on: a tree the splice may
    locate edits on (splice_fixes' `trees`); None for any other data."""
    if data.__class__ is not BlockMap:
        return None
    mark = data.mark
    return data if mark is not None and mark[0] == line else None


def located_root(tree, text: str) -> MappingNode:
    """The root node of the document `text` holds from its first line on, as composing it
    would give it, from its block-read root mapping `tree`."""
    return LocatedMapping(tree, _Text(text, tree.mark[0]), *tree.mark)


def sequences_indented(root: LocatedMapping) -> bool:
    """fix.splice._Document.indented_sequences of a located document, read from its tree in
    the same order (the first block sequence under a key decides): walked on the located
    nodes, it made a key and a node for every entry of the mappings it passed; the key it
    reads is checked at its place with no node made (_key_column)."""
    tree, at = root.tree, root.at
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, YMap):
            for index, (key, value) in enumerate(node.items()):
                if value.__class__ is YSeq and value:
                    kl, kc, vl, vc = _QUAD.unpack_from(node.marks, _PAIR.size + index * _QUAD.size)
                    if not at.text.startswith("[", at.index(vl, vc)):  # a block sequence
                        return vc > _key_column(key, at, kl, kc) + 1  # its first dash
                stack.append(value)
        elif node.__class__ is YSeq:
            stack.extend(node)
    return False


def indentation_step(root: LocatedMapping) -> int:
    """fix.splice._Document.indent_step of a located document, read from its tree in the same
    order (the first nested block mapping decides; the block reader reads no flow mapping
    but `{}`)."""
    at = root.at
    stack: list = [root.tree]
    while stack:
        node = stack.pop()
        if isinstance(node, YMap):
            for index, (key, value) in enumerate(node.items()):
                if value.__class__ is YMap and value:
                    step = _key_column(next(iter(value)), at, *_PAIR.unpack_from(value.marks, _PAIR.size)) \
                        - _key_column(key, at, *_PAIR.unpack_from(node.marks, _PAIR.size + index * _QUAD.size))
                    if 2 <= step <= 9:
                        return step
                stack.append(value)
        elif node.__class__ is YSeq:
            stack.extend(node)
    return 2


def located_content_end(node, text: str, known: dict | None = None) -> int:
    """spans.content_end of `node` in its document's `text`; below a located block collection
    read from the tree alone (tree_end), without a node for each level."""
    if node.__class__ is not LocatedMapping and node.__class__ is not _Sequence or node.flow_style \
            or not node.tree:
        return content_end(node, text)
    return tree_end(node.tree, node.at, *node.place, 0, known)


def tree_end(value, at: _Text, line: int, column: int, indent: int, known: dict | None = None) -> int:
    """Where the last token of the tree's `value` at its 1-based (`line`, `column`) ends, as
    spans.content_end ends its node: the last entry's value, then its last, while they are
    block collections, and that value's end found in the text, with no node made for a level
    (the located nodes made a key, a node and an entry list for each) nor for a scalar at the
    end. `indent`: the 0-based column of the block `value` is in (a plain scalar goes on over
    the lines indented past it). `known`: id of a collection's tree -> its end, filled for each
    collection the walk passes and read where a walk meets one (the caller keeps it while the
    trees live): a migration asks for the ends of the collections it inserts after and of the
    root, and those walks pass the same collections (the pod spec below the root, the limits
    below the resources)."""
    passed: list[int] = []
    text = at.text
    while True:
        kind = value.__class__
        if kind is not YSeq and not isinstance(value, YMap):
            index = at.index(line, column)
            end = scalar_end(text, index, quoting(text, index), indent, False)
            break
        if known is not None:
            found = known.get(id(value))
            if found is not None:
                end = found
                break
        if value and (kind is not YSeq or not text.startswith("[", at.index(line, column))):
            passed.append(id(value))  # a block collection: its last entry's value, or its last item
            indent = column - 1
            if kind is YSeq:
                line, column = _PAIR.unpack_from(value.marks, _PAIR.size * len(value))
                value = value[-1]
            else:  # a mapping's place is not read: a block one has no `{`
                key = next(reversed(value))
                if not isinstance(key, str):
                    raise Unlocated("a key that is not a string")
                _, _, line, column = _QUAD.unpack_from(value.marks, _PAIR.size + (len(value) - 1) * _QUAD.size)
                value = value[key]
            continue
        end = _node(value, at, line, column, indent, False).end_mark.index  # `{}`, `[]`, a flow sequence
        break
    if passed and known is not None:
        known.update(dict.fromkeys(passed, end))
    return end


def value_at(tree, path: tuple):
    """The value at `path` of a block-read tree, None where there is none or it is null (as
    spans.child finds entries, level by level): read without a located node for each level,
    which made each mapping's entry list, a key node, a value node and an entry."""
    for part in path:
        if isinstance(tree, YMap) and isinstance(part, str):
            tree = tree.get(part)
        elif tree.__class__ is YSeq and isinstance(part, int) and 0 <= part < len(tree):
            tree = tree[part]
        else:
            return None
    return tree


def tree_node(value, root):
    """The located node of a collection of `root`'s tree (one found by value_at), made from
    its own mark alone; None for a scalar or nothing."""
    if value.__class__ is not YSeq and not isinstance(value, YMap):
        return None
    line, column = _PAIR.unpack_from(value.marks)
    return (_Sequence if value.__class__ is YSeq else LocatedMapping)(value, root.at, line, column)


def first_key_column(mapping) -> int:
    """The 0-based column of a mapping node's first key (where new keys go); of a located
    one, that key alone made and checked to be at its place in the text (its entry list
    and value node not made)."""
    if mapping.__class__ is LocatedMapping:
        tree = mapping.tree
        return _key_column(next(iter(tree)), mapping.at, *_PAIR.unpack_from(tree.marks, _PAIR.size))
    return mapping.value[0][0].start_mark.column


def _key_column(key, at: _Text, line: int, column: int) -> int:
    """The 0-based column of a key the tree places at its 1-based (`line`, `column`), checked
    to be at that place in the text (key_index)."""
    key_index(key, at, line, column)
    return column - 1


def key_index(key, at: _Text, line: int, column: int) -> int:
    """Where in the text a key the tree places at its 1-based (`line`, `column`) starts,
    checked to be at that place (a tree of another text is not located on), read with no
    node made for it."""
    if not isinstance(key, str):
        raise Unlocated("a key that is not a string")
    index, text = at.index(line, column), at.text
    if not (text.startswith(key, index) and text.startswith(":", index + len(key))) \
            and text[index:index + 1] not in ("'", '"'):
        raise Unlocated("the tree's key is not at its place in the text")
    return index


def quoting(text: str, index: int) -> str:
    """A scalar token's quoting, read from its first character at `index`: `'`, `"`, or ""
    (plain)."""
    first = text[index:index + 1]
    return first if first == "'" or first == '"' else ""


def _node(value, at: _Text, line: int, column: int, indent: int, flow: bool):
    """The node of a value of the tree at the tree's (`line`, `column`); `indent`: the
    0-based column of the block it is in (a plain scalar goes on over the lines indented
    past it); `flow`: an item of a flow sequence."""
    if value.__class__ is YMap:
        return LocatedMapping(value, at, line, column)
    if value.__class__ is YSeq:
        return _Sequence(value, at, line, column)
    return _Scalar(value, at, line, column, indent, flow)


class _Placed:
    """A node's start, made when first read from the tree's (line, column)."""

    at: _Text
    place: tuple[int, int]

    @cached
    def start_mark(self) -> Mark:
        return self.at.mark(*self.place)


class _Made(Sequence):
    """A collection's entries (a composed node's `value`), each made when first read: the
    splice reads a few of a mapping (its first key's column, its last entry's end). They
    hold what makes them, not their node: a cycle would outlive the report, which renders
    with the cyclic collector paused (32 MiB more at the peak of the 2,125-file tree's)."""

    __slots__ = ("made", "tree", "at", "indent")

    def __init__(self, tree, at: _Text, indent: int):
        self.made: list = [None] * len(tree)
        self.tree, self.at, self.indent = tree, at, indent

    def __len__(self) -> int:
        return len(self.made)

    def __getitem__(self, index):  # an index, no slice: the splice takes none
        found = self.made[index]
        if found is None:
            found = self.made[index] = self.make(index % len(self.made))
        return found

    def __iter__(self):
        made = self.made
        if None in made:
            for index, found in enumerate(made):
                if found is None:
                    made[index] = self.make(index)
        return iter(made)

    def make(self, index: int):
        raise NotImplementedError


class _Entries(_Made):
    """A mapping's (key node, value node) pairs."""

    __slots__ = ("keys",)

    def __init__(self, tree, at: _Text, indent: int):
        super().__init__(tree, at, indent)
        self.keys = list(tree)

    def make(self, index: int) -> tuple:
        key, tree, at = self.keys[index], self.tree, self.at
        kl, kc, vl, vc = _QUAD.unpack_from(tree.marks, _PAIR.size + index * _QUAD.size)
        return _Key(key, at, kl, kc), _node(tree[key], at, vl, vc, self.indent, False)


class _Items(_Made):
    """A sequence's items; `flow`: in a flow sequence."""

    __slots__ = ("flow",)

    def __init__(self, tree, at: _Text, indent: int, flow: bool):
        super().__init__(tree, at, indent)
        self.flow = flow

    def make(self, index: int):
        line, column = _PAIR.unpack_from(self.tree.marks, _PAIR.size * (index + 1))
        return _node(self.tree[index], self.at, line, column, self.indent, self.flow)


class LocatedMapping(_Placed, MappingNode):  # type: ignore[misc]  # start_mark made when read
    """A block mapping, or `{}` (the block reader reads no other flow mapping, and no block
    mapping is empty)."""

    tag = "tag:yaml.org,2002:map"

    def __init__(self, tree, at: _Text, line: int, column: int):  # pylint: disable=super-init-not-called
        self.tree, self.at, self.place, self.flow_style = tree, at, (line, column), not tree

    @cached
    def value(self) -> _Entries:
        return _Entries(self.tree, self.at, self.place[1] - 1)

    def entry(self, key: str) -> tuple[ScalarNode, Any] | None:
        """(key node, value node) of `key`, None where the mapping has none (spans.child's
        answer, without a look at every key)."""
        if key not in self.tree:
            return None
        entries = self.value
        return entries[entries.keys.index(key)]

    @property
    def end_mark(self) -> Mark:  # type: ignore[override]  # found when read, or Unlocated
        if self.flow_style:
            return self.at.mark_at(self.start_mark.index + 2)
        raise Unlocated("where a block mapping ends")


class _Sequence(_Placed, SequenceNode):  # type: ignore[misc]  # start_mark made when read
    """A block sequence, or a flow sequence of scalars on one line."""

    tag = "tag:yaml.org,2002:seq"

    def __init__(self, tree, at: _Text, line: int, column: int):  # pylint: disable=super-init-not-called
        self.tree, self.at, self.place = tree, at, (line, column)

    @cached
    def flow_style(self) -> bool:
        return self.at.text.startswith("[", self.start_mark.index)

    @cached
    def value(self) -> _Items:
        return _Items(self.tree, self.at, self.place[1] - 1, self.flow_style)

    @property
    def end_mark(self) -> Mark:  # type: ignore[override]  # found when read, or Unlocated
        if self.flow_style:
            text = self.at.text
            after = self.value[-1].end_mark.index if self.tree else self.start_mark.index + 1
            return self.at.mark_at(text.index("]", after) + 1)
        raise Unlocated("where a block sequence ends")


class _Quoted(_Placed):
    """A scalar token's quoting, read from its first character: `'`, `"`, or "" (plain)."""

    @cached
    def style(self) -> str:
        return quoting(self.at.text, self.start_mark.index)


class _Key(_Quoted, ScalarNode):
    """A mapping key: plain, or quoted on its line."""

    tag = _STR

    def __init__(self, key, at: _Text, line: int, column: int):  # pylint: disable=super-init-not-called
        if not isinstance(key, str):
            raise Unlocated("a key that is not a string")
        self.value, self.at, self.place = key, at, (line, column)

    @cached
    def start_mark(self) -> Mark:
        """Its place, where the text has it (key_index)."""
        key_index(self.value, self.at, *self.place)
        return self.at.mark(*self.place)

    @cached
    def end_mark(self) -> Mark:
        start = self.start_mark
        style = self.style
        end = scalar_end(self.at.text, start.index, style, 0, False) if style else start.index + len(self.value)
        return Mark(end, start.line, start.column + end - start.index)


class _Scalar(_Quoted, ScalarNode):  # type: ignore[misc]  # start_mark made when read
    """A scalar, its end and style found in the text when asked for."""

    def __init__(self, data, at: _Text, line: int, column: int, indent: int, flow: bool):  # pylint: disable=super-init-not-called
        self.data, self.at, self.place, self.indent, self.flow = data, at, (line, column), indent, flow
        self.tag = _TAGS.get(type(data), "tag:yaml.org,2002:timestamp")

    @cached
    def value(self) -> str:
        """The scalar's text (a quoted one's value; a plain one over lines as written, not
        folded: the splice asks only whether it is empty)."""
        if self.style:
            return self.data
        return self.at.text[self.start_mark.index:self.end_mark.index]

    @cached
    def end_mark(self) -> Mark:
        return self.at.mark_at(scalar_end(self.at.text, self.start_mark.index, self.style, self.indent, self.flow))


def scalar_end(text: str, start: int, style: str, indent: int, flow: bool) -> int:
    """Where the scalar starting at `start` ends, as libyaml's scanner ends its token."""
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    if style:
        end = closing(text[start:line_end], style)
        return start + (end if end >= 0 else closing(text[start:], style)) + 1
    if flow:  # an item of a one-line flow sequence: plain, up to the next `,` or `]`
        stop = min(found for found in (text.find(",", start, line_end), text.find("]", start, line_end), line_end)
                   if found >= 0)
        return start + len(text[start:stop].rstrip(" "))
    cut = text.find(" #", start, line_end)
    if cut >= 0:  # a comment ends it on its first line
        return start + len(text[start:cut].rstrip(" "))
    end = start + len(text[start:line_end].rstrip(" "))
    at = line_end + 1
    while at < len(text):  # its lines go on while they are indented past its block
        following = text.find("\n", at)
        following = len(text) if following < 0 else following
        line = text[at:following]
        content = line.lstrip(" ")
        if content:
            if content[0] == "#" or len(line) - len(content) <= indent:
                break  # the block reader read no comment line within a scalar
            cut = content.find(" #")
            if cut >= 0:
                return following - len(content) + len(content[:cut].rstrip(" "))
            end = at + len(line.rstrip(" "))
        at = following + 1
    return end
