"""Load units into entries (one per Kubernetes object, with its source text). Nothing here
raises on bad input: every problem becomes a `Problem` with a location, and whatever could
be loaded is still returned."""

from __future__ import annotations

import json
import os
import re
import sys

from typing import TYPE_CHECKING, Callable, TypeGuard

from ..core.finding import Problem
from ..core.location import Location
from ..core.patterns import Lazy
from ..core.value import Record
from .discover import KUSTOMIZATION_FILES, RENDERED, Unit, expand, kustomization_file
from .lists import may_hold_lists, span_text, split_lists
from .options import RenderOptions
from .reread import Reread
from .yamlpos import (DEFAULT_LIMITS, Document, Limits, ParseProblem, Paths, YMap, YSeq, parse_stream,
                      has_directive, parse_stream_remembered, split_documents, stream_documents)

_TEMPLATE_MARK = Lazy(r"\{\{")
_COMMENT_LINE = Lazy(r"^[ \t]*#.*$", re.MULTILINE)  # [ \t]: \s would run across lines, quadratic on padding

# ids of the input rules (their metadata lives in draguard.rules.input)
YAML_SYNTAX = "yaml-syntax"
DUPLICATE_KEY = "duplicate-key"
INPUT_LIMIT = "input-limit"
TEMPLATE_UNRENDERED = "template-unrendered"
RENDER_SKIPPED = "render-skipped"
RENDER_FAILED = "render-failed"
NOT_AN_OBJECT = "not-an-object"
MISCASED_TYPE_KEY = "miscased-type-key"
INPUT_SKIPPED = "input-skipped"
JUDGED_IN_BUILD = "judged-in-build"
CHART_DEPENDENCY_MISSING = "chart-dependency-missing"
_TYPE_KEYS = {"apiversion": "apiVersion", "kind": "kind"}
_PROBLEM_RULES = {"syntax": YAML_SYNTAX, "duplicate-key": DUPLICATE_KEY, "limit": INPUT_LIMIT}


#: Maps a position in the text that was parsed to (file, line, column) shown to the user.
Locator = Callable[..., tuple]  # (line, column, path=None) -> (file, line, column)


class Source(Record):
    """One parsed text: a file, stdin, or the output of a renderer. Slotted: each item of a
    List has one (its `window`)."""

    __slots__ = ("display", "text", "rendered_by", "capability_checks", "_lines", "document_lines", "window")
    _unshown = ("_lines", "document_lines", "window")

    def __init__(self, display: str, text: str, rendered_by: str | None = None,
                 capability_checks: frozenset = frozenset(), _lines: list | None = None,
                 document_lines: tuple[int, ...] | None = None, window: Reread | None = None) -> None:
        self.display = display  # what findings call this text: the path as given, '-' for stdin
        self.text = text
        self.rendered_by = rendered_by  # 'helm' or 'kustomize'
        #: a Helm render's: the API versions its templates test with .Capabilities (render.capability_checks)
        self.capability_checks = capability_checks
        self._lines = _lines
        #: the line each document's content starts on, where the text was read as a plain stream
        #: (None otherwise): a report cuts one document out of the text by them, composing nothing
        self.document_lines = document_lines
        #: an item of a List: where its text is in the List's source (its `text` is then empty).
        #: Each item held a copy of its text: the size of the input again, for a one-line List
        self.window = window

    @property
    def lines(self) -> list[str]:
        """The text's lines, split once and kept."""
        if self._lines is None:
            self._lines = self.split_lines()
        return self._lines

    @property
    def has_lines(self) -> bool:
        """Whether `lines` was asked for (and is kept)."""
        return self._lines is not None

    def drop_lines(self) -> None:
        """Forget the lines `lines` kept (they are split again when asked)."""
        self._lines = None

    def split_lines(self) -> list[str]:
        """The text's lines as `lines` has them, split again and not kept."""
        return self.whole_text().splitlines()

    def whole_text(self) -> str:
        """Its text; an item of a List's cut from the List's (its `window`)."""
        return self.text if self.window is None else self.window.text()


