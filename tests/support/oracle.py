"""Differential testing against the upstream allocator: a seeded scenario generator, the
oracle process, and draguard's side of the same scenario."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from draguard.dra.allocator import AllocationError, Allocator, Features, SharedUse
from draguard.dra.devices import Node, claim_from, device_class_from, slice_from
from draguard.core.quantity import parse_quantity_text
from draguard.dra.variants import ALLOCATOR_FEATURES, variant_for, variant_of
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source
from support.harness import built

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness" / "allocator-oracle"
GPU, NIC = "gpu.example.com", "nic.example.com"
FEATURES = {"AdminAccess": True, "PrioritizedList": True, "PartitionableDevices": True, "DeviceTaints": True}
_SOURCE = Source("(oracle)", "")

EXPRESSIONS = [
    "device.attributes['gpu.example.com'].model == 'a'",
    "device.attributes['gpu.example.com'].model != 'c'",
    "device.attributes['gpu.example.com'].index >= 2",
    "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0",
    "device.capacity['gpu.example.com'].memory.isLessThan(quantity('64Gi'))",
    "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('1.1.0'))",
    "device.attributes['gpu.example.com'].healthy",
    "has(device.attributes['gpu.example.com'].index) && device.attributes['gpu.example.com'].index % 2 == 0",
    "device.attributes['gpu.example.com'].missing == 1",
    "device.attributes['nic.example.com'].speed > 100",
    "device.driver == 'nic.example.com' || device.attributes['gpu.example.com'].model in ['a', 'b']",
    "cel.bind(g, device.attributes['gpu.example.com'], g.model == 'b' || g.index == 0)",
    # member calls on a domain read the whole domain (a memo keyed by a phantom attribute
    # named "size" or "exists" would give every device the first device's answer)
    "device.attributes['gpu.example.com'].size() >= 4",
    "device.attributes['gpu.example.com'].exists(k, k == 'healthy')",
    "device.capacity['gpu.example.com'].all(k, k == 'memory')",
    # opaque reads: memoized by the device's content, never by object identity
    "device.attributes.exists(d, d == 'nic.example.com')",
    "device.capacity['nic.example.com'].size() == 0",
]


def _obj(kind: str, name: str, spec: dict, **meta) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": dict(name=name, **meta), "spec": spec}


def _device(rng: random.Random, driver: str, name: str) -> dict:
    if driver == GPU:
        attrs = {"model": {"string": rng.choice("abc")}, "driverVersion": {"version": f"1.{rng.randint(0, 2)}.0"}}
        if rng.random() < 0.85:
            attrs["index"] = {"int": rng.randint(0, 4)}
        if rng.random() < 0.8:
            attrs["healthy"] = {"bool": rng.random() < 0.8}
        capacity = {"memory": {"value": f"{rng.choice([16, 40, 48, 80])}Gi"}}
        if rng.random() < 0.2:  # published with the driver's domain: constraints find it differently
            attrs[f"{GPU}/model"] = attrs.pop("model")
    else:
        attrs = {"speed": {"int": rng.choice([100, 200, 400])}}
        capacity = {}
    device = {"name": name, "attributes": attrs, "capacity": capacity}
    if rng.random() < 0.15:
        device["taints"] = [{"key": "maintenance", "value": rng.choice(["now", "later"]),
                             "effect": rng.choice(["NoSchedule", "NoExecute", "PreferNoSchedule"])}]
    if rng.random() < 0.1:  # KEP-5007: only the newer variants, with DeviceBindingAndStatus, select it
        device["bindingConditions"] = ["attached"]
        device["bindingFailureConditions"] = ["failed"]
        device["bindsToNode"] = rng.random() < 0.5
    elif rng.random() < 0.04:  # alone: the newer variants restrict the allocation to the node, gate or not
        device["bindsToNode"] = True
    return device


def _requirement(rng: random.Random, nodes: list[str]) -> tuple[str, dict]:
    """('labels' or 'fields', a requirement): every operator, sometimes one upstream cannot parse
    (the allocation then fails as a whole, not with "no match")."""
    if rng.random() < 0.25:
        values = [rng.choice(nodes)] if rng.random() < 0.95 else list(nodes)  # two values: invalid
        operator = rng.choice(["In", "In", "NotIn"]) if rng.random() < 0.97 else "Exists"  # Exists: invalid
        return "fields", {"key": "metadata.name", "operator": operator, "values": values}
    kind = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if kind in ("Gt", "Lt"):
        values = [str(rng.randint(0, 8))] if rng.random() < 0.85 else rng.choice([["+3"], ["x"], ["1", "2"], []])
        return "labels", {"key": "gpus", "operator": kind, "values": values}
    if kind in ("In", "NotIn"):
        values = rng.choice([["r1"], ["r2"], ["r1", "r2"]]) if rng.random() < 0.95 else []
        return "labels", {"key": rng.choice(["rack", "rack", "zone"]), "operator": kind, "values": values}
    values = [] if rng.random() < 0.95 else ["r1"]
    return "labels", {"key": rng.choice(["rack", "zone", "bad key!"]) if rng.random() < 0.1 else "rack",
                      "operator": kind, "values": values}


def _node_selector(rng: random.Random, nodes: list[str]) -> dict:
    terms = []
    for _ in range(1 if rng.random() < 0.9 else 2):
        term: dict = {}
        for _ in range(rng.choice([1, 1, 2])):
            where, requirement = _requirement(rng, nodes)
            term.setdefault("matchFields" if where == "fields" else "matchExpressions", []).append(requirement)
        terms.append(term)
    return {"nodeSelectorTerms": terms}


def _pool_slices(rng: random.Random, driver: str, pool: str, nodes: list[str]) -> list[dict]:
    """A pool, mostly on the scenario's node (nodes[0]), sometimes elsewhere or network-attached."""
    where = rng.choice(["node", "node", "node", "all", "selector", "selector"])
    placement = ({"nodeName": nodes[0] if rng.random() < 0.8 else nodes[1]} if where == "node" else {"allNodes": True} if where == "all" else
                 {"nodeSelector": _node_selector(rng, nodes)})
    devices = [_device(rng, driver, f"dev-{i}") for i in range(rng.randint(0, 6))]
    generation = rng.randint(1, 2)
    counters = rng.random() < 0.25 and devices
    count = 2 if counters else 1
    incomplete = rng.random() < 0.05
    slices = []
    if counters:
        capacity = rng.randint(2, 5)
        for d in devices:
            d["consumesCounters"] = [{"counterSet": "shared", "counters": {"units": {"value": str(rng.randint(1, 3))}}}]
        slices.append(_obj("ResourceSlice", f"{pool}-counters", dict(
            placement, driver=driver, pool={"name": pool, "generation": generation, "resourceSliceCount": count},
            sharedCounters=[{"name": "shared", "counters": {"units": {"value": str(capacity)}}}])))
    slices.append(_obj("ResourceSlice", f"{pool}-devices", dict(
        placement, driver=driver, pool={"name": pool, "generation": generation,
                                        "resourceSliceCount": count + (1 if incomplete else 0)},
        devices=devices)))
    if rng.random() < 0.1:  # a stale slice of an older generation
        slices.append(_obj("ResourceSlice", f"{pool}-old", dict(
            placement, driver=driver, pool={"name": pool, "generation": generation - 1, "resourceSliceCount": 1},
            devices=[_device(rng, driver, "old-dev")])))
    _odd_slices(rng, driver, pool, nodes, slices, generation, count)
    return slices


def _odd_slices(rng: random.Random, driver: str, pool: str, nodes: list[str], slices: list, generation: int,
                count: int) -> None:
    """What upstream judges pool by pool: slices of the pool on the other node (of the same,
    a newer or an older generation, counted in resourceSliceCount or not), a count of 0,
    compatibility groups the stable variant does not know, counters and devices in one slice,
    a counter set listed twice in one slice, perDeviceNodeSelection set to false."""
    if rng.random() < 0.12:
        elsewhere = {"nodeName": nodes[1]}
        newer = rng.random() < 0.3
        slices.append(_obj("ResourceSlice", f"{pool}-elsewhere", dict(
            elsewhere, driver=driver, pool={"name": pool, "generation": generation + (1 if newer else 0),
                                            "resourceSliceCount": count + rng.choice([0, 1])},
            devices=[_device(rng, driver, "far-dev")])))
    if rng.random() < 0.03:
        slices[-1]["spec"]["pool"]["resourceSliceCount"] = 0
    devices = [d for s in slices for d in s["spec"].get("devices", []) if d.get("consumesCounters")]
    if devices and rng.random() < 0.1:
        devices[0]["consumesCounters"][0]["compatibilityGroups"] = ["mig"]
    counter_slices = [s for s in slices if s["spec"].get("sharedCounters")]
    if counter_slices and rng.random() < 0.05:
        counter_slices[0]["spec"]["devices"] = [_device(rng, driver, "counter-dev")]
    if counter_slices and rng.random() < 0.03:
        sets = counter_slices[0]["spec"]["sharedCounters"]
        sets.append({"name": sets[0]["name"], "counters": {"units": {"value": "1"}}})
    if rng.random() < 0.05:  # set though false: GatherPools skips the slice while DRAPartitionableDevices is off
        slices[-1]["spec"]["perDeviceNodeSelection"] = False


