"""Linting again after each round of fixes, without paying for what did not change: a text
that did not change is not parsed again, and only the files that changed, or that hold an
object a changed object can change the verdict on, are judged again (every object stays in
the set for the rules that read others); between rounds only by the rules whose fixes the
run may apply, by the others once when no fix is left.

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
from ..rules import REGISTRY
from ..sources.loader import Loaded, Source, load_text

NOTES = "notes"
EVERY = "*"  # a changed cluster-scoped object that every rule may read: re-judge everything
_CLUSTER_WIDE = {"DeviceClass", "ResourceSlice", "Node"}
#: kinds the workloads of their namespace read
_READ_BY_WORKLOADS = {"ResourceClaim", "ResourceClaimTemplate", "PodDisruptionBudget", "ConfigMap",
                      "HorizontalPodAutoscaler"}


class Relinter:
    """Lints the files as the rounds leave them. Between rounds only the rules whose fixes
    the run may apply (`fixing`) judge again; the other rules, which cannot change what a
    round does, judge once at the end (complete) every file a round changed or reached."""

    def __init__(self, config: Config, context: Loaded | None, fixing):
        self.config, self.context, self.fixing = config, context, fixing
        self.parsed: dict[str, tuple[str, Loaded, list]] = {}  # display -> (text, what it loaded to, manifests)
        #: per part (True: the fixing rules', False: the others', NOTES: the run's own), by the file
        #: whose judging found them, (findings, suppressed)
        self.found: dict = {True: {}, False: {}, NOTES: {}}
        self.stale: set[str] = set()  # files the other rules have not judged as they stand
        self.first = True
        self.context_manifests = [Manifest.from_entry(e) for e in context.entries] if context else []
        self.everything = Loaded()

    def lint(self, files) -> tuple[LintResult, set]:
        """(the fixing rules' findings of every file as it stands now, (file, document) of List items)."""
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
        self.manifests = [m for display in parts for m in self.parsed[display][2]] + self.context_manifests
        everything = self.everything = Loaded()
        for part in [*parts.values(), *([self.context] if self.context else [])]:
            everything.entries += part.entries
            everything.problems += part.problems
            everything.sources += part.sources
            everything.refused += part.refused
        list_items = {(e.source.display, e.document) for e in everything.entries if e.item is not None}
        if self.first:
            self._judge(None, {s.display for s in everything.sources}, None)
            self.first = False
        else:
            again = {display for display, part in parts.items() if display in changed or dirty.reaches(part)}
            if again:
                self.stale |= again
                self._judge(lambda m: m.source.display in again, again, True)
        return self._merged(True), list_items

    def complete(self) -> LintResult:
        """Every rule's findings of the files as the last lint() read them, and the run's own
        (problems met reading, unknown suppression keys, the live-objects note)."""
        if self.stale:
            stale = self.stale
            self._judge(lambda m: m.source.display in stale, stale, False)
            self.stale = set()
        notes = lint_loaded(self.everything, self.config, None, self.manifests, rules=lambda rule: False)
        self.found[NOTES] = {None: (notes.findings, notes.suppressed)}
        return self._merged(True, False, NOTES)

    def _judge(self, only, displays: set, fixing: bool | None) -> None:
        """Lint the run's objects with the fixing rules (True), the others (False) or all
        (None), judging what `only` lets through, and keep the findings of `displays` in
        place of their earlier ones."""
        rules = None if fixing is None else self.fixing if fixing else lambda rule: not self.fixing(rule)
        origins: dict = {}
        result = lint_loaded(self.everything, self.config, only, self.manifests, rules=rules, notes=False,
                             origins=origins)
        for part in [True, False] if fixing is None else [fixing]:
            for display in displays:
                self.found[part][display] = ([], [])
        for index, found in enumerate((result.findings, result.suppressed)):
            for finding in found:  # by the file judged, which may not be the file it is placed in
                part = fixing if fixing is not None else self.fixing(REGISTRY.get(finding.rule))
                self.found[part][origins[id(finding)].source.display][index].append(finding)

    def _merged(self, *parts) -> LintResult:
        groups = [group for part in parts for group in self.found[part].values()]
        findings = sorted((f for group in groups for f in group[0]), key=Finding.sort_key)
        suppressed = sorted((f for group in groups for f in group[1]), key=Finding.sort_key)
        loaded = self.everything
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
