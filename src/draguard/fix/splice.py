"""A fix's edits as changes to the original text, so that every line an edit does not touch
stays byte-identical: comments, blank lines, quoting, key order, flow style, anchors,
document markers, CRLF and indentation.

Each edit is located with the node positions libyaml gives (the one document is composed
again) and spliced into the text: a scalar token replaced; an entry's lines replaced or
removed; new entries and sequence items inserted after the last line of their collection, at
its indentation and in its style (block or flow, indented sequences or not); new documents
inserted after the document they belong to. The result is parsed again and must equal what
the edits do to the data (core.fixes.apply_edits); when it does not, or when the edit has no
exact text form, the fix is not applied and the caller says so."""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.fixes import Edit, EditError, Op, apply_edits, plain
from ..sources.spans import _content_end, document_node, locate, scalar_text
from ..sources.yamlpos import parse_stream


class NotSpliceable(Exception):
    """The edit has no exact text form here (the caller reports the fix as not applied)."""


class Changes:
    """The replacements made to a text, one region each, in order: maps their regions back to
    the original text, so that a caller can prove every other line stayed as it was."""

    def __init__(self):
        self.steps: list[tuple[int, int, int]] = []  # (start, removed length, inserted length) at the time

    def record(self, before: str, after: str) -> None:
        limit = min(len(before), len(after))
        start = 0
        while start < limit and before[start] == after[start]:
            start += 1
        end = 0
        while end < limit - start and before[-1 - end] == after[-1 - end]:
            end += 1
        self.steps.append((start, len(before) - start - end, len(after) - start - end))

    def original_regions(self) -> list[tuple[int, int]]:
        """Each replacement's region [start, end) in the original text."""
        regions = []
        for k, (start, removed, _) in enumerate(self.steps):
            low, high = start, start + removed
            for earlier, earlier_removed, inserted in reversed(self.steps[:k]):
                low = _back(low, earlier, earlier_removed, inserted, True)
                high = _back(high, earlier, earlier_removed, inserted, False)
            regions.append((low, high))
        return regions


def _back(position: int, start: int, removed: int, inserted: int, low: bool) -> int:
    if position <= start:
        return position
    if position >= start + inserted:
        return position - inserted + removed
    return start if low else start + removed  # inside text an earlier edit wrote


def apply_fix(text: str, document: int, edits, changes: Changes | None = None) -> str:
    """`text` with a fix's edits applied to document `document`, verified by parsing it again;
    each edit's replacement is recorded in `changes` once the whole fix verified. Raises
    NotSpliceable (or EditError when the edits do not fit the data)."""
    parsed, problems = parse_stream(text)
    before = [plain(d.data) for d in parsed]
    known = sorted((p.kind, p.message) for p in problems)  # other documents' own problems stay theirs
    if not 0 <= document < len(before) or before[document] is None:
        raise NotSpliceable(f"document {document} is not there to edit")
    result = apply_edits(before[document], edits)
    expected = before[:document] + result + before[document + 1:]
    ordered = [e for e in edits if e.op is not Op.REMOVE] + sorted(
        (e for e in edits if e.op is Op.REMOVE), key=lambda e: _order(e.path), reverse=True)
    added, steps = 0, []
    for edit in ordered:
        if edit.op is Op.ADD_DOCUMENT:
            after = _add_document(text, document + added, edit.value)
            added += 1
        else:
            after = _splice(text, document, edit)
        steps.append((text, after))
        text = after
    documents, problems = parse_stream(text)
    if sorted((p.kind, p.message) for p in problems) != known or [plain(d.data) for d in documents] != expected:
        raise NotSpliceable("the edited text does not parse to the fixed object")
    if changes is not None:
        for before, after in steps:
            changes.record(before, after)
    return text


def _order(path) -> tuple:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in path)


