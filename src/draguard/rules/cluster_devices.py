"""cluster: what drivers publish (stale slices, incomplete pools, overlapping devices) and the
classes and quotas that select from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..model.claims import RESOURCE_GROUP
from ..model.live import generation_of
from ..model.pods import mapping, mappings, text
from ..model.values import YamlMap
from .base import Needs, Rule
from .cluster_examples import BASE, DEVICE_CLASS, TEMPLATE, claim, gpu, pod, slice_, snapshot
from .registry import register

if TYPE_CHECKING:
    from ..dra.devices import Device
    from ..model.live import PublishedDevice
    from ..model.manifest import Manifest
    from .context import Context

_SLICES = ("resourceslices.resource.k8s.io",)
_REFERENCE = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#resourceslice"


class DeviceRule(Rule):
    category = "cluster"
    needs = Needs.CLUSTER
    reference = _REFERENCE
    compliant = snapshot(*BASE, pod(), claim())


def _pool_of(s: Manifest) -> YamlMap:
    return mapping(s.spec.get("pool"))


@register
class SliceNodeMissing(DeviceRule):
    id = "slice-node-missing"
    name = "ResourceSlice of a node that is gone"
    severity = Severity.ERROR
    targets = frozenset({(RESOURCE_GROUP, "ResourceSlice")})
    reads = _SLICES + ("nodes",)
    summary = "A ResourceSlice names a node that no longer exists."
    rationale = """
        The kubelet plugin of a driver publishes its node's slices and the node's owner
        reference lets the garbage collector remove them with the node. A slice whose node is
        gone is stale: the scheduler still sees its devices, may allocate them, and the pod
        then waits for a node that will never come."""
    noncompliant = snapshot(DEVICE_CLASS, slice_(), TEMPLATE)

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        node = obj.spec.get("nodeName")
        if isinstance(node, str) and node and node not in ctx.live.nodes:
            yield ctx.finding(self, obj, f"published for node {node}, which does not exist: its devices are stale",
                              obj.spec, "nodeName",
                              help="delete the slice (the driver republishes when the node comes back); check that "
                                   "the driver sets the Node owner reference on its slices")


@register
class PoolIncomplete(DeviceRule):
    id = "pool-incomplete"
    name = "Resource pool with missing or extra slices"
    severity = Severity.ERROR
    targets = frozenset({(RESOURCE_GROUP, "ResourceSlice")})
    reads = _SLICES
    summary = "A pool's newest generation has a different number of slices than its resourceSliceCount."
    rationale = """
        A driver publishes a pool as `resourceSliceCount` slices of one generation. The
        allocator will not allocate from a pool whose newest generation is incomplete
        (structured/internal/stable pools.go: the pool is marked incomplete and a claim that
        needs it fails), and the cluster autoscaler refuses to compute the node's utilization.
        A count that stays wrong means the driver crashed mid-publish or publishes
        inconsistent counts."""
    noncompliant = snapshot(*BASE[:2], slice_(count=2), TEMPLATE)

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        driver, pool = text(obj.spec.get("driver")), text(_pool_of(obj).get("name"))
        slices = ctx.live.pools.get((driver, pool), [])
        newest = max(generation_of(s) for s in slices)
        if generation_of(obj) != newest:
            return
        current = sorted((s for s in slices if generation_of(s) == newest), key=lambda s: s.name)
        if current[0] is not obj:
            return  # one finding per pool, on its first slice
        counts = {_pool_of(s).get("resourceSliceCount") for s in current}
        if counts != {len(current)}:
            wanted = ", ".join(str(c) for c in sorted(counts, key=str))
            yield ctx.finding(self, obj, f"pool {driver}/{pool} generation {newest} has {len(current)} slice(s) but "
                              f"declares resourceSliceCount {wanted}: the allocator treats it as incomplete",
                              _pool_of(obj), "resourceSliceCount",
                              help="restart the driver's kubelet plugin on the node so it republishes the pool")


@register
class PoolMigOverlapUnguarded(DeviceRule):
    id = "pool-mig-overlap-unguarded"
    name = "Full GPU and its MIG devices both allocatable"
    severity = Severity.ERROR
    targets = frozenset({(RESOURCE_GROUP, "ResourceSlice")})
    reads = _SLICES
    summary = "A pool publishes a GPU and MIG devices carved from it without shared counters tying them together."
    rationale = """
        Dynamic MIG publishes the whole GPU and every MIG placement as devices of one pool;
        only shared counters (KEP-4815, `sharedCounters` / `consumesCounters`) stop the
        allocator from handing out the GPU to one claim and a MIG slice of the same GPU to
        another. Without them two tenants get overlapping hardware. A driver must either
        publish counters (DRAPartitionableDevices) or publish one layout only."""
    noncompliant = snapshot(*BASE[:2], slice_(gpu(0) + """
      - name: gpu-0-mig-1g-10gb-0
        attributes:
          type: {string: mig}
          profile: {string: 1g.10gb}
          parentUUID: {string: GPU-6f6b6b1c-0000}
          uuid: {string: MIG-6f6b6b1c-0000-0}
        capacity: {memory: {value: 10Gi}}"""), TEMPLATE)

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        driver, pool = text(obj.spec.get("driver")), text(_pool_of(obj).get("name"))
        by_uuid: dict[str, PublishedDevice | None] = {_attribute(p.device, "uuid", driver): p
                                                    for p in ctx.live.published_by_pool.get((driver, pool), [])}
        by_uuid[""] = None
        for i, device in enumerate(mappings(obj.spec.get("devices"))):
            parent = by_uuid.get(_attribute(device, "parentUUID", driver))
            if parent is None or device.get("consumesCounters") or parent.device.get("consumesCounters"):
                continue
            yield ctx.finding(self, obj, f"device {text(device.get('name'))} is carved from {parent.name} of the same "
                              "pool, and neither consumes shared counters: both can be allocated at once",
                              obj.spec["devices"], i,
                              help="enable partitionable devices in the driver (shared counters), or publish either "
                                   "the full GPUs or the MIG devices")


def _attribute(device: YamlMap, name: str, driver: str) -> str:
    """A string attribute of the device, published as `name` or `<driver>/name`; ''."""
    attributes = mapping(device.get("attributes"))
    value = attributes.get(name) or attributes.get(f"{driver}/{name}")
    found = value.get("string") if isinstance(value, dict) else None
    return found if isinstance(found, str) else ""


@register
class DeviceClassMatchesNothing(DeviceRule):
    id = "device-class-matches-nothing"
    name = "DeviceClass that selects no published device"
    severity = Severity.WARNING
    targets = frozenset({(RESOURCE_GROUP, "DeviceClass")})
    reads = _SLICES + ("deviceclasses.resource.k8s.io",)
    summary = ("A DeviceClass that claims use matches none of the devices the drivers publish, or a class whose "
               "selector fails on them.")
    rationale = """
        Every claim of a class that matches nothing stays Pending; a class whose selector
        fails at runtime on some device (a missing attribute read without `has()`, a type
        mismatch) is worse: upstream aborts the whole allocation attempt on a CEL runtime
        error, for every claim of the class, on every node that has such a device. Such a
        class is usually a typo, a driver that is not installed, or a selector written for
        another driver's attribute names. A class no claim or template uses may match
        nothing harmlessly (drivers install classes for hardware a cluster may not have):
        it is reported only when it fails at runtime."""
    noncompliant = snapshot(*BASE, pod(), claim(), TEMPLATE.replace("one-gpu", "three-g").replace(
        "gpu.nvidia.com\n", "mig-3g\n").replace("-000000000004", "-0000000000e4"), """
    ---
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: mig-3g, uid: 9d1e4c02-0000-4000-8000-0000000000c3}
    spec:
      selectors:
      - cel:
          expression: device.attributes['gpu.nvidia.com'].profile == '3g.40gb'
