"""YAML to plain Python data that remembers where every key and value came from.

libyaml's C composer (PyYAML's CSafeLoader) does the parsing; this module turns its node
graph into `YMap`/`YSeq` (dict/list subclasses carrying 1-based positions and their path from
the document root, see `core.location`) in one pass. That
is as fast as PyYAML's own constructor, and it is where the input limits are enforced: a
document may not nest deeper than `Limits.max_depth`, nor expand (aliases counted each time
they are used) to more than `Limits.max_nodes` nodes, nor span more than
`Limits.max_document_bytes`.
"""

from __future__ import annotations

import operator
import re
import struct
from array import array
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from sys import intern as _intern

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.location import Path

try:  # the C loader is a hard requirement for speed, but never for correctness
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - exercised only on PyYAML builds without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]  # CSafeLoader's pure-Python twin


class _Loader(_BaseLoader):
    """The safe loader with its tag resolution answered by C callables: libyaml's composer
    calls `resolve` for every node and the path-resolver hooks around it, and as Python
    methods those calls were a fifth of a parse (measured)."""

    #: memoized: manifests repeat the same keys and values (name, image, nvidia.com/gpu, ...)
    #: thousands of times, and the regex resolver was a third of the parse time. 1,024 entries
    #: hit as often as 65,536 did on a stream of pods (1,213,838 hits of 10 MB): what misses is
    #: unique (names), and 65,536 of those held 7 MiB of a 10 MB stream's parse
    resolve = staticmethod(lru_cache(maxsize=1 << 10)(lambda kind, value, implicit: _RESOLVE(kind, value, implicit)))
    # The safe loader has no path resolvers: C callables that take the hooks' arguments and
    # do nothing the loader reads
    descend_resolver = staticmethod(operator.is_)  # type: ignore[assignment]  # a no-op with the hook's arguments
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]  # a no-op with the hook's arguments


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


@dataclass(frozen=True)
class Limits:
    """Refusal thresholds for hostile or broken input (documented in the README)."""

    max_file_bytes: int = 32 * 1024 * 1024
    max_document_bytes: int = 8 * 1024 * 1024
    max_depth: int = 100
    max_nodes: int = 1_000_000
    #: not a refusal: a text larger than this keeps no trees of its objects, each parsed again
    #: from the text when read (sources.reread); None: every text keeps them. Only a reader
    #: that lets each object go once judged gains (engine.lint: LINT_LIMITS)
    tree_bytes: int | None = None


DEFAULT_LIMITS = Limits()


@dataclass
class ParseProblem:
    """A parse-level problem: `kind` is 'syntax', 'limit' or 'duplicate-key'."""

    kind: str
    message: str
    line: int
    column: int
    #: (line, column) of what the problem refers back to (the first of two equal keys): the
    #: loader cites it where the user reads it (a Helm template's line, not helm's output's)
    earlier: tuple[int, int] | None = None


@dataclass
class Document:
    index: int
    data: object
    start_line: int
    end_line: int
    problems: list = field(default_factory=list)
    #: (start, end) offsets of its text where it is a mapping that starts a line: that text
    #: alone, parsed with its lines offset, gives the same data (sources.reread)
    span: tuple[int, int] | None = None


