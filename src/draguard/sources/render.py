"""Render Helm charts and Kustomize folders with the user's own binaries.

Helm findings are mapped back to the template file that the renderer names in its
`# Source:` comments, and to the line there by aligning the rendered document with the
template (best effort: templates interpolate values; a line that came from values maps to
the directive that emitted it). Kustomize findings are mapped through the origin annotations
kustomize itself writes (see origins)."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from . import chartdeps
from .options import RenderOptions

RENDER_TIMEOUT_S = 120
_SOURCE_COMMENT = re.compile(r"^# Source: (.+?)\s*$", re.MULTILINE)


@dataclass
class Rendered:
    text: str | None  # None when the unit could not be rendered
    problem: str | None = None  # why not: a message for the user
    missing_binary: bool = False
    where: tuple | None = None  # (template file, line, column) helm blamed, relative to the chart
    build_dir: str | None = None  # kustomize: where the wrapper ran (origin paths are relative to it)
    #: what the render left out that the user should know: (file in the chart, line, column, message)
    notes: tuple = ()


#: helm's `Error: execution error at (<chart>/templates/x.yaml:30:4): <message>` (a `fail` or
#: `required` in the chart) and `Error: template: <chart>/templates/x.yaml:12:3: ...` (a
#: template that does not parse).
_HELM_ERROR = re.compile(r"^Error: (?:execution error at \(|template: )[^/\s]+/([^:]+):(\d+):(\d+)\)?:?\s*(.*)$")
#: helm 4's traceable form of a template that fails to execute (pkg/engine/engine.go
#: TraceableError): `Error: <chart>/templates/x.yaml:14:18`, then on indented lines
#: `executing "..." at <.Values.x.name>:` and the message
_HELM_TRACE = re.compile(r"^Error: [^/\s]+/(\S+?):(\d+):(\d+)$")


def _failure(command: list[str], output: str, path: str) -> tuple[str, tuple | None]:
    """The renderer's own error, as one line, and where in the chart it points (`path`: the
    chart or kustomization rendered)."""
    lines = [line.strip() for line in output.strip().splitlines()]
    name = " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(command))
    for i, line in enumerate(lines):
        match = _HELM_ERROR.match(line)
        if match:
            template, row, column, message = match.groups()
            message = message or next((rest for rest in lines[i + 1:] if rest), "")
            return f"{name} failed: {message}", (template, int(row), int(column))
        match = _HELM_TRACE.match(line)
        if match:
            template, row, column = match.groups()
            trace = itertools.takewhile(bool, lines[i + 1:])
            message = " ".join(t for t in trace if not t.startswith("Use --debug")) or "no message"
            return f"{name} failed: {message}", (template, int(row), int(column))
    at = next((i for i, line in enumerate(lines) if line.startswith("Error:")), None)
    # an error that quotes what it was given runs on over several lines (kustomize prints a
    # patch's config between backticks): up to the first blank line it is one message
    error = " ".join(itertools.takewhile(bool, lines[at:])) if at is not None else None
    detail = error or (lines[-1] if lines else "")
    quoted = _KLOG_ERROR.search(detail)  # kubectl logs through klog: ... "command failed" err="..."
    detail = quoted.group(1) if quoted else detail
    cause = detail.rfind(_KUSTOMIZE_CAUSE)  # kustomize nests causes; the innermost names the user's file
    detail = detail[cause:] if cause > 0 else detail
    # unless it is the wrapper's own step (render(): its one resource is the user's folder)
    folder = re.escape(os.path.abspath(path))
    detail = re.sub(rf"^accumulating resources from '[^']*': '{folder}' must resolve to a file': recursed accumulation "
                    rf"of path '{folder}': ", "", detail)
    return f"{name} failed: {detail or 'no message'}", None


_KLOG_ERROR = re.compile(r'err="(.*)"\s*$')
_KUSTOMIZE_CAUSE = "accumulating resources from '"


def _renderer_command(kind: str, path: str, options: RenderOptions) -> list[str] | None:
    if kind == "helm":
        helm = shutil.which("helm")
        if helm is None:
            return None
        command = [helm, "template", "draguard", path]
        if options.kube_version:
            command += ["--kube-version", f"{options.kube_version}.0"]
        for values in options.values:
            command += ["--values", values]
        for pair in options.set_values:
            command += ["--set", pair]
        return command
    # --enable-helm: a kustomization's helmCharts are inflated by helm, as Argo CD's
    # kustomize-with-helm builds them (without it kustomize refuses the kustomization), for the
    # target release as a chart rendered alone is (--helm-kube-version, which wins over a
    # helmCharts entry's own kubeVersion: kustomize api HelmChartInflationGenerator)
    kustomize = shutil.which("kustomize")
    if kustomize:
        release = ["--helm-kube-version", f"{options.kube_version}.0"] if options.kube_version else []
        return [kustomize, "build", "--enable-helm", *release, path]
    kubectl = shutil.which("kubectl")
    return [kubectl, "kustomize", "--enable-helm", path] if kubectl else None


#: `.Capabilities.APIVersions.Has "group/version"` (or "group/version/Kind") in a template
_CAPABILITY_CHECK = re.compile(r"\.Capabilities\.APIVersions\.Has\s+\"([^\"/]+(?:/[^\"/]+)?)(?:/[^\"]*)?\"")


def capability_checks(chart: str) -> frozenset:
    """The API versions a chart's templates (its subcharts' too) test with
    `.Capabilities.APIVersions.Has`. `helm template` answers those from every version the
    helm binary knows (helm pkg/chart/common/capabilities.go: DefaultVersionSet, all the
    group versions of its client-go), not from what the target release serves, which
    `--kube-version` does not change and `--api-versions` only adds to: the render may
    hold a version that `helm install` on the cluster, which asks the API server, would not
    choose."""
    found = set()
    for folder, _, names in os.walk(chart):
        if os.path.basename(folder) != "templates" and "/templates/" not in folder.replace(os.sep, "/") + "/":
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    found.update(_CAPABILITY_CHECK.findall(handle.read()))
            except OSError:
                continue
    return frozenset(found)


def render(kind: str, path: str, options: RenderOptions = RenderOptions()) -> Rendered:
    """`helm template` of a chart, or `kustomize build` of a folder through a wrapper
    kustomization that asks kustomize to annotate each object with its origin (see origins)."""
    if kind == "helm":
        absent = chartdeps.missing(path)
        if absent:
            return _render_without(path, absent, options)
        return _run(_renderer_command(kind, path, options), kind, path)
    import tempfile  # only a kustomize build needs these; every command imports this module

    from .origins import WRAPPER

    with tempfile.TemporaryDirectory(prefix="draguard-kustomize-") as build_dir:
        target = os.path.relpath(os.path.abspath(path), build_dir)
        with open(os.path.join(build_dir, "kustomization.yaml"), "w", encoding="utf-8") as handle:
            handle.write(WRAPPER.format(target=target))
        result = _run(_renderer_command(kind, build_dir, options), kind, path)
        result.build_dir = build_dir
        return result


def _render_without(chart: str, absent: list, options: RenderOptions) -> Rendered:
    """A chart whose charts/ folder lacks some dependencies, rendered from a copy without
    them (chartdeps): the render stands when the values disable every one of them, as helm
    renders nothing of a disabled dependency."""
    import json
    import tempfile

    names = ", ".join(d.name for d in absent)
    with tempfile.TemporaryDirectory(prefix="draguard-helm-") as build_dir:
        copy = chartdeps.pruned_copy(chart, absent, build_dir)
        command = _renderer_command("helm", copy, options)
        result = _run(command, "helm", chart, shown=command and [chart if c == copy else c for c in command])
    if result.text is None:
        return result
    text, values = _split_values(result.text)
    if values is None:
        return Rendered(None, f"helm template of {chart} without its missing dependencies ({names}) did not show "
                              "the values it used; run `helm dependency build` and lint again")
    wanted = [d for d in absent if chartdeps.enabled(d, json.loads(values)) is not False]
    if wanted:
        first = wanted[0]
        why = "; ".join(f"{d.name}: " + (f"condition {d.condition} is not false" if d.condition else "no condition")
                        for d in wanted)
        named = ", ".join(d.name for d in wanted)
        what = f"dependencies {named} are" if len(wanted) > 1 else f"dependency {named} is"
        return Rendered(None, f"the chart's {what} not in its charts/ folder and these values render "
                              f"{'them' if len(wanted) > 1 else 'it'} ({why}): run `helm dependency build {chart}` "
                              "and lint again", where=(first.file, first.line, first.column))
    notes = tuple((d.file, d.line, d.column, f"dependency {d.name} is not in the chart's charts/ folder (`helm "
                   f"template` refuses the chart until `helm dependency build`); these values disable it "
                   f"({d.condition or 'tags ' + ', '.join(d.tags)}), so the chart was rendered without it, as helm "
                   "renders a disabled dependency") for d in absent)
    return Rendered(text, notes=notes)


def _split_values(text: str) -> tuple[str, str | None]:
    """(the render without the document of chartdeps.VALUES_TEMPLATE, that document's JSON)."""
    match = re.search(rf"^---\n# Source: [^\n/]+/templates/{re.escape(chartdeps.VALUES_TEMPLATE)}\n(.*)\n",
                      text, re.MULTILINE)
    if match is None:
        return text, None
    return text[:match.start()] + text[match.end():], match.group(1)


def _run(command: list[str] | None, kind: str, path: str, shown: list[str] | None = None) -> Rendered:
    if command is None:
        wanted = "helm" if kind == "helm" else "kustomize or kubectl"
        return Rendered(None, f"{wanted} not found on PATH; {path} was not rendered or checked",
                        missing_binary=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RENDER_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Rendered(None, f"{os.path.basename(command[0])} took longer than {RENDER_TIMEOUT_S}s on {path}")
    except OSError as exc:
        return Rendered(None, f"cannot run {command[0]}: {exc}")
    if done.returncode != 0:
        shown = shown or (command[:2] + [path] if kind == "kustomize" else command)
        message, where = _failure(shown, done.stderr or done.stdout, path)
        return Rendered(None, message, where=where)
    return Rendered(done.stdout)


class SourceMap:
    """Maps positions in `helm template` output back to the chart's template files.

    Each rendered document (after its `# Source:` comment) is aligned with its template line
    by line (a longest common subsequence of non-blank lines: the most lines matched in
    order, so a repeated `resources:` block cannot pull the rest out of place): a rendered
    line the template holds verbatim maps to that line. A line that interpolation changed maps to the template line
    between its aligned neighbours that holds the same key; a line that came from values
    (`toYaml .Values.x`) maps to the template directive that emitted it."""

    def __init__(self, chart_dir: str, rendered: str):
        self.chart_dir = chart_dir
        self.rendered_lines = rendered.splitlines()
        self.sources = [(rendered.count("\n", 0, m.start()) + 1, m.group(1))
                        for m in _SOURCE_COMMENT.finditer(rendered)]
        self._template_lines: dict[str, list[str]] = {}
        self._alignments: dict[int, dict[int, int]] = {}

    def _document_at(self, line: int) -> tuple[int, str] | None:
        """(the line of its `# Source:` comment, the template name) of the document holding `line`."""
        found = None
        for source_line, name in self.sources:
            if source_line > line:
                break
            found = (source_line, name)
        return found

    def template_for(self, line: int) -> str | None:
        """The template file (as a user path) that produced rendered `line`."""
        found = self._document_at(line)
        if found is None:
            return None
        # helm names templates '<chart-name>/templates/x.yaml'; drop the chart name
        parts = found[1].split("/", 1)
        return os.path.join(self.chart_dir, parts[1] if len(parts) == 2 else parts[0])

    def _lines_of(self, template: str) -> list[str]:
        lines = self._template_lines.get(template)
        if lines is None:
            with open(template, encoding="utf-8", errors="replace") as handle:
                lines = self._template_lines[template] = handle.read().splitlines()
        return lines

    def _alignment(self, comment_line: int, lines: list[str]) -> dict[int, int]:
        """Rendered line -> template line (both 1-based) for the lines the template holds verbatim."""
        aligned = self._alignments.get(comment_line)
        if aligned is None:
            end = next((s for s, _ in self.sources if s > comment_line), len(self.rendered_lines) + 1)
            rendered = [text.strip() for text in self.rendered_lines[comment_line:end - 1]]
            pairs = _common_lines(rendered, [text.strip() for text in lines])
            aligned = self._alignments[comment_line] = {comment_line + 1 + a: b + 1 for a, b in pairs}
        return aligned

    def locate(self, line: int, column: int, path: tuple | None = None) -> tuple[str, int, int]:
        template, document = self.template_for(line), self._document_at(line)
        if template is None or document is None or not os.path.isfile(template):
            return (os.path.join(self.chart_dir, "Chart.yaml"), 1, 1)
        lines = self._lines_of(template)
        start = document[0]
        resolve = _Resolver(self.rendered_lines, start, self._alignment(start, lines), lines)
        wanted = self.rendered_lines[line - 1] if 0 < line <= len(self.rendered_lines) else ""
        number = resolve.template_line(line)
        if number is not None:
            text = lines[number - 1]
            return (template, number, max(1, _indent(text) + column - _indent(wanted)))
        parent = resolve.parent(line)
        window = _block(lines, parent) if parent else range(1, len(lines) + 1)
        token = wanted[column - 1:].split(":", 1)[0].strip() if column - 1 < len(wanted) else ""
        for number in window:  # the key, written with an interpolated value
            if token and token in lines[number - 1] and not resolve.owned_by_sibling(number, line):
                return (template, number, lines[number - 1].index(token) + 1)
        for ancestor in resolve.untrusted_ancestors(line):  # a key whose value a directive wrote on its line
            key = _key_of(self.rendered_lines[ancestor - 1])
            for number in window:  # `resources: {{- include "x.resources" . | nindent 12 }}`
                text = lines[number - 1]
                if key and "{{" in text and _key_of(text) == key:
                    return (template, number, text.index("{{") + 1)
        directives = [number for number in window if "{{" in lines[number - 1]]
        if directives:  # the directive that emitted it (toYaml, include, range): the last one above what
            below = resolve.next_template_line(line)  # follows it in the block, else the block's first
            number = max((n for n in directives if n < below), default=directives[0]) \
                if below is not None and below in window else directives[0]
            return (template, number, lines[number - 1].index("{{") + 1)
        return (template, parent or 1, 1)


class _Resolver:
    """Which aligned lines to trust: a rendered line's template line must lie inside the
    template block of its nearest trusted YAML ancestor (the lines indented under it), else
    the match is a look-alike from another branch (`limits:` of a default block when the
    real one came from `toYaml .Values.worker.resources`)."""

    def __init__(self, rendered: list[str], start: int, aligned: dict[int, int], lines: list[str]):
        self.rendered, self.start, self.aligned, self.lines = rendered, start, aligned, lines
        self._memo: dict[int, int | None] = {}

    def _ancestors(self, line: int):
        """Rendered lines above `line` with less indentation, nearest first."""
        threshold = _indent(self.rendered[line - 1])
        for k in range(line - 1, self.start, -1):
            text = self.rendered[k - 1]
            if text.strip() and _indent(text) < threshold:
                yield k
                threshold = _indent(text)

    def parent(self, line: int) -> int | None:
        """The template line of the nearest ancestor whose own match is trusted."""
        return next((t for t in map(self.template_line, self._ancestors(line)) if t is not None), None)

    def owned_by_sibling(self, number: int, line: int) -> bool:
        """Whether template line `number` produced, verbatim, another rendered line of the
        same mapping as `line`: then `line` is that key written a second time by something
        else (an included helper's labels beside a literal one), not this line's output."""
        others = [r for r, t in self.aligned.items() if t == number and r != line]
        parent = next(self._ancestors(line), None)
        return any(next(self._ancestors(other), None) == parent and
                   _indent(self.rendered[other - 1]) == _indent(self.rendered[line - 1]) for other in others)

    def next_template_line(self, line: int) -> int | None:
        """The template line of the first trusted rendered line after `line`, in its document."""
        return next((t for r in sorted(self.aligned) if r > line and (t := self.template_line(r)) is not None), None)

    def untrusted_ancestors(self, line: int):
        """The ancestors of `line` below the nearest trusted one, nearest first."""
        for ancestor in self._ancestors(line):
            if self.template_line(ancestor) is not None:
                return
            yield ancestor

    def template_line(self, line: int) -> int | None:
        if line not in self._memo:
            matched = self.aligned.get(line)
            parent = self.parent(line) if matched is not None else None
            self._memo[line] = matched if matched is not None and (
                parent is None or matched in _block(self.lines, parent)) else None
        return self._memo[line]


def _key_of(text: str) -> str:
    """The mapping key a YAML line starts with (after a sequence dash), or ''."""
    key, colon, _ = text.strip().removeprefix("- ").partition(":")
    return key.strip() if colon else ""


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _block(lines: list[str], number: int) -> range:
    """Template lines nested under line `number`: until a YAML line indented no deeper
    (directive-only lines like `{{- end }}` do not end it)."""
    depth = _indent(lines[number - 1])
    end = number + 1
    while end <= len(lines):
        text = lines[end - 1]
        if text.strip() and _indent(text) <= depth and not text.strip().startswith("{{"):
            break
        end += 1
    return range(number + 1, end)

def _common_lines(rendered: list[str], template: list[str]) -> list[tuple[int, int]]:
    """(rendered index, template index) pairs of equal, non-blank lines in order, as patience
    diff finds them: lines that occur once in each side anchor the alignment (so a
    `resources:` repeated in another branch of the template cannot pull a block out of
    place), and each stretch between anchors is aligned by longest common subsequence."""
    pairs: list[tuple[int, int]] = []
    _patience(rendered, template, 0, len(rendered), 0, len(template), pairs)
    return sorted(pairs)


def _patience(a, b, a_lo, a_hi, b_lo, b_hi, out) -> None:
    if a_lo >= a_hi or b_lo >= b_hi:
        return
    anchors = _unique_anchors(a, b, a_lo, a_hi, b_lo, b_hi)
    if not anchors:
        out.extend(_lcs(a, b, a_lo, a_hi, b_lo, b_hi))
        return
    previous_a, previous_b = a_lo, b_lo
    for i, j in anchors:
        _patience(a, b, previous_a, i, previous_b, j, out)
        out.append((i, j))
        previous_a, previous_b = i + 1, j + 1
    _patience(a, b, previous_a, a_hi, previous_b, b_hi, out)


def _unique_anchors(a, b, a_lo, a_hi, b_lo, b_hi) -> list[tuple[int, int]]:
    """Lines unique on both sides, in the longest run that is increasing on both."""
    def once(lines, lo, hi):
        seen: dict[str, int | None] = {}
        for k in range(lo, hi):
            if lines[k]:
                seen[lines[k]] = None if lines[k] in seen else k
        return {line: k for line, k in seen.items() if k is not None}

    in_b = once(b, b_lo, b_hi)
    candidates = [(i, in_b[line]) for line, i in sorted(once(a, a_lo, a_hi).items(), key=lambda x: x[1])
                  if line in in_b]
    # longest increasing subsequence of template indexes (patience sorting)
    tails: list[int] = []
    links: list[int | None] = [None] * len(candidates)
    for k, (_, j) in enumerate(candidates):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if candidates[tails[mid]][1] < j:
                lo = mid + 1
            else:
                hi = mid
        links[k] = tails[lo - 1] if lo else None
        if lo == len(tails):
            tails.append(k)
        else:
            tails[lo] = k
    run, at = [], tails[-1] if tails else None
    while at is not None:
        run.append(candidates[at])
        at = links[at]
    return run[::-1]


def _lcs(a, b, a_lo, a_hi, b_lo, b_hi) -> list[tuple[int, int]]:
    """A longest common subsequence of equal non-blank lines in a stretch (dynamic
    programming: the stretches between anchors are short)."""
    n, m = a_hi - a_lo, b_hi - b_lo
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        line = a[a_lo + i]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if line and line == b[b_lo + j] else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[a_lo + i] and a[a_lo + i] == b[b_lo + j]:
            pairs.append((a_lo + i, b_lo + j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs
