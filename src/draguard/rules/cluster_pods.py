"""cluster: pods whose DRA lifecycle is stuck, and nodes still serving GPUs by device plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..model.gpu import LEGACY_RESOURCE
from ..model.live import allocation_results, claim_entries, is_allocated, reserved_for
from ..model.pods import mapping, mappings, text
from .base import Needs, Option, Rule
from .cluster_examples import BASE, NODE, claim, gpu, pod, slice_, snapshot
from .registry import register

if TYPE_CHECKING:
    from ..model.live import ClusterView
    from ..model.manifest import Manifest
    from .context import Context

_REFERENCE = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"


class PodRule(Rule):
    category = "cluster"
    needs = Needs.CLUSTER
    targets = frozenset({("", "Pod")})
    reference = _REFERENCE
    compliant = snapshot(*BASE, pod(), claim())


def _ready(node: Manifest) -> bool | None:
    condition = next((c for c in mappings(mapping(node.data.get("status")).get("conditions"))
                      if c.get("type") == "Ready"), None)
    return None if condition is None else condition.get("status") == "True"


@register
class PodStuckTerminating(PodRule):
    id = "pod-stuck-terminating"
    name = "GPU pod stuck Terminating"
    severity = Severity.ERROR
    reads = ("pods", "resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io", "nodes")
    options = {"margin": Option(60, "seconds past the end of its grace period before a terminating pod is reported")}
    summary = "A pod holding ResourceClaims is still Terminating well past its grace period."
    rationale = """
        A pod's `deletionTimestamp` is the end of its grace period. Past it, the kubelet has
        killed the containers; it still has to unprepare the pod's claims through the DRA
        driver before the pod may go, and only then are the devices deallocated. A driver
        that is gone, a node that is down or deleted, or a finalizer nobody removes keep the
        pod, and its GPUs, forever. The message names the cause draguard sees."""
    noncompliant = snapshot(*BASE[:2], BASE[3], pod(metadata="\n      deletionTimestamp: \"2026-12-01T11:40:00Z\""),
                            claim())

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        cluster = ctx.live
        late = cluster.seconds_since(obj.metadata.get("deletionTimestamp"))
        if late is None or late < ctx.option(self, "margin"):
            return
        claims = cluster.claims_of_pod(obj)
        if not claims:
            return
        node = text(obj.spec.get("nodeName"))
        yield ctx.finding(self, obj, f"Terminating {int(late)}s past its grace period with {len(claims)} claim(s): "
                          f"{self._cause(obj, node, claims, cluster)}", obj.metadata, "deletionTimestamp",
                          help="bring the driver (or the node) back so the kubelet can unprepare the claims; "
                               "force-delete only once the node is gone for good")

    @staticmethod
    def _cause(pod: Manifest, node: str, claims: list[Manifest], cluster: ClusterView) -> str:
        if not node:
            return "never scheduled, yet not removed (check the pod's finalizers)"
        if cluster.read("nodes") and node not in cluster.nodes:
            return f"its node {node} was deleted (the pod garbage collector should remove the pod)"
        drivers = {text(r.get("driver")) for c in claims for r in allocation_results(c)}
        gone = sorted(d for d in drivers if d not in cluster.drivers_by_node.get(node, set()))
        if gone:
            return f"driver {', '.join(gone)} publishes nothing on {node}: the kubelet cannot unprepare the devices"
        if node in cluster.nodes and _ready(cluster.nodes[node]) is False:
            return f"node {node} is NotReady: its kubelet cannot finish the teardown"
        finalizers = [text(f) for f in pod.metadata.get("finalizers") or []]
        if finalizers:
            return f"finalizer(s) {', '.join(finalizers)} still set"
        return f"the kubelet on {node} has not finished the teardown (check its log for NodeUnprepareResources)"


@register
class PodClaimGone(PodRule):
    id = "pod-claim-gone"
    name = "Running pod whose ResourceClaim is gone"
    severity = Severity.ERROR
    reads = ("pods", "resourceclaims.resource.k8s.io")
    summary = ("A pod bound to a node uses a ResourceClaim that no longer exists, or exists again without being "
               "reserved for it.")
    rationale = """
        A claim in use cannot be deleted: its delete-protection finalizer stays until the
        claim is deallocated, which waits for the pod. A running pod without its claim means
        the finalizer was removed by hand (or the claim was force-deleted from etcd): the
        devices are free for the scheduler to give to another pod while this pod's
        containers still use them, two tenants on one GPU. The resourceclaim controller may
        then create the claim again under the same name (observed on the real control
        plane), unallocated and reserved for nobody: the pod still runs on devices no claim
        holds."""
    noncompliant = snapshot(*BASE, pod())

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if not obj.spec.get("nodeName") or mapping(obj.data.get("status")).get("phase") in ("Succeeded", "Failed"):
            return
        uid = text(obj.metadata.get("uid"))
        for i, _, name in claim_entries(obj):
            if not name:
                continue
            claim = ctx.live.claims_by_key.get((obj.namespace, name))
            if claim is None:
                state = "is gone"
            elif not any(text(r.get("uid")) == uid for r in reserved_for(claim)):
                state = "exists again but is not reserved for it" if not is_allocated(claim) else \
                    "is not reserved for it"
            else:
                continue
            yield ctx.finding(self, obj, f"runs on {text(obj.spec.get('nodeName'))} but its ResourceClaim {name} "
                              f"{state}: its devices can be allocated to another pod while this one uses them",
                              obj.spec["resourceClaims"], i,
                              help="delete the pod (its replacement gets a claim of its own); find who removed the "
                                   "claim's finalizer")


@register
class PodPendingUnallocatable(PodRule):
    id = "pod-pending-unallocatable"
    name = "Pending pod whose claims cannot be allocated"
    severity = Severity.WARNING
    reads = ("pods", "resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io", "deviceclasses.resource.k8s.io")
    options = {"after": Option(60, "seconds a pod may wait for its devices before it is reported")}
    summary = "A pod is Pending because a claim does not fit the devices the cluster has free; says which request fails."
    rationale = """
        The scheduler reports only "cannot allocate all claims". draguard replays the
        allocation with its allocator (checked against upstream's) on the live slices, minus
        the devices other claims hold, and says for each request which step emptied the
        funnel: the class, a selector, a constraint, shared counters, or simply too few free
        devices on any one node."""
    noncompliant = snapshot(*BASE[:2], slice_(gpu(0)), BASE[3], pod(), claim(), pod(
        status="\n    status: {phase: Pending}", node="").replace("infer-0", "infer-1").replace("00000000000a", "00000000000d"))

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if obj.spec.get("nodeName") or mapping(obj.data.get("status")).get("phase", "Pending") != "Pending":
            return
        age = ctx.live.age(obj)
        if age is not None and age < ctx.option(self, "after"):
            return
        from ..dra.devices import ModelError, claim_from
        from ..dra.explain import verdict

        target = ctx.live_devices
        for source in self._sources(obj, ctx):
            if mapping(source.data.get("status")).get("allocation"):
                continue
            try:
                claim = claim_from(source)
            except ModelError:
                continue  # the claim rules report a request draguard cannot model
            result = verdict(target.allocator, claim, target.inventory.nodes)
            if result.satisfiable:
                continue
            reasons = result.error or "; ".join(r.text() for r in result.requests)
            yield ctx.finding(self, obj, f"Pending: {source.kind} {source.name} cannot be allocated now: {reasons}",
                              obj.spec, "resourceClaims",
                              help="free devices (or add nodes) that match the request, or relax the selector that "
                                   "emptied the funnel")

    @staticmethod
    def _sources(pod: Manifest, ctx: Context) -> list[Manifest]:
        """Each claim the pod needs: generated or named when it exists, else its template."""
        cluster = ctx.live
        found: list[Manifest] = []
        templates = ctx.objects.claims
        for _, ref, name in claim_entries(pod):
            claim = cluster.claims_by_key.get((pod.namespace, name))
            if claim is None and isinstance(ref.get("resourceClaimTemplateName"), str):
                claim = templates.template(pod.namespace, ref["resourceClaimTemplateName"])
            if claim is not None:
                found.append(claim)
        return found


@register
class NodeLegacyGpuInUse(Rule):
    id = "node-legacy-gpu-in-use"
    name = "Device-plugin GPUs still in use on a node"
    category = "cluster"
    severity = Severity.WARNING
    needs = Needs.CLUSTER
    targets = frozenset({("", "Node")})
    reads = ("nodes", "pods")
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#extended-resource"
    summary = "Pods on a node hold GPUs through a device plugin's extended resource instead of DRA."
    rationale = """
        A node that advertises `nvidia.com/gpu` (or `nvidia.com/mig-*`, `amd.com/gpu`, ...) in
        its allocatable runs a device plugin; its pods' GPUs bypass DRA: no claim, no
        selector on a MIG profile, no deterministic release. From 1.34 a DeviceClass with
        `extendedResourceName` lets the scheduler serve such requests through DRA
        (KEP-5004): those pods are counted apart and are not the fault. The finding lists
        what is left to migrate, node by node."""
    noncompliant = snapshot(NODE.replace("    status:\n", "    status:\n      allocatable: {nvidia.com/gpu: '8'}\n"),
                            """
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: legacy-0, namespace: team-a, uid: 9d1e4c02-0000-4000-8000-0000000000aa}
    spec:
      nodeName: gpu-node-0
      containers:
      - name: server
        image: vllm/vllm-openai
        resources:
          limits: {nvidia.com/gpu: 1}
    status: {phase: Running}
