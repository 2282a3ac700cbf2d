"""Live cluster state as the audit reads it: the objects of one snapshot joined by the keys the
controllers use (pods by uid, nodes by name, slices by driver and pool, allocated devices by
id), and the snapshot's clock, so that ages are measured at capture time, not at replay.

Every index is built on first use; the objects never change within one audit."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import cached_property
from typing import Iterable

from .claims import RESOURCE_GROUP
from .manifest import Manifest
from .objectset import ObjectSet
from .pods import generated_claims_of, mapping, mappings, text
from .values import Yaml, YamlMap
from ..core.value import Record, Value, Viewed

#: The annotations and finalizer upstream's resourceclaim controller and scheduler write.
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"  # a claim generated from a pod's template
EXTENDED_RESOURCE_CLAIM = "resource.kubernetes.io/extended-resource-claim"  # made by the scheduler (KEP-5004)
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"  # the controller's finalizer on claims

#: (driver, pool, device): how the scheduler names one device
DeviceId = tuple[str, str, str]


def timestamp(value: Yaml) -> datetime | None:
    """An RFC 3339 time as the API server writes it ('2026-11-30T10:00:00Z'), or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


class AllocatedDevice(Value):
    """One result of a claim's status.allocation."""

    __slots__ = ("claim", "result")

    def __init__(self, claim: Manifest, result: YamlMap) -> None:
        self.claim = claim
        self.result = result

    @property
    def device_id(self) -> DeviceId:
        return text(self.result.get("driver")), text(self.result.get("pool")), text(self.result.get("device"))

    @property
    def shared(self) -> bool:
        """Admin access, or one share of a device that allows multiple allocations (KEP-5075):
        neither holds the device exclusively."""
        return self.result.get("adminAccess") is True or bool(self.result.get("shareID"))


def allocation_results(claim: Manifest) -> list[YamlMap]:
    """status.allocation.devices.results (read once per claim: most cluster checks ask)."""
    return claim.derive(_allocation_results)


def _allocation_results(claim: Manifest) -> list[YamlMap]:
    allocation = mapping(mapping(claim.data.get("status")).get("allocation"))
    return mappings(mapping(allocation.get("devices")).get("results"))


def is_allocated(claim: Manifest) -> bool:
    return bool(mapping(claim.data.get("status")).get("allocation"))


def reserved_for(claim: Manifest) -> list[YamlMap]:
    return mappings(mapping(claim.data.get("status")).get("reservedFor"))


class PublishedDevice(Record):
    """One device of a ResourceSlice, with the slice."""

    __slots__ = ("slice", "device")

    def __init__(self, slice: Manifest, device: YamlMap) -> None:
        self.slice = slice
        self.device = device

    @property
    def name(self) -> str:
        return text(self.device.get("name"))


