"""A start state from a cluster dump (the audit's snapshot: `draguard audit --save-dump`, or
`kubectl get -o yaml`): the simulation starts where the cluster was.

- The inventory is the dump's Nodes, ResourceSlices, DeviceClasses and DeviceTaintRules.
- Its Deployments and StatefulSets run under their simulated controllers, which adopt the
  pods they own (a Deployment's through its ReplicaSets' ownerReferences, a StatefulSet's by
  ordinal), each on its node and on the devices its claims hold in the dump
  (status.resourceClaimStatuses -> the ResourceClaim's status.allocation). A Deployment
  caught between two ReplicaSets is taken at one: its pods are its current revision.
- A pod no simulated controller owns (a bare pod, a DaemonSet's, a Job's) keeps its devices;
  a drain evicts it and nothing replaces it. A claim allocated for no live pod stays
  allocated (what the audit calls leaked).
- Running pods are ready unless their Ready condition says otherwise (then ready after the
  ready duration); a pod being deleted in the dump terminates from the start, its whole
  shutdown still ahead (the dump does not say how far it got); a Pending pod is scheduled."""

from __future__ import annotations

from ..dra.allocator import AllocationResult, DeviceResult
from ..dra.devices import Claim
from ..dra.inventory import Inventory
from ..model.live import allocation_results, claim_entries
from ..model.manifest import Manifest
from ..model.pods import pod_sites
from .template import stop_after
from .workloads import RUNNING_KINDS, controller_of
from .world import Durations, Pod, Timings, World

INVENTORY_KINDS = {("", "Node"), ("resource.k8s.io", "ResourceSlice"), ("resource.k8s.io", "DeviceClass"),
                   ("resource.k8s.io", "DeviceTaintRule")}


def dump_state(dump: list[Manifest], manifests: list[Manifest], timings: Timings, horizon: float,
               kube_version: str, gates: dict | None = None) -> tuple[World, dict]:
    """The world as the dump left it, each workload under its controller by (kind, name)."""
    world = World.on(Inventory.from_manifests([m for m in dump if (m.group, m.kind) in INVENTORY_KINDS]), kube_version,
                     gates)
    everything = dump + manifests
    claims = {(m.namespace, m.name): m for m in dump if m.kind == "ResourceClaim" and allocation_results(m)}
    by_uid = {m.data.get("metadata", {}).get("uid"): m for m in dump if m.kind in ("ReplicaSet",) + RUNNING_KINDS}
    running: dict = {}  # (kind, name) -> its controller
    adopted_claims: set[tuple[str, str]] = set()
    for workload in [m for m in dump if m.kind in RUNNING_KINDS]:
        running[(workload.kind, workload.name)] = controller_of(workload, everything, timings.of(workload.name), world)
    for pod in [m for m in dump if m.kind == "Pod" and _live(m)]:
        owner = _owner(pod, by_uid)
        controller = running.get((owner.kind, owner.name)) if owner is not None else None
        sim = controller.adopt(pod.name) if controller is not None else _foreign(pod, timings.default)
        allocations = _allocations(pod, sim, claims, adopted_claims)
        world.adopt(sim, pod.data.get("spec", {}).get("nodeName"), allocations, ready=_ready(pod),
                    deleting=pod.data.get("metadata", {}).get("deletionTimestamp") is not None)
    for key, claim in claims.items():
        if key not in adopted_claims:  # allocated, no live pod: the devices stay held
            world.state.commit(claim.namespace + "/" + claim.name, _result(Claim(claim.name, claim.namespace, []),
                                                                           allocation_results(claim)))
    world.run(horizon)
    return world, running


def _live(pod: Manifest) -> bool:
    return pod.data.get("status", {}).get("phase", "Pending") not in ("Succeeded", "Failed")


def _owner(pod: Manifest, by_uid: dict) -> Manifest | None:
    """The Deployment or StatefulSet that controls the pod (through a ReplicaSet), or None."""
    owner = pod
    for _ in range(2):
        refs = [r for r in owner.data.get("metadata", {}).get("ownerReferences") or [] if r.get("controller")]
        parent = by_uid.get(refs[0].get("uid")) if refs else None
        if parent is None or parent.kind in RUNNING_KINDS:
            return parent
        owner = parent
    return None


def _foreign(pod: Manifest, durations: Durations) -> Pod:
    """A pod no simulated controller owns, holding its claims as the dump says."""
    sites = pod_sites(pod)
    grace, _ = sites[0].grace_period if sites else (30, False)
    claims = [Claim(name, pod.namespace or "", []) for _, _, name in claim_entries(pod) if name]
    return Pod(pod.name, "", claims, durations, stop_after(grace, pod.data.get("spec", {}), durations.shutdown,
                                                           durations.pre_stop), 0.0,
               labels=dict(pod.labels))


def _allocations(pod: Manifest, sim: Pod, claims: dict, adopted: set) -> list[tuple[str, AllocationResult]]:
    """(the simulated claim's key, the dump claim's allocation) for each of the pod's claims."""
    out = []
    for _, entry, claim_name in claim_entries(pod):
        dumped = claims.get((pod.namespace, claim_name))
        if dumped is None:
            continue
        adopted.add((pod.namespace, claim_name))
        mine = next((c for c in sim.claims if c.name in (f"{sim.name}-{entry.get('name')}", claim_name)), None)
        if mine is not None:
            out.append((mine.key, _result(mine, allocation_results(dumped))))
    return out


def _result(claim: Claim, results: list[dict]) -> AllocationResult:
    devices = [DeviceResult(str(r.get("request", "")), str(r.get("driver")), str(r.get("pool")), str(r.get("device")),
                            True if r.get("adminAccess") else None) for r in results]
    return AllocationResult(claim, devices, [], None)


def _ready(pod: Manifest) -> bool:
    conditions = {c.get("type"): c.get("status") for c in pod.data.get("status", {}).get("conditions") or []
                  if isinstance(c, dict)}
    return conditions.get("Ready", "True") == "True"
