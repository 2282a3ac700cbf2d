"""A fix's edits as changes to the original text, so that every line an edit does not touch
stays byte-identical: comments, blank lines, quoting, key order, flow style, anchors,
document markers, CRLF and indentation.

Each edit is located with the node positions libyaml gives (the one document composed again,
from its own first line; or, where the caller holds the document's block-read tree, found from
it: fix.located) and spliced into the text: a scalar token replaced; an entry's lines replaced or
removed; new entries and sequence items inserted after the last line of their collection, at
its indentation and in its style (block or flow, indented sequences or not, the document's
indentation step; JSON inside a JSON document, which gets no second object); new documents
inserted after the document they belong to and the indented comments that end it. A document
that repeats nodes through aliases is not edited: its copies have no text of their own. The
result is parsed again and must equal what the edits do to the data (core.fixes.apply_edits);
when it does not, or when the edit has no exact text form, the fix is not applied and the
caller says so."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from itertools import groupby
from typing import NamedTuple

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

try:  # libyaml's emitter where PyYAML has it
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - exercised only on PyYAML builds without libyaml
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]  # CSafeDumper's pure-Python twin

from ..core.cached import cached, kept
from ..core.fixes import Edit, EditError, Op, application_order, apply_edits
from ..sources.spans import Entry, child, document_node, scalar_text
from ..sources.yamlpos import has_directive, parse_stream_remembered
from .block_yaml import block_yaml
from .located import (LocatedMapping, Unlocated, first_key_column, indentation_step, located_content_end,
                      located_root, sequences_indented, tree_node, value_at)


class NotSpliceable(Exception):
    """The edit has no exact text form here (the caller reports the fix as not applied)."""


class Changes:
    """The replacements made to a text, one region each, in order: maps their regions back to
    the original text, so that a caller can prove every other line stayed as it was."""

    def __init__(self):
        self.steps: list[tuple[int, int, int]] = []  # (start, removed length, inserted length) at the time

    def record(self, start: int, removed: int, inserted: int) -> None:
        self.steps.append((start, removed, inserted))

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


class Replacement(NamedTuple):
    """A region [start, end) of a document's text and what goes there (a named tuple: a
    frozen dataclass's __init__ set each field through object.__setattr__, about 1 us of a
    migration's four)."""

    start: int
    end: int
    text: str
    column: int = 0  # a block insertion's indentation: at one point, the deeper goes first
    last: bool = False  # goes after anything else inserted at its point (added documents)

    def apply(self, text: str) -> str:
        return text[:self.start] + self.text + text[self.end:]


class Parsed(NamedTuple):
    """A text as the loader reads it: each document's data (positioned dicts and lists, equal
    to their plain copies), the problems met, and the line each document's content starts on."""

    documents: list
    problems: list
    lines: list


def parse(text: str) -> Parsed:
    documents, problems = parse_stream_remembered(text)
    return Parsed([d.data for d in documents], sorted((p.kind, p.message) for p in problems),
                  [d.start_line for d in documents])


def apply_fix(text: str, document: int, edits, changes: Changes | None = None,
              parsed: Parsed | None = None) -> tuple[str, Parsed]:
    """`text` with a fix's edits applied to document `document`, verified by parsing it again,
    and that parse (to pass as `parsed` with the next fix of the same text). Each edit's
    replacement is recorded in `changes` once the fix verified. Raises NotSpliceable (or
    EditError when the edits do not fit the data)."""
    return apply_fixes(text, [(document, edits)], changes, parsed)


def apply_fixes(text: str, planned: list[tuple[int, tuple]], changes: Changes | None = None,
                parsed: Parsed | None = None) -> tuple[str, Parsed]:
    """Several fixes of one text, (document, edits) each, spliced and verified together by
    one parse: the result must be what the fixes make of the data, in that order (a caller
    applies a file's fixes in descending document order, so that an added document renumbers
    none of those still to come, and moves none of their lines).

    A document's edits are first located together on one composition of it (_splice_together);
    when they meet one another there, or the result does not verify, they are spliced again one
    after another, each located in the text as the previous one left it."""
    before = parsed or parse(text)
    expected = fixed_documents(before.documents, planned)
    starts = _document_starts(text, before.lines, {document for document, _ in planned})
    style = TextStyle.of(text)
    try:
        return _verified(*_spliced(text, planned, starts, style, True), before, expected, changes)
    except NotSpliceable:
        return _verified(*_spliced(text, planned, starts, style, False), before, expected, changes)


