"""Linting again after each round of fixes, without paying for what did not change: a text
that did not change is not parsed again, and only the files that changed, or that hold an
object a changed object can change the verdict on, are judged again (every object stays in
the set for the rules that read others), and only by the rules whose fixes the run may
apply: the others judge every file once, when no fix is left.

Which objects rules read across files (model.objectset): claims and claim templates, PDBs,
ConfigMaps and HPAs are read by the workloads of their namespace; workloads' pod templates by
the PDBs of their namespace; a Namespace by everything in it; cluster-scoped classes, slices
and nodes by everything. An object that names no namespace may be applied to any, so it
counts for every namespace."""

from __future__ import annotations

from dataclasses import replace

from ..core.config import Config
from ..core.finding import Finding
from ..core.location import Location
from ..engine.lint import LintResult, lint_loaded
from ..model.manifest import Manifest
from ..sources.loader import Loaded, Source, load_documents, load_text

EVERY = "*"  # a changed cluster-scoped object that every rule may read: re-judge everything
_CLUSTER_WIDE = {"DeviceClass", "ResourceSlice", "Node"}
#: kinds the workloads of their namespace read
_READ_BY_WORKLOADS = {"ResourceClaim", "ResourceClaimTemplate", "PodDisruptionBudget", "ConfigMap",
                      "HorizontalPodAutoscaler"}


class Relinter:
    """Lints the files as the rounds leave them. Each round only the rules whose fixes the
    run may apply (`fixing`) judge; the other rules, which cannot change what a round does,
    judge every file once, when no fix is left (complete)."""

    def __init__(self, config: Config, context: Loaded | None, fixing, reference: Loaded | None = None):
        self.config, self.context, self.fixing = config, context, fixing
        self.parsed: dict[str, tuple[str, Loaded, list]] = {}  # display -> (text, what it loaded to, manifests)
        #: the fixing rules' findings by the file whose judging found them: (findings, suppressed)
        self.found: dict[str, tuple[list, list]] = {}
        self.first = True
        #: the renders are judged (their findings are reported); the reference (--reference) only read
        self.context_manifests = [Manifest.from_entry(e) for e in context.entries] if context else []
        self.reference_manifests = [Manifest.from_entry(e) for e in reference.entries] if reference else []
        self.unjudged = {id(m) for m in self.reference_manifests}
        self.everything = Loaded()

    def lint(self, files) -> tuple[LintResult, set]:
        """(the fixing rules' findings of every file as it stands now, (file, document) of List items).
        A file whose fixes are held in memory (fix.run.FileText.documents) is read from that data."""
        changed, dirty = set(), Dirty()
        for f in files:
            state = f.state
            cached = self.parsed.get(f.display)
            if cached is None or not _same(cached[0], state):
                part = _read(f)
                if cached is not None:
                    changed.add(f.display)
                    dirty.add(cached[1], part)
                self.parsed[f.display] = (state, part, [Manifest.from_entry(e) for e in part.entries])
        everything = self._assemble()
        list_items = {(e.source.display, e.document) for e in everything.entries if e.item is not None}
        if self.first:
            self._judge(None, {s.display for s in everything.sources}, self.fixing)
            self.first = False
        elif changed or dirty.reaches_any:
            again = {display for display, (_, part, _) in self.parsed.items()
                     if display in changed or dirty.reaches(part)}
            self._judge(lambda m: m.source.display in again, again, self.fixing)
        return self._merged(self.found), list_items

    def settle(self, files) -> None:
        """Read `files` from their texts again, now that each was verified to hold the data
        it was judged on in memory, and place their findings on those texts (none is judged
        again: the data is the same)."""
        if not files:
            return
        placed = {}
        for f in files:
            part = _read(f)
            manifests = [Manifest.from_entry(e) for e in part.entries]
            self.parsed[f.display] = (f.state, part, manifests)
            placed.update(((f.display, m.document), m) for m in manifests)
        for group in self.found.values():
            for finding in (*group[0], *group[1]):
                manifest = placed.get((finding.location.file, finding.location.document))
                if manifest is not None:
                    finding.location = _placed(finding, manifest)
        self._assemble()

    def _assemble(self) -> Loaded:
        """Every file's objects as last read, with the renders' and the reference's, as the rules see them."""
        self.manifests = [m for _, _, manifests in self.parsed.values() for m in manifests] + \
            self.context_manifests + self.reference_manifests
        everything = self.everything = Loaded()
        for part in [*(part for _, part, _ in self.parsed.values()), *([self.context] if self.context else [])]:
            everything.entries += part.entries
            everything.problems += part.problems
            everything.sources += part.sources
            everything.refused += part.refused
        return everything

    def complete(self) -> LintResult:
        """Every rule's findings of the files as the last lint() read them (the other rules
        judge them now), and the run's own (problems met reading, unknown suppression keys,
        the live-objects note)."""
        others: dict = {}
        self._judge(None, {s.display for s in self.everything.sources}, lambda rule: not self.fixing(rule), others,
                    notes=True)
        return self._merged(self.found, others)

    def _judge(self, only, displays: set, rules, found: dict | None = None, notes: bool = False) -> None:
        """Lint the run's objects with the `rules` the predicate lets through, judging what
        `only` lets through, and keep the findings of `displays` in `found` (the fixing
        rules' by default) in place of their earlier ones; with `notes`, the run's own
        findings too (under None)."""
        found = self.found if found is None else found
        origins: dict = {}
        unjudged = self.unjudged
        judged = (lambda m: id(m) not in unjudged and (only is None or only(m))) if unjudged else only
        result = lint_loaded(self.everything, self.config, judged, self.manifests, rules=rules, notes=notes,
                             origins=origins)
        for display in [*displays, None]:
            found[display] = ([], [])
        for index, findings in enumerate((result.findings, result.suppressed)):
            for finding in findings:  # by the file judged, which may not be the file it is placed in
                judged = origins.get(id(finding))
                found[judged.source.display if judged else None][index].append(finding)

    def _merged(self, *tables: dict) -> LintResult:
        """One result of the findings kept in `tables` (by file: (findings, suppressed))."""
        groups = [group for table in tables for group in table.values()]
        findings = sorted((f for group in groups for f in group[0]), key=Finding.sort_key)
        suppressed = sorted((f for group in groups for f in group[1]), key=Finding.sort_key)
        loaded = self.everything
        return LintResult(findings, suppressed, self.config, len(loaded.entries), loaded.sources, loaded.refused)


def _read(f) -> Loaded:
    """A file's objects: from the data its fixes left in memory, else from its text."""
    part = Loaded()
    if f.documents is not None:
        load_documents(Source(f.display, f.text), f.documents, part)
    else:
        load_text(Source(f.display, f.text), part)
    return part


def _same(before, now) -> bool:
    """Whether a file's state (its text, or the documents a round of fixes made: a new list
    each round) is what was read last."""
    return before is now or isinstance(now, str) and before == now


def _placed(finding: Finding, manifest: Manifest) -> Location:
    """A finding judged on data held in memory, placed on the text that holds that data: where
    its rule pointed (Finding.site), else on the object, keeping its path."""
    location = manifest.located(finding.site) if finding.site is not None else None
    return location or replace(manifest.location(), path=finding.location.path)


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

    @property
    def reaches_any(self) -> bool:
        return bool(self.everything or self.workloads or self.budgets)

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
