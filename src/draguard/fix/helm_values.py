"""A fix for an object a Helm chart renders: why its template is not rewritten, and where the
fix lands inside one value the template passes through, that value changed instead.

A template is Go template text, not YAML until Helm renders it, so `draguard fix` never edits
one. Many charts, though, take a whole block from values.yaml (`resources:` then
`{{- toYaml .Values.resources | nindent 12 }}`) or a scalar (`{{ .Values.gracePeriod }}`):
there the fix's edits, moved from the rendered object onto that value, are a change of the
chart's values.yaml, which is YAML and is changed the byte-minimal way as any manifest
(fix.splice). It is offered as a diff, never written: the user may keep values elsewhere.

The binding is read from the template's text (the line of the key, or the line after it);
a value is used only where the chart's values.yaml holds exactly what the render shows there,
so a value that a helper, a default or a --set changed on the way is never taken for it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..core.fixes import EditError, Op
from ..core.value import replace
from .files import unified_diff
from .splice import NotSpliceable, apply_fixes, parse

_KEY = r"^\s*-?\s*(?P<key>[\w.\-/]+):\s*"
_VALUE = r"\.Values\.(?P<value>[\w.]+)"
#: `key: {{ .Values.x }}`, `key: {{- toYaml .Values.x | nindent 4 }}`
_INLINE = re.compile(_KEY + r"\{\{-?\s*(?:toYaml\s+)?" + _VALUE + r"\s*(?:\|\s*n?indent\s+\d+\s*)?-?\}\}\s*$")
#: `key:` alone, its block on the next line: `{{- toYaml .Values.x | nindent 4 }}`
_KEY_ALONE = re.compile(_KEY + r"$")
_BLOCK = re.compile(r"^\s*\{\{-?\s*toYaml\s+" + _VALUE + r"\s*\|\s*n?indent\s+\d+\s*-?\}\}\s*$")


@dataclass(frozen=True)
class Offer:
    """What to tell about one rendered finding's fix: why the template is not rewritten, and
    where the fix maps to a value, the values file, the value's path and the edits there."""

    reason: str
    values_file: str | None = None
    value: str | None = None
    edits: tuple = ()


def offer(finding, rendered: dict | None) -> Offer:
    """The offer for `finding` (a finding in a Helm template with a fix), given the rendered
    object it is about (None when it cannot be found)."""
    location, edits = finding.location, finding.fix.edits
    template = location.file
    not_yaml = f"{template} is a Helm template (Go template text, not YAML until rendered): not rewritten"
    chart = _chart_of(template)
    if chart is None or rendered is None:
        return Offer(not_yaml)
    if any(edit.op is Op.ADD_DOCUMENT for edit in edits):
        return Offer(f"{not_yaml}; its fix also adds objects, so it is no change of one value: change the chart "
                     "by hand (`helm template` piped to `draguard fix --diff -` shows the result)")
    values_file = os.path.join(chart, "values.yaml")
    try:
        with open(template, encoding="utf-8") as handle:
            bindings = _bindings(handle.read())
        with open(values_file, encoding="utf-8") as handle:
            values = parse(handle.read())
    except (OSError, UnicodeDecodeError):
        return Offer(not_yaml)
    data = values.documents[0] if len(values.documents) == 1 and isinstance(values.documents[0], dict) else None
    mapped = [_mapped(edit, bindings, rendered, data) for edit in edits]
    targets = {m[0] for m in mapped if m is not None}
    if data is None or None in mapped or len(targets) != 1:
        return Offer(f"{not_yaml}; its fix is no change of one value the template passes through "
                     f"(`toYaml .Values.X` or `{{{{ .Values.X }}}}`): edit {template}:{location.line} by hand")
    (value,) = targets
    moved = tuple(replace(edit, path=tuple(value.split(".")) + rest) for edit, (_, rest) in zip(edits, mapped))
    return Offer(f"{not_yaml}; its fix is a change of .Values.{value}, offered as a diff of {values_file}",
                 values_file, value, moved)


def values_diffs(offers: list[Offer]) -> tuple[list[str], dict[int, str]]:
    """The diff of each values file the offers change (all of a file's offers together), and
    for an offer whose edits do not splice into that file exactly, its index and why."""
    by_file: dict[str, list[int]] = {}
    for index, made in enumerate(offers):
        if made.values_file:
            by_file.setdefault(made.values_file, []).append(index)
    diffs, failed = [], {}
    for path, indexes in by_file.items():
        with open(path, encoding="utf-8") as handle:
            before = handle.read()
        text = before
        for index in indexes:  # one by one: an offer that does not apply leaves the others
            try:
                text, _ = apply_fixes(text, [(0, offers[index].edits)])
            except (NotSpliceable, EditError) as exc:
                failed[index] = f"its change of .Values.{offers[index].value} does not apply to {path} exactly ({exc})"
        if text != before:
            diffs.append(unified_diff(path, before, text))
    return diffs, failed


def _chart_of(template: str) -> str | None:
    """The chart folder holding `template` (the nearest Chart.yaml above it), written as the
    template's path is (relative where it is)."""
    folder = os.path.dirname(template) or "."
    while True:
        if os.path.isfile(os.path.join(folder, "Chart.yaml")):
            return os.path.normpath(folder)
        parent = os.path.join(folder, "..")
        if os.path.samefile(parent, folder):
            return None
        folder = parent


def _bindings(text: str) -> dict[str, set[str]]:
    """key -> the .Values paths the template writes under that key."""
    found: dict[str, set[str]] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = _INLINE.match(line)
        if match is None and (alone := _KEY_ALONE.match(line)) and number + 1 < len(lines) and \
                (block := _BLOCK.match(lines[number + 1])):
            found.setdefault(alone.group("key"), set()).add(block.group("value"))
        elif match is not None:
            found.setdefault(match.group("key"), set()).add(match.group("value"))
    return found


def _mapped(edit, bindings: dict, rendered: dict, values: dict | None):
    """(the value, the rest of the edit's path below it) for the deepest key of the path that
    the template binds to one value holding what the render shows there; None when none does,
    or when the edit would remove the value itself (the template would then write an empty
    key, not leave it out)."""
    path, node, seen = tuple(edit.path), rendered, []
    for depth, part in enumerate(path):
        if isinstance(part, str) and len(bindings.get(part, ())) == 1 and isinstance(node, dict) and part in node:
            (value,) = bindings[part]
            if _lookup(values, value) == node[part]:
                seen.append((value, tuple(path[depth + 1:])))
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    if not seen or (edit.op is Op.REMOVE and not seen[-1][1]):
        return None
    return seen[-1]


_MISSING = object()


def _lookup(data, dotted: str):
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data
