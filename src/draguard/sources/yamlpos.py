"""YAML to plain Python data that remembers where every key and value came from.

The parsed trees are `YMap`/`YSeq` (dict/list subclasses carrying 1-based positions and their
path from the document root, see `core.location`); sources.blockyaml reads block-style
documents into them from the text's lines, sources.libyaml the rest with libyaml's composer,
enforcing the input limits (`Limits`). This module holds the trees and the stream's entry
points, and imports neither reader's YAML library: a file read whole from its lines does
without PyYAML (sources.libyaml).
"""

from __future__ import annotations

import re
import struct
from array import array
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from sys import intern as _intern

from ..core.location import Path
from ..core.value import Record, Value
from ..core.patterns import Lazy

Mark = tuple  # (line, column), both 1-based


#: A parsed collection's positions are one bytes object of unsigned 32-bit numbers: its own
#: (line, column), then each key's and its value's (a mapping: four numbers a key) or each
#: item's (a sequence: two an item). Ints in a list cost ~48 bytes a position (an int object
#: and its slot) and the list its own header: 15x the input for a stream of small objects,
#: of which the positions were a third (tracemalloc). A position is unpacked only for a finding.
_WORD = "I"
_PAIR = struct.Struct("=2I")
_QUAD = struct.Struct("=4I")


def _sealed(numbers: list[int]) -> bytes:
    return array(_WORD, numbers).tobytes()


class _Placed:
    """Where a parsed collection starts (the first two numbers of `marks`), read as `mark`;
    data that never had text has none."""

    __slots__ = ()

    @property
    def mark(self) -> Mark | None:
        marks = getattr(self, "marks", None)
        return _PAIR.unpack_from(marks) if marks is not None else None


class YMap(_Placed, dict):
    """A mapping that knows where it is: `mark` (line, column), `key_mark` and `value_mark`
    of each key, and `path` from the document root. Objects that never had text (admission
    requests) have a path only. The positions follow the keys' order, not a mapping: a
    mapping per mapping was a fifth of a large stream's memory."""

    __slots__ = ("marks", "path")
    marks: bytes  # (line, column) of the mapping, then of each key and its value, in the keys' order
    path: tuple

    def _quad(self, key) -> tuple[int, int, int, int] | None:
        marks = getattr(self, "marks", None)
        if marks is None or key not in self:
            return None
        offset = _PAIR.size + list(self).index(key) * _QUAD.size
        return _QUAD.unpack_from(marks, offset) if offset < len(marks) else None

    def key_mark(self, key) -> Mark | None:
        m = self._quad(key)
        return m[:2] if m is not None else self.mark

    def value_mark(self, key) -> Mark | None:
        m = self._quad(key)
        return m[2:] if m is not None else self.mark


class BlockMap(YMap):
    """A document's root mapping that sources.blockyaml read whole from its lines: every key
    of its text is in it, in order, at its place (no live object's managedFields dropped, no
    key repeated), so the nodes of its text can be found from it (fix.located)."""

    __slots__ = ()


class YSeq(_Placed, list):
    """A sequence that knows where it is, where each item is (`item_mark`), and its path."""

    __slots__ = ("marks", "path")
    marks: bytes  # (line, column) of the sequence, then of each item
    path: tuple

    def item_mark(self, index: int) -> Mark | None:
        marks = getattr(self, "marks", None)
        if marks is None:
            return None
        offset = _PAIR.size * (index + 1)
        return _PAIR.unpack_from(marks, offset) if index >= 0 and offset < len(marks) else self.mark


def mark_of(container, key=None, *, value: bool = False) -> Mark | None:
    """Position of `container[key]` (its key, or its value with `value=True`), or of the
    container itself when `key` is None; None when the data has no positions."""
    if key is None:
        return getattr(container, "mark", None)
    if isinstance(container, YMap):
        return container.value_mark(key) if value else container.key_mark(key)
    if isinstance(container, YSeq):
        return container.item_mark(key)
    return None


def path_of(container: object, key: str | int | None = None) -> Path | None:
    """The path of `container[key]` (or of the container), None for data without paths."""
    base: Path | None = getattr(container, "path", None)
    if base is None or key is None:
        return base
    return base + (key,)


def positioned(data, path: tuple = ()):
    """Plain data (JSON from an AdmissionReview or the API) as YMap/YSeq carrying paths, so
    rules address it as they address parsed files. A YMap or YSeq already at its path is kept
    whole, with the marks of the text it was read from: a fixed document (core.fixes.apply_edits
    copies the containers an edit passes through, as plain ones, and shares the rest)."""
    if isinstance(data, (YMap, YSeq)) and getattr(data, "path", None) == path:
        return data
    if isinstance(data, dict):
        out = YMap()
        out.path = path
        for key, value in data.items():
            out[key] = positioned(value, path + (key,))
        return out
    if isinstance(data, list):
        seq = YSeq()
        seq.path = path
        seq.extend(positioned(value, path + (i,)) for i, value in enumerate(data))
        return seq
    return data