def _request(rng: random.Random, name: str, classes: list[str]) -> dict:
    def fields():
        body = {"deviceClassName": rng.choice(classes + (["missing"] if rng.random() < 0.03 else []))}
        if rng.random() < 0.08:
            body["allocationMode"] = "All"
        else:
            body["allocationMode"] = "ExactCount"
            body["count"] = rng.choice([1, 1, 1, 2, 3])
        body["selectors"] = [{"cel": {"expression": rng.choice(EXPRESSIONS)}} for _ in range(rng.choice([0, 0, 0, 1, 1, 2]))]
        if rng.random() < 0.2:
            body["tolerations"] = [rng.choice([{"key": "maintenance", "operator": "Exists"},
                                               {"key": "maintenance", "operator": "Equal", "value": "now"},
                                               {"operator": "Exists", "effect": "NoSchedule"}])]
        return body
    if rng.random() < 0.25:
        subrequests = [dict(fields(), name=f"sub{i}") for i in range(rng.randint(1, 3))]
        if rng.random() < 0.15:  # a field subrequests do not have: upstream never reads it
            subrequests[0]["adminAccess"] = True
        return {"name": name, "firstAvailable": subrequests}
    body = fields()
    if rng.random() < 0.1:
        body["adminAccess"] = True
    return {"name": name, "exactly": body}


def _opaque(owner: str, index: int) -> dict:
    return {"opaque": {"driver": GPU, "parameters": {"owner": owner, "index": index}}}


MAX_DEVICES_ASKED = 6


def _devices_asked(claims: list[dict]) -> int:
    total = 0
    for c in claims:
        for r in c["spec"]["devices"]["requests"]:
            options = r.get("firstAvailable") or [r.get("exactly", {})]
            total += max(o.get("count", 1) if o.get("allocationMode") != "All" else 3 for o in options)
    return total


