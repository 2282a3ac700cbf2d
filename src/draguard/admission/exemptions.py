"""What admission leaves unjudged, each defined once: the Python test the webhook asks and the
CEL the webhook configuration and every exported policy carry as a match condition are made
here from the same tables, and tests hold the two equal on generated requests.

Only what the API server vouches for exempts anything (k8s.io/apiserver pkg/admission
Attributes): `request.userInfo` (the authenticated requester), `request.operation`, the
namespace (its `kubernetes.io/metadata.name` label, which the API server sets and keeps), and
`metadata.deletionTimestamp` (the registry keeps the stored value on every update:
apiserver pkg/registry/rest BeforeUpdate). An annotation, a label or an ownerReference on the
judged object is written by whoever writes the object, so none of them exempts it alone:
suppression annotations (`ignore.draguard.io/...`) are for a repository's own files and are
not honoured in admission, and a claim is "generated" only when the controller that
generates claims created it.

- `being_deleted`: an UPDATE of an object the API server is deleting that changes nothing but
  its metadata (its finalizers must be able to come off). A tenant's own finalizer keeps an
  object in that state, so an update that changes its spec is judged.
- `generated_claim`: a ResourceClaim the resourceclaim controller made from a pod's template
  (k8s.io/kubernetes cmd/kube-controller-manager/app/resource.go: the client
  "resource-claim-controller"), or the scheduler for an extended resource (KEP-5004,
  pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go), each with the
  pod as its controller owner. Its template and workload were judged; denying it strands pods.
- `made_from_judged_owner`: what a workload controller (WORKLOAD_CONTROLLERS, and the operators
  an installation names) makes with a controller ownerReference to a kind admission judges
  (kinds.OWNER_KINDS): the owner was judged when it was written, and a workload that ran before
  the webhook must still heal. The requester is vouched for; the owner kind is the
  controller's own statement, and a controller only writes owners it reconciles. An owner of
  a kind admission does not judge was never judged, so what is made from it is."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..model.claims import RESOURCE_GROUP
from ..model.manifest import controller_reference
from ..model.pods import mapping
from .kinds import OWNER_KINDS
from .review import Request

#: the kube-controller-manager controllers that make pods and workloads from their owners'
#: templates (k8s.io/kubernetes cmd/kube-controller-manager/app: apps.go, batch.go, core.go),
#: as the API server names them with --use-service-account-credentials, and the manager's
#: own identity without it
KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
WORKLOAD_CONTROLLERS = frozenset({KUBE_CONTROLLER_MANAGER, *(
    f"system:serviceaccount:kube-system:{name}" for name in (
        "replicaset-controller", "deployment-controller", "statefulset-controller", "daemon-set-controller",
        "job-controller", "cronjob-controller", "replication-controller"))})
#: who creates the claims the system generates: the resourceclaim controller (under its own
#: service account, or the manager's identity) and the scheduler (extended resources)
CLAIM_MAKERS = frozenset({KUBE_CONTROLLER_MANAGER, "system:serviceaccount:kube-system:resource-claim-controller",
                          "system:kube-scheduler"})


def controllers_with(users: Iterable[str]) -> frozenset:
    """The users whose objects made from their owner's template go by the owner's verdict:
    the Kubernetes workload controllers and the operators named (--controller-user)."""
    return WORKLOAD_CONTROLLERS | frozenset(users)


@dataclass(frozen=True)
class Exemption:
    """One reason not to judge a request: `applies` asks it of a parsed request, `cel` of the
    API server's (CEL on `request`, `object`, `oldObject`); both true when it applies."""

    name: str  # the match condition's name
    reason: str  # what the webhook logs
    applies: Callable[[Request], bool]
    cel: str

    def match_condition(self) -> dict:
        """The admissionregistration matchCondition: send the request on unless it applies."""
        return {"name": self.name, "expression": f"!({self.cel})"}


def _cel_strings(values: Iterable[str]) -> str:
    return "[" + ", ".join("'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'" for v in sorted(values)) + "]"