def splice_fixes(text: str, planned: list[tuple[int, tuple]], lines: list,
                 trees: dict | None = None) -> tuple[str, list]:
    """apply_fixes without the parse: (the new text, the replacements made in order), for a
    caller that verifies it (fix.rewrite). `lines`: the line each document of `text` starts on.
    `trees`: document -> its block-read root (yamlpos.BlockMap), where the caller holds it:
    its fixes are located on it (fix.located), not on the document composed again, unless it
    cannot say where something is."""
    return _spliced_on_what_locates(text, planned, _document_starts(text, lines, {d for d, _ in planned}), trees)


def splice_document(text: str, edits: tuple, tree=None) -> tuple[str, list]:
    """splice_fixes of one fix on `text`, one document alone from its first line (an HTML
    report splices each finding's document cut out of its file): the piece of the text the
    document is, which _document_starts looks for, is the whole text. `tree`: its block-read
    root, where the caller holds it. (A report's 4,403 fixes spliced with no edits: 51 ms
    against splice_fixes' 58 ms at the least of 30 rounds in turn, in one process.)"""
    starts = {} if has_directive(text) else {0: (0, 0, len(text))}
    return _spliced_on_what_locates(text, [(0, edits)], starts, {0: tree} if tree is not None else None)


def _spliced_on_what_locates(text: str, planned: list, starts: dict, trees: dict | None) -> tuple[str, list]:
    """splice_fixes from the documents' starts: located on the trees where they say where
    everything is, else on the documents composed again, else one edit after another."""
    style = TextStyle.of(text)
    if trees:
        try:
            return _spliced(text, planned, starts, style, True, trees)
        except (NotSpliceable, Unlocated):
            pass  # composed, as without the trees
    try:
        return _spliced(text, planned, starts, style, True)
    except NotSpliceable:
        return _spliced(text, planned, starts, style, False)


def fixed_documents(documents: list, planned: list[tuple[int, tuple]], origins: list | None = None) -> list:
    """What the planned fixes make of a text's documents (core.fixes.apply_edits, in plan order).
    `origins`, when given (a list beside `documents`, which the caller owns), is kept in step:
    a document a fix adds has None."""
    expected = list(documents)
    for document, edits in planned:
        if not 0 <= document < len(expected) or expected[document] is None:
            raise NotSpliceable(f"document {document} is not there to edit")
        made = apply_edits(expected[document], edits)
        expected[document:document + 1] = made
        if origins is not None:
            origins[document:document + 1] = [origins[document]] + [None] * (len(made) - 1)
    return expected


def verified(text: str, problems: list, expected: list) -> Parsed | None:
    """The parse of `text` when it holds exactly `expected` with the same parse `problems`
    as the text it was spliced from, else None."""
    after = parse(text)
    return after if after.problems == problems and after.documents == expected else None


def _verified(text: str, steps: list, before: Parsed, expected: list, changes: Changes | None) -> tuple[str, Parsed]:
    after = verified(text, before.problems, expected)
    if after is None:
        raise NotSpliceable("the edited text does not parse to the fixed object")
    if changes is not None:
        for step in steps:
            changes.record(*step)
    return text, after


class TextStyle(NamedTuple):
    """What the whole text is written as: its line break, and whether it is JSON (one value,
    or several concatenated), where no YAML document may be added."""

    newline: str
    json: bool

    @classmethod
    def of(cls, text: str) -> "TextStyle":
        return cls("\r\n" if "\r\n" in text else "\n", _json_values(text))


def _json_values(text: str) -> bool:
    """Whether `text` is one or more JSON values and nothing else (a YAML stream of flow
    mappings separated by `---` is not)."""
    at = _skip(text, 0, " \t\r\n\ufeff")
    if text[at:at + 1] not in ("{", "["):
        return False
    decoder = json.JSONDecoder()  # made once the text may be JSON: a YAML text needs none (2.4 µs each)
    while at < len(text):
        try:
            _, at = decoder.raw_decode(text, at)
        except ValueError:
            return False
        at = _skip(text, at, " \t\r\n")
    return True