def scenario(seed: int) -> dict:
    """One scenario from a seed: pools on nodes and network-attached, counters, taints, stale
    generations, incomplete pools, claims with every request shape, pre-allocated devices."""
    rng = random.Random(seed)
    nodes = rng.sample(["node-0", "node-1"], 2)  # nodes[0] is the one allocated for
    drivers = [GPU] if rng.random() < 0.6 else [GPU, NIC]
    slices = []
    for driver in drivers:
        for p in range(rng.randint(1, 2)):
            slices += _pool_slices(rng, driver, f"{driver.split('.')[0]}-pool-{p}", nodes)
    classes = [_obj("DeviceClass", "gpu", {"selectors": [{"cel": {"expression": f"device.driver == '{GPU}'"}}]}),
               _obj("DeviceClass", "nic", {"selectors": [{"cel": {"expression": f"device.driver == '{NIC}'"}}]}),
               _obj("DeviceClass", "any", {})]
    for cls in classes:
        if rng.random() < 0.3:  # class configs reach results once per class (AllocationConfigSourceClass)
            cls["spec"]["config"] = [_opaque(cls["metadata"]["name"], i) for i in range(rng.randint(1, 2))]
    names = ["gpu", "gpu", "gpu", "nic", "any"]
    claims = []
    for c in range(rng.choice([1, 1, 2, 3])):
        requests = [_request(rng, f"r{r}", names) for r in range(rng.choice([1, 1, 2]))]
        devices = {"requests": requests}
        if rng.random() < 0.25:
            devices["constraints"] = [{"matchAttribute": rng.choice([f"{GPU}/model", f"{GPU}/index", "model", "index", ""])}]
        if rng.random() < 0.15:  # the incubating variant's (with DRAConsumableCapacity); an empty constraint before it
            devices.setdefault("constraints", []).append(
                {"distinctAttribute": rng.choice([f"{GPU}/model", f"{GPU}/index", "index", "driverVersion", "healthy", ""])})
            if rng.random() < 0.5:
                devices["constraints"][-1]["requests"] = rng.sample([r["name"] for r in requests], 1)
        if rng.random() < 0.3:  # claim configs: for all requests, some, or a subrequest
            targets = [r["name"] for r in requests] + [f"{r['name']}/sub0" for r in requests if "firstAvailable" in r]
            devices["config"] = [dict(_opaque(f"claim-{c}", i), requests=rng.sample(targets, rng.randint(0, len(targets))))
                                 for i in range(rng.randint(1, 2))]
        claims.append(_obj("ResourceClaim", f"claim-{c}", devices and {"devices": devices}, namespace="default"))
    while claims and _devices_asked(claims) > MAX_DEVICES_ASKED:
        claims.pop()  # the search is exponential in what is asked; upstream too (60 s on one seed)
    all_devices = [(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"])
                   for s in slices for d in s["spec"].get("devices", [])]
    allocated = [d for d in all_devices if rng.random() < 0.1]
    labels = {"rack": rng.choice(["r1", "r2"])}
    if rng.random() < 0.7:
        labels["gpus"] = rng.choice([str(rng.randint(0, 8)), "-1", "many"])
    node = {"metadata": {"name": nodes[0], "labels": labels}}
    # each gate the stable variant knows is off now and then (a cluster where it is not enabled);
    # a third of the scenarios enable what makes upstream run the incubating variant (1.36+ defaults)
    features = {gate: rng.random() < 0.85 for gate in FEATURES}
    if rng.random() < 0.35:
        features.update(ConsumableCapacity=True, DeviceBindingAndStatus=rng.random() < 0.5)
    s = {"id": f"seed-{seed}", "deviceClasses": classes, "resourceSlices": slices, "claims": claims,
         "allocatedDevices": [dict(zip(("driver", "pool", "device"), d)) for d in allocated],
         "allocatedShared": [], "node": node, "features": features}
    _consumable(random.Random(f"consumable-{seed}"), s)
    _list_attributes(random.Random(f"lists-{seed}"), s)
    _node_operations(random.Random(f"node-operations-{seed}"), s)
    _compatibility_groups(random.Random(f"compatibility-groups-{seed}"), s)
    _derived_attributes(random.Random(f"derived-{seed}"), s)
    _twice_published(random.Random(f"twice-published-{seed}"), s)
    _fidelity_shapes(random.Random(f"fidelity-{seed}"), s)
    return s


def as_released(s: dict, release: str) -> dict:
    """The scenario in a cluster of `release` with its default gates (variant_for): upstream's
    structured.Features from them, and without DRAConsumableCapacity the shares allocated claims
    hold counted as whole devices, as the scheduler records them (foreachAllocatedDevice)."""
    enabled = variant_for(release).enabled
    released = dict(s, features={feature: feature in enabled for feature in ALLOCATOR_FEATURES})
    if "ConsumableCapacity" not in enabled and s["allocatedShared"]:
        released["allocatedDevices"] = s["allocatedDevices"] + _whole_devices(s["allocatedShared"])
        released["allocatedShared"] = []
    return released


def _whole_devices(shares: list) -> list:
    """Shares as the scheduler records them without DRAConsumableCapacity: a result with a
    shareID counts as its whole device (foreachAllocatedDevice)."""
    return [{k: share[k] for k in ("driver", "pool", "device")} for share in shares]


def _derived_attributes(rng: random.Random, s: dict) -> None:
    """Requests with derived attributes (DRADerivedAttributes), from an rng of their own, and
    constraints that read them: values of every type (lists, an empty one, a version), the
    name of a published attribute shadowed, and expressions that do not compile or fail on
    some devices (the allocation ends with an error). The gate is mostly on (the experimental
    variant); every variant refuses such requests without it."""
    if rng.random() < 0.75:
        return
    if rng.random() < 0.8:
        s["features"]["DerivedAttributes"] = True
    if rng.random() < 0.5:  # in place of the scenario's claims, whose other faults would end it first
        _derived_claim(rng, s)
        return
    names = [f"{GPU}/index", "derived.example.com/bucket", "derived.example.com/tier"]
    for claim in s["claims"]:
        devices = claim["spec"]["devices"]
        for request in devices["requests"]:
            for body in request.get("firstAvailable") or [request.get("exactly", {})]:
                if rng.random() < 0.7:
                    body["derivedAttributes"] = [
                        {"name": name, "expression": rng.choice(_FAILING if rng.random() < 0.15 else _DERIVED)}
                        for name in rng.sample(names, rng.randint(1, 2))]
        defined = [a["name"] for r in devices["requests"] for b in r.get("firstAvailable") or [r.get("exactly", {})]
                   for a in b.get("derivedAttributes", ())]
        if rng.random() < 0.8:
            newer = s["features"].get("DerivedAttributes") or s["features"].get("ConsumableCapacity")
            kind = "distinctAttribute" if newer and rng.random() < 0.4 else "matchAttribute"
            constraint = {kind: rng.choice(defined if defined and rng.random() < 0.8 else names)}
            if rng.random() < 0.3:
                constraint["requests"] = rng.sample([r["name"] for r in devices["requests"]], 1)
            devices.setdefault("constraints", []).append(constraint)


def _derived_claim(rng: random.Random, s: dict) -> None:
    """A pool of four GPUs and one claim whose requests define the same derived attribute,
    which a constraint matches or keeps distinct: the derived values decide what fits."""
    node = s["node"]["metadata"]["name"]
    devices = [{"name": f"dgpu-{i}", "attributes": {"model": {"string": rng.choice("ab")}, "index": {"int": i},
                                                     "driverVersion": {"version": f"1.{rng.randint(0, 1)}.0"}},
                "capacity": {"memory": {"value": rng.choice(["40Gi", "80Gi"])}}} for i in range(4)]
    s["resourceSlices"].append(_obj("ResourceSlice", "derived-gpus", {
        "nodeName": node, "driver": GPU, "pool": {"name": "derived-pool", "generation": 1, "resourceSliceCount": 1},
        "devices": devices}))
    name = rng.choice([f"{GPU}/index", "derived.example.com/bucket"])
    derived = [{"name": name, "expression": rng.choice(_FAILING if rng.random() < 0.15 else _DERIVED)}]
    requests = [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                              "count": rng.randint(1, 2),
                                              "derivedAttributes": derived}} for i in range(rng.randint(1, 2))]
    constraint = {rng.choice(["matchAttribute", "distinctAttribute"]): name}
    s["claims"] = [_obj("ResourceClaim", "derived-claim", {"devices": {"requests": requests,
                                                                        "constraints": [constraint]}},
                        namespace="default")]


