"""Builders for allocator scenarios: short Python calls that produce resource.k8s.io/v1 objects,
parsed by draguard's own model (so the model's defaults apply, as they would to a manifest)."""

from __future__ import annotations

from draguard.dra.allocator import DEFAULT_SEARCH_BUDGET, Allocator, Features
from draguard.dra.devices import Node, claim_from, device_class_from, slice_from
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source

DRIVER = "gpu.example.com"
_SOURCE = Source("(test)", "")


def manifest(kind: str, name: str, spec: dict, namespace: str = "default") -> Manifest:
    return Manifest(_SOURCE, 0, {"apiVersion": "resource.k8s.io/v1", "kind": kind,
                                 "metadata": {"name": name, "namespace": namespace}, "spec": spec})


def dev(name: str, attrs: dict | None = None, capacity: dict | None = None, **extra) -> dict:
    """A device; attribute values are typed by their Python type (str/int/bool; 'v:1.2.3' is a version)."""
    def typed(v):
        if isinstance(v, bool):
            return {"bool": v}
        if isinstance(v, int):
            return {"int": v}
        if isinstance(v, str) and v.startswith("v:"):
            return {"version": v[2:]}
        return {"string": v}
    out = {"name": name, "attributes": {k: typed(v) for k, v in (attrs or {}).items()},
           "capacity": {k: {"value": str(v)} for k, v in (capacity or {}).items()}}
    out.update(extra)
    return out


def slice_(name: str, devices: list, node: str | None = "node-1", pool: str | None = None, generation: int = 1,
           count: int = 1, driver: str = DRIVER, **spec):
    body = {"driver": driver, "pool": {"name": pool or node or name, "generation": generation,
                                       "resourceSliceCount": count}, "devices": devices}
    if node:
        body["nodeName"] = node
    body.update(spec)
    return slice_from(manifest("ResourceSlice", name, body))


def device_class(name: str = "gpu", *selectors: str, config: list | None = None):
    selectors = selectors or (f"device.driver == '{DRIVER}'",)
    spec = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if config:
        spec["config"] = config
    return device_class_from(manifest("DeviceClass", name, spec))


def req(name: str = "req", count: int = 1, device_class: str = "gpu", selectors=(), mode: str = "ExactCount",
        admin: bool | None = None, tolerations: list | None = None) -> dict:
    exactly = {"deviceClassName": device_class, "allocationMode": mode,
               "selectors": [{"cel": {"expression": e}} for e in selectors]}
    if mode == "ExactCount":
        exactly["count"] = count
    if admin is not None:
        exactly["adminAccess"] = admin
    if tolerations:
        exactly["tolerations"] = tolerations
    return {"name": name, "exactly": exactly}


def first(name: str, *subrequests: dict) -> dict:
    return {"name": name, "firstAvailable": [dict(s["exactly"], name=s["name"]) for s in subrequests]}


def claim(name: str, *requests: dict, constraints: list | None = None, config: list | None = None):
    devices = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return claim_from(manifest("ResourceClaim", name, {"devices": devices}))


def allocator(slices, classes=None, allocated=(), features=Features(), budget=DEFAULT_SEARCH_BUDGET) -> Allocator:
    classes = classes if classes is not None else [device_class()]
    return Allocator(list(slices), {c.name: c for c in classes}, allocated, features, budget=budget)


def node(name: str = "node-1", **labels) -> Node:
    return Node(name, dict(labels))


def devices_of(results) -> list[list[str]]:
    """[[request=pool/device, ...] per claim] of an allocation."""
    return [[f"{r.request}={r.pool}/{r.device}" for r in result.results] for result in results]
