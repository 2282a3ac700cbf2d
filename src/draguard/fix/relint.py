"""Linting again after each round of fixes, without paying for what did not change: a text
that did not change is not parsed again, and only the files that changed, or that share a
namespace with what changed, are judged again (every object stays in the set for the rules
that read others). Cross-object rules look within a namespace, at objects that name none, or
at cluster-scoped classes and slices; a change to one of those re-judges every file."""

from __future__ import annotations

from ..core.config import Config
from ..core.finding import Finding
from ..engine.lint import LintResult, lint_loaded
from ..sources.loader import Loaded, Source, load_text

EVERY = "*"  # a changed cluster-scoped object that every rule may read: re-judge everything
_CLUSTER_WIDE = {"DeviceClass", "ResourceSlice", "Node"}


class Relinter:
    def __init__(self, config: Config, context: Loaded | None):
        self.config, self.context = config, context
        self.parsed: dict[str, tuple[str, Loaded]] = {}  # display -> (text, what it loaded to)
        self.findings: dict[str | None, list[Finding]] = {}  # by file; None: the run's own (config)
        self.suppressed: dict[str | None, list[Finding]] = {}
        self.first = True

    def lint(self, files) -> tuple[LintResult, set]:
        """(the findings of every file as they stand now, (file, document) of List items)."""
        parts, dirty = {}, set()
        for f in files:
            cached = self.parsed.get(f.display)
            if cached is None or cached[0] != f.text:
                part = Loaded()
                load_text(Source(f.display, f.text), part)
                if cached is not None:
                    dirty |= _changed_namespaces(cached[1], part)
                self.parsed[f.display] = (f.text, part)
            parts[f.display] = self.parsed[f.display][1]
        everything = Loaded()
        for part in [*parts.values(), *([self.context] if self.context else [])]:
            everything.entries += part.entries
            everything.problems += part.problems
            everything.sources += part.sources
            everything.refused += part.refused
        list_items = {(e.source.display, e.document) for e in everything.entries if e.item is not None}
        if self.first:
            self._judge(everything, None, {s.display for s in everything.sources})
            self.first = False
        else:
            again = {display for display, part in parts.items() if _touches(_namespaces(part), dirty)}
            if again:
                problems = [p for p in everything.problems if p.location.file in again]
                subset = Loaded(everything.entries, problems, everything.sources, everything.refused)
                self._judge(subset, lambda m: m.source.display in again, again)
        return self._merged(everything), list_items

    def _judge(self, loaded: Loaded, only, displays: set) -> None:
        result = lint_loaded(loaded, self.config, only)
        for display in [*displays, None]:
            self.findings[display], self.suppressed[display] = [], []
        for bucket, found in ((self.findings, result.findings), (self.suppressed, result.suppressed)):
            for finding in found:
                key = finding.location.file if finding.location.file in displays else None
                bucket.setdefault(key, []).append(finding)

    def _merged(self, loaded: Loaded) -> LintResult:
        findings = sorted((f for group in self.findings.values() for f in group), key=Finding.sort_key)
        suppressed = sorted((f for group in self.suppressed.values() for f in group), key=Finding.sort_key)
        return LintResult(findings, suppressed, self.config, len(loaded.entries), loaded.sources, loaded.refused)


def _namespaces(part: Loaded) -> set[str]:
    """The namespaces a file's objects are in ('' for those that name none); a Namespace
    object stands for itself; cluster-scoped classes and slices for everything."""
    return {_scope(entry.data) for entry in part.entries}


def _changed_namespaces(before: Loaded, after: Loaded) -> set[str]:
    """The scopes of the objects a round added, removed or changed in one file."""
    old = [entry.data for entry in before.entries]
    new = [entry.data for entry in after.entries]
    return {_scope(data) for data in old if data not in new} | {_scope(data) for data in new if data not in old}


def _scope(data) -> str:
    data = data if isinstance(data, dict) else {}
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kind = data.get("kind")
    if kind in _CLUSTER_WIDE:
        return EVERY
    if kind == "Namespace":
        return str(metadata.get("name", ""))
    return str(metadata.get("namespace") or "")


def _touches(namespaces: set[str], dirty: set[str]) -> bool:
    if not dirty:
        return False
    return EVERY in dirty or "" in dirty or "" in namespaces or bool(namespaces & dirty)