_DERIVED = [
    f"device.attributes['{GPU}'].index",
    f"has(device.attributes['{GPU}'].index) ? device.attributes['{GPU}'].index / 2 : -1",
    f"has(device.attributes['{GPU}'].index) && device.attributes['{GPU}'].index % 2 == 0",
    f"device.attributes['{GPU}'].model + '-x'",
    f"device.attributes['{GPU}'].model == 'a' ? 'fast' : 'slow'",
    f"device.attributes['{GPU}'].driverVersion",
    "device.driver",
    f"[device.attributes['{GPU}'].model]",
    f"has(device.attributes['{GPU}'].index) ? [device.attributes['{GPU}'].index] : []",
    "[]",
    f"device.capacity['{GPU}'].memory.isGreaterThan(quantity('40Gi'))",
    f"has(device.attributes['{GPU}'].numa) ? device.attributes['{GPU}'].numa : [0]",
    f"dyn(device.attributes['{GPU}'].model)",
]
#: derived attributes that end the allocation with an error, on every device or on some
_FAILING = [
    "1.5",  # a double: does not compile
    "dyn(2.5)",  # compiles, and fails on every device
    f"dyn([1, device.attributes['{GPU}'].model])",  # a list of two types
    f"device.attributes['{GPU}'].missing",
    f"device.attributes['{GPU}'].numa",  # a list where the lists decoration made one, else no such key
]


def _compatibility_groups(rng: random.Random, s: dict) -> None:
    """DRADeviceCompatibilityGroups on top of a scenario, from an rng of its own: devices that
    draw from a counter set name compatibility groups (some none), the gate mostly on (the
    experimental variant enforces them; without it such slices make their pool incomplete)."""
    if rng.random() < 0.6:
        return
    if rng.random() < 0.8:
        s["features"]["CompatibilityGroups"] = True
    for slice_ in s["resourceSlices"]:
        for device in slice_["spec"].get("devices", []):
            for consumption in device.get("consumesCounters", []):
                if rng.random() < 0.75:
                    consumption["compatibilityGroups"] = rng.sample(["g1", "g2", "g3"], rng.randint(1, 2))
    if rng.random() < 0.5:  # a pool of partitions in groups, and a claim for several of them
        _grouped_pool(rng, s)


def _grouped_pool(rng: random.Random, s: dict) -> None:
    node, pool = s["node"]["metadata"]["name"], "grouped-pool"
    devices = [{"name": f"part-{i}", "consumesCounters": [dict(
        {"counterSet": "memory", "counters": {"slices": {"value": "1"}}},
        **({"compatibilityGroups": groups} if groups else {}))]}
        for i, groups in enumerate(rng.choice([[["a"], ["a", "b"], ["b"], None], [["a"], ["b"], ["a"]],
                                               [None, None, ["a"]], [["a", "b"], ["b", "c"], ["c"], ["a", "c"]]]))]
    spec = {"nodeName": node, "driver": GPU, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2}}
    s["resourceSlices"] += [
        _obj("ResourceSlice", "grouped-counters", dict(spec, sharedCounters=[
            {"name": "memory", "counters": {"slices": {"value": str(rng.randint(2, 4))}}}])),
        _obj("ResourceSlice", "grouped-devices", dict(spec, devices=devices))]
    if rng.random() < 0.3:
        s["allocatedDevices"].append({"driver": GPU, "pool": pool, "device": rng.choice(devices)["name"]})
    grouped = _obj("ResourceClaim", "grouped", {"devices": {"requests": [{"name": "r0", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": rng.choice([2, 2, 3]),
        "selectors": [{"cel": {"expression": "device.attributes.size() == 0"}}]}}]}}, namespace="default")
    s["claims"] = ([] if rng.random() < 0.6 else s["claims"]) + [grouped]  # mostly alone: its outcome is the groups'