def _spliced(text: str, planned: list, starts: dict, style: TextStyle, together: bool,
             trees: dict | None = None) -> tuple[str, list]:
    """(the text with every planned fix spliced in, the replacements made in order). Each
    document is spliced on its own piece of the text (`_document_starts`) and the text joined
    once at the end: splicing a piece that ran to the text's end, and joining the whole text
    again after each document, copied the rest of the text per document, quadratic in a
    stream of many documents with a fix each (fixing a 1 MB stream of 3,432 pods: 44 s CPU, 24 s after). The
    documents come last first (as the callers plan them), so a replacement's position in the
    text as it was then is its position in the text as read. `trees`: as splice_fixes', for
    the documents spliced together on a piece of their own."""
    steps: list = []
    done: list[str] = []  # the spliced pieces and the text between them, from the text's end
    boundary = len(text)  # where the text already spliced (done) begins
    for document, group in groupby(planned, key=lambda fix: fix[0]):
        base, number, end = starts.get(document, (0, document, len(text)))
        if end > boundary:  # not before the pieces already spliced: splice in the whole text from here
            text, done = text[:boundary] + "".join(reversed(done)), []
            boundary = end = len(text)
        segment = text[base:end]
        fixes = [edits for _, edits in group]
        if together:
            tree = trees.get(document) if trees and document in starts else None
            segment = _splice_together(segment, base, number, fixes, style, steps, tree)
        else:
            for edits in fixes:
                segment = _splice_fix(segment, base, number, edits, style, steps)
        done += [text[end:boundary], segment]
        boundary = base
    return text[:boundary] + "".join(reversed(done)), steps


def _document_starts(text: str, lines: list, documents: set) -> dict[int, tuple[int, int, int]]:
    """document -> (the index its content's first line starts at, 0, the index the next
    document's first line starts at, or the text's end): the piece of the text that composing
    that document alone needs, so that an edit composes one document, not all those before
    it, and a splice copies that piece, not the rest of the text (documents are independent
    in YAML but for directives: with a `%` directive in the text, none is given and each edit
    composes from the start)."""
    if has_directive(text):
        return {}
    wanted = sorted({lines[k] for d in documents if 0 <= d < len(lines) for k in (d, d + 1) if k < len(lines)})
    found, index, line = {}, 0, 1
    for target in wanted:
        while line < target:
            index = text.index("\n", index) + 1
            line += 1
        found[target] = index
    starts = {}
    for d in documents:
        if 0 <= d < len(lines):
            starts[d] = (found[lines[d]], 0, found[lines[d + 1]] if d + 1 < len(lines) else len(text))
    return starts


def _splice_fix(segment: str, base: int, document: int, edits, style: TextStyle, steps: list) -> str:
    """The edits in application_order (as apply_edits takes them), each located in the piece
    of the text as the previous one left it; the documents the fix adds first, together, after
    the document as it is (so written in its style, as when the edits are located together).
    `segment`: the piece of the text that holds the document, which starts at `base` in the
    text and is number `document` in the piece; steps are recorded at their place in the text."""
    added = [edit.value for edit in edits if edit.op is Op.ADD_DOCUMENT]
    for edit in ([None] if added else []) + [e for e in application_order(edits) if e.op is not Op.ADD_DOCUMENT]:
        doc = _Document(segment, document, style)
        replacement = _add_documents(doc, added) if edit is None else _splice(doc, edit)
        steps.append((base + replacement.start, replacement.end - replacement.start, len(replacement.text)))
        segment = replacement.apply(segment)
    return segment


def _splice_together(segment: str, base: int, document: int, fixes: list, style: TextStyle, steps: list,
                     tree=None) -> str:
    """One document's fixes located on one composition of it (`together`) and applied from
    the last replacement to the first, so that none moves another. `segment`, `base`,
    `document`: as for _splice_fix; `tree`: the document's block-read root, to locate the
    edits on."""
    doc = _Document(segment, document, style) if tree is None else located_document(segment, style, tree)
    for replacement in reversed(together(doc, fixes)):
        steps.append((base + replacement.start, replacement.end - replacement.start, len(replacement.text)))
        segment = replacement.apply(segment)
    return segment