def _owner_group(reference: dict) -> str | None:
    """The API group of an ownerReference ('' for the core group), None when it has none."""
    api_version = reference.get("apiVersion")
    if not isinstance(api_version, str):
        return None
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _controller_owner(request: Request) -> dict | None:
    return controller_reference(mapping(mapping(request.object).get("metadata")))


#: CEL: the request's object has a controller ownerReference `r` for which the test holds
def _cel_controller_owner(test: str) -> str:
    return ("has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
            f"has(r.controller) && r.controller && {test})")


def _cel_owner_kind_in(kinds: Iterable[tuple[str, str]]) -> str:
    """CEL on ownerReference `r`: its group and kind are among `kinds`, the group read from
    `apiVersion` as _owner_group reads it."""
    by_group: dict[str, set[str]] = {}
    for group, kind in kinds:
        by_group.setdefault(group, set()).add(kind)
    tests = [(f"r.apiVersion.startsWith('{group}/')" if group else "!r.apiVersion.contains('/')")
             + f" && r.kind in {_cel_strings(names)}" for group, names in sorted(by_group.items())]
    return "(" + " || ".join(f"({t})" for t in tests) + ")"


#: where a judged object keeps what the rules read besides its metadata: its spec, or a
#: PodTemplate's template (a PodTemplate has no spec)
_CONTENT = ("spec", "template")


def _being_deleted(request: Request) -> bool:
    old = mapping(request.old_object)
    new = mapping(request.object)
    return (request.operation == "UPDATE" and bool(mapping(new.get("metadata")).get("deletionTimestamp"))
            and all((key in new) == (key in old) and new.get(key) == old.get(key) for key in _CONTENT))


BEING_DELETED = Exemption(
    "not-being-deleted", "being deleted and only its metadata changed: not judged (its finalizers must come off)",
    _being_deleted,
    "request.operation == 'UPDATE' && has(object.metadata.deletionTimestamp) && " + " && ".join(
        f"has(object.{key}) == has(oldObject.{key}) && (!has(object.{key}) || object.{key} == oldObject.{key})"
        for key in _CONTENT))


def _generated_claim(request: Request) -> bool:
    owner = _controller_owner(request)
    return (request.group_kind == (RESOURCE_GROUP, "ResourceClaim") and request.user in CLAIM_MAKERS
            and owner is not None and owner.get("apiVersion") == "v1" and owner.get("kind") == "Pod")


GENERATED_CLAIM = Exemption(
    "not-a-generated-claim", "a claim the system generated for a pod: its template and workload are judged",
    _generated_claim,
    f"request.kind.group == '{RESOURCE_GROUP}' && request.kind.kind == 'ResourceClaim' && "
    f"request.userInfo.username in {_cel_strings(CLAIM_MAKERS)} && "
    + _cel_controller_owner("r.apiVersion == 'v1' && r.kind == 'Pod'"))


def made_from_judged_owner(controllers: Iterable[str] = WORKLOAD_CONTROLLERS) -> Exemption:
    """The exemption of what one of `controllers` (user names) makes from an owner that
    admission judges."""
    users = frozenset(controllers)

    def applies(request: Request) -> bool:
        owner = _controller_owner(request)
        return (request.user in users and owner is not None
                and (_owner_group(owner), owner.get("kind")) in OWNER_KINDS)

    return Exemption(
        "not-made-by-a-workload-controller",
        "made by a controller from an owner admission judges: the owner is judged", applies,
        f"request.userInfo.username in {_cel_strings(users)} && "
        + _cel_controller_owner(_cel_owner_kind_in(OWNER_KINDS)))


def exemptions(controllers: Iterable[str] = WORKLOAD_CONTROLLERS) -> tuple[Exemption, ...]:
    """Every exemption, in the order the webhook asks them."""
    return BEING_DELETED, GENERATED_CLAIM, made_from_judged_owner(controllers)