""")
    compliant = snapshot(*BASE, pod(), claim())

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        allocatable = mapping(mapping(obj.data.get("status")).get("allocatable"))
        plugin = {name for name in allocatable if isinstance(name, str) and LEGACY_RESOURCE.match(name)}
        if not plugin:
            return
        by_dra = ctx.objects.extended_resource_classes
        legacy: dict[str, set[str]] = {}
        through_dra = 0
        for user in ctx.live.pods:
            if text(user.spec.get("nodeName")) != obj.name or mapping(user.data.get("status")).get("phase") in (
                    "Succeeded", "Failed"):
                continue
            served = bool(mapping(mapping(user.data.get("status")).get("extendedResourceClaimStatus")))
            for container in mappings(user.spec.get("containers")) + mappings(user.spec.get("initContainers")):
                resources = mapping(container.get("resources"))
                for name in {*mapping(resources.get("limits")), *mapping(resources.get("requests"))} & plugin:
                    if served and name in by_dra:
                        through_dra += 1
                    else:
                        legacy.setdefault(name, set()).add(_owner_name(user))
        if legacy:
            used = "; ".join(f"{name} by {', '.join(sorted(pods))}" for name, pods in sorted(legacy.items()))
            yield ctx.finding(self, obj, f"the device plugin serves GPUs still in use here: {used}"
                              + (f" ({through_dra} request(s) are served through DRA already)" if through_dra else ""),
                              obj.data["status"], "allocatable",
                              help="migrate the workloads to ResourceClaims (`draguard fix`), or map the resource to a "
                                   "DeviceClass with extendedResourceName (1.34+)")


def _owner_name(pod: Manifest) -> str:
    owner = pod.controller
    return f"{pod.namespace}/{pod.name}" + (f" ({owner.get('kind')} {owner.get('name')})" if owner else "")