def together(doc: "_Document", fixes: list, written=None, documents=None) -> list[Replacement]:
    """The replacements of a document's fixes, in text order: insertions at one point (after
    the last line of nested collections) deepest first, then in edit order, and before lines
    replaced or removed from that point on; the documents the fixes add after the document
    (a later fix's first, as apply_edits orders them), after anything else inserted there.
    NotSpliceable when two replacements overlap, or when an edit needs what an earlier one
    makes (the caller then splices one by one). `written`, `documents`: what writes an edit's
    replacement and the added documents' (`spliced`'s and `_add_documents`' arguments;
    fix.located_diff passes its own, read from the tree's marks)."""
    written, documents = written or spliced, documents or _add_documents
    found: list[Replacement] = []
    added: list = []  # the documents the fixes add, in order
    for edits in fixes:
        ordered = _removals_last(edits)
        for edit in _creating_sets(doc, ordered):
            if edit.op is not Op.ADD_DOCUMENT:
                found.append(written(doc, edit, ordered))
        added[:0] = [edit.value for edit in ordered if edit.op is Op.ADD_DOCUMENT]
    if added:
        found.append(documents(doc, added))
    found.sort(key=lambda r: (r.start, r.end, r.last, -r.column))
    text = doc.text
    for a, b in zip(found, found[1:]):  # at one point, only whole lines: insertions, then one region
        if b.start < a.end or b.start == a.start and a.start != 0 and text[a.start - 1] != "\n":
            raise NotSpliceable("two edits meet")
    return found


def _removals_last(edits: tuple) -> list[Edit]:
    """A fix's edits as core.fixes.application_order puts them, but for the removals' order:
    it sorts them (the highest index first, so that no removal renumbers an item another
    names), and here each is located on the document as read and two that meet raise, so
    their order changes no replacement (that sort was 8 us of a migration's together)."""
    return [edit for edit in edits if edit.op is not Op.REMOVE] + [edit for edit in edits if edit.op is Op.REMOVE]


def spliced(doc: "_Document", edit: Edit, ordered: list) -> Replacement:
    """The replacement of one of a fix's edits (not an added document), the fix's edits
    `ordered` as applied: a collection the fix adds to is not emptied by removing its last
    entry."""
    if edit.op is Op.REMOVE:
        return _remove(doc, edit.path, keeps_parent=filled(edit.path[:-1], ordered))
    return _splice(doc, edit)


def filled(path: tuple, edits: list) -> bool:
    """Whether an edit of `edits` other than a removal writes below `path` (asked of a
    removal's parent only: the set of every such edit's parents, made for each fix, was
    about 5 us of a migration's)."""
    depth = len(path)
    return any(edit.op is not Op.REMOVE and len(edit.path) > depth and edit.path[:depth] == path for edit in edits)


def _creating_sets(doc: "_Document", edits: list) -> list:
    """The edits with each run of sets into one mapping that is not there yet as one set of
    that mapping: spliced one by one, the first set creates it and the others go into it,
    the same text."""
    out: list = []
    creating = None  # the mapping out[-1] creates
    for edit in edits:
        parent = edit.path[:-1]
        if edit.op is Op.SET and parent and isinstance(edit.path[-1], str) and doc.absent(parent):
            if creating == parent:
                out[-1] = Edit(Op.SET, parent, {**out[-1].value, edit.path[-1]: edit.value})
            else:
                out.append(Edit(Op.SET, parent, {edit.path[-1]: edit.value}))
                creating = parent
            continue
        out.append(edit)
        creating = None
    return out


def _splice(doc: "_Document", edit: Edit) -> Replacement:
    if edit.op is Op.SET:
        return _set(doc, edit.path, edit.value)
    if edit.op is Op.APPEND:
        return _append(doc, edit.path, edit.value)
    if edit.op is Op.REMOVE:
        return _remove(doc, edit.path)
    raise NotSpliceable(f"unknown edit {edit.op}")


# --- the document an edit goes into ----------------------------------------------------------

