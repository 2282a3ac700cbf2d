"""Judging one admission request with the catalog: which objects are judged, which rules run,
and what denies (error findings), warns (warning findings) or is said nowhere (info).

- What is not judged at all is admission.exemptions' to say: only what the API server vouches
  for (the requester, the operation, deletionTimestamp) exempts a request, never an
  annotation, label or ownerReference the object's writer chose.
- Suppression annotations (`ignore.draguard.io/<rule>`) are a repository's own notes for
  lint, fix and audit; admission judges the object as if it had none, and warns that it
  does not honour them.
- Without a cluster (`offline`), every claim, template and class an object names is taken to
  exist (config `external: '*'`), and the rules that conclude from what the set lacks
  (`Rule.set_wide`: no budget selects the workload) do not run. With the cache, the rules
  read the cached objects as context, and only the request's object is judged.
- The cluster rules (`Needs.CLUSTER`) are the audit's; admission never runs them.
- A DaemonSet is judged as any workload (config `daemonsets_are_node_agents` off): the
  platform's node agents run in the namespaces the install exempts, so a DaemonSet in a
  judged namespace is a tenant's, and its /dev mount or NVIDIA_VISIBLE_DEVICES is denied.
- A dry-run request is judged the same; DELETE and CONNECT are allowed unjudged.
- An UPDATE ratchets (admission.ratchet): an error the object already had before it (the
  request's `oldObject`: same rule, same field) warns instead of denying, as Kubernetes
  ratchets its own validation (KEP-4008), so the workloads that ran before the webhook keep
  their controllers' updates; but an update that grows what such an error concerns (more
  pods, more devices, more containers on a shared claim, fewer selectors) is denied.
- A rule whose finding is about an object the cluster may not hold yet (`Rule.admission_warns`:
  a workload's template, which Helm and `kubectl apply -f DIR` create after it) warns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..core.config import EXTERNAL_KINDS, Config
from ..core.finding import Finding, Severity
from ..core import value
from ..core.fixes import plain
from ..engine.run import Against, Inputs, Run
from ..engine.suppress import SUPPRESS_PREFIX
from ..model.manifest import Manifest
from ..model.pods import mapping
from ..model.workloads import POD_TARGETS
from ..rules import REGISTRY
from ..rules.base import Needs
from .exemptions import WORKLOAD_CONTROLLERS, exemptions
from .install import resource_name
from .kinds import BUDGET, JUDGED, SCALE, SCALED
from .ratchet import growth
from .review import Request

_JUDGED_OPERATIONS = ("CREATE", "UPDATE")
#: what the webhook says to an object that carries suppression annotations
SUPPRESSIONS_IGNORED = "suppression annotations (ignore.draguard.io/...) are not honoured in admission"


@dataclass
class Verdict:
    allowed: bool
    denials: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    skipped: str = ""  # why the object was not judged
    grown: list[str] = field(default_factory=list)  # what an UPDATE grows of the errors it keeps (ratchet)
    notes: list[str] = field(default_factory=list)  # said as warnings, about the request itself

    def message(self) -> str:
        """The denial: each error with its rule id and field path, and what the update grows."""
        said = list(map(_said, self.denials))
        if self.grown:
            kept = [_said(f) for f in self.warnings if f.severity is Severity.ERROR]
            said.append(f"the update grows what its existing errors concern ({'; '.join(self.grown)}): "
                        + "; ".join(kept))
        return "draguard denied it: " + "; ".join(said)

    def warning_lines(self) -> list[str]:
        return [*self.notes, *map(_said, self.warnings)]


def _said(finding: Finding) -> str:
    return f"[{finding.rule}] {finding.location.dotted or '(object)'}: {finding.message}"


def rules_for(config: Config, offline: bool) -> Config:
    """`config` with what admission never runs switched off (and, offline, every reference
    taken as existing in the cluster)."""
    off = [r.id for r in REGISTRY if r.needs is Needs.CLUSTER or (offline and r.set_wide)]
    config = value.replace(config.without(off), daemonsets_are_node_agents=False)
    if offline:
        config = value.replace(config, external={what: {"*"} for what in EXTERNAL_KINDS})
    return config


def judge(request: Request, config: Config, context: Sequence[Manifest] = (), devices=None,
          controllers: frozenset = WORKLOAD_CONTROLLERS) -> Verdict:
    """The verdict on `request`; `config` as `rules_for` made it; `context` the cached
    objects the cross-object rules read, `devices` the cluster's devices with their
    allocator (a dra.target.Target; None: the built-in GPU inventory); `controllers` the users
    whose objects made from an owner's template are not judged (not_judged)."""
    if request.sub_resource == SCALE:
        workload = scaled(request, context)
        if isinstance(workload, str):
            return Verdict(True, skipped=workload, notes=[workload])
        request = workload
    skipped = not_judged(request, controllers)
    obj, old = request.object, request.old_object
    if skipped or obj is None:  # not_judged skips a request without an object
        return Verdict(True, skipped=skipped)
    mine = findings_on(obj, config, context, devices)
    denials = [f for f in mine if f.severity is Severity.ERROR and not _warned_only(f)]
    warnings = [f for f in mine if f.severity is Severity.WARNING or f.severity is Severity.ERROR and _warned_only(f)]
    denials, had = brought(request, denials, config, context, devices)
    grown = growth(old, obj) if had and old is not None else []
    notes = [SUPPRESSIONS_IGNORED] if _suppressions(obj) else []
    return Verdict(not denials and not grown, denials, warnings + had, grown=grown, notes=notes)