class Entry(Record):
    """One Kubernetes object as loaded: a document, or an item of a `List` document."""

    __slots__ = ("source", "document", "data", "item", "locate", "renamed_from", "reread")
    _unshown = ("reread",)

    def __init__(self, source: Source, document: int, data: dict, item: int | None = None,
                 locate: Locator | None = None, renamed_from: str | None = None, reread: Reread | None = None) -> None:
        self.source = source
        self.document = document
        self.item = item
        #: Maps a parsed position (and the YAML path there, when known) to what the user should see.
        self.locate = locate
        #: its name in the file it was built from, where a kustomize namePrefix/nameSuffix changed it
        self.renamed_from = renamed_from
        #: where its text is, when `data` is not held but parsed again on each read (sources.reread)
        self.reread = reread
        if reread is None:
            self.data = data  # else the text holds it: __getattr__ parses it again when read

    if not TYPE_CHECKING:  # an attribute missing only where the data is parsed again: typed as `data`
        def __getattr__(self, name: str):
            if name == "data":
                reread = self.reread  # unset only while unpickled: an AttributeError, from here
                if reread is not None:
                    return reread.data()
            raise AttributeError(name)


class Loaded(Record):
    """What reading the inputs gave: the entries, the problems met, the sources and what was refused."""

    __slots__ = ("entries", "problems", "sources", "refused", "bytes_read")

    def __init__(self, entries: list[Entry] | None = None, problems: list[Problem] | None = None,
                 sources: list[Source] | None = None, refused: list[str] | None = None, bytes_read: int = 0) -> None:
        self.entries: list[Entry] = [] if entries is None else entries
        self.problems: list[Problem] = [] if problems is None else problems
        self.sources: list[Source] = [] if sources is None else sources
        self.refused: list[str] = [] if refused is None else refused  # files read but not parsed: binary, too large
        self.bytes_read = bytes_read


def _at(file: str, line: int = 1, column: int = 1) -> Location:
    return Location(file, line, column)


def load_reference(paths: list[str], inputs: list[Unit], include: tuple, exclude: tuple,
                   limits: Limits = DEFAULT_LIMITS, render_options: RenderOptions = RenderOptions()) -> Loaded:
    """What `--reference` names, read only for what the rules read across objects (the
    template a pod names, the budget that selects it): the files, charts and kustomizations
    of `paths` that are not among the inputs. The caller judges none of it and reports none
    of its problems: a pre-commit hook is given the changed files, and the rest of the
    repository is their reference."""
    def key(unit: Unit) -> str:
        return os.path.realpath(unit.path)

    given = {key(u) for u in inputs if u.kind != "stdin"}
    return load_units([u for u in expand(paths, include, exclude) if u.kind in ("file", *RENDERED)
                       and key(u) not in given], limits, render_options=render_options)


def load_units(units: list[Unit], limits: Limits = DEFAULT_LIMITS, stdin=None,
               render_options: RenderOptions = RenderOptions(), advance=None) -> Loaded:
    """Read and parse each unit; `advance()`, when given, is called once per unit (a progress bar).
    The charts and kustomizations are rendered first, side by side: each render is a process
    of its own (helm, kustomize), and a repository of many took their sum in turn."""
    loaded = Loaded()
    renders = _rendered_together([u for u in units if u.kind in RENDERED], render_options)
    for unit in units:
        if advance is not None:
            advance()
        if unit.kind == "component":  # said where named (or at its kustomization), never built
            for named in unit.through or (f"{unit.display.rstrip('/')}/{_kustomization_file(unit.path)}",):
                loaded.problems.append(Problem(JUDGED_IN_BUILD, _COMPONENT, Location(named)))
            continue
        if unit.kind in RENDERED:
            for named in unit.through:
                loaded.problems.append(Problem(JUDGED_IN_BUILD, _in_build(named, unit), Location(named)))
            _load_rendered(unit, renders[id(unit)], loaded, limits)
            continue
        if unit.kind == "disabled":
            loaded.problems.append(Problem(JUDGED_IN_BUILD, unit.reason, Location(unit.display)))
            continue
        if unit.kind == "skipped":
            loaded.problems.append(Problem(INPUT_SKIPPED, unit.reason, Location(unit.display)))
            continue
        text = _read(unit, loaded, limits, stdin)
        if text is not None:
            load_text(Source(unit.display, text), loaded, limits)
    return loaded


_COMPONENT = ("a kustomize Component, which `kustomize build` refuses alone: its patches are judged in the build of "
              "each overlay that names it under `components`; lint those overlays")


def _in_build(named: str, unit: Unit) -> str:
    if unit.kind == "helm":
        return (f"a file of the Helm chart in {unit.display}, which is no manifest alone: the chart is rendered and "
                "judged, and the findings point into its templates")
    if os.path.basename(named) in KUSTOMIZATION_FILES:
        return f"a kustomization: its build ({unit.display}) is judged, with findings in the files they come from"
    return (f"a patch of the kustomization in {unit.display}, which is no object alone: that build is judged, and "
            "the findings the patch wrote point into it")