class _Document:
    """One document of the text, composed once for the edits located on it, or its nodes
    found from its block-read tree (`tree`, the document alone in `text`: fix.located)."""

    def __init__(self, text: str, index: int, style: TextStyle, tree=None):
        self.text, self.newline, self.json_file = text, style.newline, style.json
        self.entries: dict[tuple, Entry | None] = {}  # path -> entry: the edits of a document share their parents
        self.tree = tree
        self.values: dict[tuple, object] = {}  # path -> the tree's value there (value_at), walked once a path
        self.collections: dict[tuple, object] = {}  # path -> the located collection there (or None)
        self.lasts: dict[int, int] = {}  # id of a collection's tree -> its content's end (located_content_end)
        if tree is not None:
            self.root = located_root(tree, text)
            return  # the block reader reads no alias
        self.root = _composed(text, index) if len(text) <= _KEPT_TEXT else document_node(text, index)
        if self.root is None:
            raise NotSpliceable(f"document {index} is not there to edit")
        if "*" in text and _repeats_nodes(self.root):
            raise NotSpliceable("the document repeats nodes through YAML aliases (*name, <<: *name): an edit "
                                "there would change every copy, and the copies have no text of their own; "
                                "edit it by hand")

    def entry(self, path: tuple) -> Entry | None:
        """The entry at `path` (spans.walk), each path's parent looked up once for the document."""
        if not path:
            return None
        if path not in self.entries:
            parent, part = self.collection(path[:-1]), path[-1]
            if parent.__class__ is LocatedMapping and isinstance(part, str):
                found = parent.entry(part)  # one entry made, not the mapping's
                self.entries[path] = Entry(*found, parent.flow_style) if found is not None else None
            else:
                self.entries[path] = child(parent, part) if parent is not None else None
        return self.entries[path]

    def absent(self, path: tuple) -> bool:
        """Whether nothing, or null, is at `path`: read from the tree where there is one."""
        return self.tree_value(path) is None if self.tree is not None else _absent(self.node(path))

    def collection(self, path: tuple):
        """The node of the collection at `path` (None for anything else), found from the tree
        where there is one without locating the path to it: through the located nodes, each
        level made its mapping's entry list, a key node, a value node and an entry."""
        if self.tree is None:
            node = self.node(path)
            return node if isinstance(node, (MappingNode, SequenceNode)) else None
        nodes = self.collections
        if path not in nodes:  # one node a path: what it makes when read (its entries) serves every edit
            nodes[path] = tree_node(self.tree_value(path), self.root)
        return nodes[path]

    def tree_value(self, path: tuple):
        """value_at of the tree, each path walked once for the document: a migration asks
        about the same parents again and again (whether absent, then the collection; the
        sets grouped, then each set; an entry's parent), ten walks a fix where three do."""
        values = self.values
        if path in values:
            return values[path]
        found = values[path] = value_at(self.tree, path)
        return found

    def node(self, path: tuple):
        if not path:
            return self.root
        entry = self.entry(path)
        return entry.value_node if entry is not None else None

    @cached
    def indented_sequences(self) -> bool:
        """Whether the document indents block sequences under their key; the first such pair decides."""
        if self.root.__class__ is LocatedMapping:
            return sequences_indented(self.root)
        stack = [self.root]
        while stack:
            node = stack.pop()
            if isinstance(node, MappingNode):
                for key, value in node.value:
                    if isinstance(value, SequenceNode) and not value.flow_style and value.value \
                            and not node.flow_style:
                        return value.start_mark.column > key.start_mark.column  # the first dash
                    stack.append(value)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
        return False

    @cached
    def indent_step(self) -> int:
        """How far the document indents a block mapping under its key (2 to 9, as the emitter
        can write it); the first nested block mapping decides, 2 when there is none."""
        if self.root.__class__ is LocatedMapping:
            return indentation_step(self.root)
        stack = [self.root]
        while stack:
            node = stack.pop()
            if isinstance(node, MappingNode) and not node.flow_style:
                for key, value in node.value:
                    if isinstance(value, MappingNode) and not value.flow_style and value.value:
                        step = value.value[0][0].start_mark.column - key.start_mark.column
                        if 2 <= step <= 9:
                            return step
                    stack.append(value)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
        return 2

    def content_end(self, node) -> int:
        """Where `node`'s last token ends (spans.content_end); below a located collection,
        read from the tree (fix.located.located_content_end), each collection's found once for
        the document (the document's tree holds the trees `lasts` names)."""
        return located_content_end(node, self.text, self.lasts)

    def after_line(self, index: int) -> int:
        """The index just past the line break of the line holding `index` (or the text's end)."""
        end = self.text.find("\n", index)
        return len(self.text) if end < 0 else end + 1

    def line_start(self, index: int) -> int:
        return self.text.rfind("\n", 0, index) + 1

    def ends_line(self, index: int) -> bool:
        rest = self.text[index:self.after_line(index)].strip()
        return rest == "" or rest.startswith("#")

    def block(self, value, indent: int) -> str:
        return block_text(value, indent, self.indented_sequences, self.indent_step, self.newline)

    def dump(self, value) -> str:
        """Block YAML in the document's sequence style."""
        return _block_yaml(value, self.indented_sequences, self.indent_step)

    @cached
    def json(self) -> bool:
        """Whether the document is written as JSON (its root a flow mapping): what goes into
        it is written as JSON too, so that JSON tools still read the file."""
        return isinstance(self.root, MappingNode) and bool(self.root.flow_style)

    def flow(self, value) -> str:
        """`value` in flow style: JSON in a JSON document."""
        return json.dumps(value, ensure_ascii=False) if self.json else _flow(value)

    def scalar(self, value, style: str | None = None) -> str | None:
        """`value` as one scalar token (None for collections and strings of several lines), a
        string quoted as the scalar it replaces was, `style` its quote (double quotes in a JSON
        document)."""
        if isinstance(value, (dict, list)) or isinstance(value, str) and "\n" in value.rstrip("\n") and not self.json:
            return None  # several lines: written as a block (a literal), on lines of their own
        style = "\"" if self.json else style
        if isinstance(value, str) and style == "\"":
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, str) and style == "'" and "\n" not in value:
            return "'" + value.replace("'", "''") + "'"
        return scalar_text(value)

    def insert_after(self, node, column: int, value) -> Replacement:
        """A block entry or item inserted on a new line after `node`'s last line, at `column`."""
        return self.inserted_after(self.content_end(node), column, value)

    def inserted_after(self, end: int, column: int, value) -> Replacement:
        """A block entry or item inserted on a new line after the line holding `end`, at `column`."""
        at = self.after_line(end)
        prefix = "" if at == 0 or self.text[at - 1] == "\n" else self.newline
        return Replacement(at, at, prefix + " " * column + self.block(value, column), column)