def _node_operations(rng: random.Random, s: dict) -> None:
    """DRAOptionalNodeOperations on top of a scenario, from an rng of its own: slices that skip
    node operations, the gate (the experimental variant's), a node that declares the feature;
    sometimes only another experimental feature, which runs the experimental variant with this
    one off."""
    if rng.random() < 0.6:
        return
    for slice_ in s["resourceSlices"]:
        if rng.random() < 0.5:
            slice_["spec"]["skipNodeOperations"] = rng.choice(
                [["NodePrepareResources", "NodeUnprepareResources"], ["NodeUnprepareResources"], ["*"]])
    roll = rng.random()
    if roll < 0.6:
        s["features"]["OptionalNodeOperations"] = True
    elif roll < 0.8:
        s["features"]["ListTypeAttributes"] = True
    if rng.random() < 0.7:
        s["node"]["status"] = {"declaredFeatures": rng.choice([["DRAOptionalNodeOperations"], ["Other"]])}


_LIST_SELECTORS = [  # the scheduler's environment declares attributes dyn with the feature: lists iterate
    f"device.attributes['{GPU}'].numa.exists(n, n == 1)",
    f"has(device.attributes['{GPU}'].links) && 'nvl1' in device.attributes['{GPU}'].links",
    f"has(device.attributes['{GPU}'].links) && size(device.attributes['{GPU}'].links) >= 2",
    f"has(device.attributes['{GPU}'].numa) && device.attributes['{GPU}'].numa == [0, 1]",
]


def _numa(rng: random.Random) -> dict:
    """A NUMA attribute: mostly a list of nodes, some empty, some a scalar, now and then of
    another type (sets of different types share nothing)."""
    roll = rng.random()
    if roll < 0.6:
        return {"ints": sorted(rng.sample(range(4), rng.choice([1, 1, 2, 3])))}
    if roll < 0.7:
        return {"ints": []}
    if roll < 0.9:
        return {"int": rng.randint(0, 3)}
    return rng.choice([{"strings": ["0"]}, {"bools": [True]}, {"versions": ["1.0.0", "1.2.0"]}])


def _list_attributes(rng: random.Random, s: dict) -> None:
    """DRAListTypeAttributes on top of a scenario, from an rng of its own: list-typed device
    attributes (NUMA nodes, links), matchAttribute and distinctAttribute over them (sets with
    the feature, the experimental variant; unknown types without it), and, with the feature,
    selectors that iterate them."""
    if rng.random() < 0.4:
        return
    on = rng.random() < 0.6
    if on:
        s["features"]["ListTypeAttributes"] = True
    for slice_ in s["resourceSlices"]:
        for device in slice_["spec"].get("devices", []) if slice_["spec"]["driver"] == GPU else []:
            if rng.random() < 0.8:
                device["attributes"]["numa"] = _numa(rng)
            if rng.random() < 0.5:
                device["attributes"]["links"] = {"strings": rng.sample(["nvl0", "nvl1", "nvl2"], rng.randint(1, 3))}
    for claim in s["claims"]:
        devices = claim["spec"]["devices"]
        if rng.random() < 0.5:  # distinctAttribute where the variant knows it (not the stable one)
            newer = on or s["features"].get("ConsumableCapacity") or s["features"].get("DeviceBindingAndStatus")
            kind = "distinctAttribute" if newer and rng.random() < 0.4 else "matchAttribute"
            devices.setdefault("constraints", []).append({kind: rng.choice([f"{GPU}/numa", f"{GPU}/links", "numa"])})
        for request in devices["requests"] if on else []:
            for body in request.get("firstAvailable") or [request.get("exactly", {})]:
                if rng.random() < 0.3:
                    body.setdefault("selectors", []).append({"cel": {"expression": rng.choice(_LIST_SELECTORS)}})


def _twice_published(rng: random.Random, s: dict) -> None:
    """An attribute a GPU publishes bare and as '<driver>/slot' (the API accepts both), in
    either order and with values that may differ, and matchAttribute constraints over it,
    from an rng of its own. Constraints read the qualified one (lookupAttribute); no selector
    reads `slot` (upstream's CEL binding would take either, in Go map order)."""
    if rng.random() < 0.8:
        return
    for slice_ in s["resourceSlices"]:
        for device in slice_["spec"].get("devices", []) if slice_["spec"]["driver"] == GPU else []:
            forms = rng.sample(["slot", f"{GPU}/slot"], rng.choice([0, 1, 2, 2]))
            for form in forms:
                device.setdefault("attributes", {})[form] = {"int": rng.randint(0, 1)}
    for claim in s["claims"]:
        if rng.random() < 0.6:
            claim["spec"]["devices"].setdefault("constraints", []).append({"matchAttribute": f"{GPU}/slot"})