def _splice(text: str, document: int, edit: Edit) -> str:
    if edit.op is Op.SET:
        return _set(text, document, edit.path, edit.value)
    if edit.op is Op.APPEND:
        return _append(text, document, edit.path, edit.value)
    if edit.op is Op.REMOVE:
        return _remove(text, document, edit.path)
    raise NotSpliceable(f"unknown edit {edit.op}")


# --- text layout helpers --------------------------------------------------------------------

def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _after_line(text: str, index: int) -> int:
    """The index just past the line break of the line holding `index` (or the text's end)."""
    end = text.find("\n", index)
    return len(text) if end < 0 else end + 1


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _node(text: str, document: int, path: tuple):
    """(the node at `path`, its entry or None for the root); NotSpliceable when absent."""
    root = document_node(text, document)
    if root is None:
        raise NotSpliceable(f"document {document} is not there to edit")
    if not path:
        return root, None
    entry = locate(text, document, path)
    return (entry.value_node, entry) if entry is not None else (None, None)


class _IndentedDumper(yaml.SafeDumper):
    """Block sequences indented under their key (`key:\\n  - a`), for files written that way."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def _sequences_indented(root) -> bool:
    """Whether the document indents block sequences under their key; the first such pair decides."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(value, SequenceNode) and not value.flow_style and value.value and not node.flow_style:
                    return _dash_column_of(value) > key.start_mark.column
                stack.append(value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return False


def _dash_column_of(sequence: SequenceNode) -> int:
    return sequence.start_mark.column  # a block sequence starts at its first dash


def _block(value, indent: int, indented_sequences: bool, newline: str) -> str:
    """`value` (a one-key mapping or a list) in block style, every line indented by `indent`
    except the first (which goes where the caller's cursor is)."""
    dumper = _IndentedDumper if indented_sequences else yaml.SafeDumper
    dumped = yaml.dump(value, Dumper=dumper, default_flow_style=False, sort_keys=False, allow_unicode=True,
                       width=1 << 30)
    lines = dumped.rstrip("\n").split("\n")
    return newline.join([lines[0]] + [" " * indent + line for line in lines[1:]]) + newline


def _flow(value) -> str:
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, allow_unicode=True,
                          width=1 << 30).removesuffix("...\n").strip()


# --- the edits ------------------------------------------------------------------------------

def _set(text: str, document: int, path: tuple, value) -> str:
    if not path or not isinstance(path[-1], (str, int)):
        raise NotSpliceable("a set needs a key")
    node, entry = _node(text, document, path)
    if entry is not None:
        return _replace_entry(text, document, entry, path[-1], value)
    parent, _ = _node(text, document, path[:-1])
    key = path[-1]
    if parent is None or _is_null(parent):
        if not isinstance(key, str) or not path[:-1]:
            raise NotSpliceable("cannot create a list item by index")
        return _set(text, document, path[:-1], {key: value})
    if not isinstance(parent, MappingNode) or not isinstance(key, str):
        raise NotSpliceable("the parent is not a mapping")
    return _insert_key(text, document, parent, key, value)


