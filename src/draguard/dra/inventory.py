"""Inventories: the devices claims are allocated from.

`generate(spec)` builds Nodes and ResourceSlices from a short spec, the way the NVIDIA DRA
driver would publish them, validating MIG layouts against the GPU's placement rules:

    apiVersion: resource.k8s.io/v1     # of the generated slices
    driverVersion: "25.12"             # NVIDIA driver attribute set (data/driver-attributes.yaml)
    nodes:
    - namePrefix: gpu-node
      count: 4
      labels: {nvidia.com/gpu.product: H200}
      gpus:
        model: H200-141GB              # a key of data/gpus.yaml
        count: 8
        mig: static                    # none | static | dynamic
        layout: [3g.71gb, 2g.35gb, 1g.18gb, 1g.18gb]   # static: the MIG devices of each GPU

`mig: dynamic` publishes every profile at every placement as a partitionable device that
consumes the GPU's memory-slice counters (KEP-4815), plus the whole GPU.

`Inventory.from_manifests` turns linted or given objects (ResourceSlices, Nodes,
DeviceClasses, DeviceTaintRules, allocated ResourceClaims) into what the allocator needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from uuid import NAMESPACE_DNS, uuid5

from ..facts.catalog import NVIDIA_DRIVER as DRIVER
from ..facts.catalog import device_classes, driver_attributes, gpu_models, latest_driver_version
from .devices import DeviceClass, ModelError, Node, device_class_from, device_taint_rule_from, slice_from


class InventoryError(ValueError):
    pass


# --- MIG placement ------------------------------------------------------------------------

def place_layout(model_name: str, layout: list[str]) -> list[tuple[str, int]]:
    """(profile, start slice) for each MIG device of `layout`, or InventoryError when the
    layout does not fit the GPU (overlapping slices, too many instances, unknown profile)."""
    model = gpu_models().get(model_name)
    if model is None:
        raise InventoryError(f"unknown GPU model {model_name!r} (known: {', '.join(gpu_models())})")
    profiles = {p["name"]: p for p in model["profiles"]}
    for name in layout:
        if name not in profiles:
            raise InventoryError(f"{model_name} has no MIG profile {name!r} (profiles: {', '.join(profiles)})")
        if layout.count(name) > profiles[name]["maxInstances"]:
            raise InventoryError(f"{model_name} allows at most {profiles[name]['maxInstances']} instances of {name}")
    if sum(profiles[n]["compute"] for n in layout) > model["computeSlices"]:
        raise InventoryError(f"layout {layout} needs more than the {model['computeSlices']} compute slices of "
                             f"{model_name}")
    order = sorted(range(len(layout)), key=lambda i: -profiles[layout[i]]["slices"])  # big first
    used = [False] * model["memorySlices"]
    starts: dict[int, int] = {}

    def search(k: int) -> bool:
        if k == len(order):
            return True
        index = order[k]
        profile = profiles[layout[index]]
        for start in profile["placements"]:
            span = range(start, start + profile["slices"])
            if all(not used[i] for i in span):
                for i in span:
                    used[i] = True
                starts[index] = start
                if search(k + 1):
                    return True
                for i in span:
                    used[i] = False
        return False

    if not search(0):
        raise InventoryError(f"MIG layout {layout} does not fit the memory slices of {model_name}")
    return [(layout[i], starts[i]) for i in range(len(layout))]


# --- device generation -----------------------------------------------------------------------

def _typed(kind: str, value) -> dict:
    return {kind: value}


def _attributes(schema: dict, values: dict) -> dict:
    """Only the attributes the driver version publishes, typed as it publishes them."""
    return {name: _typed(kind, values[name]) for name, kind in schema.items() if name in values}


def _capacity(schema: list, values: dict) -> dict:
    out = {}
    for name in schema:
        if name.endswith("*"):
            out.update({k: {"value": str(v)} for k, v in values.items() if k.startswith(name[:-1])})
        elif name in values:
            out[name] = {"value": str(values[name])}
    return out


def _gpu_values(model: dict, node: str, index: int, driver_version: str) -> dict:
    uuid = f"GPU-{uuid5(NAMESPACE_DNS, f'{node}/{index}')}"  # stable across runs
    return {
        "type": "gpu", "uuid": uuid, "minor": index, "index": index, "productName": model["productName"],
        "brand": "Nvidia", "architecture": model["architecture"],
        "cudaComputeCapability": f"{model['cudaComputeCapability']}.0", "driverVersion": "580.65.6",
        "cudaDriverVersion": "13.0.0", "pcieBusID": f"0000:{0x18 + index:02x}:00.0",
        "addressingMode": "None", "resource.kubernetes.io/pcieRoot": f"pci0000:{index // 2:02x}",
    }


def _mig_values(gpu: dict, profile: dict, start: int, index: int) -> tuple[dict, dict]:
    attrs = dict(gpu, type="mig", uuid=f"MIG-{gpu['uuid'][4:]}-{start}-{profile['slices']}", parentUUID=gpu["uuid"],
                 parentIndex=gpu["index"], index=index, profile=profile["name"])
    capacity = {"memory": profile["memory"], "copyEngines": profile["compute"],
                "decoders": profile["compute"], "encoders": 0, "jpegEngines": 1 if "+me" in profile["name"] else 0,
                "ofaEngines": 1 if "+me" in profile["name"] else 0}
    if "multiprocessors" in profile:
        capacity["multiprocessors"] = profile["multiprocessors"]
    capacity.update({f"memorySlice{i}": 1 for i in range(start, start + profile["slices"])})
    return attrs, capacity


def _device(name: str, kind: str, attrs: dict, capacity: dict, schema: dict) -> dict:
    return {"name": name, "attributes": _attributes(schema[kind]["attributes"], attrs),
            "capacity": _capacity(schema[kind]["capacity"], capacity)}


def _node_devices(model_name: str, gpus: dict, node: str, driver_version: str) -> tuple[list, list]:
    """(devices, shared counter sets) the driver would publish for one node."""
    model = gpu_models()[model_name]
    schema = driver_attributes()[DRIVER]["versions"][driver_version]
    mode = gpus.get("mig", "none")
    layout = list(gpus.get("layout") or [])
    placed = place_layout(model_name, layout) if mode == "static" else []
    profiles = {p["name"]: p for p in model["profiles"]}
    devices, counters = [], []
    for g in range(int(gpus.get("count", 1))):
        gpu = _gpu_values(model, node, g, driver_version)
        if mode == "none" or (mode == "static" and not layout):
            devices.append(_device(f"gpu-{g}", "gpu", gpu, {"memory": model["memory"]}, schema))
        elif mode == "static":
            for i, (profile_name, start) in enumerate(placed):
                profile = profiles[profile_name]
                attrs, capacity = _mig_values(gpu, profile, start, i)
                devices.append(_device(f"gpu-{g}-mig-{profile_name.replace('+', '-')}-{start}-{profile['slices']}",
                                       "mig", attrs, capacity, schema))
        elif mode == "dynamic":
            counter_set = f"gpu-{g}-counters"
            every_slice = {f"memorySlice{i}": {"value": "1"} for i in range(model["memorySlices"])}
            compute = {"computeSlices": {"value": str(model["computeSlices"])}}
            counters.append({"name": counter_set, "counters": dict(every_slice, **compute)})
            whole = _device(f"gpu-{g}", "gpu", gpu, {"memory": model["memory"]}, schema)
            whole["consumesCounters"] = [{"counterSet": counter_set, "counters": dict(every_slice, **compute)}]
            devices.append(whole)
            for profile in model["profiles"]:
                for start in profile["placements"]:
                    attrs, capacity = _mig_values(gpu, profile, start, start)
                    device = _device(f"gpu-{g}-mig-{profile['name'].replace('+', '-')}-{start}-{profile['slices']}",
                                     "mig", attrs, capacity, schema)
                    device["consumesCounters"] = [{"counterSet": counter_set, "counters": dict(
                        {f"memorySlice{i}": {"value": "1"} for i in range(start, start + profile["slices"])},
                        computeSlices={"value": str(profile["compute"])})}]
                    devices.append(device)
        else:
            raise InventoryError(f"mig must be none, static or dynamic, not {mode!r}")
    return devices, counters


def generate(spec: dict) -> list[dict]:
    """Nodes and ResourceSlices (as manifests) for an inventory spec."""
    if not isinstance(spec, dict) or not isinstance(spec.get("nodes"), list):
        raise InventoryError("an inventory spec is a mapping with a `nodes` list")
    api_version = spec.get("apiVersion", "resource.k8s.io/v1")
    if api_version not in ("resource.k8s.io/v1", "resource.k8s.io/v1beta2"):
        raise InventoryError("generated slices are resource.k8s.io/v1 or v1beta2")
    driver_version = str(spec.get("driverVersion") or latest_driver_version())
    if driver_version not in driver_attributes()[DRIVER]["versions"]:
        raise InventoryError(f"unknown NVIDIA driver version {driver_version!r} "
                             f"(known: {', '.join(driver_attributes()[DRIVER]['versions'])})")
    objects = []
    for group in spec["nodes"]:
        gpus = group.get("gpus") or {}
        if gpus.get("model") not in gpu_models():
            raise InventoryError(f"unknown GPU model {gpus.get('model')!r} (known: {', '.join(gpu_models())})")
        for n in range(int(group.get("count", 1))):
            node = f"{group.get('namePrefix', 'node')}-{n}"
            objects.append({"apiVersion": "v1", "kind": "Node",
                            "metadata": {"name": node, "labels": dict(group.get("labels") or {},
                                                                      **{"kubernetes.io/hostname": node})}})
            devices, counters = _node_devices(gpus["model"], gpus, node, driver_version)
            # shared counters and devices live in separate slices of one pool (as upstream requires)
            parts = [("devices", devices)] + ([("sharedCounters", counters)] if counters else [])
            for kind, content in parts:
                objects.append({"apiVersion": api_version, "kind": "ResourceSlice",
                                "metadata": {"name": f"{node}-{DRIVER}" + ("-counters" if kind != "devices" else "")},
                                "spec": {"driver": DRIVER, "nodeName": node,
                                         "pool": {"name": node, "generation": 1, "resourceSliceCount": len(parts)},
                                         kind: content}})
    return objects


# --- inventories for the allocator -----------------------------------------------------------

@dataclass
class Inventory:
    slices: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    classes: dict = field(default_factory=dict)
    allocated: set = field(default_factory=set)
    taint_rules: list = field(default_factory=list)

    @classmethod
    def from_manifests(cls, manifests, with_builtin_classes: bool = True) -> "Inventory":
        """InventoryError (with file:line:column) for an object the allocator cannot model."""
        inventory = cls()
        if with_builtin_classes:
            inventory.classes.update(builtin_classes())
        for m in manifests:
            try:
                inventory._add(m)
            except ModelError as exc:
                where = m.location(exc.container, exc.key, value=True) if exc.container is not None \
                    else m.location()
                position = f":{where.line}:{where.column}" if where.line else ""
                raise InventoryError(f"{where.file}{position}: {m.kind} '{m.name}': {exc}") from None
        inventory.apply_taint_rules()
        known = {n.name for n in inventory.nodes}
        for s in inventory.slices:  # nodes that publish slices exist, even if not listed
            for name in [s.node_name] + [d.node_name for d in s.devices]:
                if name and name not in known:
                    inventory.nodes.append(Node(name, {"kubernetes.io/hostname": name}))
                    known.add(name)
        inventory.nodes.sort(key=lambda n: n.name)
        return inventory

    def _add(self, m) -> None:
        if m.group == "resource.k8s.io" and m.kind == "ResourceSlice":
            self.slices.append(slice_from(m))
        elif m.group == "resource.k8s.io" and m.kind == "DeviceClass":
            self.classes[m.name] = device_class_from(m)
        elif m.group == "" and m.kind == "Node":
            self.nodes.append(Node(m.name, dict(m.labels)))
        elif m.group == "resource.k8s.io" and m.kind == "ResourceClaim":
            self.allocated.update(allocated_devices(m.data))
        elif m.group == "resource.k8s.io" and m.kind == "DeviceTaintRule":
            self.taint_rules.append(device_taint_rule_from(m))

    def apply_taint_rules(self) -> None:
        """Devices as the scheduler sees them: their published taints plus every
        DeviceTaintRule's that selects them (KEP-5055)."""
        for s in self.slices:
            for device in s.devices:
                device.taints = device.published_taints + tuple(
                    rule.taint for rule in self.taint_rules if rule.selects(device, self.classes))


def allocated_devices(claim: dict) -> set:
    """Device ids a ResourceClaim's status.allocation uses (adminAccess results excluded)."""
    status = claim.get("status") if isinstance(claim.get("status"), dict) else {}
    allocation = status.get("allocation") if isinstance(status.get("allocation"), dict) else {}
    devices = allocation.get("devices") if isinstance(allocation.get("devices"), dict) else {}
    used = set()
    for result in devices.get("results") or []:
        if isinstance(result, dict) and not result.get("adminAccess"):
            used.add((str(result.get("driver")), str(result.get("pool")), str(result.get("device"))))
    return used


@lru_cache(maxsize=None)
def _builtin_classes() -> tuple:
    return tuple(DeviceClass(name, [entry["selector"]]) for name, entry in device_classes().items())


def builtin_classes() -> dict:
    return {c.name: c for c in _builtin_classes()}

