"""Linting again after each round of fixes, without paying for what did not change: a text
that did not change is not parsed again, and only the files that changed, or that hold an
object a changed object can change the verdict on, are judged again (every object stays in
the set for the rules that read others).

Which objects rules read across files (model.objectset): claims and claim templates, PDBs,
ConfigMaps and HPAs are read by the workloads of their namespace; workloads' pod templates by
the PDBs of their namespace; a Namespace by everything in it; cluster-scoped classes, slices
and nodes by everything. An object that names no namespace may be applied to any, so it
counts for every namespace."""

from __future__ import annotations

from ..core.config import Config
from ..core.finding import Finding
from ..engine.lint import LintResult, lint_loaded
from ..model.manifest import Manifest
from ..sources.loader import Loaded, Source, load_text

EVERY = "*"  # a changed cluster-scoped object that every rule may read: re-judge everything
_CLUSTER_WIDE = {"DeviceClass", "ResourceSlice", "Node"}
#: kinds the workloads of their namespace read
_READ_BY_WORKLOADS = {"ResourceClaim", "ResourceClaimTemplate", "PodDisruptionBudget", "ConfigMap",
                      "HorizontalPodAutoscaler"}


class Relinter:
    def __init__(self, config: Config, context: Loaded | None):
        self.config, self.context = config, context
        self.parsed: dict[str, tuple[str, Loaded, list]] = {}  # display -> (text, what it loaded to, manifests)
        self.findings: dict[str | None, list[Finding]] = {}  # by file; None: the run's own (config)
        self.suppressed: dict[str | None, list[Finding]] = {}
        self.first = True
        self.context_manifests = [Manifest.from_entry(e) for e in context.entries] if context else []

    def lint(self, files) -> tuple[LintResult, set]:
        """(the findings of every file as they stand now, (file, document) of List items)."""
        parts, changed, dirty = {}, set(), Dirty()
        for f in files:
            cached = self.parsed.get(f.display)
            if cached is None or cached[0] != f.text:
                part = Loaded()
                load_text(Source(f.display, f.text), part)
                if cached is not None:
                    changed.add(f.display)
                    dirty.add(cached[1], part)
                self.parsed[f.display] = (f.text, part, [Manifest.from_entry(e) for e in part.entries])
            parts[f.display] = self.parsed[f.display][1]
        manifests = [m for display in parts for m in self.parsed[display][2]] + self.context_manifests
        everything = Loaded()
        for part in [*parts.values(), *([self.context] if self.context else [])]:
            everything.entries += part.entries
            everything.problems += part.problems
            everything.sources += part.sources
            everything.refused += part.refused
        list_items = {(e.source.display, e.document) for e in everything.entries if e.item is not None}
        if self.first:
            self._judge(everything, manifests, None, {s.display for s in everything.sources})
            self.first = False
        else:
            again = {display for display, part in parts.items() if display in changed or dirty.reaches(part)}
            if again:
                problems = [p for p in everything.problems if p.location.file in again]
                subset = Loaded(everything.entries, problems, everything.sources, everything.refused)
                self._judge(subset, manifests, lambda m: m.source.display in again, again)
        return self._merged(everything), list_items

    def _judge(self, loaded: Loaded, manifests: list[Manifest], only, displays: set) -> None:
        """Lint `loaded` (whose entries `manifests` are), judging what `only` lets through, and
        keep the findings of `displays` in place of their earlier ones."""
        result = lint_loaded(loaded, self.config, only, manifests)
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


class Dirty:
    """What a round's changes can reach in other files: the namespaces whose workloads, or
    whose PDBs, or whose every object must be judged again."""

    def __init__(self):
        self.everything: set[str] = set()  # namespaces ('*': all of them)
        self.workloads: set[str] = set()
        self.budgets: set[str] = set()

    def add(self, before: Loaded, after: Loaded) -> None:
        old = [entry.data for entry in before.entries]
        new = [entry.data for entry in after.entries]
        for data in [d for d in old if d not in new] + [d for d in new if d not in old]:
            kind, scope = _kind(data), _scope(data)
            if kind in _CLUSTER_WIDE or kind == "Namespace":
                self.everything.add(scope)
            elif kind in _READ_BY_WORKLOADS:
                self.workloads.add(scope)
            elif _holds_pods(data):
                self.budgets.add(scope)

    def reaches(self, part: Loaded) -> bool:
        for entry in part.entries:
            scope = _scope(entry.data)
            if _meets(scope, self.everything):
                return True
            if _holds_pods(entry.data) and _meets(scope, self.workloads):
                return True
            if _kind(entry.data) == "PodDisruptionBudget" and _meets(scope, self.budgets):
                return True
        return False


def _meets(scope: str, namespaces: set[str]) -> bool:
    """Whether an object of `scope` is in one of `namespaces` (an object or a change that
    names no namespace meets every one; '*' is everything)."""
    return bool(namespaces) and (scope in namespaces or EVERY in namespaces or "" in namespaces or scope == "")


#: kinds that hold no pod spec; anything else may (workload custom resources included)
_PODLESS = {"Service", "ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
            "ClusterRoleBinding", "Ingress", "NetworkPolicy", "PriorityClass", "StorageClass",
            "PersistentVolumeClaim", "PersistentVolume", "ResourceClaim", "ResourceClaimTemplate",
            "PodDisruptionBudget", "HorizontalPodAutoscaler", "DeviceClass", "ResourceSlice", "Namespace", "Node",
            "CustomResourceDefinition", "LimitRange", "ResourceQuota", "Endpoints", "EndpointSlice"}


def _holds_pods(data) -> bool:
    return _kind(data) not in _PODLESS


def _kind(data) -> str:
    return data.get("kind") if isinstance(data, dict) and isinstance(data.get("kind"), str) else ""


def _scope(data) -> str:
    data = data if isinstance(data, dict) else {}
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kind = data.get("kind")
    if kind in _CLUSTER_WIDE:
        return EVERY
    if kind == "Namespace":
        return str(metadata.get("name", ""))
    return str(metadata.get("namespace") or "")