def _read(unit: Unit, loaded: Loaded, limits: Limits, stdin) -> str | None:
    try:
        if unit.kind == "stdin":
            raw = (stdin or sys.stdin.buffer).read(limits.max_file_bytes + 1)
        else:
            descriptor = os.open(unit.path, os.O_RDONLY)
            try:
                raw = _bounded(descriptor, limits.max_file_bytes + 1)
            finally:
                os.close(descriptor)
    except OSError as exc:
        loaded.problems.append(Problem(YAML_SYNTAX, f"cannot read: {exc.strerror or exc}", Location(unit.display)))
        loaded.refused.append(unit.display)
        return None
    loaded.bytes_read += len(raw)
    if len(raw) > limits.max_file_bytes:
        loaded.problems.append(Problem(
            INPUT_LIMIT, f"input is larger than {limits.max_file_bytes} bytes; not checked", Location(unit.display)))
        loaded.refused.append(unit.display)
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        loaded.problems.append(Problem(
            YAML_SYNTAX, "input is not UTF-8 text; not checked", _at(unit.display, line, column)))
        loaded.refused.append(unit.display)
        return None
    if "\x00" in text:
        index = text.index("\x00")
        loaded.problems.append(Problem(
            YAML_SYNTAX, "input holds NUL bytes (a binary file?); not checked",
            _at(unit.display, text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1)))
        loaded.refused.append(unit.display)
        return None
    return text


#: what a read asks for past the size a file says it has: a file that grew since, or one that
#: says none (a pipe, /proc)
_MORE = 1 << 16


def _bounded(descriptor: int, most: int) -> bytes:
    """At most `most` bytes of an open file, read with os.read: a buffered file object per
    file was 45% of the CPU of reading 8,500 small files (0.11 s against 0.07 s). Asked for
    in the size the file says it has (fstat) plus one: a read of `most` bytes makes a buffer
    of that size (32 MiB) for every file, and for 8,500 small files that took a second and
    a half the CPU of reading them. A file that grew since, or one that says no size, is
    read on in pieces up to `most`."""
    size = os.fstat(descriptor).st_size
    want = size + 1 if 0 < size < most else _MORE
    chunks: list[bytes] = []
    got = 0
    while got < most and (chunk := os.read(descriptor, min(want, most - got))):
        chunks.append(chunk)
        got += len(chunk)
        want = _MORE
    return b"".join(chunks)


def load_text(source: Source, loaded: Loaded, limits: Limits = DEFAULT_LIMITS, locate=None) -> None:
    """Parse one text and add its objects and problems to `loaded`."""
    loaded.sources.append(source)
    if _template_position(source.text) is not None:
        _load_templated(source, loaded, limits, locate)
        return
    parts = _list_parts(source.text)
    if parts is not None:
        _load_parts(source, parts, loaded, limits, locate)
        return
    if _trees_shed(source.text, limits) and _load_shedding(source, loaded, limits, locate):
        return
    documents, problems = parse_stream_remembered(source.text, limits)
    if problems and problems[0].kind == "syntax" and _looks_like_json_stream(source.text):
        documents, problems = _parse_json_stream(source.text, limits)
    else:
        source.document_lines = tuple(document.start_line for document in documents)
    _add(source, documents, problems, loaded, locate)


def _trees_shed(text: str, limits: Limits) -> bool:
    """Whether the objects of `text` are parsed again when read rather than held
    (sources.reread): a text past `limits.tree_bytes`, without directives (a `%TAG` changes
    what the tags of every document after it mean: a document is not parsed alone as it was
    in the stream)."""
    return limits.tree_bytes is not None and len(text) > limits.tree_bytes and not has_directive(text)


def _load_shedding(source: Source, loaded: Loaded, limits: Limits, locate) -> bool:
    """load_text's plain stream, each document's tree let go once its object is known (a
    document that is not parsed alone as it was, yamlpos.Document.span, keeps it). False,
    with nothing added, where the stream is a JSON stream that YAML cannot read (load_text
    reads it as one)."""
    problems: list[ParseProblem] = []
    documents: list[Document] = []
    found = Loaded()
    for doc in stream_documents(source.text, problems, limits):
        documents.append(doc)
        _add_objects(source, doc, found, locate, _reread_of(source, doc, limits))
        doc.data = None
    if problems and problems[0].kind == "syntax" and _looks_like_json_stream(source.text):
        return False
    source.document_lines = tuple(document.start_line for document in documents)
    _add_problems(source, documents, problems, loaded, locate)  # as _add: the parse's, then the objects'
    loaded.problems += found.problems
    loaded.entries += found.entries
    return True