class Limits(Value):
    """Refusal thresholds for hostile or broken input (documented in the README)."""

    __slots__ = ("max_file_bytes", "max_document_bytes", "max_depth", "max_nodes", "tree_bytes")

    def __init__(self, max_file_bytes: int = 32 * 1024 * 1024, max_document_bytes: int = 8 * 1024 * 1024,
                 max_depth: int = 100, max_nodes: int = 1_000_000, tree_bytes: int | None = None) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_document_bytes = max_document_bytes
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        #: not a refusal: a text larger than this keeps no trees of its objects, each parsed again
        #: from the text when read (sources.reread); None: every text keeps them. Only a reader
        #: that lets each object go once judged gains (engine.lint: LINT_LIMITS)
        self.tree_bytes = tree_bytes


DEFAULT_LIMITS = Limits()


class ParseProblem(Record):
    """A parse-level problem: `kind` is 'syntax', 'limit' or 'duplicate-key'."""

    __slots__ = ("kind", "message", "line", "column", "earlier")

    def __init__(self, kind: str, message: str, line: int, column: int,
                 earlier: tuple[int, int] | None = None) -> None:
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
        #: (line, column) of what the problem refers back to (the first of two equal keys): the
        #: loader cites it where the user reads it (a Helm template's line, not helm's output's)
        self.earlier = earlier


class Document(Record):
    __slots__ = ("index", "data", "start_line", "end_line", "problems", "span")

    def __init__(self, index: int, data: object, start_line: int, end_line: int, problems: list | None = None,
                 span: tuple[int, int] | None = None) -> None:
        self.index = index
        self.data = data
        self.start_line = start_line
        self.end_line = end_line
        self.problems = [] if problems is None else problems
        #: (start, end) offsets of its text where it is a mapping that starts a line: that text
        #: alone, parsed with its lines offset, gives the same data (sources.reread)
        self.span = span


def _short(value: str) -> str:
    """Short string values repeat too (images, 'True', namespaces): shared like the keys."""
    return _intern(value) if len(value) <= 64 else value


class Paths:
    """One tuple for each path met again: every document of a stream of pods has its
    `("spec", "containers", 0)`, and a tuple per collection was a tenth of such a stream's
    memory. Parses of the parts of one text share one (the items of a List, an object
    parsed again: sources.reread), so that what a finding keeps of a path is shared too.
    Bounded: a document of many distinct paths (a long list) clears it now and then (libyaml's
    builder, asking `shared`), or its end does (the block reader, `sharing` then `bounded`)."""

    __slots__ = ("seen",)
    _SIZE = 4096

    def __init__(self):
        self.seen: dict[tuple, tuple] = {}

    def shared(self, path: tuple) -> tuple:
        return self.sharing()(path, path)

    def sharing(self) -> Callable[[tuple, tuple], tuple]:
        """`shared` for the paths of one document, called as `sharing()(path, path)`: the
        table's own setdefault, bounded here once rather than on each call (sources.blockyaml:
        a call fewer for each of a tree's collections, 63,500 in a tree of 4,158 objects). It
        holds at most the document's own paths past the bound, which its tree holds anyway, until
        the document's end (`bounded`)."""
        self.bounded()
        return self.seen.setdefault

    def bounded(self) -> None:
        """The table emptied where it holds its bound. The block reader asks it at a document's
        end: kept till the next document, a large document's paths outlived its tree (an
        object parsed again, sources.reread, whose table lives as long as the process: 45,000
        paths, 5.8 MB more held than libyaml's builder holds, for a document of 0.86 MB)."""
        if len(self.seen) >= self._SIZE:
            self.seen.clear()





def parse_stream(text: str, limits: Limits = DEFAULT_LIMITS, root_path: tuple = (),
                 line_offset: int = 0, paths: Paths | None = None) -> tuple[list[Document], list[ParseProblem]]:
    """Parse a multi-document YAML (or JSON) stream.

    Returns the documents that parsed and the problems met; a syntax error ends the stream
    (libyaml cannot resume), but documents before it are kept. `root_path` is where the text
    sits in its document (a List item parsed on its own: ("items", 3)); `line_offset`, how
    many lines come before the text where its positions are counted (one document of a
    stream parsed again alone: sources.reread). Only the data's positions are offset.
    `paths`: the table of paths to share with other parses (one per stream by default)."""
    problems: list[ParseProblem] = []
    return list(stream_documents(text, problems, limits, root_path, line_offset, paths)), problems


