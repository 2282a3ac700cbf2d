"""libyaml's reading of a YAML stream into yamlpos's positioned trees: the documents the block
reader (sources.blockyaml) leaves to it (flow collections, anchors, tags, block scalars, a
directive, ...), and every document where that reader is off.

libyaml's C composer (PyYAML's CSafeLoader) does the parsing; this module turns its node
graph into `YMap`/`YSeq` in one pass. That is as fast as PyYAML's own constructor, and it is
where the input limits are enforced: a document may not nest deeper than
`Limits.max_depth`, nor expand (aliases counted each time they are used) to more than
`Limits.max_nodes` nodes, nor span more than `Limits.max_document_bytes`. A module of its
own because importing `yaml` costs a start 15 ms: a file the block reader reads whole does
without it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Generator
from functools import lru_cache
from sys import intern as _intern

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..core.excerpt import bounded
from .resolver import MERGE, STR, tag_of, value_of
from .yamlpos import _PAIR, _QUAD, Document, Limits, Mark, ParseProblem, Paths, YMap, YSeq, _sealed, _short

try:  # the C loader is a hard requirement for speed, but never for correctness
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - exercised only on PyYAML builds without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]  # CSafeLoader's pure-Python twin


class Loader(_BaseLoader):
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


_RESOLVE: Callable[[type, str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve  # stateless for the safe loader: no path resolvers


def _scalar(node: ScalarNode):
    if node.tag == STR:
        return node.value
    try:
        return value_of(node.tag, node.value)
    except (ValueError, KeyError, IndexError):
        raise _unreadable(node) from None


def _unreadable(node: ScalarNode) -> BuildError:
    """Why a scalar has no value of its tag: an integer past Python's 4,300 digits (far past
    any the API server reads), or an explicit tag on a text not of its form (`!!int abc`,
    `!!bool maybe`, `!!float ""`), where PyYAML's constructor raises a bare ValueError,
    KeyError or IndexError."""
    mark = (node.start_mark.line + 1, node.start_mark.column + 1)
    if tag_of(node.value) == node.tag:
        return BuildError("syntax", f"integer of {len(node.value)} characters: out of range", mark)
    short = node.tag.rsplit(":", 1)[-1]
    return BuildError("syntax", bounded(f"!!{short} {node.value!r} is not a YAML 1.1 {short}"), mark)


class BuildError(Exception):
    """Raised while building a document; `kind` is a `ParseProblem.kind`."""

    def __init__(self, kind: str, message: str, mark: Mark):
        super().__init__(message)
        self.kind = kind
        self.mark = mark


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
            if knode.tag == MERGE:
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
                result[key] = _short(vnode.value) if vnode.tag == STR else _scalar(vnode)
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
                append(_short(item.value) if item.tag == STR else _scalar(item))
            else:
                append(self.build(item, path + (index,)))
            mark_append(m.line + first)
            mark_append(m.column + 1)
        result.marks = _sealed(marks)
        return result


def documents(text: str, problems: list[ParseProblem], limits: Limits, root_path: tuple,
                       line_offset: int, paths: Paths) -> Generator[Document, None, bool]:
    """stream_documents by libyaml's composer; returns True where a syntax error ended the
    stream (blockyaml stops there too)."""
    loader = Loader(text)
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


def _reader_position(text: str, exc: Exception) -> Mark:
    position = getattr(exc, "position", None)
    if not isinstance(position, int):
        return (1, 1)
    before = text[:position]
    line = before.count("\n") + 1
    return (line, position - (before.rfind("\n") + 1) + 1)
