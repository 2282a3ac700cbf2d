"""Where a path's text is: start and end of a key and its value in the original source.

Loading keeps only start positions (cheap, and all a finding needs). A text edit needs the
end too, so the one document it touches is composed again with libyaml on demand and the
path walked on its node graph. `text_replacement` turns the simple edits into a replacement
of a text region; anything it cannot express exactly returns None (the caller then leaves
the edit to a careful rewrite, or does not offer it as a text change)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Sequence
from functools import cached_property, lru_cache

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.fixes import Edit, Op
from .yamlpos import _Loader


@dataclass(frozen=True)
class Point:
    index: int  # character offset into the text
    line: int  # 1-based
    column: int  # 1-based, in characters


@dataclass(frozen=True)
class Span:
    start: Point
    end: Point  # exclusive


class Entry:
    """A mapping key (or a sequence item, `key` None) and its value, as found in the text;
    their spans are made when asked for (a walk passes many entries and reads one)."""

    __slots__ = ("key_node", "value_node", "flow")

    def __init__(self, key_node, value_node, flow: bool):
        self.key_node, self.value_node = key_node, value_node
        self.flow = flow  # the container is in flow style ({...} or [...])

    @property
    def key(self) -> Span | None:
        return _span(self.key_node) if self.key_node is not None else None

    @property
    def value(self) -> Span:
        return _span(self.value_node)


@dataclass(frozen=True)
class Replacement:
    span: Span
    text: str


def _point(mark) -> Point:
    return Point(mark.index, mark.line + 1, mark.column + 1)


def _span(node) -> Span:
    return Span(_point(node.start_mark), _point(node.end_mark))


def document_node(text: str, document: int):
    """The node graph of document number `document` (0-based), None when it is not there."""
    loader = _Loader(text)
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if index == document:
                return node
            index += 1
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return None


def document_nodes(text: str) -> list:
    """The node graphs of every document, composed once: for a caller that locates many
    paths in one text (a report's fixes), where document_node per path composed the text
    from its start each time, quadratic in a file of many documents and findings."""
    loader = _Loader(text)
    nodes = []
    try:
        while loader.check_node():
            nodes.append(loader.get_node())
    except yaml.YAMLError:
        pass  # the documents before the error are there; a path beyond them leads nowhere
    finally:
        loader.dispose()
    return nodes


def locate(text: str, document: int, path: tuple) -> Entry | None:
    """The entry at `path` in that document; None when the path does not lead to one."""
    node = document_node(text, document)
    return walk(node, path) if node is not None and path else None


def walk(node, path: tuple) -> Entry | None:
    """The entry at `path` below a composed node; None when the path does not lead to one."""
    entry = None
    for part in path:
        entry = child(node, part)
        if entry is None:
            return None
        node = entry.value_node
    return entry


def child(node, part) -> Entry | None:
    if isinstance(node, _Located):
        return node.child(part)
    if isinstance(node, MappingNode) and isinstance(part, str):
        found = None
        for key, value in node.value:  # the last of duplicate keys wins, as when loading
            if key.__class__ is ScalarNode and key.value == part:
                found = key, value
        return Entry(found[0], found[1], node.flow_style) if found is not None else None
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return Entry(None, node.value[part], node.flow_style)
    return None


def scalar_text(value) -> str | None:
    """`value` as one YAML scalar token (None for collections)."""
    if isinstance(value, (dict, list)):
        return None
    return _scalar_token(value)


@lru_cache(maxsize=4096, typed=True)  # typed: 1, 1.0 and True are equal keys otherwise
def _scalar_token(value) -> str:
    dumped = yaml.safe_dump(value, width=1 << 30, allow_unicode=True)
    return dumped.removesuffix("...\n").rstrip("\n")


def content_end(node, text: str | None = None) -> int:
    """Where the node's last token ends: a block collection's end mark lies past trailing
    comments and blank lines, at the next token, and a block scalar's (`|`, `>`) past its
    line breaks and the blank lines after it; with the text, those are stepped back over."""
    if isinstance(node, _Located):
        return node.content_end()
    while isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
    end = node.end_mark.index
    if text is not None and isinstance(node, ScalarNode) and node.style in ("|", ">"):
        while end > node.start_mark.index and text[end - 1] in " \t\r\n":
            end -= 1
    return end


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _rest_of_line_blank(text: str, index: int) -> bool:
    end = text.find("\n", index)
    rest = text[index:] if end < 0 else text[index:end]
    return not rest.strip() or rest.lstrip().startswith("#")


def text_replacement(text: str, document: int, edit: Edit, nodes: list | None = None) -> Replacement | None:
    """The edit as a replacement of a region of `text`, when it maps to one exactly: setting a
    scalar that is there (its token is replaced), or removing a block-style entry that has
    its lines to itself (the lines go). None otherwise. `nodes`: document_nodes(text), when
    the caller has it."""
    if nodes is not None:
        root = nodes[document] if 0 <= document < len(nodes) else None
        entry = walk(root, edit.path) if root is not None and edit.path else None
    if edit.op is Op.SET:
        entry = locate(text, document, edit.path) if nodes is None else entry
        new = scalar_text(edit.value)
        if entry is None or new is None or not isinstance(entry.value_node, ScalarNode):
            return None
        return Replacement(entry.value, new)
    if edit.op is Op.REMOVE:
        entry = locate(text, document, edit.path) if nodes is None else entry
        if entry is None or entry.flow:
            return None
        first = entry.key.start if entry.key is not None else entry.value.start
        start_index = _line_start(text, first.index)
        prefix = text[start_index:first.index].strip()
        last = content_end(entry.value_node, text)
        if prefix != ("" if entry.key is not None else "-") or not _rest_of_line_blank(text, last):
            return None  # the entry shares its lines with others
        end_index = text.find("\n", last)
        end_index = len(text) if end_index < 0 else end_index + 1
        return Replacement(Span(_offset_point(text, start_index), _offset_point(text, end_index)), "")
    return None


def _offset_point(text: str, index: int) -> Point:
    line_start = _line_start(text, index)
    return Point(index, text.count("\n", 0, index) + 1, index - line_start + 1)


# --- located without composing --------------------------------------------------------------
#
# Composing a document with libyaml again, to find where an edit goes, was most of what a fix's
# splice cost (an HTML report splices every finding's fix on its document). A document written
# as plain block YAML, one token a line, is read here from its text alone: each line is
# matched by one regular expression first (`_SIMPLE`, over the whole document at once), and
# only documents that match are located without composing; the nodes on an edit's path are
# then found by searching the text at their indentation, when asked for. Such a document has
# no flow collections, block scalars, multi-line scalars, anchors, aliases, tags, explicit
# keys, tabs, CR line breaks, directives or non-ASCII text (each would need what only the
# composer knows); comments on lines of their own and after a token are allowed. Anything
# else is composed as before. The nodes made here answer as the composed ones do for what the
# splice reads (tests/unit/fix/test_splice_located.py compares both on generated documents).

class Unproven(Exception):
    """The located document cannot say this for certain: the caller composes it instead."""


_KEY = r"[^\s#'\"?:,\[\]{}&*!|>%@`<=-](?:[^\s:#]|:(?=\S))*"
_WORD = r"(?:[^\s:#]|:(?=\S)|(?<=\S)#)"
_PLAIN = rf"(?:[^\s#'\"?:,\[\]{{}}&*!|>%@`-]|[-?:](?=\S)){_WORD}*(?:[ ]+(?:[^\s:#]|:(?=\S)){_WORD}*)*"
_QUOTED = r"'(?:[^'\n]|'')*'|\"(?:[^\"\\\n]|\\[^\n])*\""
_VALUE = rf"(?:{_PLAIN}|{_QUOTED})"
_TAIL = r"(?:[ ]+#[^\n]*|[ ]*)"
_ENTRY = rf"{_KEY}:(?:[ ]+{_VALUE})?"
_CONTENT = rf"[ ]*(?:-(?:[ ]+(?:{_ENTRY}|{_VALUE}))?|{_ENTRY}){_TAIL}"
_EMPTY = r"[ ]*(?:#[^\n]*)?"
_MARKER = rf"(?:---|\.\.\.){_TAIL}"
_END = r"(?:\n|(?=\Z))"
#: a document of simple lines, then (from the next document's marker on) markers, blank lines
#: and comments only
_SIMPLE = re.compile(rf"(?>(?:{_CONTENT}|{_EMPTY}){_END})*(?:{_MARKER}{_END}(?>(?:{_MARKER}|{_EMPTY}){_END})*)?")
_VALUE_AT = re.compile(_VALUE)
_ENTRY_AT = re.compile(rf"({_KEY}):(?=[ \n]|\Z)")
_SPACES = re.compile(r"[ ]*")
_MARKER_LINE = re.compile(r"^(?:---|\.\.\.)(?=[ \n]|\Z)", re.MULTILINE)
_NULLS = frozenset({"~", "null", "Null", "NULL"})
_STR_TAG, _NULL_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null"


def located_root(text: str):
    """The root node of the first document of `text` located without composing, or None when
    the text is not plain block YAML of one token a line (the caller composes it)."""
    if "\t" in text or "\r" in text or not text.isascii() or _SIMPLE.fullmatch(text) is None:
        return None
    found = _MARKER_LINE.search(text)
    outline = _Outline(text, found.start() if found is not None else len(text))
    return outline.collection(0, outline.starts[0]) if outline.starts else None


class _Outline:
    """The lines of a located document that have content (not blank, not a comment): where
    each one's content starts and how far it is indented, found once (the nodes are made
    from them when asked for)."""

    def __init__(self, text: str, end: int):
        self.text, self.end = text, end
        first = _SPACES.match(text, 0, end).end()
        self.starts = [first] if first < end and text[first] not in "\n#" else []
        self.starts += [m.end() for m in _CONTENT.finditer(text, 0, end)]
        self.indents = [at - (text.rfind("\n", 0, at) + 1) for at in self.starts]

    def collection(self, line: int, at: int):
        """The block mapping or sequence whose first key or dash is at `at`, on content line
        `line`: up to the first line below indented less (or, for a sequence, as much without
        a dash: the next key of the mapping it is the value of)."""
        text, indents, starts = self.text, self.indents, self.starts
        column = indents[line] + at - starts[line]
        sequence = _dash(text, at)
        below = line + 1
        while below < len(starts) and (indents[below] > column or indents[below] == column
                                       and (not sequence or _dash(text, starts[below]))):
            below += 1
        kind = _LocatedSequence if sequence else _LocatedMapping
        return kind(self, line, at, column, below)

    def region_end(self, line: int) -> int:
        """Where content line `line` starts (the document's end when there is none)."""
        return self.starts[line] - self.indents[line] if line < len(self.starts) else self.end

    def value_after(self, line: int, index: int, column: int, below: int, item: bool):
        """The value that follows a key's `:` (or an item's `-`) ending at `index` on content
        line `line`: the token on that line, a compact mapping after a dash, the collection on
        the lines below (up to content line `below`, its parent's end), or a null.
        `column`: the key's (or the dash's) column."""
        text = self.text
        at = _SPACES.match(text, index).end()
        if at < len(text) and text[at] not in "\n#":
            if item and _ENTRY_AT.match(text, at) is not None:
                return self.collection(line, at)
            found = _VALUE_AT.match(text, at)
            if found is None:
                raise Unproven("a value that is not one token")
            return _LocatedScalar(text, at, found.end())
        following = line + 1
        if following < below:
            indent = self.indents[following]
            if indent > column or (indent == column and not item and _dash(text, self.starts[following])):
                return self.collection(following, self.starts[following])
        return _LocatedScalar(text, index, index)


def _dash(text: str, at: int) -> bool:
    """Whether a sequence item's dash is at `at`."""
    return text[at] == "-" and text[at + 1:at + 2] in ("", " ", "\n")


class _Mark:
    """A position as libyaml's marks give it (0-based line and column; the line counted when read)."""

    __slots__ = ("text", "index", "column")

    def __init__(self, text: str, index: int):
        self.text, self.index = text, index
        self.column = index - (text.rfind("\n", 0, index) + 1)

    @property
    def line(self) -> int:
        return self.text.count("\n", 0, self.index)


class _LocatedScalar(ScalarNode):
    """A scalar token on one line: its text from `start` to `end` (empty for a null written as
    nothing, placed right after its `:` or `-` as libyaml places it)."""

    def __init__(self, text: str, start: int, end: int):
        token = text[start:end]
        first = token[:1]
        self.style = first if first in ("'", '"') else ""  # "" for plain, as libyaml's composer has it
        self.value = token if not self.style else token[1:-1]
        self.tag = _NULL_TAG if not self.style and (token in _NULLS or not token) else _STR_TAG
        self.start_mark, self.end_mark = _Mark(text, start), _Mark(text, end)


class _Located:
    """A located block collection: its first key or dash at `start` (on content line `line`),
    at `column`, its content lines up to `below` (exclusive)."""

    flow_style = False

    def __init__(self, outline: _Outline, line: int, start: int, column: int, below: int):
        self.outline, self.text, self.line, self.start, self.column, self.below = \
            outline, outline.text, line, start, column, below
        self.start_mark = _Mark(self.text, start)

    @property
    def end(self) -> int:
        return self.outline.region_end(self.below)

    @property
    def end_mark(self):
        raise Unproven("a block collection's end")

    def _own_lines(self) -> list[tuple[int, int]]:
        """(content line, index) of each key or dash: the first, and the lines below at its
        column (a mapping's: not those of a sequence written at its keys' column)."""
        text, starts, indents, column = self.text, self.outline.starts, self.outline.indents, self.column
        mapping = isinstance(self, MappingNode)
        return [(self.line, self.start)] + [(k, starts[k]) for k in range(self.line + 1, self.below)
                                            if indents[k] == column and not (mapping and _dash(text, starts[k]))]

    def content_end(self) -> int:
        """Where its last token ends (content_end): on its last content line."""
        return _last_token_end(self.text, self.outline.starts[self.below - 1])


class _LocatedMapping(_Located, MappingNode):
    tag = "tag:yaml.org,2002:map"

    @cached_property
    def value(self) -> "_Pairs":  # type: ignore[override]  # the pairs, each made when read
        return _Pairs(self, self._own_lines())

    def pair(self, line: int, at: int):
        found = _ENTRY_AT.match(self.text, at)
        if found is None:
            raise Unproven("a key that is not a plain scalar")
        key = _LocatedScalar(self.text, at, found.end(1))
        return key, self.outline.value_after(line, found.end(), self.column, self.below, False)

    def child(self, part):
        """The entry of key `part` (the last of equal keys, as the composer's mapping has them)."""
        if not isinstance(part, str):
            return None
        text, wanted = self.text, part + ":"
        for line, at in reversed(self._own_lines()):
            if text.startswith(wanted, at) and text[at + len(wanted):at + len(wanted) + 1] in ("", " ", "\n"):
                key, value = self.pair(line, at)
                return Entry(key, value, False)
        return None


class _Pairs(Sequence):
    """A located mapping's (key, value) pairs, each made when read: the splice reads how many
    there are, and the first key's column, more often than a pair."""

    def __init__(self, mapping: _LocatedMapping, keys: list[tuple[int, int]]):
        self.mapping, self.keys = mapping, keys

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.mapping.pair(*key) for key in self.keys[index]]
        return self.mapping.pair(*self.keys[index])