#: (group, plural) -> (group, kind) of the workloads whose scale is routed
_SCALED_BY_RESOURCE = {(group, resource_name(kind)): (group, kind) for group, kind in SCALED}


def scaled(request: Request, context: Sequence[Manifest]) -> Request | str:
    """A scale request (kinds.SCALED) read as the UPDATE of the workload it resizes: from the
    workload as the cache holds it to the same with the Scale's `spec.replicas`, so that the
    ratchet sees the pods grow as if the workload itself were edited. Why it is admitted
    unjudged when the cache does not hold the workload (offline; created a moment ago: then
    it was judged as created, and only a workload that had an error before the webhook can
    grow one)."""
    group_kind = _SCALED_BY_RESOURCE.get(request.resource)
    replicas = mapping(mapping(request.object).get("spec")).get("replicas")
    workload = next((m for m in context if (m.group, m.kind) == group_kind and m.name == request.name
                     and m.namespace == request.namespace), None)
    if group_kind is None or workload is None:
        return (f"the scale of {request.resource[1] or 'a resource'} {request.namespace}/{request.name} is not judged: "
                "the webhook's cache does not hold it")
    old = plain(workload.data)
    new = dict(old, spec=dict(mapping(old.get("spec")), replicas=replicas))
    kind = {"group": group_kind[0], "version": old.get("apiVersion", "").rpartition("/")[2], "kind": group_kind[1]}
    return replace(request, kind=kind, object=new, old_object=old, sub_resource="")


def brought(request: Request, findings: list[Finding], config: Config, context, devices) -> tuple[list, list]:
    """(the `findings` the request brings, those its old object had already): an UPDATE's
    fault is one its `oldObject` did not have, same rule on the same field; a CREATE brings
    them all."""
    if not findings or request.old_object is None:
        return findings, []
    before = {_fault(f) for f in findings_on(request.old_object, config, context, devices)}
    return [f for f in findings if _fault(f) not in before], [f for f in findings if _fault(f) in before]


def _fault(finding: Finding) -> tuple:
    return finding.rule, finding.location.path


def _warned_only(finding: Finding) -> bool:
    rule = REGISTRY.get(finding.rule)
    return rule is not None and bool(rule.admission_warns)


def not_judged(request: Request, controllers: frozenset = WORKLOAD_CONTROLLERS) -> str:
    """Why the request is admitted without judging it ('' when it is judged): an operation
    or a kind admission does not judge, or one of admission.exemptions, each decided by
    what the API server vouches for."""
    if request.operation not in _JUDGED_OPERATIONS or request.object is None:
        return f"{request.operation or 'no'} operation: not judged"
    if request.group_kind not in JUDGED:
        return f"{request.group_kind[1] or 'unknown kind'} is not judged"
    return next((e.reason for e in exemptions(controllers) if e.applies(request)), "")


def _suppressions(data: dict) -> bool:
    annotations = mapping(mapping(data.get("metadata")).get("annotations"))
    return any(isinstance(key, str) and key.startswith(SUPPRESS_PREFIX) for key in annotations)


def findings_on(data: dict, config: Config, context: Sequence[Manifest] = (), devices=None) -> list[Finding]:
    """The catalog's findings on the object `data`, the others read as context: its cached
    version (an UPDATE) is replaced by it. A PodDisruptionBudget is judged by the workloads
    it may select (rollout-pdb reports a budget that differs on the budget), so those are
    judged too and only what they say about the budget is kept. Suppression annotations are
    not honoured: what they would hide is judged as the rest."""
    obj = Manifest.from_data(data, display="(admission request)")
    context = [m for m in context if _identity(m) != _identity(obj)]
    judged = {id(obj)}
    if (obj.group, obj.kind) == BUDGET:
        judged.update(id(m) for m in context if (m.group, m.kind) in POD_TARGETS and m.namespace == obj.namespace)
    inputs = Inputs([obj, *context], lambda m: id(m) in judged)
    result = Run(config, inputs, Against(devices=devices, admission=True)).findings()
    return [f for f in result.findings if f.obj == obj.ref]


def _identity(m: Manifest) -> tuple:
    return m.group, m.kind, m.namespace, m.name
