"""request-shape: every device request names a known class, a count, and pins a slice."""

from __future__ import annotations

import re

from ..catalog import GPU_DRIVERS, device_classes
from ..findings import Severity
from ..model.claims import CLAIM_KINDS, device_requests
from .base import Rule, register
from .examples import COMPLIANT_POD

#: A selector pins a GPU slice when it constrains the MIG profile or the device memory.
_PINS_SLICE = re.compile(r"\.profile\b|\[['\"]profile['\"]\]|\bmemory\b")


def set_device_classes(objects) -> dict[str, object]:
    return {m.name: m for m in objects if m.kind == "DeviceClass" and m.group == "resource.k8s.io"}


def _class_selector_text(ctx, name: str) -> str | None:
    """The CEL text of a known DeviceClass's own selectors (None for an unknown class)."""
    in_set = ctx.memo("device-classes", set_device_classes).get(name)
    if in_set is not None:
        spec = in_set.data.get("spec") if isinstance(in_set.data.get("spec"), dict) else {}
        selectors = spec.get("selectors") if isinstance(spec.get("selectors"), list) else []
        return " ".join(str((s.get("cel") or {}).get("expression", "")) for s in selectors if isinstance(s, dict))
    built_in = device_classes().get(name)
    return built_in["selector"] if built_in else None


def is_gpu_class(ctx, name) -> bool:
    """True when DeviceClass `name` (in the set or built in) selects a GPU driver's devices."""
    text = _class_selector_text(ctx, name) if name else None
    return text is not None and any(driver in text for driver in GPU_DRIVERS)


@register
class RequestDeviceClass(Rule):
    id = "request-device-class"
    name = "Request must name a known DeviceClass"
    category = "request-shape"
    severity = Severity.ERROR
    kinds = CLAIM_KINDS
    summary = "A request has no deviceClassName, or names a class neither in the set, the built-in catalog nor the config."
    rationale = """
        The device class is what ties a request to a driver and its admin-defined selectors;
        a request without one is rejected by the API server, and one naming a class that does
        not exist can never be allocated. In resource.k8s.io/v1beta1 the field sits on the
        request; in v1beta2 and v1 under `exactly` or on each `firstAvailable` subrequest.
        Classes created outside the linted set go under `external.deviceClasses`."""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/resource-claim-v1/"
    upstream_note = """
        Guideline documents written for v1beta1 put `deviceClassName` directly on the request;
        in resource.k8s.io/v1 that request is invalid: the field moved under `exactly`."""
    noncompliant = COMPLIANT_POD.replace("deviceClassName: mig.nvidia.com", "deviceClassName: mig.acme.com")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for request in device_requests(obj):
            if request.shape == "empty":
                yield ctx.finding(self, obj, f"request '{request.name}' sets neither exactly nor firstAvailable "
                                  f"({obj.api_version} needs one of them)", request.request, "name",
                                  fix="move deviceClassName, selectors and count under `exactly:`")
                continue
            name = request.device_class
            if name is None:
                yield ctx.finding(self, obj, f"request '{request.name}' names no deviceClassName",
                                  request.request if request.shape != "subrequest" else request.fields, "name")
            elif _class_selector_text(ctx, name) is None and not ctx.config.is_external("deviceClasses", name):
                yield ctx.finding(self, obj, f"request '{request.name}' names DeviceClass '{name}', which is neither "
                                  "in the linted set nor a class a known driver installs",
                                  request.fields, "deviceClassName", value=True)


@register
class RequestAllocationMode(Rule):
    id = "request-allocation-mode"
    name = "Allocation mode spelled out"
    category = "request-shape"
    severity = Severity.WARNING
    kinds = CLAIM_KINDS
    summary = "A request leaves allocationMode or count to defaults, or takes All devices in a tenant namespace."
    rationale = """
        `allocationMode` defaults to ExactCount and `count` to 1; spelling both out makes a
        reviewer see what a tenant gets. `allocationMode: All` takes every matching device
        of a node (and fails when any of them is in use), which starves other tenants: it is
        an error outside the namespaces listed as admin in `.draguard.yaml`."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("allocationMode: ExactCount", "allocationMode: All")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for request in device_requests(obj):
            if request.shape == "empty":
                continue
            mode = request.allocation_mode
            if mode is None:
                yield ctx.finding(self, obj, f"request '{request.name}' does not spell out allocationMode "
                                  "(defaults to ExactCount, count 1)", request.fields,
                                  "deviceClassName" if "deviceClassName" in request.fields else None,
                                  fix="add allocationMode: ExactCount and count")
            elif mode == "ExactCount" and "count" not in request.fields:
                yield ctx.finding(self, obj, f"request '{request.name}' uses ExactCount without count (defaults to 1)",
                                  request.fields, "allocationMode", fix="add count")
            elif mode == "All" and obj.namespace not in ctx.config.admin_namespaces:
                yield ctx.finding(self, obj, f"request '{request.name}' takes All matching devices of a node in a "
                                  "tenant namespace", request.fields, "allocationMode", value=True,
                                  severity=Severity.ERROR, fix="use ExactCount with a count")


@register
class RequestUnpinned(Rule):
    id = "request-unpinned"
    name = "GPU request does not pin a slice"
    category = "request-shape"
    severity = Severity.WARNING
    kinds = CLAIM_KINDS
    summary = "A GPU request has no selector on the MIG profile or the device memory (in the request or its class)."
    rationale = """
        Without a profile or memory selector a tenant gets whatever device the allocator
        finds first: a 1g.10gb slice today, a whole H200 tomorrow. Pin the slice the
        workload was sized for, e.g.
        `device.attributes['gpu.nvidia.com'].profile == '3g.40gb'` or
        `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0`.
        Only requests for GPU drivers' classes are checked."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#devicerequest"
    noncompliant = COMPLIANT_POD.replace("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                         "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for request in device_requests(obj):
            name = request.device_class
            if not is_gpu_class(ctx, name):
                continue
            texts = [expression for _, expression in request.cel_expressions()] + [_class_selector_text(ctx, name)]
            if not any(_PINS_SLICE.search(text) for text in texts):
                yield ctx.finding(self, obj, f"request '{request.name}' (class {name}) pins neither a MIG profile "
                                  "nor a memory size", request.fields, "deviceClassName",
                                  fix="add a CEL selector on the profile attribute or the memory capacity")