def _is_null(node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _replace_entry(text: str, document: int, entry, key, value) -> str:
    """Replace an existing entry's value: the scalar token alone when both are scalars, the
    value's text in flow style inside flow collections, else the entry's lines."""
    old = entry.value_node
    new_scalar = scalar_text(value)
    if isinstance(old, ScalarNode) and new_scalar is not None and not (old.value == "" and old.style is None):
        return text[:entry.value.start.index] + new_scalar + text[entry.value.end.index:]
    if entry.flow or (isinstance(old, (MappingNode, SequenceNode)) and old.flow_style and entry.key is not None
                      and not _ends_line(text, old.end_mark.index)):
        return text[:entry.value.start.index] + _flow(value) + text[entry.value.end.index:]
    if entry.key is None:
        raise NotSpliceable("replacing a whole block sequence item")
    start = entry.key.start.index
    end = _after_line(text, max(_content_end(old, text), entry.key.end.index))
    root = document_node(text, document)
    newline = _newline(text)
    body = _block({key: value}, entry.key.start.column - 1, _sequences_indented(root), newline)
    return text[:start] + body + text[end:]


def _ends_line(text: str, index: int) -> bool:
    rest = text[index:_after_line(text, index)].strip()
    return rest == "" or rest.startswith("#")


def _insert_key(text: str, document: int, mapping: MappingNode, key: str, value) -> str:
    if mapping.flow_style:
        close = mapping.end_mark.index - 1
        if text[close] != "}":
            raise NotSpliceable("a flow mapping without its closing brace")
        separator = ", " if mapping.value else ""
        return text[:close] + f"{separator}{scalar_text(key)}: {_flow(value)}" + text[close:]
    column = mapping.value[0][0].start_mark.column
    at = _after_line(text, _content_end(mapping, text))
    newline = _newline(text)
    prefix = "" if at == 0 or text[at - 1] == "\n" else newline
    body = _block({key: value}, column, _sequences_indented(document_node(text, document)), newline)
    return text[:at] + prefix + " " * column + body + text[at:]


def _append(text: str, document: int, path: tuple, item) -> str:
    node, entry = _node(text, document, path)
    if node is None or _is_null(node):
        return _set(text, document, path, [item])
    if not isinstance(node, SequenceNode):
        raise NotSpliceable("appending to something that is not a list")
    if node.flow_style:
        close = node.end_mark.index - 1
        if text[close] != "]":
            raise NotSpliceable("a flow sequence without its closing bracket")
        return text[:close] + (", " if node.value else "") + _flow(item) + text[close:]
    column = _dash_column_of(node)
    at = _after_line(text, _content_end(node, text))
    newline = _newline(text)
    prefix = "" if at == 0 or text[at - 1] == "\n" else newline
    body = _block([item], column, _sequences_indented(document_node(text, document)), newline)
    return text[:at] + prefix + " " * column + body + text[at:]


def _remove(text: str, document: int, path: tuple) -> str:
    parent, _ = _node(text, document, path[:-1])
    entry = locate(text, document, path)
    if entry is None or parent is None:
        raise NotSpliceable("removing what is not there")
    if len(parent.value) == 1 and path[:-1]:  # the collection becomes empty: [] or {}, not null
        empty = [] if isinstance(parent, SequenceNode) else {}
        return _set(text, document, path[:-1], empty)
    if entry.flow:
        return _remove_flow(text, entry)
    first = entry.key.start if entry.key is not None else entry.value.start
    start = _line_start(text, first.index)
    prefix = text[start:first.index].strip()
    content_end = _content_end(entry.value_node, text)
    if prefix != ("" if entry.key is not None else "-") or not _ends_line(text, content_end):
        raise NotSpliceable("the entry shares its lines with others")
    return text[:start] + text[_after_line(text, content_end):]


def _remove_flow(text: str, entry) -> str:
    start = entry.key.start.index if entry.key is not None else entry.value.start.index
    end = entry.value.end.index
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        after += 1
        while after < len(text) and text[after] in " \t":
            after += 1
        return text[:start] + text[after:]
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before > 0 and text[before - 1] == ",":
        return text[:before - 1] + text[end:]
    return text[:start] + text[end:]


def _add_document(text: str, document: int, value) -> str:
    root = document_node(text, document)
    if root is None:
        raise NotSpliceable(f"document {document} is not there")
    newline = _newline(text)
    at = _after_line(text, _content_end(root, text))
    prefix = "" if at == 0 or text[at - 1] == "\n" else newline
    dumped = yaml.dump(value, Dumper=_IndentedDumper if _sequences_indented(root) else yaml.SafeDumper,
                       default_flow_style=False, sort_keys=False, allow_unicode=True, width=1 << 30)
    return text[:at] + prefix + "---" + newline + dumped.replace("\n", newline) + text[at:]


__all__ = ["apply_fix", "NotSpliceable", "EditError"]
