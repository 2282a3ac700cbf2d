"""Load units into manifests. Nothing here raises on bad input: every problem becomes an
`InputProblem` with a position, and whatever could be loaded is still returned."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field

from ..model.manifest import Manifest, Source
from .render import SourceMap, render
from .sources import KUSTOMIZATION_FILES, Unit
from .yamlpos import DEFAULT_LIMITS, Limits, Problem, parse_stream

_TEMPLATE_MARK = re.compile(r"\{\{")
_COMMENT_LINE = re.compile(r"^\s*#.*$", re.MULTILINE)

# ids of the input rules (their metadata lives in draguard.rules.input)
YAML_SYNTAX = "yaml-syntax"
DUPLICATE_KEY = "duplicate-key"
INPUT_LIMIT = "input-limit"
TEMPLATE_UNRENDERED = "template-unrendered"
RENDER_SKIPPED = "render-skipped"
RENDER_FAILED = "render-failed"
NOT_AN_OBJECT = "not-an-object"
_PROBLEM_RULES = {"syntax": YAML_SYNTAX, "duplicate-key": DUPLICATE_KEY, "limit": INPUT_LIMIT}


@dataclass
class InputProblem:
    rule: str
    message: str
    file: str
    line: int = 1
    column: int = 1


@dataclass
class Loaded:
    manifests: list[Manifest] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    bytes_read: int = 0


def load_units(units: list[Unit], limits: Limits = DEFAULT_LIMITS, stdin=None) -> Loaded:
    loaded = Loaded()
    for unit in units:
        if unit.kind in ("helm", "kustomize"):
            _load_rendered(unit, loaded, limits)
            continue
        text = _read(unit, loaded, limits, stdin)
        if text is not None:
            load_text(Source(unit.display, text), loaded, limits)
    return loaded


def _read(unit: Unit, loaded: Loaded, limits: Limits, stdin) -> str | None:
    try:
        if unit.kind == "stdin":
            raw = (stdin or sys.stdin.buffer).read(limits.max_file_bytes + 1)
        else:
            with open(unit.path, "rb") as handle:
                raw = handle.read(limits.max_file_bytes + 1)
    except OSError as exc:
        loaded.problems.append(InputProblem(YAML_SYNTAX, f"cannot read: {exc.strerror or exc}", unit.display))
        return None
    loaded.bytes_read += len(raw)
    if len(raw) > limits.max_file_bytes:
        loaded.problems.append(InputProblem(
            INPUT_LIMIT, f"input is larger than {limits.max_file_bytes} bytes; not checked", unit.display))
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        loaded.problems.append(InputProblem(
            YAML_SYNTAX, "input is not UTF-8 text; not checked", unit.display, line, column))
        return None
    if "\x00" in text:
        index = text.index("\x00")
        loaded.problems.append(InputProblem(
            YAML_SYNTAX, "input holds NUL bytes (a binary file?); not checked", unit.display,
            text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1))
        return None
    return text


def load_text(source: Source, loaded: Loaded, limits: Limits = DEFAULT_LIMITS, locate=None) -> None:
    """Parse one text and add its objects and problems to `loaded`."""
    loaded.sources.append(source)
    documents, problems = parse_stream(source.text, limits)
    if problems and problems[0].kind == "syntax" and _looks_like_json_stream(source.text):
        documents, problems = _parse_json_stream(source.text, limits)
    template = _template_position(source.text)
    if template and (problems or _templated_identity(documents)):
        line, column = template
        loaded.problems.append(InputProblem(
            TEMPLATE_UNRENDERED,
            "unrendered template ('{{' found): render it (helm template / the generator) and lint the "
            "output, or lint the chart folder; this file was not checked",
            source.display, line, column))
        return
    for problem in problems:
        loaded.problems.append(_problem(source, problem.kind, problem.message, problem.line, problem.column, locate))
    for doc in documents:
        for problem in doc.problems:
            loaded.problems.append(_problem(source, problem.kind, problem.message, problem.line,
                                            problem.column, locate))
        _add_objects(source, doc, loaded, locate)


def _problem(source, kind, message, line, column, locate) -> InputProblem:
    file, line, column = locate(line, column) if locate else (source.display, line, column)
    return InputProblem(_PROBLEM_RULES[kind], message, file, line, column)


def _add_objects(source: Source, doc, loaded: Loaded, locate) -> None:
    data = doc.data
    if data is None:
        return
    if not isinstance(data, dict) or not data.get("apiVersion") or not data.get("kind"):
        if isinstance(data, dict) and not data:
            return
        line = getattr(data, "mark", (doc.start_line, 1))
        file, line, column = locate(*line) if locate else (source.display, *line)
        loaded.problems.append(InputProblem(
            NOT_AN_OBJECT, "document is not a Kubernetes object (no apiVersion and kind); skipped",
            file, line, column))
        return
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict) and item.get("kind"):
                loaded.manifests.append(Manifest(source, doc.index, item, index, locate))
        return
    loaded.manifests.append(Manifest(source, doc.index, data, None, locate))


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
            meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
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
    documents, problems = [], []
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


def _json_problem(exc: json.JSONDecodeError) -> Problem:
    return Problem("syntax", f"JSON syntax error: {exc.msg}", exc.lineno, exc.colno)


def _load_rendered(unit: Unit, loaded: Loaded, limits: Limits) -> None:
    result = render(unit.kind, unit.path)
    if result.text is None:
        rule = RENDER_SKIPPED if result.missing_binary else RENDER_FAILED
        anchor = "Chart.yaml" if unit.kind == "helm" else _kustomization_file(unit.path)
        loaded.problems.append(InputProblem(rule, result.problem, f"{unit.display.rstrip('/')}/{anchor}"))
        return
    source = Source(f"{unit.display.rstrip('/')} ({unit.kind})", result.text, rendered_by=unit.kind)
    if unit.kind == "helm":
        locate = SourceMap(unit.display.rstrip("/"), result.text).locate
    else:
        anchor = f"{unit.display.rstrip('/')}/{_kustomization_file(unit.path)}"

        def locate(line, column, _anchor=anchor):
            return (_anchor, 1, 1)
    load_text(source, loaded, limits, locate)


def _kustomization_file(path: str) -> str:
    return next((n for n in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(path, n))), "kustomization.yaml")