def has_directive(text: str) -> bool:
    """Whether `text` holds a line that starts with `%`: a YAML directive (`%YAML`, `%TAG`),
    which changes how the documents after it read, so that none is read, cut out or parsed
    again alone. Two `in` tests, not a multi-line expression, which tries every character."""
    return "%" in text and (text[:1] == "%" or "\n%" in text)


def stream_documents(text: str, problems: list[ParseProblem], limits: Limits = DEFAULT_LIMITS, root_path: tuple = (),
                     line_offset: int = 0, paths: Paths | None = None) -> Iterator[Document]:
    """parse_stream's documents one at a time, its problems added to `problems` as they are
    met: a caller that keeps less than each document's data never holds every tree at once.
    Block-style documents are read from the lines by sources.blockyaml, the rest by libyaml."""
    global _block_documents
    paths = Paths() if paths is None else paths
    if FAST:
        if _block_documents is None:
            from .blockyaml import documents
            _block_documents = documents
        return _block_documents(text, problems, limits, root_path, line_offset, paths, _by_libyaml)
    return _by_libyaml(text, problems, limits, root_path, line_offset, paths)


#: sources.blockyaml.documents, imported on the first parse (blockyaml imports this module):
#: an import statement run on every parse took 2 us, 1,750 times for a tree of 1,750 files
_block_documents: Callable[..., Iterator[Document]] | None = None


def _by_libyaml(*reading) -> Generator[Document, None, bool]:
    """sources.libyaml's documents of a text, imported (with PyYAML) only for a text the
    block reader leaves to it."""
    from .libyaml import documents
    return documents(*reading)


#: read block-style documents with sources.blockyaml (off: every document by libyaml; the
#: differential tests compare the two)
FAST = True


class _Recent:
    """The last parses, by the identity of the text object, while a command asks for it:
    `draguard fix` parses each text it writes to verify it, then lints that same string.
    Off by default (a lint keeps no texts alive); bounded when on."""

    def __init__(self):
        self.entries: "OrderedDict[int, tuple] | None" = None
        self.size = 0

    def get(self, text: str, limits: Limits):
        hit = self.entries.get(id(text)) if self.entries is not None else None
        if hit is not None and hit[0] is text and hit[1] == limits:
            return hit[2]
        return None

    def put(self, text: str, limits: Limits, result) -> None:
        if self.entries is not None:
            self.entries[id(text)] = (text, limits, result)
            if len(self.entries) > self.size:
                self.entries.popitem(last=False)


_RECENT = _Recent()


@contextmanager
def remembering_parses(size: int = 4096):
    """While the block runs, parse_stream_remembered answers any of the last `size` texts
    parsed from memory."""
    _RECENT.entries, _RECENT.size = OrderedDict(), size
    try:
        yield
    finally:
        _RECENT.entries = None


def parse_stream_remembered(text: str, limits: Limits = DEFAULT_LIMITS) -> tuple[list[Document], list[ParseProblem]]:
    """parse_stream of a whole text; within remembering_parses(), answered from memory when
    this very string object was parsed with the same limits. Callers must not change what it
    returns."""
    result = _RECENT.get(text, limits)
    if result is None:
        result = parse_stream(text, limits)
        _RECENT.put(text, limits, result)
    return result


_DOCUMENT_START = Lazy(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)


def split_documents(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each document of a stream, split at `---` markers at the start of
    a line; each text is padded with the lines before it, so positions parsed from it are
    positions in `text`. For streams holding template markup: each part is parsed on its
    own, so one broken document costs only itself."""
    starts = [m.start() for m in _DOCUMENT_START.finditer(text)]
    bounds = ([0] if not starts or starts[0] != 0 else []) + starts + [len(text)]
    parts = []
    for start, end in zip(bounds, bounds[1:]):
        first_line = text.count("\n", 0, start) + 1
        parts.append((first_line, "\n" * (first_line - 1) + text[start:end]))
    return parts


class DocumentError(ValueError):
    """A file that should hold one YAML document could not be read or parsed."""


def read_document(path: str):
    """The first document of a small YAML file (config, inventory spec) with positions;
    DocumentError says `file:line:col: problem`."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(f"{path}: cannot read: {exc}") from None
    documents, problems = parse_stream(text)
    problems = problems + [p for d in documents for p in d.problems]
    if problems:
        raise DocumentError(f"{path}:{problems[0].line}:{problems[0].column}: {problems[0].message}")
    return documents[0].data if documents else None