_MEMORY_POLICIES = [
    {"default": "8Gi"},
    {"default": "8Gi", "validRange": {"min": "4Gi", "step": "4Gi"}},
    {"default": "4Gi", "validRange": {"min": "2Gi", "max": "32Gi", "step": "2Gi"}},
    {"default": "10Gi", "validRange": {"min": "10Gi"}},
    {"default": "16Gi", "validValues": ["8Gi", "16Gi", "32Gi"]},
]
_CORE_POLICIES = [  # fractional steps: milli-value arithmetic with DRAFractionalCapacityRange, whole units without
    {"default": "1", "validRange": {"min": "0.5", "step": "0.25"}},
    {"default": "2", "validRange": {"min": "1", "max": "4", "step": "1"}},
    {"default": "0.5", "validValues": ["0.5", "1", "2"]},
]
_ASKED = [{"memory": "4Gi"}, {"memory": "10Gi"}, {"memory": "12.5Gi"}, {"memory": "20Gi"}, {"memory": "33Gi"},
          {"memory": "100Gi"}, {"cores": "1.3"}, {"cores": "2"}, {"memory": "6Gi", "cores": "0.75"},
          {f"{GPU}/memory": "8Gi"}, {"bandwidth": "1"}]


def _consumable(rng: random.Random, s: dict) -> None:
    """DRAConsumableCapacity (KEP-5075) on top of a scenario, from an rng of its own (the rest
    of the scenario is what the seed made before): GPUs shared by several allocations
    (allowMultipleAllocations), capacities with request policies, requests that ask for
    capacity, shares that allocated claims hold already; sometimes DRAFractionalCapacityRange."""
    if rng.random() < 0.4:
        return
    shared = []
    for slice_ in s["resourceSlices"]:
        if slice_["spec"]["driver"] != GPU:
            continue
        for device in slice_["spec"].get("devices", []):
            capacity = device.setdefault("capacity", {})
            if "memory" in capacity and rng.random() < 0.5:
                capacity["memory"]["requestPolicy"] = rng.choice(_MEMORY_POLICIES)
            if rng.random() < 0.3:
                capacity["cores"] = {"value": rng.choice(["4", "8"])}
                if rng.random() < 0.7:
                    capacity["cores"]["requestPolicy"] = rng.choice(_CORE_POLICIES)
            if rng.random() < 0.5:
                device["allowMultipleAllocations"] = True
                if rng.random() < 0.3:
                    consumed = {name: rng.choice(["8Gi", "16Gi"]) if name == "memory" else "1" for name in capacity}
                    shared.append({"driver": GPU, "pool": slice_["spec"]["pool"]["name"], "device": device["name"],
                                   "shareID": f"00000000-0000-0000-0000-{len(shared):012}",
                                   "consumedCapacity": consumed if rng.random() < 0.8 else None})
    if s["features"].get("ConsumableCapacity"):
        s["allocatedShared"] = shared
    else:
        s["allocatedDevices"] += _whole_devices(shared)
    for claim in s["claims"]:
        for request in claim["spec"]["devices"]["requests"]:
            for body in request.get("firstAvailable") or [request.get("exactly", {})]:
                if rng.random() < 0.4:
                    body["capacity"] = {"requests": dict(rng.choice(_ASKED))}
    if s["features"].get("ConsumableCapacity") and rng.random() < 0.5:
        s["features"]["FractionalCapacityRange"] = True


@dataclass
class Outcome:
    kind: str  # allocated, unschedulable, error
    devices: list | None = None  # per claim: its AllocationResult as JSON (see _normalized)
    error: str = ""


def pool_keys(s: dict) -> list[tuple]:
    return sorted({(x["spec"]["driver"], x["spec"]["pool"]["name"]) for x in s["resourceSlices"]})


def draguard_outcome(s: dict, order: tuple | None = None) -> Outcome:
    """draguard's outcome, visiting pools in `order` (default: draguard's own sorted order)."""
    manifests = lambda key: [Manifest(_SOURCE, i, o) for i, o in enumerate(s[key])]  # noqa: E731
    rank = {key: i for i, key in enumerate(order or ())}
    allocator = Allocator([slice_from(m) for m in manifests("resourceSlices")],
                          {m.name: device_class_from(m) for m in manifests("deviceClasses")},
                          {(d["driver"], d["pool"], d["device"]) for d in s["allocatedDevices"]},
                          features=allocator_features(s["features"]),
                          pool_order=(lambda keys: sorted(keys, key=rank.get)) if order else sorted,
                          shared=shared_use(s))
    node = Node(s["node"]["metadata"]["name"], s["node"]["metadata"].get("labels", {}),
                declared_features=frozenset(s["node"].get("status", {}).get("declaredFeatures", ())))
    try:
        results = allocator.allocate([claim_from(m) for m in manifests("claims")], node)
    except AllocationError as exc:
        return Outcome("error", error=str(exc))
    if results is None:
        return Outcome("unschedulable")
    return Outcome("allocated", [_normalized(x.as_json()) for x in results])


def shared_use(s: dict) -> SharedUse:
    """The shares a scenario's allocated claims hold (the oracle's allocatedShared)."""
    shared = SharedUse()
    for d in s.get("allocatedShared", ()):
        consumed = d.get("consumedCapacity")
        shared.add((d["driver"], d["pool"], d["device"]),
                   None if consumed is None else {k: parse_quantity_text(v) for k, v in consumed.items()})
    return shared


