"""Where a path's text is: start and end of a key and its value in the original source.

Loading keeps only start positions (cheap, and all a finding needs). A text edit needs the
end too, so the one document it touches is composed again with libyaml on demand and the
path walked on its node graph. `text_replacement` turns the simple edits into a replacement
of a text region; anything it cannot express exactly returns None (the caller then leaves
the edit to a careful rewrite, or does not offer it as a text change)."""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.cached import by_value
from ..core.fixes import Edit, Op
from ..core.value import Value
from .libyaml import Loader

# Records (core.value), not frozen dataclasses: this module is imported with the HTML report
# and fix, and `dataclasses` (with `inspect`, `ast`, `dis` and `tokenize` under it) was about
# 14 ms of CPU of such a process that nothing else of it imports.


class Point(Value):
    __slots__ = ("index", "line", "column")

    def __init__(self, index: int, line: int, column: int):
        self.index = index  # character offset into the text
        self.line = line  # 1-based
        self.column = column  # 1-based, in characters


class Span(Value):
    __slots__ = ("start", "end")

    def __init__(self, start: Point, end: Point):
        self.start = start
        self.end = end  # exclusive


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


class Replacement(Value):
    __slots__ = ("span", "text")

    def __init__(self, span: Span, text: str):
        self.span, self.text = span, text


def _point(mark) -> Point:
    return Point(mark.index, mark.line + 1, mark.column + 1)


def _span(node) -> Span:
    return Span(_point(node.start_mark), _point(node.end_mark))


def document_node(text: str, document: int):
    """The node graph of document number `document` (0-based), None when it is not there."""
    loader = Loader(text)
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
    loader = Loader(text)
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


@by_value(maxsize=4096)
def _scalar_token(value) -> str:
    dumped = yaml.safe_dump(value, width=1 << 30, allow_unicode=True)
    return dumped.removesuffix("...\n").rstrip("\n")


def content_end(node, text: str | None = None) -> int:
    """Where the node's last token ends: a block collection's end mark lies past trailing
    comments and blank lines, at the next token, and a block scalar's (`|`, `>`) past its
    line breaks and the blank lines after it; with the text, those are stepped back over."""
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


def may_map(edit: Edit) -> bool:
    """Whether text_replacement may map `edit`, told before composing (it maps no other): a
    removal, or a set of a value written as one scalar token."""
    return edit.op is Op.REMOVE or edit.op is Op.SET and scalar_text(edit.value) is not None


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