class ClusterView(Viewed):
    """The snapshot's objects with their joins; `now` is the capture time."""

    __slots__ = ("objects", "now", "unreadable")

    def __init__(self, objects: ObjectSet, now: datetime, unreadable: list[str] | None = None) -> None:
        self.objects = objects
        self.now = now
        self.unreadable = [] if unreadable is None else unreadable  # resources the snapshot could not read

    def _of(self, group: str, kind: str) -> list[Manifest]:
        return [m for m in self.objects if m.kind == kind and m.group == group]

    def seconds_since(self, value: Yaml) -> float | None:
        """Seconds from the RFC 3339 `value` to capture time; None when it is not a time."""
        moment = timestamp(value)
        return None if moment is None else (self.now - moment).total_seconds()

    def age(self, manifest: Manifest) -> float | None:
        return self.seconds_since(manifest.metadata.get("creationTimestamp"))

    def judged_elsewhere(self, manifest: Manifest) -> bool:
        """`judged_elsewhere(manifest, self)`, decided once per object."""
        found = manifest.derived.get(judged_elsewhere)
        if found is None:
            found = manifest.derived[judged_elsewhere] = judged_elsewhere(manifest, self)
        return bool(found)

    def read(self, resource: str) -> bool:
        """Whether the snapshot holds `resource` (a check that needs it says so when not)."""
        return resource not in self.unreadable

    # -- pods and nodes --
    @cached_property
    def pods(self) -> list[Manifest]:
        return self._of("", "Pod")

    @cached_property
    def pods_by_uid(self) -> dict[str, Manifest]:
        return {text(p.metadata.get("uid")): p for p in self.pods}

    @cached_property
    def pods_by_key(self) -> dict[tuple[str, str], Manifest]:
        return {(p.namespace, p.name): p for p in self.pods}

    @cached_property
    def nodes(self) -> dict[str, Manifest]:
        return {n.name: n for n in self._of("", "Node")}

    @cached_property
    def uids(self) -> set[str]:
        """Every object's uid: what an ownerReference can point at."""
        return {text(m.metadata.get("uid")) for m in self.objects} - {""}

    # -- claims and their allocations --
    @cached_property
    def claims(self) -> list[Manifest]:
        return self._of(RESOURCE_GROUP, "ResourceClaim")

    @cached_property
    def claims_by_key(self) -> dict[tuple[str, str], Manifest]:
        return {(c.namespace, c.name): c for c in self.claims}

    @cached_property
    def allocated(self) -> dict[DeviceId, list[AllocatedDevice]]:
        """Device id -> every claim result that holds it."""
        found: dict[DeviceId, list[AllocatedDevice]] = {}
        for claim in self.claims:
            for result in allocation_results(claim):
                held = AllocatedDevice(claim, result)
                found.setdefault(held.device_id, []).append(held)
        return found

    @cached_property
    def held(self) -> set[DeviceId]:
        """Device ids no other claim may take (`blocks_others`)."""
        return {device for device, holders in self.allocated.items() if blocks_others(holders)}

    @cached_property
    def admin_held(self) -> set[DeviceId]:
        """Device ids allocated with admin access only: in use, yet free for other claims."""
        return set(self.allocated) - self.held

    def claims_of_pod(self, pod: Manifest) -> list[Manifest]:
        """The ResourceClaims a pod uses that exist: named or generated for its entries, and
        the one the scheduler made for its extended resources."""
        names = [name for _, _, name in claim_entries(pod) if name]
        extended = mapping(mapping(pod.data.get("status")).get("extendedResourceClaimStatus")).get("resourceClaimName")
        if isinstance(extended, str) and extended:
            names.append(extended)
        return [c for c in (self.claims_by_key.get((pod.namespace, n)) for n in names) if c is not None]

    # -- what drivers publish --
    @cached_property
    def slices(self) -> list[Manifest]:
        return self._of(RESOURCE_GROUP, "ResourceSlice")

    @cached_property
    def pools(self) -> dict[tuple[str, str], list[Manifest]]:
        """(driver, pool) -> its slices, every generation."""
        found: dict[tuple[str, str], list[Manifest]] = {}
        for s in self.slices:
            found.setdefault((text(s.spec.get("driver")), text(mapping(s.spec.get("pool")).get("name"))), []).append(s)
        return found

    @cached_property
    def published(self) -> dict[DeviceId, PublishedDevice]:
        """Device id -> the device as its pool's newest generation publishes it (upstream's
        allocator ignores older generations: structured/internal/stable pools.go)."""
        found: dict[DeviceId, PublishedDevice] = {}
        for (driver, pool), slices in self.pools.items():
            newest = max(generation_of(s) for s in slices)
            for s in slices:
                if generation_of(s) == newest:
                    for device in mappings(s.spec.get("devices")):
                        found[(driver, pool, text(device.get("name")))] = PublishedDevice(s, device)
        return found

    @cached_property
    def published_by_pool(self) -> dict[tuple[str, str], list[PublishedDevice]]:
        found: dict[tuple[str, str], list[PublishedDevice]] = {}
        for (driver, pool, _), device in self.published.items():
            found.setdefault((driver, pool), []).append(device)
        return found

    @cached_property
    def drivers_by_node(self) -> dict[str, set[str]]:
        """Node name -> the drivers that publish slices for it."""
        found: dict[str, set[str]] = {}
        for s in self.slices:
            node = s.spec.get("nodeName")
            if isinstance(node, str) and node:
                found.setdefault(node, set()).add(text(s.spec.get("driver")))
        return found

    @cached_property
    def classes_in_use(self) -> set[str]:
        """The DeviceClasses some claim or claim template requests (one request per template:
        generated claims repeat their template's)."""
        from .claims import device_requests

        used: set[str] = set()
        seen: set[str] = set()
        for m in self.objects:
            if m.group != RESOURCE_GROUP or m.kind not in ("ResourceClaim", "ResourceClaimTemplate"):
                continue
            if POD_CLAIM_NAME in m.annotations and m.kind == "ResourceClaim":
                key = repr(m.spec.get("devices"))  # a generated claim: its template's request, seen once
                if key in seen:
                    continue
                seen.add(key)
            used.update(leaf.class_name for request in device_requests(m) for leaf in request.leaves()
                        if leaf.class_name)
        return used