class BuildError(Exception):
    """Raised while building a document; `kind` is a `ParseProblem.kind`."""

    def __init__(self, kind: str, message: str, mark: Mark):
        super().__init__(message)
        self.kind = kind
        self.mark = mark


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_constructor = yaml.constructor.SafeConstructor()
_RESOLVE: Callable[[type, str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve  # stateless for the safe loader: no path resolvers


def _scalar(node: ScalarNode):
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _INT:
        try:
            return _constructor.construct_yaml_int(node)
        except ValueError:  # past Python's 4,300 digits: far past any integer the API server reads
            mark = node.start_mark
            raise BuildError("syntax", f"integer of {len(node.value)} characters: out of range",
                             (mark.line + 1, mark.column + 1)) from None
    if tag == _BOOL:
        return _constructor.bool_values[node.value.lower()]
    if tag == _NULL:
        return None
    if tag == _FLOAT:
        return _constructor.construct_yaml_float(node)
    # timestamps, binary and custom tags stay text, as sigs.k8s.io/yaml turns them to JSON strings
    return node.value


def _short(value: str) -> str:
    """Short string values repeat too (images, 'True', namespaces): shared like the keys."""
    return _intern(value) if len(value) <= 64 else value


class Paths:
    """One tuple for each path met again: every document of a stream of pods has its
    `("spec", "containers", 0)`, and a tuple per collection was a tenth of such a stream's
    memory. Parses of the parts of one text share one (the items of a List, an object
    parsed again: sources.reread), so that what a finding keeps of a path is shared too. Bounded: a document of many distinct paths (a long list) clears it now and then."""

    __slots__ = ("seen",)
    _SIZE = 4096

    def __init__(self):
        self.seen: dict[tuple, tuple] = {}

    def shared(self, path: tuple) -> tuple:
        seen = self.seen
        if len(seen) >= self._SIZE:
            seen.clear()
        return seen.setdefault(path, path)


class _Builder:
    """Builds one document; counts expanded nodes so alias bombs are refused early."""

    def __init__(self, limits: Limits, paths: "Paths", line_offset: int = 0):
        self.limits = limits
        self.first_line = 1 + line_offset  # what libyaml's 0-based line 0 is in the positions recorded
        self.count = 0
        self.memo: dict[int, tuple] = {}
        self.paths = paths
        self.problems: list[ParseProblem] = []

    def build(self, node, path: tuple = ()):
        """Scalars inside collections are converted inline by `_mapping`/`_sequence` (one
        call fewer per scalar: most of the nodes); this handles a top-level scalar too."""
        self.count += 1
        if node.__class__ is ScalarNode:
            return _scalar(node)
        if len(path) >= self.limits.max_depth:
            self._refuse(f"document nests deeper than {self.limits.max_depth} levels", node)
        seen = self.memo.get(id(node))
        if seen is not None:  # an alias: reuse, but count its full size again
            self.count += seen[1]
            if self.count > self.limits.max_nodes:
                self._refuse(f"document expands to more than {self.limits.max_nodes} nodes (alias bomb?)", node)
            return seen[0]
        before = self.count
        obj: YMap | YSeq
        if node.__class__ is MappingNode:
            obj = self._mapping(node, path)
        else:
            obj = self._sequence(node, path)
        self.memo[id(node)] = (obj, self.count - before)
        if self.count > self.limits.max_nodes:
            self._refuse(f"document expands to more than {self.limits.max_nodes} nodes", node)
        return obj

    @staticmethod
    def _refuse(message: str, node) -> None:
        start = node.start_mark
        raise BuildError("limit", message, (start.line + 1, start.column + 1))

    def _mapping(self, node: MappingNode, path: tuple) -> YMap:
        """Aliased nodes keep the path of their anchor: that is where their text is."""
        result = YMap()
        start = node.start_mark
        result.path = self.paths.shared(path)
        first = self.first_line
        marks = [start.line + first, start.column + 1]
        merges = []
        for knode, vnode in node.value:
            km, vm = knode.start_mark, vnode.start_mark
            if knode.__class__ is not ScalarNode:
                raise BuildError("syntax", "a mapping key must be a plain scalar (is this an unrendered template?)",
                                 (km.line + 1, km.column + 1))
            if knode.tag == _MERGE:
                merges.append(vnode)
                continue
            key = _intern(knode.value)  # keys repeat in every object: one string each saves a fifth of the memory
            if key == "managedFields" and path[-1:] == ("metadata",) and vnode.__class__ is SequenceNode:
                continue  # server-side apply records of a live object: half its size, read by no rule
            again = 2 + 4 * list(result).index(key) if key in result else 0  # where its position is
            if again:
                self.problems.append(
                    ParseProblem("duplicate-key", f"mapping key {key!r} already defined", km.line + 1, km.column + 1,
                                 earlier=(marks[again], marks[again + 1]))
                )
            if vnode.__class__ is ScalarNode:
                self.count += 1
                result[key] = _short(vnode.value) if vnode.tag == _STR else _scalar(vnode)
            else:
                result[key] = self.build(vnode, path + (key,))
            quad = (km.line + first, km.column + 1, vm.line + first, vm.column + 1)
            if again:  # the key keeps its place among the keys; its position is the last one's
                marks[again:again + 4] = quad
            else:
                marks += quad
        for vnode in merges:  # YAML merge keys: explicit keys win, as in go-yaml
            sources = vnode.value if vnode.__class__ is SequenceNode else [vnode]
            for source in sources:
                merged = self.build(source, path + ("<<",))
                if isinstance(merged, YMap):
                    for key, value, quad in zip(merged, merged.values(), _QUAD.iter_unpack(merged.marks[_PAIR.size:])):
                        if key not in result:
                            result[key] = value
                            marks += quad
        result.marks = _sealed(marks)
        return result

    def _sequence(self, node: SequenceNode, path: tuple) -> YSeq:
        result = YSeq()
        start = node.start_mark
        result.path = self.paths.shared(path)
        first = self.first_line
        marks = [start.line + first, start.column + 1]
        append, mark_append = result.append, marks.append
        for index, item in enumerate(node.value):
            m = item.start_mark
            if item.__class__ is ScalarNode:
                self.count += 1
                append(_short(item.value) if item.tag == _STR else _scalar(item))
            else:
                append(self.build(item, path + (index,)))
            mark_append(m.line + first)
            mark_append(m.column + 1)
        result.marks = _sealed(marks)
        return result


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
    paths = Paths() if paths is None else paths
    if FAST:
        from .blockyaml import documents
        return documents(text, problems, limits, root_path, line_offset, paths, _libyaml_documents)
    return _libyaml_documents(text, problems, limits, root_path, line_offset, paths)


#: read block-style documents with sources.blockyaml (off: every document by libyaml; the
#: differential tests compare the two)
FAST = True


def _libyaml_documents(text: str, problems: list[ParseProblem], limits: Limits, root_path: tuple,
                       line_offset: int, paths: Paths) -> Generator[Document, None, bool]:
    """stream_documents by libyaml's composer; returns True where a syntax error ended the
    stream (blockyaml stops there too)."""
    loader = _Loader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # check_node said there is one
                break
            start, end = node.start_mark, node.end_mark
            doc = Document(index, None, start.line + 1, end.line + 1)
            if start.column == 0 and node.__class__ is MappingNode:
                doc.span = (start.index, end.index)
            index += 1
            if end.index - start.index > limits.max_document_bytes:
                problems.append(ParseProblem(
                    "limit", f"document is larger than {limits.max_document_bytes} bytes; not checked",
                    start.line + 1, start.column + 1))
                yield doc
                continue
            builder = _Builder(limits, paths, line_offset)
            try:
                doc.data = builder.build(node, root_path)
            except BuildError as exc:
                problems.append(ParseProblem(exc.kind, f"{exc}; document not checked", *exc.mark))
            except RecursionError:
                problems.append(ParseProblem("limit", "document nests too deeply; not checked",
                                        start.line + 1, start.column + 1))
            doc.problems = builder.problems
            del node  # libyaml's node graph of this document: not held while the next one is built
            yield doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(part for part in (exc.context, exc.problem) if part) or str(exc)
        problems.append(ParseProblem("syntax", f"YAML syntax error: {message}", line, column))
        return True
    except yaml.YAMLError as exc:  # reader errors (bad bytes) carry a position of their own
        line, column = _reader_position(text, exc)
        problems.append(ParseProblem("syntax", f"cannot read input: {exc}", line, column))
        return True
    finally:
        loader.dispose()
    return False


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


_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)


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


def _reader_position(text: str, exc: Exception) -> Mark:
    position = getattr(exc, "position", None)
    if not isinstance(position, int):
        return (1, 1)
    before = text[:position]
    line = before.count("\n") + 1
    return (line, position - (before.rfind("\n") + 1) + 1)


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
