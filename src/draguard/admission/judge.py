"""Judging one admission request with the catalog: which objects are judged, which rules run,
and what denies (error findings), warns (warning findings) or is said nowhere (info).

- Claims the system makes are never denied: a claim generated from a pod's template
  (annotation `resource.kubernetes.io/pod-claim-name`, owner Pod) or created by the scheduler
  for an extended resource (`resource.kubernetes.io/extended-resource-claim`). Denying them
  leaves pods Pending forever; their template and workload are judged instead.
- Without a cluster (`offline`), every claim, template and class an object names is taken to
  exist (config `external: '*'`), and the rules that conclude from what the set lacks
  (`Rule.set_wide`: no budget selects the workload) do not run. With the cache, the rules
  read the cached objects as context, and only the request's object is judged.
- The cluster rules (`Needs.CLUSTER`) are the audit's; admission never runs them.
- A dry-run request is judged the same; DELETE and CONNECT are allowed unjudged.
- What a Kubernetes workload controller makes from its owner's template (a ReplicaSet's
  pods, a Deployment's ReplicaSets, a CronJob's Jobs) is not judged: the owner is, when it
  is written, and a workload that ran before the webhook must still be able to heal, scale
  and roll out. Only those controllers' own identities count (the API server names the
  requester; an ownerReference alone can be written by anyone).
- An UPDATE is refused only for what it brings: an error the object already had before it
  (the request's `oldObject`: same rule, same field) warns, as Kubernetes ratchets its own
  validation (KEP-4008) and Kyverno allows existing violations. The workloads that were
  running before the webhook was installed keep working: controllers update them (the Job
  controller takes its tracking finalizer off a finished pod; the garbage collector its
  deletion finalizers), and an image bump adds nothing new. An object being deleted
  (`deletionTimestamp`) is not judged at all: its finalizers must be able to come off.
- A rule whose finding is about an object the cluster may not hold yet (`Rule.admission_warns`:
  a workload's template, which Helm and `kubectl apply -f DIR` create after it) warns."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.config import EXTERNAL_KINDS, Config
from ..core.finding import Finding, Severity
from ..engine.lint import lint_loaded
from ..model.claims import RESOURCE_GROUP
from ..model.live import EXTENDED_RESOURCE_CLAIM, POD_CLAIM_NAME
from ..model.manifest import Manifest, controller_reference
from ..model.pods import mapping
from ..model.workloads import POD_TARGETS
from ..rules import REGISTRY
from ..rules.base import Needs
from ..sources.loader import Loaded
from .review import Request

#: (group, kind) the webhook judges: pods and every workload draguard models, DRA objects
#: users write, Namespaces (the admin-access label) and PodDisruptionBudgets (what they select).
_BUDGET = ("policy", "PodDisruptionBudget")
JUDGED = POD_TARGETS | {(RESOURCE_GROUP, "ResourceClaim"), (RESOURCE_GROUP, "ResourceClaimTemplate"),
                        (RESOURCE_GROUP, "DeviceClass"), ("", "Namespace"), _BUDGET}
_JUDGED_OPERATIONS = ("CREATE", "UPDATE")
#: the kube-controller-manager controllers that make pods and workloads from their owners'
#: templates (k8s.io/kubernetes cmd/kube-controller-manager/app: apps.go, batch.go, core.go),
#: as the API server names them with --use-service-account-credentials, and the manager's
#: own identity without it
WORKLOAD_CONTROLLERS = frozenset({"system:kube-controller-manager", *(
    f"system:serviceaccount:kube-system:{name}" for name in (
        "replicaset-controller", "deployment-controller", "statefulset-controller", "daemon-set-controller",
        "job-controller", "cronjob-controller", "replication-controller"))})


def controllers_with(users) -> frozenset:
    """The users whose objects made from their owner's template go by the owner's verdict:
    the Kubernetes workload controllers and the operators named (--controller-user)."""
    return WORKLOAD_CONTROLLERS | frozenset(users)


@dataclass
class Verdict:
    allowed: bool
    denials: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    skipped: str = ""  # why the object was not judged

    def message(self) -> str:
        """The denial: each error with its rule id and field path."""
        return "draguard denied it: " + "; ".join(map(_said, self.denials))

    def warning_lines(self) -> list[str]:
        return list(map(_said, self.warnings))


def _said(finding: Finding) -> str:
    return f"[{finding.rule}] {finding.location.dotted or '(object)'}: {finding.message}"


def rules_for(config: Config, offline: bool) -> Config:
    """`config` with what admission never runs switched off (and, offline, every reference
    taken as existing in the cluster)."""
    off = [r.id for r in REGISTRY if r.needs is Needs.CLUSTER or (offline and r.set_wide)]
    config = config.without(off)
    if offline:
        config = replace(config, external={what: {"*"} for what in EXTERNAL_KINDS})
    return config


def judge(request: Request, config: Config, context: list[Manifest] = (), devices=None,
          controllers: frozenset = WORKLOAD_CONTROLLERS) -> Verdict:
    """The verdict on `request`; `config` as `rules_for` made it; `context` the cached
    objects the cross-object rules read, `devices` the cluster's devices with their
    allocator (a dra.target.Target; None: the built-in catalog); `controllers` the users
    whose objects made from an owner's template are not judged (not_judged)."""
    skipped = not_judged(request, controllers)
    if skipped:
        return Verdict(True, skipped=skipped)
    mine = findings_on(request.object, config, context, devices)
    denials = [f for f in mine if f.severity is Severity.ERROR and not _warned_only(f)]
    warnings = [f for f in mine if f.severity is Severity.WARNING or f.severity is Severity.ERROR and _warned_only(f)]
    denials, had = brought(request, denials, config, context, devices)
    return Verdict(not denials, denials, warnings + had)


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
    """Why the request is admitted without judging it ('' when it is judged). An object a
    controller makes from its owner's template is judged through the owner, when it is
    written: the controllers are known by the user the API server names (WORKLOAD_CONTROLLERS
    and the operators the installation adds, KubeRay's or LWS's service account), never by an
    ownerReference alone, which anyone may write."""
    if request.operation not in _JUDGED_OPERATIONS or request.object is None:
        return f"{request.operation or 'no'} operation: not judged"
    if request.operation == "UPDATE" and mapping(request.object.get("metadata")).get("deletionTimestamp"):
        return "being deleted: not judged (its finalizers must be able to come off)"
    if request.user in controllers and controller_reference(request.object.get("metadata")) is not None:
        return "made by a controller from its owner's template: the owner is judged"
    if request.group_kind not in JUDGED:
        return f"{request.group_kind[1] or 'unknown kind'} is not judged"
    annotations = mapping(mapping(request.object.get("metadata")).get("annotations"))
    if request.group_kind == (RESOURCE_GROUP, "ResourceClaim") and (
            POD_CLAIM_NAME in annotations or EXTENDED_RESOURCE_CLAIM in annotations):
        return "a claim the system generated: its template and workload are judged"
    return ""


def findings_on(data: dict, config: Config, context: list[Manifest] = (), devices=None) -> list[Finding]:
    """The catalog's findings on the object `data`, the others read as context: its cached
    version (an UPDATE) is replaced by it. A PodDisruptionBudget is judged by the workloads
    it may select (rollout-pdb reports a budget that differs on the budget), so those are
    judged too and only what they say about the budget is kept."""
    obj = Manifest.from_data(data, display="(admission request)")
    context = [m for m in context if _identity(m) != _identity(obj)]
    judged = {id(obj)}
    if (obj.group, obj.kind) == _BUDGET:
        judged.update(id(m) for m in context if (m.group, m.kind) in POD_TARGETS and m.namespace == obj.namespace)
    result = lint_loaded(Loaded(), config, only=lambda m: id(m) in judged, manifests=[obj, *context], devices=devices)
    return [f for f in result.findings if f.obj == obj.ref]


def _identity(m: Manifest) -> tuple:
    return m.group, m.kind, m.namespace, m.name