def _reread_of(source: Source, doc: Document, limits: Limits) -> Reread | None:
    """How to parse `doc`'s object again alone, where it can be (yamlpos.Document.span)."""
    if doc.span is None or not isinstance(doc.data, dict):
        return None
    start, end = doc.span
    return Reread(source, start, end, 0, doc.start_line - 1, (), limits, doc.data)


def plain_stream(text: str) -> bool:
    """Whether load_text reads `text` as a plain stream of documents (no template directive,
    no List), whose objects are its documents' data and nothing else."""
    return _template_position(text) is None and _list_parts(text) is None


def load_documents(source: Source, documents: list, loaded: Loaded) -> None:
    """Add the objects of a plain stream's documents (their data, in order) to `loaded`, as
    load_text adds them from its text: a text whose data is held in memory (draguard fix
    between the rounds of its fixes)."""
    loaded.sources.append(source)
    _add(source, [Document(index, data, 1, 1) for index, data in enumerate(documents)], [], loaded, None)


def _list_parts(text: str) -> list | None:
    """The parts of a stream that holds a `kind: List` (sources.lists), else None."""
    if may_hold_lists(text):
        parts = split_lists(text)
        if parts is not None and any(part.items is not None for part in parts):
            return parts
    return None


def _load_parts(source: Source, parts: list, loaded: Loaded, limits: Limits, locate) -> None:
    """A stream holding Lists: each item (and each other document) parsed from its own span,
    its positions shifted back into the stream. An item's source holds no copy of its text,
    only where it is (Source.window); past `limits.tree_bytes` it holds no tree either."""
    shed, paths = _trees_shed(source.text, limits), Paths()
    for part in parts:
        spans = [(item, ("items", i), i) for i, item in enumerate(part.items)] if part.items is not None \
            else [(part.span, (), None)]
        for span, root, item in spans:
            text, columns = span_text(source.text, span)
            at = _Shifted(source.display, span.line - 1, columns, locate)
            documents, problems = parse_stream(text, limits, root, paths=paths)
            for doc in documents:
                doc.index = part.index
            if item is None:
                _add(Source(source.display, text, source.rendered_by, source.capability_checks), documents, problems,
                     loaded, at)
                continue
            data = documents[0].data if documents else None
            window = Reread(source, span.start, span.end, len(text) - (span.end - span.start), 0, root, limits,
                            data if isinstance(data, dict) else None)
            piece = Source(source.display, "", source.rendered_by, source.capability_checks, window=window)
            _add_problems(piece, documents, problems, loaded, at)
            if _is_object(data):
                loaded.entries.append(Entry(piece, part.index, data, item, at, reread=window if shed else None))
            elif documents and (data is not None or not (problems or documents[0].problems)):  # not one left unbuilt
                file, line, column = at(1, span.column - columns)
                loaded.problems.append(_not_an_item(item, part.kind, Location(file, line, column, root, part.index)))


class _Shifted:
    """Positions in a span's own text -> positions the user sees: `lines` down, and on its
    first line `columns` right (lists.span_text). A slotted object, not a closure: a List
    has one per item (a closure and its four cells were 300 bytes an item)."""

    __slots__ = ("display", "lines", "columns", "locate")

    def __init__(self, display: str, lines: int, columns: int, locate: Locator | None):
        self.display, self.lines, self.columns, self.locate = display, lines, columns, locate

    def __call__(self, line: int, column: int, path: tuple | None = None) -> tuple:
        column += self.columns if line == 1 else 0
        if self.locate:
            return self.locate(line + self.lines, column, path)
        return (self.display, line + self.lines, column)


def _load_templated(source: Source, loaded: Loaded, limits: Limits, locate) -> None:
    """A stream holding `{{ }}` markup, one document at a time: a document whose markup breaks
    it (it does not parse, or its identity is templated) is reported and skipped; the others
    are checked (markup inside a string value is data, as in alerting rules)."""
    index = 0
    for _, text in split_documents(source.text):
        documents, problems = parse_stream(text, limits)
        for doc in documents:
            doc.index += index
        # a part that does not parse is still a document of the file: later ones keep their numbers
        index += len(documents) or int(bool(_COMMENT_LINE.sub("", text).replace("---", "").strip()))
        template = _template_position(text)
        if template and (problems or _templated_identity(documents)):
            line, column = template
            file, line, column = locate(line, column) if locate else (source.display, line, column)
            loaded.problems.append(Problem(
                TEMPLATE_UNRENDERED,
                "unrendered template ('{{' found): render it (helm template / the generator) and lint the "
                "output, or lint the chart folder; this document was not checked", _at(file, line, column)))
            continue
        _add(source, documents, problems, loaded, locate)