def allocator_features(features: dict) -> Features:
    """draguard's allocator features from upstream's structured.Features field names, with the
    variant upstream picks for them."""
    return variant_of(name for name, on in features.items() if on).features()


def upstream_outcome(line: dict) -> Outcome:
    if line["outcome"] != "allocated":
        return Outcome(line["outcome"], error=line.get("error", ""))
    return Outcome("allocated", [_normalized(x) for x in line["results"]])


def _normalized(value):
    """An AllocationResult as JSON without the empty fields Go's omitempty leaves out, so the
    whole result compares: devices with adminAccess and tolerations, config, node selector;
    a share's ID as that it has one (upstream's is random)."""
    if isinstance(value, dict):
        out = {k: _normalized(v) for k, v in value.items()}
        if "shareID" in out:
            out["shareID"] = "(a share)"
        return {k: v for k, v in out.items() if v not in (None, [], {}, "")}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


def possible_outcomes(s: dict, limit: int = 24) -> list[Outcome]:
    """draguard's outcome for each order in which upstream may visit the pools (Go map order is
    random): with one pool that is one outcome, with several every permutation (up to `limit`)."""
    keys = pool_keys(s)
    orders = list(itertools.islice(itertools.permutations(keys), limit)) if len(keys) > 1 else [tuple(keys)]
    return [draguard_outcome(s, order) for order in orders]


def oracle_binary() -> str | None:
    if shutil.which("go") is None:
        return None
    return built(HARNESS / "build.sh")


def run_oracle(binary: str, scenarios: list[dict]) -> list[dict]:
    """All scenarios through one oracle process (JSON lines in, JSON lines out)."""
    payload = "".join(json.dumps(s) + "\n" for s in scenarios)
    done = subprocess.run([binary], input=payload, capture_output=True, text=True, check=True,
                          env=dict(os.environ, GOGC="400"))
    return [json.loads(line) for line in done.stdout.splitlines()]


#: selectors that read a device's attribute domain as a map: a device that publishes none in
#: that domain (or no attributes at all) has an empty map there, not a runtime error
#: (issue: allocator and CEL fidelity)
_DOMAIN_SELECTORS = [
    f"'{GPU}' in device.attributes",
    f"!('{NIC}' in device.attributes)",
    "device.attributes[device.driver].size() == 0",
    "device.attributes[device.driver].size() >= 2",
    f"device.attributes['{NIC}'].size() == 0",
    "'model' in device.attributes[device.driver]",
    "device.capacity[device.driver].size() == 0",
]


def _fidelity_shapes(rng: random.Random, s: dict) -> None:
    """The shapes the allocator and CEL once got wrong, from an rng of their own (issue:
    allocator and CEL fidelity): devices with no attributes or capacity at all, and selectors
    that read a missing domain as a map; a device whose
    consumesCounters names a counter set its pool does not define (upstream then refuses the
    whole pool); and `device.allowMultipleAllocations` in a selector, which only the variants
    that know the field declare; requests as a user writes them, with `count: 0`, no count or
    no allocationMode, which the API server stores as ExactCount of 1 (upstream's
    SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest, which the oracle applies
    to the claims it is given)."""
    if rng.random() < 0.5:
        return
    gpu_devices = [d for slice_ in s["resourceSlices"] if slice_["spec"]["driver"] == GPU
                   for d in slice_["spec"].get("devices", [])]
    for device in gpu_devices:
        if rng.random() < 0.2:
            device.pop("attributes", None)
            if rng.random() < 0.5:
                device.pop("capacity", None)
    requests = [body for claim in s["claims"] for request in claim["spec"]["devices"]["requests"]
                for body in request.get("firstAvailable") or [request.get("exactly", {})]]
    for body in requests:
        roll = rng.random()
        if roll < 0.3:
            body.setdefault("selectors", []).append({"cel": {"expression": rng.choice(_DOMAIN_SELECTORS)}})
        elif roll < 0.37:
            body.setdefault("selectors", []).append({"cel": {"expression": rng.choice(
                ["device.allowMultipleAllocations", "!device.allowMultipleAllocations",
                 "has(device.allowMultipleAllocations)"])}})
    counted = [d for d in gpu_devices if d.get("consumesCounters")]
    if counted and rng.random() < 0.3:
        rng.choice(counted)["consumesCounters"][0]["counterSet"] = "undefined-set"
    for body in requests:  # as written, not as stored: the oracle defaults them as the API server does
        if body.get("allocationMode") == "ExactCount" and rng.random() < 0.25:
            shape = rng.choice(["zero", "no count", "no mode", "neither"])
            if shape == "zero":
                body["count"] = 0
            if shape in ("no count", "neither"):
                body.pop("count", None)
            if shape in ("no mode", "neither"):
                del body["allocationMode"]