#: the document made last on a tree: (the tree, its text, the text's style, the _Document)
_last_located: list = [None, None, None, None]


def located_document(text: str, style: TextStyle, tree) -> _Document:
    """The _Document of `text`, the document alone, on its block-read tree; the last one is
    kept: the fixes of one document come one after another (an HTML report splices each
    finding's alone: 4,403 fixes on 2,176 documents of the 2,125-file tree), and what the
    first found (entries, nodes' ends, the sequence style) serves the next. Nothing edits it."""
    last = _last_located
    if last[0] is tree and last[2] == style and last[1] == text:
        return last[3]
    doc = _Document(text, 0, style, tree)
    last[:] = tree, text, style, doc
    return doc


#: texts up to this long keep their composition (_composed); a large one's node graph would
#: stay in memory after its fixes
_KEPT_TEXT = 1 << 16


@lru_cache(maxsize=4)
def _composed(text: str, index: int):
    """document_node, kept for the last few (small) texts: the fixes of one document are
    located on the same text one after another (an HTML report splices each finding's fix on
    its document alone: the replicated corpus has 4,403 fixes on 2,176 documents; fix's
    one-by-one splice composes again what the together-splice composed). Nothing edits a
    composed node."""
    return document_node(text, index)


def _repeats_nodes(root) -> bool:
    """Whether an alias repeats a node of the document (the composer hands out the anchored
    node again)."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, MappingNode):
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return False


def _literal_lines(dumper, value: str):
    """A string of several lines as a literal block (`|`), as such strings (scripts, CEL) are
    written, not a quoted scalar with doubled line breaks; the emitter falls back to quotes
    where a literal cannot hold it (trailing spaces)."""
    style = "|" if "\n" in value.rstrip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _FastDumper(_BaseDumper):
    pass


class _IndentedDumper(yaml.SafeDumper):
    """Block sequences indented under their key (`key:\\n  - a`), for files written that way."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


for _dumper in (_FastDumper, _IndentedDumper):
    _dumper.add_representer(str, _literal_lines)
    # a fix may carry a value read from the manifest (a field moved where the API now has
    # it): positioned YMap/YSeq, which the safe dumpers refuse as unknown types
    _dumper.add_multi_representer(dict, yaml.representer.SafeRepresenter.represent_dict)
    _dumper.add_multi_representer(list, yaml.representer.SafeRepresenter.represent_list)


_DUMPED: dict[tuple, str] = {}  # a fix writes the same values in every workload it fixes (blocks and flows)


def _block_yaml(value, indented_sequences: bool, indent: int = 2) -> str:
    """`value` as block YAML: written directly where it is plain names and numbers
    (fix.block_yaml, the same bytes), else by libyaml's emitter where it can (it has no
    indented-sequence option); either remembered by its repr (made in C, where writing it
    walks the value in Python): fix values are plain data, whose repr tells types apart."""
    key = (repr(value), indented_sequences, indent)
    dumped = _DUMPED.get(key)
    if dumped is None:
        dumped = block_yaml(value, indented_sequences, indent)
        if dumped is None:
            dumper = _IndentedDumper if indented_sequences else _FastDumper
            dumped = yaml.dump(value, Dumper=dumper, default_flow_style=False, sort_keys=False,
                               allow_unicode=True, width=1 << 30, indent=indent)
        kept(_DUMPED, key, dumped, 4096)
    return dumped