""")

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        from ..cel.env import CelRuntimeError, compile_selector

        devices = ctx.live_devices.devices
        if not devices:
            return  # no driver publishes anything: nothing to judge the class against
        survivors = list(devices)
        errors: dict[int, tuple[str, list[Device]]] = {}
        for i, selector in enumerate(mappings(obj.spec.get("selectors"))):
            expression = mapping(selector.get("cel")).get("expression")
            if not isinstance(expression, str):
                continue
            compiled = compile_selector(expression)
            if compiled.error is not None:
                return  # the cel rules report a selector that does not compile
            kept = []
            for device in survivors:
                try:
                    if compiled.evaluate(device):
                        kept.append(device)
                except CelRuntimeError as exc:
                    errors.setdefault(i, (str(exc), []))[1].append(device)
            survivors = kept
        for i, (message, failing) in errors.items():
            yield ctx.finding(self, obj, f"selector #{i} fails at runtime on {len(failing)} device(s) "
                              f"(e.g. {'/'.join(failing[0].id)}: {message}); upstream aborts every allocation "
                              "that meets such a device", obj.spec["selectors"][i], "cel", severity=Severity.ERROR,
                              help="guard attribute reads with has() or the driver's domain check")
        if not survivors and not errors and obj.name in ctx.live.classes_in_use:
            drivers = sorted({d.driver for d in devices})
            yield ctx.finding(self, obj, f"matches none of the {len(devices)} published device(s) (drivers: "
                              f"{', '.join(drivers)})", obj.spec, "selectors",
                              help="fix the selector, or install the driver it was written for")


@register
class QuotaDeviceClassUnknown(DeviceRule):
    id = "quota-device-class-unknown"
    name = "ResourceQuota on a DeviceClass that does not exist"
    severity = Severity.WARNING
    targets = frozenset({("", "ResourceQuota")})
    reads = ("resourcequotas", "deviceclasses.resource.k8s.io")
    reference = "https://kubernetes.io/docs/concepts/policy/resource-quotas/#resource-quota-for-extended-resources"
    summary = "A ResourceQuota limits devices of a DeviceClass the cluster does not have."
    rationale = """
        DRA quota is counted per class: `<class>.deviceclass.resource.k8s.io/devices`. A
        quota naming a class that does not exist limits nothing, while the team's claims use
        the real class unchecked. It is usually a class renamed during a driver upgrade."""
    noncompliant = snapshot(*BASE, pod(), claim(), """
    ---
    apiVersion: v1
    kind: ResourceQuota
    metadata: {name: gpus, namespace: team-a, uid: 9d1e4c02-0000-4000-8000-0000000000d1}
    spec:
      hard: {gpu.example.com.deviceclass.resource.k8s.io/devices: '4'}
""")

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        hard = mapping(obj.spec.get("hard"))
        for key in hard:
            if not isinstance(key, str) or ".deviceclass.resource.k8s.io/" not in key:
                continue
            name = key.split(".deviceclass.resource.k8s.io/")[0].removeprefix("requests.")
            if name not in ctx.objects.device_classes:
                yield ctx.finding(self, obj, f"limits DeviceClass {name}, which does not exist: the quota limits "
                                  "nothing", hard, key,
                                  help="name an existing class (`kubectl get deviceclasses`)")
