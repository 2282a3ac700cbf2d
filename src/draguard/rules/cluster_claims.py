"""cluster: ResourceClaims whose live state is wrong: stuck, leaked, orphaned, double-booked.

Upstream's resourceclaim controller (pkg/controller/resourceclaim/controller.go, syncClaim)
removes reservedFor entries of pods that are gone or done, clears status.allocation of a
claim nobody reserves any more in the same update, and drops its delete-protection
finalizer once the claim is deallocated; the garbage collector deletes a generated claim
with its owner pod. Each check here finds a claim where that did not happen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..model.claims import RESOURCE_GROUP
from ..model.live import (
    DELETE_PROTECTION, EXTENDED_RESOURCE_CLAIM, POD_CLAIM_NAME, allocation_node, allocation_results,
    is_allocated, reserved_for,
)
from ..model.pods import mapping, text
from .base import Needs, Option, Rule
from .cluster_examples import BASE, claim, gpu, pod, slice_, snapshot
from .registry import register

if TYPE_CHECKING:
    from ..model.live import ClusterView
    from ..model.manifest import Manifest
    from .context import Context

CLAIM = frozenset({(RESOURCE_GROUP, "ResourceClaim")})
_CLAIMS = ("resourceclaims.resource.k8s.io",)
_PODS = ("pods",)
_REFERENCE = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"


class ClaimRule(Rule):
    category = "cluster"
    needs = Needs.CLUSTER
    targets = CLAIM
    reference = _REFERENCE
    compliant = snapshot(*BASE, pod(), claim())


@register
class ClaimStuckDeleting(ClaimRule):
    id = "claim-stuck-deleting"
    name = "ResourceClaim stuck on its finalizer"
    severity = Severity.ERROR
    reads = _CLAIMS + _PODS
    options = {"after": Option(300, "seconds a claim may stay deleting before it is reported")}
    summary = "A ResourceClaim was deleted long ago and still exists, held by a finalizer."
    rationale = """
        A deleted claim stays until its finalizers are gone. The controller removes
        `resource.kubernetes.io/delete-protection` only after the claim is deallocated,
        which waits for every pod in `reservedFor` to stop; a pod stuck terminating (a driver
        gone, a node lost), a dead controller or a foreign finalizer keep the claim, and its
        devices, forever. Remedy: resolve what holds it (the message names the pods and
        finalizers); remove a finalizer by hand only once no container can still use the
        device."""
    noncompliant = snapshot(*BASE, pod(metadata="\n      deletionTimestamp: \"2026-12-01T11:30:00Z\""),
                            claim(metadata="\n      deletionTimestamp: \"2026-12-01T11:30:00Z\""))

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        since = ctx.live.seconds_since(obj.metadata.get("deletionTimestamp"))
        if since is None or since < ctx.option(self, "after"):
            return
        finalizers = [text(f) for f in obj.metadata.get("finalizers") or []]
        holders = []
        for ref in reserved_for(obj):
            live = ctx.live.pods_by_uid.get(text(ref.get("uid")))
            state = "gone" if live is None else ("terminating" if live.metadata.get("deletionTimestamp") else "running")
            holders.append(f"pod {text(ref.get('name'))} ({state})")
        why = f"reserved for {', '.join(holders)}" if holders else (
            "allocated but reserved for nobody: the resourceclaim controller should have deallocated it"
            if is_allocated(obj) else "not allocated")
        foreign = [f for f in finalizers if f != DELETE_PROTECTION]
        yield ctx.finding(self, obj, f"deleted {int(since)}s ago and still here: finalizers "
                          f"{', '.join(finalizers) or 'none'}; {why}" +
                          (f"; finalizer(s) no DRA component removes: {', '.join(foreign)}" if foreign else ""),
                          obj.metadata, "deletionTimestamp",
                          help="make the reserving pods finish (or force-delete them once their node is gone), then "
                               "check the resourceclaim controller in kube-controller-manager")


@register
class ClaimReservedForGonePod(ClaimRule):
    id = "claim-reserved-for-gone-pod"
    name = "ResourceClaim reserved for a pod that is gone"
    severity = Severity.ERROR
    reads = _CLAIMS + _PODS
    options = {"after": Option(60, "seconds since a reserving pod finished before its reservation is reported")}
    summary = ("A ResourceClaim's reservedFor names a pod that no longer exists, was replaced by another, or will not "
               "run again (it finished, or was deleted before it was scheduled).")
    rationale = """
        `status.reservedFor` is what keeps a claim's devices from being deallocated. An entry
        for a pod uid that no longer exists (deleted, or replaced by a pod of the same name
        with a new uid) means the controller missed the deletion: the devices stay
        allocated with no container using them, and a claim shared by a StatefulSet's
        replacement pod cannot be reserved again until the entry goes (at most 256
        entries). A pod that is done (phase Succeeded or Failed, or deleted before it was
        scheduled: upstream's isPodDone) releases its reservation the same way, though the
        pod object may stay for days (a finished Job's pods, kept for their logs). The
        controller removes such entries on its next sync; one that stays says the
        controller is down or failing."""
    noncompliant = snapshot(*BASE, claim())

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        cluster = ctx.live
        for i, ref in enumerate(reserved_for(obj)):
            if text(ref.get("resource")) != "pods" or text(ref.get("apiGroup")):
                continue
            uid, name = text(ref.get("uid")), text(ref.get("name"))
            live = cluster.pods_by_uid.get(uid)
            if live is not None:
                state = _done(live, cluster, ctx.option(self, "after"))
                if state is None:
                    continue
                what = f"reserved for pod {name}, which will not run again ({state})"
            else:
                same_name = cluster.pods_by_key.get((obj.namespace, name))
                what = "reserved for a pod that is gone: " + (
                    f"pod {name} was replaced (uid {uid} is gone, the pod of that name now has uid "
                    f"{text(same_name.metadata.get('uid'))})" if same_name is not None else
                    f"pod {name} (uid {uid}) does not exist")
            yield ctx.finding(self, obj, f"{what}; its devices stay allocated", obj.data["status"]["reservedFor"], i,
                              help="check that kube-controller-manager runs the resourceclaim controller; it removes "
                                   "the entry and deallocates the claim")


def _done(pod: Manifest, cluster: ClusterView, after: float) -> str | None:
    """How a pod is done, as upstream's isPodDone reads it (a terminal phase, or deleted
    before it was scheduled), once `after` seconds have passed since; None while it may
    still run, or just finished."""
    status, spec = mapping(pod.data.get("status")), mapping(pod.data.get("spec"))
    phase = text(status.get("phase"))
    if phase in ("Succeeded", "Failed"):
        finished = [mapping(mapping(s.get("state")).get("terminated")).get("finishedAt")
                    for s in status.get("containerStatuses") or [] if isinstance(s, dict)]
        times = [t for t in (cluster.seconds_since(f) for f in finished) if t is not None]
        since = min(times) if times else None
        state = f"phase {phase}"
    elif pod.metadata.get("deletionTimestamp") and not text(spec.get("nodeName")):
        since, state = cluster.seconds_since(pod.metadata.get("deletionTimestamp")), "deleted before it was scheduled"
    else:
        return None
    if since is not None and since < after:
        return None
    return state + (f", {int(since)}s ago" if since is not None else "")


@register
class ClaimAllocatedUnreserved(ClaimRule):
    id = "claim-allocated-unreserved"
    name = "Allocated ResourceClaim that nobody reserves"
    severity = Severity.WARNING
    reads = _CLAIMS
    summary = "A ResourceClaim holds devices (status.allocation) while no pod reserves it."
    rationale = """
        The scheduler writes a claim's allocation, its first reservation and the
        delete-protection finalizer together, and the resourceclaim controller deallocates
        such a claim when it removes the last reservation. An allocation written any other
        way (by hand, by a tool restoring a backup, by an external allocator) stays when no
        pod reserves it: the controller removes stale reservations but leaves that
        allocation alone (observed on the real control plane). The devices then count as in
        use for every other claim while no pod can use them."""
    noncompliant = snapshot(*BASE, claim(status="""
    status:
      allocation:
        devices:
          results: [{request: gpu, driver: gpu.nvidia.com, pool: gpu-node-0, device: gpu-0}]"""),
                            pod(status="\n    status: {phase: Running}", node=""))

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if is_allocated(obj) and not reserved_for(obj) and not obj.metadata.get("deletionTimestamp"):
            devices = ", ".join("/".join(r.get(k, "?") for k in ("driver", "pool", "device"))
                                for r in allocation_results(obj))
            yield ctx.finding(self, obj, f"allocated ({devices or 'no device'}) but reserved for no pod: the devices "
                              "are held for nobody", obj.data["status"], "allocation",
                              help="check the resourceclaim controller; if the claim is no longer wanted, delete it")


@register
class ClaimGeneratedOrphan(ClaimRule):
    id = "claim-generated-orphan"
    name = "Generated ResourceClaim without its pod"
    severity = Severity.WARNING
    reads = _CLAIMS + _PODS
    summary = "A ResourceClaim generated for a pod has no owner, or its owner pod is gone."
    rationale = """
        Claims generated from a ResourceClaimTemplate (annotation
        `resource.kubernetes.io/pod-claim-name`) or created by the scheduler for an extended
        resource (`resource.kubernetes.io/extended-resource-claim`) are owned by their pod,
        and the garbage collector deletes them with it. One whose owner is gone, or that
        names no owner, is never collected: it leaks its allocation, if any, and counts
        against the namespace's quota."""
    noncompliant = snapshot(*BASE, claim(owner="9d1e4c02-0000-4000-8000-0000000000ff", status="""
    status: {}"""))

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        annotations = obj.annotations
        if POD_CLAIM_NAME not in annotations and EXTENDED_RESOURCE_CLAIM not in annotations:
            return
        owner = obj.controller
        if owner is None:
            yield ctx.finding(self, obj, "generated for a pod but has no owner: the garbage collector will never "
                              "delete it", obj.metadata, help="delete the claim once no pod uses it")
            return
        if owner.get("kind") == "Pod" and text(owner.get("uid")) not in ctx.live.pods_by_uid:
            yield ctx.finding(self, obj, f"its owner pod {text(owner.get('name'))} is gone; the garbage collector "
                              "should have deleted the claim", obj.metadata, "ownerReferences",
                              help="check the garbage collector in kube-controller-manager; delete the claim by hand "
                                   "once no pod uses it")


@register
class DeviceDoubleAllocated(ClaimRule):
    id = "device-double-allocated"
    name = "One device allocated to two claims"
    severity = Severity.ERROR
    reads = _CLAIMS
    summary = "Two ResourceClaims hold the same device exclusively."
    rationale = """
        The scheduler never allocates a device that another claim holds (its allocated-devices
        tracker), except for admin access and shares of a device that allows multiple
        allocations. Two exclusive allocations of one device follow a force-delete with
        grace period 0 raced against the scheduler, a restored backup, or a buggy external
        allocator: two tenants then share one GPU, its memory and its faults."""
    noncompliant = snapshot(*BASE, pod(), claim(), claim(name="batch-gpu", status="""
    status:
      allocation:
        devices:
          results: [{request: gpu, driver: gpu.nvidia.com, pool: gpu-node-0, device: gpu-0}]
      reservedFor: [{resource: pods, name: infer-0, uid: 9d1e4c02-0000-4000-8000-00000000000a}]""",
                                                         uid="9d1e4c02-0000-4000-8000-00000000000c"))

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for i, result in enumerate(allocation_results(obj)):
            if result.get("adminAccess") is True or result.get("shareID"):
                continue
            device = (text(result.get("driver")), text(result.get("pool")), text(result.get("device")))
            others = [held.claim for held in ctx.live.allocated.get(device, [])
                      if held.claim is not obj and not held.shared]
            if others:
                names = ", ".join(f"{o.namespace}/{o.name}" for o in others)
                yield ctx.finding(self, obj, f"device {'/'.join(device)} is also allocated to {names}",
                                  obj.data["status"]["allocation"]["devices"]["results"], i,
                                  help="delete the pods of one of the claims and the claim itself; then find who wrote "
                                       "the second allocation")


@register
class ClaimDeviceMissing(ClaimRule):
    id = "claim-device-missing"
    name = "Allocated device no longer published"
    severity = Severity.ERROR
    reads = _CLAIMS + ("resourceslices.resource.k8s.io",)
    summary = "A claim holds a device its driver no longer publishes, though the driver still publishes the pool."
    rationale = """
        A driver that restarted with a different view of its hardware (a MIG layout changed
        under it, a lost checkpoint, a GPU that fell off the bus) republishes its pool without
        a device that claims still hold. The kubelet's prepared state and the cluster then
        disagree: the pod may run on a device that is not there, and the scheduler cannot
        account for it. Node-wide loss of a driver's slices is `node-driver-slices-missing`."""
    noncompliant = snapshot(*BASE[:2], slice_(gpu(1), generation=2), BASE[3], pod(), claim())

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        cluster = ctx.live
        for i, result in enumerate(allocation_results(obj)):
            device = (text(result.get("driver")), text(result.get("pool")), text(result.get("device")))
            if device in cluster.published or device[:2] not in cluster.pools:
                continue  # published, or its whole pool is gone (the node check reports that)
            yield ctx.finding(self, obj, f"device {'/'.join(device)} is allocated but its pool no longer publishes "
                              "it (the driver's state and the claim disagree)",
                              obj.data["status"]["allocation"]["devices"]["results"], i,
                              help="restart the pods using this claim so it is allocated again; check the driver's "
                                   "logs and checkpoint on the node")


@register
class NodeDriverSlicesMissing(ClaimRule):
    id = "node-driver-slices-missing"
    name = "Claims allocated on a node whose driver publishes nothing"
    severity = Severity.ERROR
    reads = _CLAIMS + ("resourceslices.resource.k8s.io",)
    summary = "A claim is allocated on a node where its driver publishes no ResourceSlice any more."
    rationale = """
        A driver's kubelet plugin withdraws its node's slices when it stops (or its
        DaemonSet pod is deleted). Pods holding claims on that node can then not be
        torn down cleanly: the kubelet must call the driver to unprepare the devices before
        the pod is gone, so the pods stay Terminating and the claims stay allocated."""
    noncompliant = snapshot(*BASE[:2], BASE[3], pod(), claim())

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        node = allocation_node(obj)
        if not node:
            return
        drivers = {text(r.get("driver")) for r in allocation_results(obj)}
        missing = sorted(d for d in drivers if d not in ctx.live.drivers_by_node.get(node, set()))
        if missing:
            yield ctx.finding(self, obj, f"allocated on node {node}, where driver {', '.join(missing)} publishes no "
                              "ResourceSlice: its kubelet plugin is gone", mapping(obj.data["status"]), "allocation",
                              help=f"check the driver's DaemonSet pod on {node}; pods using this claim cannot finish "
                                   "terminating without it")