def block_text(value, indent: int, indented_sequences: bool, step: int, newline: str) -> str:
    """`value` (a one-key mapping or a list) in block style, every line indented by `indent`
    except the first (which goes where the caller's cursor is): what a block insertion writes,
    here and in fix.added_keys."""
    lines = _block_yaml(value, indented_sequences, step).rstrip("\n").split("\n")
    return newline.join([lines[0]] + [" " * indent + line for line in lines[1:]]) + newline


def _flow(value) -> str:
    """`value` in flow style, remembered by its repr in _block_yaml's table (its key's style
    None): a fix sets the same values in every workload it fixes (the 68 `num-gpus` set into
    `rayStartParams: {}` on the 2,125-file tree are four values, about 60 us each through the
    emitter)."""
    key = (repr(value), None, 0)
    flown = _DUMPED.get(key)
    if flown is None:
        flown = yaml.dump(value, Dumper=_FastDumper, default_flow_style=True, sort_keys=False, allow_unicode=True,
                          width=1 << 30).removesuffix("...\n").strip()
        kept(_DUMPED, key, flown, 4096)
    return flown


def _is_null(node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _absent(node) -> bool:
    return node is None or _is_null(node)


# --- the edits ------------------------------------------------------------------------------

def _set(doc: _Document, path: tuple, value) -> Replacement:
    if not path or not isinstance(path[-1], (str, int)):
        raise NotSpliceable("a set needs a key")
    entry, key = doc.entry(path), path[-1]
    if entry is not None:
        return _replace_entry(doc, entry, key, value)
    if doc.absent(path[:-1]):
        if not isinstance(key, str) or not path[:-1]:
            raise NotSpliceable("cannot create a list item by index")
        return _set(doc, path[:-1], {key: value})
    parent = doc.collection(path[:-1])
    if not isinstance(parent, MappingNode) or not isinstance(key, str):
        raise NotSpliceable("the parent is not a mapping")
    if parent.flow_style:
        at = _flow_end(doc, parent, "}")
        separator = ", " if parent.value else ""
        return Replacement(at, at, f"{separator}{doc.scalar(key)}: {doc.flow(value)}")
    return doc.insert_after(parent, first_key_column(parent), {key: value})


def _replace_entry(doc: _Document, entry, key, value) -> Replacement:
    """Replace an existing entry's value: the scalar token alone when both are scalars (not an
    empty one, `key:`, plain: libyaml and fix.located give it the style "", not None, and the
    token written at its place made `key:x`, one plain scalar), the value's text in flow style
    inside flow collections, else the entry's lines."""
    old, key_node = entry.value_node, entry.key_node  # their marks read, not spans.Entry's spans of both ends
    new_scalar = doc.scalar(value, getattr(old, "style", None))
    if isinstance(old, ScalarNode) and new_scalar is not None and not (old.value == "" and not old.style):
        return Replacement(old.start_mark.index, old.end_mark.index, new_scalar)
    if entry.flow or (isinstance(old, (MappingNode, SequenceNode)) and old.flow_style and key_node is not None
                      and not doc.ends_line(old.end_mark.index)):
        return Replacement(old.start_mark.index, old.end_mark.index, doc.flow(value))
    if key_node is None:
        raise NotSpliceable("replacing a whole block sequence item")
    end = doc.after_line(max(doc.content_end(old), key_node.end_mark.index))
    return Replacement(key_node.start_mark.index, end, doc.block({key: value}, key_node.start_mark.column))


def _append(doc: _Document, path: tuple, item) -> Replacement:
    if doc.absent(path):
        return _set(doc, path, [item])
    node = doc.collection(path)
    if not isinstance(node, SequenceNode):
        raise NotSpliceable("appending to something that is not a list")
    if node.flow_style:
        at = _flow_end(doc, node, "]")
        return Replacement(at, at, (", " if node.value else "") + doc.flow(item))
    return doc.insert_after(node, node.start_mark.column, [item])  # a block sequence starts at its first dash


def _flow_end(doc: _Document, node, close: str) -> int:
    """Where a new entry of a flow collection goes: right after its last entry (so that it
    stays on that line, and before a trailing comma), or inside the brackets when empty."""
    end = node.end_mark.index - 1
    if doc.text[end] != close:
        raise NotSpliceable(f"a flow collection without its closing {close!r}")
    if not node.value:
        return end
    last = node.value[-1]
    return (last[1] if isinstance(node, MappingNode) else last).end_mark.index


def _remove(doc: _Document, path: tuple, keeps_parent: bool = False) -> Replacement:
    parent, entry = doc.collection(path[:-1]), doc.entry(path)
    if entry is None or parent is None:
        raise NotSpliceable("removing what is not there")
    if len(parent.value) == 1 and path[:-1] and not keeps_parent:  # the collection becomes empty: [] or {}, not null
        return _set(doc, path[:-1], [] if isinstance(parent, SequenceNode) else {})
    if entry.flow:
        return _remove_flow(doc.text, entry)
    first = (entry.key_node if entry.key_node is not None else entry.value_node).start_mark.index
    start = doc.line_start(first)
    prefix = doc.text[start:first].strip()
    last = doc.content_end(entry.value_node)
    if prefix == "-" and entry.key_node is not None:
        return _remove_first_key(doc, parent, path[-1])
    if prefix != ("" if entry.key_node is not None else "-") or not doc.ends_line(last):
        raise NotSpliceable("the entry shares its lines with others")
    return Replacement(start, doc.after_line(last), "")


def _remove_first_key(doc: _Document, mapping: MappingNode, key: str) -> Replacement:
    """The first key of a sequence item (`- deviceClassName: x`): the text from it to the
    next key goes, so that the next key moves up onto the dash line."""
    keys = [k for k, _ in mapping.value]
    index = next(i for i, k in enumerate(keys) if isinstance(k, ScalarNode) and k.value == key)
    if index + 1 >= len(keys) or keys[index + 1].start_mark.column != keys[index].start_mark.column:
        raise NotSpliceable("the entry shares its lines with others")
    return Replacement(keys[index].start_mark.index, keys[index + 1].start_mark.index, "")


def _remove_flow(text: str, entry) -> Replacement:
    """An entry of a flow collection and one comma beside it: the one after it, else the one
    before it (even on an earlier line: a JSON object keeps no trailing comma); an entry alone
    on its line takes the line with it."""
    start = (entry.key_node if entry.key_node is not None else entry.value_node).start_mark.index
    end = after = _skip(text, entry.value_node.end_mark.index, " \t")
    if after < len(text) and text[after] == ",":
        after = _skip(text, after + 1, " \t")
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].strip() and text[after:after + 1] in ("\n", "\r"):
            return Replacement(line_start, text.index("\n", after) + 1, "")
        return Replacement(start, after, "")
    before = start
    while before > 0 and text[before - 1] in " \t\r\n":
        before -= 1
    if before > 0 and text[before - 1] == ",":
        return Replacement(before - 1, end, "")
    return Replacement(start, end, "")


