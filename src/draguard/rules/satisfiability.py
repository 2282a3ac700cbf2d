"""satisfiability: can a request ever be allocated?"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache

from ..dra.allocator import Allocator
from ..dra.explain import explain_request, verdict, visible_devices
from ..dra.inventory import Inventory, generate, gpu_models
from ..dra.model import ModelError, claim_from
from ..findings import Severity
from ..load.loader import load_units
from ..load.sources import expand
from ..model.claims import CLAIM_KINDS, device_requests
from ..model.manifest import Manifest, Source
from .base import Rule, register
from .examples import COMPLIANT_POD


@lru_cache(maxsize=1)
def catalog_manifests() -> tuple:
    """One node per GPU model with the whole GPU and every MIG profile at every placement."""
    spec = {"nodes": [{"namePrefix": name.lower(), "count": 1, "gpus": {"model": name, "count": 1, "mig": "dynamic"}}
                      for name in gpu_models()]}
    source = Source("(built-in catalog)", "")
    return tuple(Manifest(source, i, obj) for i, obj in enumerate(generate(spec)))


@dataclass
class _Target:
    """What this run checks requests against, built once: the inventory (or catalog), its
    allocator, its devices, and explanations already computed per request shape."""

    inventory: Inventory
    is_catalog: bool
    allocator: Allocator
    devices: list
    explained: dict = field(default_factory=dict)

    def explain(self, request, name: str):
        key = (request.class_name, tuple(request.selectors), request.mode, request.count, request.admin_access,
               request.tolerations)
        if key not in self.explained:  # replicated manifests repeat the same requests
            self.explained[key] = explain_request(self.allocator, request, name, self.devices)
        return dataclasses.replace(self.explained[key], request=name)


def _target(ctx) -> _Target:
    def build(objects):
        set_classes = [m for m in objects if m.kind == "DeviceClass" and m.group == "resource.k8s.io"]
        paths = ctx.config.inventory
        manifests = list(load_units(expand(paths)).manifests) if paths else list(catalog_manifests())
        inventory = Inventory.from_manifests(manifests + set_classes)
        allocator = Allocator(inventory.slices, inventory.classes, inventory.allocated)
        return _Target(inventory, not paths, allocator, list(visible_devices(allocator, inventory.nodes).values()))
    return ctx.memo("satisfiability-target", build)


def _hint(class_name: str, expression: str) -> str:
    if class_name == "gpu.nvidia.com" and "profile" in expression:
        return " (class gpu.nvidia.com selects only full GPUs; MIG slices are in class mig.nvidia.com)"
    if class_name == "mig.nvidia.com" and "memory" in expression:
        return " (a MIG slice's memory is that of its profile, e.g. 3g.40gb has 40Gi)"
    return ""


@register
class RequestUnsatisfiable(Rule):
    id = "request-unsatisfiable"
    name = "Request can never be satisfied"
    category = "satisfiability"
    severity = Severity.ERROR
    kinds = CLAIM_KINDS
    summary = "No device of the inventory (or of the built-in GPU catalog) passes the request's class and selectors."
    rationale = """
        A claim that no device can satisfy leaves its pod Pending forever with the
        scheduler's bare "cannot allocate all claims". draguard runs the request through
        the allocator against `--inventory` (ResourceSlices, Nodes and allocated claims, e.g.
        from `draguard inventory generate`) or, by default, against a built-in catalog of
        every GPU model it knows (A100, A30, H100, H200, B200, whole GPUs and every MIG
        profile, as the NVIDIA driver publishes them), and names the class or selector
        that excluded every device. Against the catalog only the selection counts (not the
        count or availability); against an inventory the whole claim must fit on one node."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("deviceClassName: mig.nvidia.com", "deviceClassName: gpu.nvidia.com")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        target = _target(ctx)
        try:
            claim = claim_from(obj)
        except ModelError:
            return
        sites = {r.name: r for r in device_requests(obj)}
        if target.is_catalog:
            yield from self._against_catalog(obj, ctx, claim, target, sites)
            return
        result = verdict(target.allocator, claim, target.inventory.nodes)
        if result.satisfiable:
            return
        reason = result.error or "; ".join(r.text() for r in result.requests)
        first = next((r for r in result.requests if r.emptied_at is not None), None)
        yield self._finding(obj, ctx, sites, first, f"claim cannot be allocated on the inventory: {reason}")

    def _against_catalog(self, obj, ctx, claim, target, sites):
        """Only selection counts here. A class that keeps no catalog device is for hardware
        the catalog does not model (NICs, other vendors): nothing can be said about it."""
        for request in claim.requests:
            options = request.subrequests if request.subrequests is not None else [request]
            names = [f"{request.name}/{o.name}" if request.subrequests is not None else request.name for o in options]
            explained = [target.explain(option, name) for option, name in zip(options, names)]
            if all(_excluded_by_request_selector(e) for e in explained):
                for option, e in zip(options, explained):
                    hint = _hint(option.class_name or "", option.selectors[e.emptied_at.selector])
                    yield self._finding(obj, ctx, sites, e, f"no GPU in the catalog can satisfy it: {e.text()}{hint}")

    def _finding(self, obj, ctx, sites, explanation, message):
        site = sites.get(explanation.request) if explanation else None
        if site is None:
            return ctx.finding(self, obj, message)
        stage = explanation.emptied_at
        if stage is not None and stage.selector is not None:
            cel_maps = site.cel_expressions()
            if stage.selector < len(cel_maps):
                return ctx.finding(self, obj, message, cel_maps[stage.selector][0], "expression", value=True)
        return ctx.finding(self, obj, message, site.fields, "deviceClassName" if "deviceClassName" in site.fields
                           else None, value="deviceClassName" in site.fields)



def _excluded_by_request_selector(explanation) -> bool:
    """The class keeps catalog devices, and one of the request's own selectors drops them all."""
    stage = explanation.emptied_at
    return stage is not None and stage.selector is not None
