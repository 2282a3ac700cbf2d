"""Render Helm charts and Kustomize folders with the user's own binaries.

Findings in rendered output are mapped back to the template file that the renderer names in
its `# Source:` comments; the line inside that template is found by matching the rendered
line's text (best effort: templates interpolate values, so an exact line is not always there)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

RENDER_TIMEOUT_S = 120
_SOURCE_COMMENT = re.compile(r"^# Source: (.+?)\s*$", re.MULTILINE)


@dataclass
class Rendered:
    text: str | None  # None when the unit could not be rendered
    problem: str | None = None  # why not: a message for the user
    missing_binary: bool = False


def _renderer_command(kind: str, path: str) -> list[str] | None:
    if kind == "helm":
        helm = shutil.which("helm")
        return [helm, "template", "draguard", path] if helm else None
    kustomize = shutil.which("kustomize")
    if kustomize:
        return [kustomize, "build", path]
    kubectl = shutil.which("kubectl")
    return [kubectl, "kustomize", path] if kubectl else None


def render(kind: str, path: str) -> Rendered:
    command = _renderer_command(kind, path)
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
        detail = (done.stderr or done.stdout).strip().splitlines()
        return Rendered(None, f"{' '.join(os.path.basename(c) if i == 0 else c for i, c in enumerate(command))} "
                              f"failed: {detail[-1] if detail else 'exit status ' + str(done.returncode)}")
    return Rendered(done.stdout)


class SourceMap:
    """Maps positions in `helm template` output back to the chart's template files."""

    def __init__(self, chart_dir: str, rendered: str):
        self.chart_dir = chart_dir
        self.rendered_lines = rendered.splitlines()
        self.sources = [(rendered.count("\n", 0, m.start()) + 1, m.group(1))
                        for m in _SOURCE_COMMENT.finditer(rendered)]
        self._template_lines: dict[str, list[str]] = {}

    def template_for(self, line: int) -> str | None:
        """The template file (as a user path) that produced rendered `line`."""
        found = None
        for source_line, name in self.sources:
            if source_line > line:
                break
            found = name
        if found is None:
            return None
        # helm names templates '<chart-name>/templates/x.yaml'; drop the chart name
        parts = found.split("/", 1)
        return os.path.join(self.chart_dir, parts[1] if len(parts) == 2 else parts[0])

    def locate(self, line: int, column: int) -> tuple[str, int, int]:
        template = self.template_for(line)
        if template is None or not os.path.isfile(template):
            return (os.path.join(self.chart_dir, "Chart.yaml"), 1, 1)
        lines = self._template_lines.get(template)
        if lines is None:
            with open(template, encoding="utf-8", errors="replace") as handle:
                lines = self._template_lines[template] = handle.read().splitlines()
        wanted = self.rendered_lines[line - 1] if 0 < line <= len(self.rendered_lines) else ""
        token = wanted[column - 1:].split(":", 1)[0].strip() if column - 1 < len(wanted) else ""
        stripped = wanted.strip()
        indent = len(wanted) - len(wanted.lstrip())
        for number, text in enumerate(lines, 1):  # the same line, as written in the template
            if stripped and text.strip() == stripped:
                return (template, number, max(1, len(text) - len(text.lstrip()) + column - indent))
        for number, text in enumerate(lines, 1):  # else the first line holding the same token
            if token and token in text:
                return (template, number, text.index(token) + 1)
        return (template, 1, 1)