class _LocatedSequence(_Located, SequenceNode):
    tag = "tag:yaml.org,2002:seq"

    @cached_property
    def value(self) -> list:  # type: ignore[override]  # the items, made when first read
        return [self._item(line, dash) for line, dash in self._own_lines()]

    def _item(self, line: int, dash: int):
        return self.outline.value_after(line, dash + 1, self.column, self.below, True)

    def child(self, part):
        if not isinstance(part, int) or part < 0:
            return None
        dashes = self._own_lines()
        return Entry(None, self._item(*dashes[part]), False) if part < len(dashes) else None


def _last_token_end(text: str, at: int) -> int:
    """Where the last token of the content line starting at `at` ends."""
    if _dash(text, at):
        dash = at
        at = _SPACES.match(text, at + 1).end()
        if at >= len(text) or text[at] in "\n#":
            return dash + 1  # a null item
    entry = _ENTRY_AT.match(text, at)
    if entry is not None:
        colon = entry.end()
        at = _SPACES.match(text, colon).end()
        if at >= len(text) or text[at] in "\n#":
            return colon  # a null value
    found = _VALUE_AT.match(text, at)
    if found is None:
        raise Unproven("a last line that is not one token")
    return found.end()


def located_layout(root) -> tuple[bool, int]:
    """(whether block sequences are indented under their key, the step a nested block mapping
    is indented by) of a located document, as fix.splice reads them from a composed one: there,
    the first pair met decides; here every pair must agree (else Unproven). The pairs: each key
    with nothing after it on its line, and the content line below it."""
    outline = root.outline
    text, starts, indents = outline.text, outline.starts, outline.indents
    sequences, steps = set(), set()
    for line in range(len(starts) - 1):
        at = starts[line]
        line_end = text.find("\n", at)
        if text[line_end - 1] not in ": " and "#" not in text[at:line_end]:
            continue  # a key and its value, or an item
        entry = _OPEN_KEY.match(text, at)
        if entry is None:
            continue
        key = indents[line] + entry.start("key") - at
        indent = indents[line + 1]
        if _dash(text, starts[line + 1]):
            if indent >= key:
                sequences.add(indent > key)
        elif indent > key and 2 <= indent - key <= 9:
            steps.add(indent - key)
    if len(sequences) > 1 or len(steps) > 1:
        raise Unproven("the document indents its collections in more than one way")
    return (sequences.pop() if sequences else False), (steps.pop() if steps else 2)


#: a content line that is a key with nothing after it (but a comment), from its content
_OPEN_KEY = re.compile(rf"(?:-[ ]+)?(?P<key>{_KEY}):{_TAIL}(?:\n|\Z)")
#: where each content line after the first starts (not blank, not a comment)
_CONTENT = re.compile(r"\n *(?=[^ \n#])")
