"""One run: a config, the inputs (files read, objects in memory, a cluster snapshot) and what
they are judged against. Every front (lint, fix, the webhook, audit, the exporter, MCP) builds
one `Run` and asks it for findings; nothing else calls the rules.

The run decides, once each: which rules judge which objects (each call isolated: a rule's
exception becomes one `internal-error` finding and the others still run), each finding's
severity (`Config.severity`), and which findings a suppression annotation hides (keyed by the
file, the document and the object it sits on; never in admission)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Iterable

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding, Problem, Site
from ..core.location import format_path
from ..core.unread import Unread, listening
from ..core.value import Record, Value
from ..model.manifest import Manifest
from ..model.objectset import ObjectSet
from ..rules import REGISTRY
from ..rules.base import Needs, Rule
from ..rules.context import Context
from ..rules.custom import rule_named
from ..rules.index import judges_any, known
from ..sources.loader import Loaded, Source
from ..sources.yamlpos import path_of
from .result import INTERNAL_ERROR, LintResult, engine_finding
from .suppress import suppressions

if TYPE_CHECKING:
    from ..dra.inventory import Inventory
    from ..dra.target import Target
    from ..model.live import ClusterView

LIVE_OBJECTS = "live-objects"
RULES_SKIPPED = "rules-skipped"


class Inputs(Record):
    """What a run judges and what its rules may read. `judged` (a predicate on manifests)
    narrows what is judged; every manifest stays in the set for the rules that read others
    (how `draguard fix` judges again what it changed, and how the webhook reads its cache).
    `cluster` makes the manifests a snapshot of live state: the cluster rules run too."""

    __slots__ = ("manifests", "judged", "problems", "sources", "refused", "cluster")

    def __init__(self, manifests: list[Manifest], judged: Callable[[Manifest], bool] | None = None,
                 problems: list[Problem] | None = None, sources: list[Source] | None = None,
                 refused: list[str] | None = None, cluster: ClusterView | None = None) -> None:
        self.manifests = manifests
        self.judged = judged
        self.problems: list[Problem] = [] if problems is None else problems  # met reading: each becomes a finding
        self.sources: list[Source] = [] if sources is None else sources
        self.refused: list[str] = [] if refused is None else refused
        self.cluster = cluster

    @classmethod
    def objects(cls, objects: Iterable[Manifest | dict], judged=None) -> "Inputs":
        """Manifests, or plain object data numbered as documents in the order given."""
        return cls([o if isinstance(o, Manifest) else Manifest.from_data(o, document=i)
                    for i, o in enumerate(objects)], judged)

    @classmethod
    def loaded(cls, loaded: Loaded, manifests: list[Manifest] | None = None, judged=None) -> "Inputs":
        """What files, renders and stdin were read into; `manifests`, when given, are its
        entries already made into manifests (reused, they keep what rules derived)."""
        if manifests is None:
            manifests = [Manifest.from_entry(entry) for entry in loaded.entries]
        return cls(manifests, judged, list(loaded.problems), list(loaded.sources), list(loaded.refused))

    @classmethod
    def snapshot(cls, manifests: list[Manifest], view: ClusterView, loaded: Loaded | None = None,
                 judged=None) -> "Inputs":
        """A cluster's objects (a dump, or the exporter's cache) joined by `view`; `loaded`,
        when they were read from files, brings the problems met reading them."""
        given = cls.loaded(loaded, manifests, judged) if loaded is not None else cls(manifests, judged)
        given.cluster = view
        return given


class Against(Value):
    """What the inputs are judged against. `inventory` (None: the configured one, else the
    built-in GPU inventory); `devices`, an inventory already built with its allocator, reused as it
    is (the webhook builds one per state of its cache); `admission`: the requester wrote the
    object, so its suppression annotations are not honoured (admission.judge)."""

    __slots__ = ("inventory", "devices", "admission")

    def __init__(self, inventory: Inventory | None = None, devices: Target | None = None,
                 admission: bool = False) -> None:
        self.inventory = inventory
        self.devices = devices
        self.admission = admission


class Run:
    """A config, inputs and what they are judged against; `findings()` judges them."""

    def __init__(self, config: Config, inputs: Inputs, against: Against = Against()):
        self.config, self.inputs, self.against = config, inputs, against

    def findings(self, rules: Callable | None = None, *, notes: bool = True, advance: Callable | None = None,
                 reads: dict | None = None) -> LintResult:
        """Judge the inputs with the enabled rules that `rules` (a predicate) lets through.
        `notes=False` leaves out the run's own findings (problems met reading, unknown
        suppression keys, the live-objects note), which a caller judging the rules in parts
        takes from one part. `advance()` is called once per object. `reads`, when given, is
        filled with id(manifest) -> (the manifest, the keys of what its judging looked up in
        the set: model.objectset) for each manifest judged. `DRAGUARD_DEBUG=1` lets a rule's
        exception raise."""
        with cyclic_gc_paused(), listening() as unread:
            return self._judge(rules, notes, advance, reads, unread)

    def _context(self) -> tuple[ObjectSet, Context]:
        inputs, against, config = self.inputs, self.against, self.config
        inventory = against.inventory
        if inventory is None and config.inventory:
            from ..dra.inventory_reader import load_inventory  # only then: it brings the allocator

            classes = [m for m in inputs.manifests if (m.group, m.kind) == ("resource.k8s.io", "DeviceClass")]
            inventory = load_inventory(config.inventory, config.kube_version, classes)
        objects = inputs.cluster.objects if inputs.cluster is not None else ObjectSet(inputs.manifests)
        return objects, Context(config, objects, inventory, inputs.cluster, against.devices)

    def _judge(self, rules, notes: bool, advance, reads, unread: list[Unread]) -> LintResult:
        inputs, config = self.inputs, self.config
        object_set, ctx = self._context()
        cluster, judged = inputs.cluster, inputs.judged
        raw = [_problem_finding(p) for p in [*inputs.problems, *config.problems]] if notes else []
        kinds = {(m.group, m.kind) for m in object_set if judged is None or judged(m)}
        checks = _checks(config, cluster, rules, kinds)
        by_target: dict[tuple, list] = {}
        hidden: dict = {}  # (file, document, ObjectRef) -> rule id -> reason
        debug = bool(os.environ.get("DRAGUARD_DEBUG"))
        live = 0
        for manifest in object_set:
            if advance is not None:
                advance()
            if judged is not None and not judged(manifest):
                continue  # context only: other objects' rules read it
            elsewhere = cluster is not None and cluster.judged_elsewhere(manifest)
            target = (manifest.group, manifest.kind, manifest.is_live, elsewhere)
            applicable = by_target.get(target)
            if applicable is None:  # each rule with its check bound once, not once an object (380,000 calls)
                applicable = by_target[target] = [(r, r.check) for r in checks
                                                  if (r.targets is None or target[:2] in r.targets)
                                                  and not (manifest.is_live and r.authored_only)
                                                  and not (elsewhere and r.needs is not Needs.CLUSTER)]
            live += manifest.is_live
            if reads is not None:
                looked_up: set = set()
                reads[id(manifest)] = (manifest, looked_up)
                object_set.judging(looked_up)
            skipped: dict[str, list[Unread]] = {}
            for rule, check in applicable:
                try:
                    found = list(check(manifest, ctx))
                except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others' findings
                    if debug:
                        raise
                    found = [_internal_error(rule, manifest, exc)]
                if unread:  # it needed a value it could not read: it skips this object, and says so below
                    skipped[rule.id] = list(unread)
                    unread.clear()
                    found = [f for f in found if f.rule == INTERNAL_ERROR]
                if found:
                    for finding in found:
                        finding.judged = manifest
                    raw.extend(found)
            if skipped:
                raw.extend(_skipped_notes(manifest, skipped))
            if manifest.annotations and not self.against.admission:
                reasons, unknown = suppressions(manifest, config)
                if notes:
                    raw.extend(unknown)
                if reasons:
                    hidden.setdefault(suppression_key(manifest.location(), manifest.ref), {}).update(reasons)
            object_set.done(manifest)
        object_set.judging(None)
        if cluster is None and judged is None:  # all of it the run's own: a cluster's set, a webhook's
            object_set.finished()                # context or a fix's re-lint serve the next runs too
        if live and cluster is None and notes:  # an audit's objects are all live: nothing to point out
            raw.append(_live_note(live, config, inputs.manifests))
        return self._settle(raw, hidden)

    def _settle(self, raw: list[Finding], hidden: dict) -> LintResult:
        """Each finding's severity, decided once (Config.severity), and the suppressions."""
        config, inputs = self.config, self.inputs
        findings, suppressed = [], []
        rules: dict[str, tuple[bool, Rule | None]] = {}  # by id: enabled, the rule (looked up once a rule)
        for finding in raw:
            known = rules.get(finding.rule)
            if known is None:
                known = rules[finding.rule] = (config.settings(finding.rule).enabled, rule_named(config, finding.rule))
            enabled, rule = known
            if not enabled:
                continue
            if finding.rule != INTERNAL_ERROR and rule is not None:
                finding.severity = config.severity(finding.rule, rule.severity, finding.severity)
                reason = hidden.get(suppression_key(finding.location, finding.obj), {}).get(finding.rule) \
                    if hidden else None
                if reason is not None:
                    finding.suppressed_by = reason
                    suppressed.append(finding)
                    continue
            findings.append(finding)
        findings.sort(key=Finding.sort_key)
        suppressed.sort(key=Finding.sort_key)
        judged = inputs.manifests if inputs.judged is None else [m for m in inputs.manifests if inputs.judged(m)]
        return LintResult(findings, suppressed, config, len(judged), inputs.sources, inputs.refused)