def _skip(text: str, index: int, characters: str) -> int:
    while index < len(text) and text[index] in characters:
        index += 1
    return index


_INDENTED_COMMENT = re.compile(r"[ \t]+#")


def _add_documents(doc: _Document, values: list) -> Replacement:
    """New documents after `doc`, each after a `---` (as JSON after a JSON document of a YAML
    stream); a JSON file takes none: it would no longer be JSON."""
    if doc.json_file:
        names = ", ".join(f"{v.get('kind')} '{(v.get('metadata') or {}).get('name')}'" for v in values)
        raise NotSpliceable(f"a JSON file holds JSON values only: write {names} to a file of its own")
    return documents_after(doc, doc.after_line(doc.content_end(doc.root)), values)


def documents_after(doc: _Document, at: int, values: list) -> Replacement:
    """New documents after `doc`, whose last token ends on the line before `at`."""
    while at < len(doc.text) and _INDENTED_COMMENT.match(doc.text, at, at + 256):
        at = doc.after_line(at)  # indented comments after the last line still belong to the document
    prefix = "" if at == 0 or doc.text[at - 1] == "\n" else doc.newline
    written = [json.dumps(value, ensure_ascii=False) + "\n" if doc.json else doc.dump(value) for value in values]
    added = "".join("---" + doc.newline + text.replace("\n", doc.newline) for text in written)
    return Replacement(at, at, prefix + added, last=True)


__all__ = ["apply_fix", "apply_fixes", "Changes", "NotSpliceable", "EditError", "fixed_documents", "parse",
           "splice_document", "splice_fixes", "verified"]
