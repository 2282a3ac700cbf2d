"""How far an UPDATE may carry an error its object already had.

Kubernetes ratchets its own validation (KEP-4008): an update may keep an invalid field it did
not touch. draguard's admission does the same for the catalog's errors, so a legacy workload
that ran before the webhook keeps its controllers' updates, its labels and its image bumps.
But a ratchet only holds a violation where it is, or lets it shrink: an update that keeps an
error and grows what it concerns is denied, whatever else it changes. What grows:

- `pods`: the pods a workload runs (its replicas, parallelism, group size: model.workloads);
- `device-plugin GPUs`: the accelerator units its containers ask the device plugin for
  (limits or requests, the larger; model.gpu.LEGACY_RESOURCE), summed over its pod specs;
- `containers on shared claims`: containers that name a pod claim entry with a
  `resourceClaimName` (one claim every pod shares), times its pods: more tenants on one claim;
- `request '<name>' devices`: the devices a claim's or template's request asks for
  (`allocationMode: All` counts as every device; a `firstAvailable` request, its largest
  alternative);
- `selectors`: a request that loses a selector it had, or changes its DeviceClass, selects
  wider (or other) devices than before.

Each measure is compared only where both versions have it; a value that is not a count (a
templated string) is no measure."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..dra.quantity import QuantityError, parse_quantity
from ..model.claims import device_requests, requests_of
from ..model.gpu import legacy_resources
from ..model.manifest import Manifest
from ..model.pods import pod_sites
from ..model.workloads import replica_count


def growth(old: dict, new: dict) -> list[str]:
    """What the update from `old` to `new` grows, each said as 'pods 1 -> 50'; empty when
    nothing grew."""
    before, after = _measures(Manifest.from_data(old)), _measures(Manifest.from_data(new))
    grown = [f"{name} {_count(before[name])} -> {_count(value)}" for name, value in after.items()
             if name in before and value > before[name]]
    return grown + list(_wider_requests(Manifest.from_data(old), Manifest.from_data(new)))


def _count(value: float) -> str:
    return "all" if value == math.inf else str(int(value)) if value == int(value) else str(value)


def _measures(manifest: Manifest) -> dict[str, float]:
    measures: dict[str, float] = {}
    sites = pod_sites(manifest)
    pods = replica_count(manifest)
    if pods is not None:
        measures["pods"] = pods
    if sites:
        measures["device-plugin GPUs"] = sum(_legacy_units(c) for site in sites for c in site.containers)
        shared = sum(_shares(site) for site in sites)
        measures["containers on shared claims"] = shared * (pods if pods is not None else 1)
    for request in requests_of(manifest):  # of a firstAvailable request, the largest alternative
        measures[f"request '{request.name}' devices"] = max(map(_devices, request.leaves()))
    return measures


def _devices(request) -> float:
    return math.inf if request.mode == "All" else request.count


def _legacy_units(container) -> float:
    """The accelerator units a container asks the device plugin for (0 where a count is no
    quantity: that is schema-invalid's to say)."""
    units: dict[str, float] = {}
    for _, values, resource in legacy_resources(container.resources, container.gpu_aliases):
        try:
            amount = float(parse_quantity(values[resource]))
        except (QuantityError, TypeError, ValueError):
            continue
        units[resource] = max(units.get(resource, 0.0), amount)
    return sum(units.values())


def _shares(site) -> int:
    shared = {entry.get("name") for entry in site.claims if entry.get("resourceClaimName")}
    return sum(1 for c in site.containers if any(claim.get("name") in shared for claim in c.claims))


def _wider_requests(old: Manifest, new: Manifest) -> Iterator[str]:
    before = {r.full_name: r for r in device_requests(old)}
    for request in device_requests(new):
        was = before.get(request.full_name)
        if was is None:
            continue
        if was.class_name != request.class_name:
            yield f"request '{request.full_name}' DeviceClass {was.class_name} -> {request.class_name}"
        lost = [s for s in was.selectors if s not in request.selectors]
        if lost:
            yield f"request '{request.full_name}' selectors {len(was.selectors)} -> {len(request.selectors)} " \
                  f"(dropped: {'; '.join(lost)})"