def suppression_key(location, ref) -> tuple:
    """A suppression hides its rule's findings on the object it is written on: the same
    file, the same document and the same object (a List's items share a document), never a
    same-named object elsewhere."""
    return location.file, location.document, ref


def _checks(config: Config, cluster, rules=None, kinds: set | None = None) -> list:
    """The enabled rules that can run (of those `rules` lets through, a predicate) on objects
    of `kinds` (None: of any kind), in the catalog's order, the config's own checks last: the
    cluster rules only in an audit, which has live state. Only the modules of the built-in
    rules that judge one of `kinds` are imported (rules.index)."""
    audit = cluster is not None
    built_in = [REGISTRY.get(r.id) for r in known() if r.has_check and judges_any(r, kinds)
                and (audit or r.needs is not Needs.CLUSTER) and config.settings(r.id).enabled]
    return [r for r in (*built_in, *config.checks) if r.has_check and config.settings(r.id).enabled
            and (audit or r.needs is not Needs.CLUSTER) and (rules is None or rules(r))]


def _problem_finding(problem: Problem) -> Finding:
    return engine_finding(problem.rule, problem.message, problem.location)


def _internal_error(rule: Rule, obj: Manifest, exc: Exception) -> Finding:
    return engine_finding(INTERNAL_ERROR, f"rule {rule.id} failed on this object ({type(exc).__name__}: {exc}); its "
                          "findings for it are missing (a draguard bug: please report it)", obj.location(), obj.ref)


