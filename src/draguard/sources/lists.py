"""`kind: List` streams (`kubectl get ... -o yaml|json`) split into their items before they
are built, so the per-document limits apply to each item, and a 10,000-object List costs
the memory of its items, not of one giant node tree.

The split runs on libyaml's event stream (no nodes are composed): each item's text span is
recorded, and the item is then parsed on its own from that span. A document that is not a
List, or uses anchors (an item could alias another), is parsed whole as before."""

from __future__ import annotations

import re

from ..core.patterns import Lazy
from ..core.value import Record


#: Cheap guard before the event scan: a top-level `kind: ...List` in YAML or JSON.
_LIST_KIND = Lazy(r"""^kind:\s*["']?\w*List["']?\s*$|"kind"\s*:\s*"\w*List\"""", re.MULTILINE)


class Span(Record):
    """Where a node's text is: offsets into the stream, and its first line and column (1-based)."""

    __slots__ = ("start", "end", "line", "column")

    def __init__(self, start: int, end: int, line: int, column: int) -> None:
        self.start = start
        self.end = end
        self.line = line
        self.column = column


class StreamPart(Record):
    """One document of the stream: a List with its items' spans, or a document to parse whole."""

    __slots__ = ("index", "span", "items", "kind", "api_version", "headers")

    def __init__(self, index: int, span: Span, items: list[Span] | None = None, kind: str = "", api_version: str = "",
                 headers: dict | None = None) -> None:
        self.index = index
        self.span = span
        self.items = items  # None: not a splittable List
        self.kind = kind
        self.api_version = api_version
        self.headers = {} if headers is None else headers  # the List's own scalar fields


def may_hold_lists(text: str) -> bool:
    """Whether a `kind: ...List` line may be in the text (a substring test first: most texts
    have no "List" at all, and the pattern tries every position)."""
    return "List" in text and _LIST_KIND.search(text) is not None


def split_lists(text: str) -> list[StreamPart] | None:
    """The documents of a stream with the item spans of its Lists; None when the stream does
    not parse (the whole-document parser then reports the error with its position). Imports
    PyYAML only here: a text with no List does without it (sources.libyaml)."""
    import yaml

    loader = yaml.CSafeLoader(text)
    parts: list[StreamPart] = []
    try:
        loader.get_event()  # StreamStart
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # DocumentStart
            parts.append(_document(loader, len(parts)))
            loader.get_event()  # DocumentEnd
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return parts


def _span(start_mark, end_mark) -> Span:
    return Span(start_mark.index, end_mark.index, start_mark.line + 1, start_mark.column + 1)


def _document(loader, index: int) -> StreamPart:
    import yaml

    first = loader.peek_event()
    if not isinstance(first, yaml.MappingStartEvent) or first.anchor:
        last = _skip(loader)
        return StreamPart(index, _span(first.start_mark, last.end_mark))
    loader.get_event()
    headers, items, anchored = {}, None, False
    while not loader.check_event(yaml.MappingEndEvent):
        key = loader.get_event()
        value = loader.peek_event()
        if isinstance(key, yaml.ScalarEvent) and key.value == "items" and isinstance(value, yaml.SequenceStartEvent):
            loader.get_event()
            items = []
            while not loader.check_event(yaml.SequenceEndEvent):
                item_start = loader.peek_event()
                item_end, item_anchored = _skip_checking_anchors(loader)
                anchored |= item_anchored
                items.append(_span(item_start.start_mark, item_end.end_mark))
            loader.get_event()
        elif isinstance(key, yaml.ScalarEvent) and isinstance(value, yaml.ScalarEvent):
            loader.get_event()
            headers[key.value] = value.value
        else:
            _, value_anchored = _skip_checking_anchors(loader)
            anchored |= value_anchored or not isinstance(key, yaml.ScalarEvent)
    end = loader.get_event()
    kind = headers.get("kind", "")
    splittable = items is not None and kind.endswith("List") and not anchored
    return StreamPart(index, _span(first.start_mark, end.end_mark), items if splittable else None, kind,
                      headers.get("apiVersion", ""), headers)


def _skip(loader):
    """Consume one node's events; the last one."""
    return _skip_checking_anchors(loader)[0]


def _skip_checking_anchors(loader):
    """Consume one node's events: (the last event, whether it defines or uses an anchor).
    The hot loop of the split (one pass over every event of a large List): class identity
    checks only."""
    import yaml

    get, scalar, alias = loader.get_event, yaml.ScalarEvent, yaml.AliasEvent
    opening, closing = (yaml.MappingStartEvent, yaml.SequenceStartEvent), (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth, anchored = 0, False
    while True:
        event = get()
        cls = event.__class__
        if cls is scalar:
            anchored = anchored or event.anchor is not None
        elif cls in opening:
            anchored = anchored or event.anchor is not None
            depth += 1
        elif cls in closing:
            depth -= 1
        elif cls is alias:
            anchored = True
        if depth == 0:
            return event, anchored


def span_text(text: str, span: Span) -> tuple[str, int]:
    """The node's text, and the columns to add to the positions parsed on its first line.
    A block node is indented as in the stream, so that its block structure (and its columns)
    hold. A flow node (`{`, `[`, a quoted scalar: every item of a JSON List) is taken as it
    is, its first line shifted instead: padding it cost the item's column in spaces, and the
    items of a one-line List (`kubectl get -o json | jq -c`) sit at columns up to the size of
    the file, so their padding grew with the square of it (a 9 MB List took 23 GB)."""
    body = text[span.start:span.end]
    if body[:1] in _FLOW_START:
        return body, span.column - 1
    return " " * (span.column - 1) + body, 0


_FLOW_START = ("{", "[", '"', "'")
