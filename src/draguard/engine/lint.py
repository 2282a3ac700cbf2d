"""One lint run: objects -> rules (each call isolated) -> suppressions and config -> result.

`lint_objects` judges objects already in memory (an admission request, a cluster snapshot);
`lint_paths` reads files, folders, charts and stdin first. Both return the same result."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding, Problem, Severity
from ..dra.inventory import Inventory
from ..model.live import ClusterView
from ..model.manifest import Manifest
from ..model.objectset import ObjectSet
from ..rules import REGISTRY
from ..rules.base import Needs
from ..rules.context import Context
from ..sources.discover import DEFAULT_INCLUDE, expand
from ..sources.loader import Loaded, Source, load_reference, load_text, load_units
from ..sources.render import RenderOptions
from ..sources.yamlpos import DEFAULT_LIMITS, Limits
from .inventory import load_inventory
from .suppress import suppressions

if TYPE_CHECKING:
    from ..dra.target import Target

INTERNAL_ERROR = "internal-error"
LIVE_OBJECTS = "live-objects"


@dataclass
class LintResult:
    findings: list[Finding]
    suppressed: list[Finding]
    config: Config
    objects: int = 0
    sources: list[Source] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # files read and refused (binary, too large)

    @property
    def internal_errors(self) -> int:
        """Rule failures: the run's exit status is 2 whatever else was found."""
        return sum(1 for f in self.findings if f.rule == INTERNAL_ERROR)

    def failed(self, fail_on: Severity) -> bool:
        return any(f.severity >= fail_on for f in self.findings)

    def summary(self) -> dict:
        by_severity = {str(s): 0 for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
        by_rule: dict[str, int] = {}
        for f in self.findings:
            by_severity[str(f.severity)] += 1
            by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
        return {
            "total": len(self.findings),
            "errors": by_severity["error"],
            "warnings": by_severity["warning"],
            "info": by_severity["info"],
            "suppressed": len(self.suppressed),
            "fixable": sum(1 for f in self.findings if f.fix is not None),
            "files": len({s.display for s in self.sources} | set(self.refused)),
            "refused": len(set(self.refused)),
            "objects": self.objects,
            "byRule": dict(sorted(by_rule.items())),
        }


def _problem_finding(problem: Problem) -> Finding:
    rule = REGISTRY.get(problem.rule)
    return Finding(rule.id, rule.category, rule.severity, problem.message, problem.location)


def _internal_error(rule, obj: Manifest, exc: Exception) -> Finding:
    internal = REGISTRY.get(INTERNAL_ERROR)
    return Finding(internal.id, internal.category, internal.severity,
                   f"rule {rule.id} failed on this object ({type(exc).__name__}: {exc}); its findings for it "
                   "are missing (a draguard bug: please report it)", obj.location(), obj.ref)


def _checks(config: Config, cluster: ClusterView | None, rules=None) -> list:
    """The enabled rules that can run (of those `rules` lets through, a predicate): the
    cluster rules only in an audit, which has live state."""
    return [r for r in REGISTRY if r.has_check and config.settings(r.id).enabled
            and (cluster is not None or r.needs is not Needs.CLUSTER) and (rules is None or rules(r))]


def lint_objects(objects: Iterable[Manifest | dict], config: Config, *, inventory: Inventory | None = None,
                 problems: Iterable[Problem] = (), sources: Iterable[Source] = (),
                 cluster: ClusterView | None = None) -> LintResult:
    """Judge `objects` (manifests, or plain object data, numbered as documents in the order
    given) with every enabled rule. Each rule
    call on each object is isolated: an exception becomes one `internal-error` finding
    naming the rule and the object, and every other rule still runs. `DRAGUARD_DEBUG=1`
    lets it raise instead. With `cluster` (an audit: the objects are a snapshot, and the
    view joins them) the cluster rules run too, and an object the system wrote is judged
    through its source only (a ReplicaSet's pods by their Deployment, a generated claim by
    its template; model.live.judged_elsewhere)."""
    with cyclic_gc_paused():
        return _lint(objects, config, inventory, problems, sources, cluster=cluster)


def _lint(objects, config: Config, inventory, problems, sources, only=None, advance=None,
          cluster: ClusterView | None = None, devices: Target | None = None, rules=None,
          notes: bool = True, origins: dict | None = None, reads: dict | None = None) -> LintResult:
    manifests = [o if isinstance(o, Manifest) else Manifest.from_data(o, document=i) for i, o in enumerate(objects)]
    object_set = cluster.objects if cluster is not None else ObjectSet(manifests)
    ctx = Context(config, object_set, inventory, cluster, devices)
    raw: list[Finding] = [_problem_finding(p) for p in [*problems, *config.problems]] if notes else []
    checks = _checks(config, cluster, rules)
    by_target: dict[tuple, list] = {}
    suppressed_by: dict = {}  # ObjectRef -> rule id -> reason
    debug = bool(os.environ.get("DRAGUARD_DEBUG"))
    live = 0
    for manifest in object_set:
        if advance is not None:
            advance()
        if only is not None and not only(manifest):
            continue  # context only: other objects' rules read it
        elsewhere = cluster is not None and cluster.judged_elsewhere(manifest)
        target = (manifest.group, manifest.kind, manifest.is_live, elsewhere)
        applicable = by_target.get(target)
        if applicable is None:
            applicable = by_target[target] = [r for r in checks if (r.targets is None or target[:2] in r.targets)
                                              and not (manifest.is_live and r.authored_only)
                                              and not (elsewhere and r.needs is not Needs.CLUSTER)]
        live += manifest.is_live
        if reads is not None:
            looked_up: set = set()
            reads[id(manifest)] = (manifest, looked_up)
            object_set.judging(looked_up)
        for rule in applicable:
            found: list[Finding] = []
            try:
                found.extend(rule.check(manifest, ctx))
            except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others' findings
                if debug:
                    raise
                found.append(_internal_error(rule, manifest, exc))
            raw.extend(found)
            if origins is not None:
                for finding in found:
                    origins[id(finding)] = manifest
        if manifest.annotations:
            reasons, unknown = suppressions(manifest)
            if notes:
                raw.extend(unknown)
            if reasons:
                suppressed_by.setdefault(manifest.ref, {}).update(reasons)
    object_set.judging(None)
    if live and cluster is None and notes:  # an audit's objects are all live: nothing to point out
        raw.append(_live_note(live, _checks(config, cluster), manifests))  # every rule: a run in parts has one note
    return _settle(raw, config, suppressed_by, len(manifests), list(sources))


def _live_note(live: int, checks: list, manifests: list) -> Finding:
    skipped = ", ".join(r.id for r in checks if r.authored_only) or "none"
    first = next(m for m in manifests if m.is_live)
    return _problem_finding(Problem(
        LIVE_OBJECTS, f"{live} object(s) are live cluster state (metadata.uid set); rules about how a manifest is "
        f"written were not run on them: {skipped}", first.location()))


def _settle(raw: list[Finding], config: Config, suppressed_by: dict, objects: int,
            sources: list[Source]) -> LintResult:
    """Apply the config's switches and severities and the objects' suppressions."""
    findings, suppressed = [], []
    for finding in raw:
        settings = config.settings(finding.rule)
        if not settings.enabled:
            continue
        if settings.severity is not None and finding.rule != INTERNAL_ERROR:
            finding.severity = settings.severity
        reason = suppressed_by.get(finding.obj, {}).get(finding.rule)
        if reason is not None and finding.rule != INTERNAL_ERROR:
            finding.suppressed_by = reason
            suppressed.append(finding)
        else:
            findings.append(finding)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return LintResult(findings, suppressed, config, objects, sources)


def lint_paths(inputs: list[str], config: Config, *, include: tuple = DEFAULT_INCLUDE, exclude: tuple = (),
               limits: Limits = DEFAULT_LIMITS, stdin=None, helm_values: tuple = (),
               helm_set: tuple = (), progress=None, reference: tuple = ()) -> LintResult:
    """Read `inputs` (files, folders, charts, kustomizations, '-') and lint what they hold;
    charts are rendered for the target release with the given values files and --set pairs.
    The objects of `reference` (sources.loader.load_reference) are there for the rules to read,
    not judged. A configured inventory that cannot be read stops the run (UsageError, exit
    status 2). `progress(stage, total)`, when given, returns the callable that advances that
    stage."""
    options = RenderOptions(tuple(helm_values), tuple(helm_set), config.kube_version)
    units = expand(inputs, include, exclude)
    with cyclic_gc_paused():
        loaded = load_units(units, limits, stdin, options, progress("reading", len(units)) if progress else None)
        if not reference:
            return lint_loaded(loaded, config, advance=progress("checking", len(loaded.entries)) if progress else None)
        judged = [Manifest.from_entry(entry) for entry in loaded.entries]
        read = load_reference(list(reference), units, include, exclude, limits, options)
        ids = {id(m) for m in judged}
        result = lint_loaded(loaded, config, only=lambda m: id(m) in ids,
                             manifests=judged + [Manifest.from_entry(entry) for entry in read.entries],
                             advance=progress("checking", len(judged) + len(read.entries)) if progress else None)
    result.objects = len(judged)
    return result


def lint_text(display: str, text: str, config: Config) -> LintResult:
    """Lint one text held in memory (a rule's example, an edited file), named `display`."""
    loaded = Loaded()
    load_text(Source(display, text), loaded)
    return lint_loaded(loaded, config)


def lint_loaded(loaded: Loaded, config: Config, only=None, manifests: list[Manifest] | None = None,
                advance=None, *, cluster: ClusterView | None = None, inventory: Inventory | None = None,
                devices: Target | None = None, rules=None, notes: bool = True,
                origins: dict | None = None, reads: dict | None = None) -> LintResult:
    """Lint what was read into `loaded` (the objects of files, renders and stdin, with the
    problems met reading them), against `inventory`, or the configured one when there is
    one. With `only` (a predicate on manifests), the rules judge just those objects; every
    object is still there for the others to read (how `draguard fix` lints again what it
    changed). `manifests`, when given, are `loaded.entries` already made into manifests
    (reused, they keep what rules derived from them); `cluster` makes it an audit of them;
    `devices`, the inventory already built with its allocator, is reused as it is. `rules`
    (a predicate on rules) runs only the rules it lets through; `notes=False` leaves out the
    run's own findings (problems met reading, unknown suppression keys, the live-objects
    note), which a caller judging the rules in parts takes from one part. `origins`, when
    given, is filled with id(finding) -> the manifest whose judging found it (a finding may
    be placed on another object: rollout-pdb reports a workload's budget). `reads`, when
    given, is filled with id(manifest) -> (the manifest, the keys of what its judging looked
    up in the set: model.objectset), for each manifest judged."""
    with cyclic_gc_paused():
        if manifests is None:
            manifests = [Manifest.from_entry(entry) for entry in loaded.entries]
        if inventory is None and config.inventory:
            set_classes = [m for m in manifests if (m.group, m.kind) == ("resource.k8s.io", "DeviceClass")]
            inventory = load_inventory(config.inventory, config.kube_version, set_classes)
        result = _lint(manifests, config, inventory, loaded.problems, loaded.sources, only, advance, cluster, devices,
                       rules, notes, origins, reads)
        result.refused = loaded.refused
        return result