def _skipped_notes(manifest: Manifest, skipped: dict[str, list[Unread]]) -> list[Finding]:
    """One note per value that made rules skip `manifest`, at the value's own place (in the
    object it is in, which may be another one: a budget's selector read for a Deployment),
    naming the rules that skipped."""
    by_place: dict[tuple, tuple[Unread, list[str]]] = {}
    for rule_id, records in skipped.items():
        for record in records:
            place = (id(record.owner), id(record.container), repr(record.key), record.why)
            rule_ids = by_place.setdefault(place, (record, []))[1]
            if rule_id not in rule_ids:
                rule_ids.append(rule_id)
    rule, notes = REGISTRY.get(RULES_SKIPPED), []
    if rule is None:
        raise LookupError(f"{RULES_SKIPPED} is not registered")  # a catalog without its own notes
    for record, rule_ids in by_place.values():
        owner = record.owner if isinstance(record.owner, Manifest) else manifest
        location = owner.location(record.container, record.key, value=True)
        where = format_path(location.path) if location.path else "a value"
        whose = "" if owner is manifest else f" of {owner.kind} {owner.name}"
        within = path_of(record.container) if owner is manifest else None  # placed again by draguard fix
        note = Finding(RULES_SKIPPED, rule.category, rule.severity,
                       f"{', '.join(sorted(rule_ids))} skipped {manifest.kind} {manifest.name}: {where}{whose} "
                       f"{record.why}", location, owner.ref,
                       site=Site(within, record.key, True) if within is not None else None)
        note.judged = manifest  # kept with the file judged, as the skipped rules' findings would be
        notes.append(note)
    return notes


def _live_note(live: int, config: Config, manifests: list) -> Finding:
    """One note per run, naming every enabled rule it did not run on live objects."""
    skipped = ", ".join(r.id for r in known() if r.authored_only and r.has_check
                        and r.needs is not Needs.CLUSTER and config.settings(r.id).enabled) or "none"
    first = next(m for m in manifests if m.is_live)
    return _problem_finding(Problem(
        LIVE_OBJECTS, f"{live} object(s) are live cluster state (metadata.uid set); rules about how a manifest is "
        f"written were not run on them: {skipped}", first.location()))