def blocks_others(holders: Iterable[AllocatedDevice]) -> bool:
    """Whether a device's holders (AllocatedDevice) keep it from other claims: every allocated
    result but admin access counts, as the scheduler's allocated-devices tracker counts them."""
    return any(h.result.get("adminAccess") is not True for h in holders)


def claim_entries(pod: Manifest) -> list[tuple[int, YamlMap, str]]:
    """(index, entry, the ResourceClaim it names or '') for each spec.resourceClaims entry of a
    live pod: named directly, or generated for it (its status says which, as the kubelet
    reads it)."""
    generated = generated_claims_of(pod)
    found: list[tuple[int, YamlMap, str]] = []
    for i, entry in enumerate(mappings(pod.spec.get("resourceClaims"))):
        name = entry.get("resourceClaimName") or generated.get(text(entry.get("name")))
        found.append((i, entry, name if isinstance(name, str) else ""))
    return found


def generation_of(s: Manifest) -> int:
    """A ResourceSlice's pool generation (0 when unset, as upstream decodes it)."""
    value = mapping(s.spec.get("pool")).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def allocation_node(claim: Manifest) -> str:
    """The node an allocation is pinned to (a node-local pool: one matchFields term on
    metadata.name, as the scheduler writes it), or ''."""
    selector = mapping(mapping(mapping(claim.data.get("status")).get("allocation")).get("nodeSelector"))
    for term in mappings(selector.get("nodeSelectorTerms")):
        for field_ in mappings(term.get("matchFields")):
            values = field_.get("values")
            if field_.get("key") == "metadata.name" and isinstance(values, list) and len(values) == 1:
                return text(values[0])
    return ""


#: Kinds only the system writes: what drivers publish and kubelets register.
SYSTEM_KINDS = frozenset({(RESOURCE_GROUP, "ResourceSlice"), ("", "Node")})


def judged_elsewhere(manifest: Manifest, cluster: ClusterView) -> bool:
    """Written by the system, not by a user: made by a controller from another object the
    snapshot holds (a pod of a ReplicaSet, a ReplicaSet of a Deployment, a claim generated
    from a pod's template or by the scheduler), or published by a driver or a kubelet (the
    API server validated it on write). The manifest rules judge the source instead, once,
    where the user can change it; the cluster rules judge the object itself."""
    if (manifest.group, manifest.kind) in SYSTEM_KINDS:
        return True
    if POD_CLAIM_NAME in manifest.annotations or EXTENDED_RESOURCE_CLAIM in manifest.annotations:
        return True
    owner = manifest.controller
    return owner is not None and text(owner.get("uid")) in cluster.uids