def _add(source: Source, documents, problems, loaded: Loaded, locate) -> None:
    _add_problems(source, documents, problems, loaded, locate)
    for doc in documents:
        _add_objects(source, doc, loaded, locate)


def _add_problems(source: Source, documents, problems, loaded: Loaded, locate) -> None:
    for problem in [*problems, *(p for doc in documents for p in doc.problems)]:
        loaded.problems.append(_problem(source, problem, locate))


def _problem(source, problem: ParseProblem, locate) -> Problem:
    """The problem at its place in what the user wrote (through `locate`: a rendered chart's
    line becomes its template's), and so is the earlier position its message cites."""
    def place(line, column):
        return locate(line, column) if locate else (source.display, line, column)

    file, line, column = place(problem.line, problem.column)
    message = problem.message
    if problem.earlier is not None:
        earlier_file, earlier_line, _ = place(*problem.earlier)
        message += f" at line {earlier_line}" if earlier_file == file else f" at {earlier_file}:{earlier_line}"
    return Problem(_PROBLEM_RULES[problem.kind], message, _at(file, line, column))


def _position(source: Source, mark, doc, locate) -> tuple:
    line, column = mark or (doc.start_line, 1)
    return locate(line, column) if locate else (source.display, line, column)


def _add_objects(source: Source, doc, loaded: Loaded, locate, reread: Reread | None = None) -> None:
    """The object `doc` holds (or the items of a List it is), else the problem it is; an
    object with `reread` holds no data (sources.reread)."""
    data = doc.data
    if data is None:
        return
    if not _is_object(data):
        if isinstance(data, dict) and not data:
            return
        miscased = [key for key in data if isinstance(key, str) and _TYPE_KEYS.get(key.lower(), key) != key] \
            if isinstance(data, dict) else []
        for key in miscased:
            file, line, column = _position(source, data.key_mark(key) if isinstance(data, YMap) else None, doc, locate)
            loaded.problems.append(Problem(
                MISCASED_TYPE_KEY, f"key '{key}' must be spelled '{_TYPE_KEYS[key.lower()]}' (keys are case-sensitive): "
                "kubectl and the API server see no type and reject the object; it is not checked",
                Location(file, line, column, (key,), doc.index)))
        if miscased:
            return
        file, line, column = _position(source, getattr(data, "mark", None), doc, locate)
        loaded.problems.append(Problem(
            NOT_AN_OBJECT, "document is not a Kubernetes object (no apiVersion and kind); skipped",
            Location(file, line, column, (), doc.index)))
        return
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and items is not None and not isinstance(items, list):
        file, line, column = _position(source, data.value_mark("items") if isinstance(data, YMap) else None, doc, locate)
        loaded.problems.append(Problem(
            NOT_AN_OBJECT, f"the {kind}'s items is not a list: kubectl cannot read it, and nothing in it is checked",
            Location(file, line, column, ("items",), doc.index)))
        return
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for index, item in enumerate(items):
            if _is_object(item):
                loaded.entries.append(Entry(source, doc.index, item, index, locate))
            else:
                file, line, column = _position(source, items.item_mark(index) if isinstance(items, YSeq) else None,
                                               doc, locate)
                loaded.problems.append(_not_an_item(index, kind, Location(file, line, column, ("items", index),
                                                                          doc.index)))
        return
    loaded.entries.append(Entry(source, doc.index, data, None, locate, reread=reread))


def _is_object(data: object) -> TypeGuard[dict]:
    """A Kubernetes object: a mapping with an apiVersion and a kind (kubectl and the API server
    refuse anything less, a List's items too)."""
    return isinstance(data, dict) and bool(data.get("apiVersion")) and bool(data.get("kind"))


def _not_an_item(index: int, kind: str, where: Location) -> Problem:
    return Problem(NOT_AN_OBJECT, f"item {index} of the {kind} is not a Kubernetes object (no apiVersion and kind); "
                   "skipped", where)


def _template_position(text: str) -> tuple[int, int] | None:
    """Where the first `{{` outside a comment line is, if any."""
    if "{{" not in text:
        return None
    masked = _COMMENT_LINE.sub(lambda m: " " * len(m.group(0)), text)
    found = _TEMPLATE_MARK.search(masked)
    if not found:
        return None
    index = found.start()
    return (text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1)


def _templated_identity(documents) -> bool:
    """True when a template marker sits where YAML parsed it as data: an object's identity."""
    for doc in documents:
        data = doc.data
        if isinstance(data, dict):
            metadata = data.get("metadata")
            meta = metadata if isinstance(metadata, dict) else {}
            for value in (data.get("apiVersion"), data.get("kind"), meta.get("name"), meta.get("namespace")):
                if not isinstance(value, (str, type(None))) or (isinstance(value, str) and "{{" in value):
                    return True
    return False


def _looks_like_json_stream(text: str) -> bool:
    stripped = text.lstrip()
    return stripped[:1] in ("{", "[")


def _parse_json_stream(text: str, limits: Limits):
    """Concatenated JSON values (JSON Lines, `kubectl get -o json` appended): each value is
    parsed on its own, padded so that positions stay those of the whole text."""
    decoder = json.JSONDecoder()
    documents: list[Document] = []
    problems: list[ParseProblem] = []
    index, length = 0, len(text)
    while True:
        while index < length and text[index] in " \t\r\n":
            index += 1
        if index >= length:
            break
        try:
            _, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            return parse_stream(text, limits) if not documents else (documents, problems + [
                _json_problem(exc)])
        except RecursionError:  # nested deeper than Python's stack: libyaml says where, as for YAML
            end = length
        line = text.count("\n", 0, index)
        column = index - (text.rfind("\n", 0, index) + 1)
        padded = "\n" * line + " " * column + text[index:end]
        docs, probs = parse_stream(padded, limits)
        for doc in docs:
            doc.index = len(documents)
            documents.append(doc)
        problems.extend(probs)
        index = end
    return documents, problems


def _json_problem(exc: json.JSONDecodeError) -> ParseProblem:
    return ParseProblem("syntax", f"JSON syntax error: {exc.msg}", exc.lineno, exc.colno)


def _rendered_together(units: list[Unit], options: RenderOptions) -> dict:
    """id(unit) -> its Rendered, the renderer processes run as many at a time as there are
    processors (the results are read in the units' order: the output does not change). The
    renderer is imported only here, when a chart or kustomization is met."""
    if not units:
        return {}
    from .render import render

    if len(units) < 2:
        return {id(u): render(u.kind, u.path, options) for u in units}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(units), os.cpu_count() or 1)) as pool:
        results = pool.map(lambda u: render(u.kind, u.path, options), units)
        return {id(u): result for u, result in zip(units, results)}


def _load_rendered(unit: Unit, result, loaded: Loaded, limits: Limits) -> None:
    if result.text is None:
        rule = RENDER_SKIPPED if result.missing_binary else RENDER_FAILED
        anchor = "Chart.yaml" if unit.kind == "helm" else _kustomization_file(unit.path)
        file, line, column = result.where or (anchor, None, None)
        loaded.problems.append(Problem(rule, result.problem, Location(f"{unit.display.rstrip('/')}/{file}", line,
                                                                      column)))
        return
    for file, line, column, message in result.notes:
        loaded.problems.append(Problem(CHART_DEPENDENCY_MISSING, message,
                                       Location(f"{unit.display.rstrip('/')}/{file}", line, column)))
    source = Source(f"{unit.display.rstrip('/')} ({unit.kind})", result.text, rendered_by=unit.kind)
    if unit.kind == "helm":
        from .render import SourceMap, capability_checks  # imported by _rendered_together already

        source.capability_checks = capability_checks(unit.path)
        load_text(source, loaded, limits, SourceMap(unit.display.rstrip("/"), result.text).locate)
        return
    anchor = f"{unit.display.rstrip('/')}/{_kustomization_file(unit.path)}"

    def at_anchor(line, column, path=None):
        return (anchor, 1, 1)

    from .origins import OriginIndex  # kustomize builds only

    first = len(loaded.entries)
    load_text(source, loaded, limits, at_anchor)
    origins = OriginIndex(result.build_dir, os.path.abspath(unit.path), unit.display.rstrip("/"))
    for entry in loaded.entries[first:]:
        located = origins.locator(entry.data, anchor)
        entry.locate = located or at_anchor
        entry.renamed_from = located.renamed_from if located is not None else None


def _kustomization_file(path: str) -> str:
    return kustomization_file(path) or "kustomization.yaml"
