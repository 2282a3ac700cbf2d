"""request-shape: every device request names a known class, a count, and pins a slice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import re

from ..cel.summary import all_compile, summarize
from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, remove, remove_items, set_value
from ..model.claims import CLAIM_TARGETS, device_requests, requests_of
from ..facts.shipped import slice_pins
from ..dra.gpuclasses import class_drivers, is_gpu_class
from ..model.classes import class_selectors, is_known_class
from ..model.manifest import edit_path
from .base import Admission, Needs, Profile, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.claims import DeviceRequest
    from ..model.manifest import Manifest
    from ..model.values import Yaml
    from .context import Context

#: Without a driver of its own (a class that does not name one), a selector pins a slice when
#: it constrains a profile or the memory.
_DEFAULT_PINS = ("profile", "memory")


def _pins(expression: str, names: set[str]) -> bool:
    """Whether the selector reads one of the attribute or capacity `names` (cel.reads);
    one that does not compile (cel-invalid's) or reads the device in a way that names none
    may: it is not blamed."""
    compiled = summarize(expression)
    references = compiled.references
    return compiled.error is not None or references.everything or \
        any(name in names for _, _, name in references.items)


#: ExactDeviceRequest fields: on a v1beta2/v1 request they belong under `exactly`.
_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                 "capacity")


def _move_under_exactly(request: DeviceRequest) -> Fix | None:
    """A v1beta2/v1 request written in the v1beta1 shape: the same fields, under `exactly`."""
    moved = {key: request.request[key] for key in _EXACT_FIELDS if key in request.request}
    if not moved or "exactly" in request.request or "firstAvailable" in request.request:
        return None
    edits = [remove(edit_path(request.request, key)) for key in moved]
    edits.append(set_value(edit_path(request.request, "exactly"), moved))
    return Fix("move the request's fields under exactly", Applicability.SAFE, tuple(edits))


@register
class RequestDeviceClass(Rule):
    id = "request-device-class"
    name = "Request must name a known DeviceClass"
    category = "request-shape"
    severity = Severity.ERROR
    targets = CLAIM_TARGETS
    needs = Needs.OBJECT_SET
    fixable = FixAvailability.SOMETIMES
    summary = "A request has no deviceClassName, or names a class neither in the set, the built-in classes nor the config."
    admission_warns = ("a request the API server refuses never reaches the webhook, and a DeviceClass may come right "
                       "after the claim or template naming it (`kubectl apply -f DIR` goes file by file); the claim "
                       "waits for it, and denying would fail that apply")
    rationale = """
        The device class is what ties a request to a driver and its admin-defined selectors;
        a request without one is rejected by the API server, and one naming a class that does
        not exist can never be allocated. In resource.k8s.io/v1beta1 the field sits on the
        request; in v1beta2 and v1 under `exactly` or on each `firstAvailable` subrequest
        (a request may not set both). Classes created outside the linted set go under
        `external.deviceClasses`."""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/resource-claim-v1/"
    upstream_note = """
        Guideline documents written for v1beta1 put `deviceClassName` directly on the request;
        in resource.k8s.io/v1 that request is invalid: the field moved under `exactly`."""
    noncompliant = COMPLIANT_POD.replace("deviceClassName: mig.nvidia.com", "deviceClassName: mig.acme.com")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for top in requests_of(obj):
            if top.has_both_shapes:
                yield ctx.finding(self, obj, f"request '{top.name}' sets both exactly and firstAvailable; the API "
                                  "server rejects it (the allocator would read firstAvailable)", top.request, "exactly")
        for request in device_requests(obj):
            if request.shape == "empty":
                yield ctx.finding(self, obj, f"request '{request.name}' sets neither exactly nor firstAvailable "
                                  f"({obj.api_version} needs one of them)", request.request, "name",
                                  help="move deviceClassName, selectors and count under `exactly:`",
                                  fix=_move_under_exactly(request))
                continue
            name = request.class_name
            if name is None:
                yield ctx.finding(self, obj, f"request '{request.full_name}' names no deviceClassName",
                                  request.request if request.shape != "subrequest" else request.fields, "name")
            elif not is_known_class(ctx.objects, name) and not ctx.config.is_external("deviceClasses", name):
                yield ctx.finding(self, obj, f"request '{request.full_name}' names DeviceClass '{name}', which is "
                                  "neither in the linted set nor a class a known driver installs",
                                  request.fields, "deviceClassName", value=True)


@register
class RequestAllocationMode(Rule):
    id = "request-allocation-mode"
    name = "Allocation mode spelled out"
    category = "request-shape"
    severity = Severity.WARNING
    profile = Profile.STRICT
    profile_reason = """
        upstream defaults an unset allocationMode to ExactCount with count 1, so the request
        means the same either way; spelling it out is what guideline documents ask, a matter
        of style the API server does not need"""
    authored_only = True
    targets = CLAIM_TARGETS
    fixable = FixAvailability.ALWAYS
    summary = "A request leaves allocationMode or count to their defaults."
    rationale = """
        `allocationMode` defaults to ExactCount and `count` to 1; spelling both out makes a
        reviewer see what a tenant gets. The fix writes the defaults (safe: the API server
        applies the same values)."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = re.sub(r"\n *allocationMode: ExactCount", "", COMPLIANT_POD)
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for request in device_requests(obj):
            if request.shape == "empty":
                continue
            mode = request.fields.get("allocationMode")
            if mode is None:
                edits = [set_value(edit_path(request.fields, "allocationMode"), "ExactCount")]
                if "count" not in request.fields:
                    edits.append(set_value(edit_path(request.fields, "count"), 1))
                yield ctx.finding(self, obj, f"request '{request.full_name}' does not spell out allocationMode "
                                  "(defaults to ExactCount, count 1)", request.fields,
                                  "deviceClassName" if "deviceClassName" in request.fields else None,
                                  help="add allocationMode: ExactCount and count",
                                  fix=Fix("spell out allocationMode: ExactCount", Applicability.SAFE, tuple(edits)))
            elif mode == "ExactCount" and "count" not in request.fields:
                yield ctx.finding(self, obj, f"request '{request.full_name}' uses ExactCount without count "
                                  "(defaults to 1)", request.fields, "allocationMode", help="add count",
                                  fix=Fix("spell out count: 1", Applicability.SAFE,
                                          (set_value(edit_path(request.fields, "count"), 1),)))


@register
class RequestAllDevices(Rule):
    id = "request-all-devices"
    name = "All devices of a node taken by a tenant"
    category = "request-shape"
    severity = Severity.ERROR
    targets = CLAIM_TARGETS
    admission = Admission(
        "(has(object.metadata.namespace) && object.metadata.namespace in variables.adminNamespaces) || "
        "!has(r.allocationMode) || r.allocationMode != 'All' || (has(r.adminAccess) && r.adminAccess == true)",
        "a request in a tenant namespace takes All matching devices of a node", over="requests")
    summary = "A request in a tenant namespace takes All matching devices of a node."
    rationale = """
        `allocationMode: All` takes every matching device of the node the pod lands on, and
        fails when any of them is in use: one tenant's pod starves every other tenant on the
        node, and its allocation depends on what happens to be free. It belongs to admin and
        node-level workloads: the namespaces listed under `adminNamespaces` in
        `.draguard.yaml` are not checked. Admin-access requests consume no device and are
        not checked either."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#devicerequest"
    noncompliant = COMPLIANT_POD.replace("allocationMode: ExactCount\n              count: 1", "allocationMode: All")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if obj.namespace in ctx.config.admin_namespaces:
            return
        for request in device_requests(obj):
            if request.mode == "All" and request.admin_access is not True and request.shape != "empty":
                yield ctx.finding(self, obj, f"request '{request.full_name}' takes All matching devices of a node "
                                  "in a tenant namespace", request.fields, "allocationMode", value=True,
                                  help="use ExactCount with a count, or move the workload to an admin namespace")


def _blanket(toleration: Yaml) -> bool:
    """A device toleration of every taint: operator Exists with no key (DeviceToleration, as a
    pod's toleration: an empty key with Exists matches all keys, values and effects)."""
    return isinstance(toleration, dict) and toleration.get("operator") == "Exists" and not toleration.get("key")


@register
class RequestToleratesEveryTaint(Rule):
    id = "request-tolerates-every-taint"
    name = "A tenant's request tolerates every device taint"
    category = "request-shape"
    severity = Severity.ERROR
    targets = CLAIM_TARGETS
    fixable = FixAvailability.ALWAYS
    admission = Admission(
        "(has(object.metadata.namespace) && object.metadata.namespace in variables.adminNamespaces) || "
        "!has(r.tolerations) || !r.tolerations.exists(t, type(t) == map && has(t.operator) && t.operator == 'Exists' "
        "&& (!has(t.key) || t.key == ''))",
        "a request in a tenant namespace tolerates every device taint", over="requests")
    summary = "A request in a tenant namespace tolerates every device taint (operator Exists, no key)."
    rationale = """
        Administrators taint devices (DeviceTaintRules, or the driver's own taints) to take
        them out of service: a failing GPU, one being drained for maintenance, a MIG
        reconfiguration. A request that tolerates every taint is allocated those devices,
        and a `NoExecute` taint no longer evicts its pods. Tolerate the one taint the
        workload was built to run under, by key, or run it in an admin namespace
        (`adminNamespaces` in `.draguard.yaml` are not checked)."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#device-taints-and-tolerations"
    noncompliant = COMPLIANT_POD.replace("count: 1\n", "count: 1\n              tolerations: [{operator: Exists}]\n", 1)
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if obj.namespace in ctx.config.admin_namespaces:
            return
        for request in device_requests(obj):
            tolerations = request.fields.get("tolerations")
            tolerations = tolerations if isinstance(tolerations, list) else []
            blanket = [i for i, toleration in enumerate(tolerations) if _blanket(toleration)]
            if blanket:
                fix = Fix("remove the tolerations of every taint", Applicability.UNSAFE,
                          tuple(remove_items(edit_path(tolerations), blanket, len(tolerations))))
                yield ctx.finding(self, obj, f"request '{request.full_name}' tolerates every device taint in a "
                                  "tenant namespace: it is allocated devices taken out of service",
                                  tolerations[blanket[0]], "operator", fix=fix,
                                  help="tolerate the taint it needs by key, or move it to an admin namespace")


@register
class RequestUnpinned(Rule):
    id = "request-unpinned"
    name = "GPU request does not pin a slice"
    category = "request-shape"
    severity = Severity.WARNING
    profile = Profile.STRICT
    profile_reason = """
        a request the DeviceClass already narrows (a whole-GPU class, a class of one model) is
        satisfied as intended without a selector of its own; pinning memory or a MIG profile
        in each request is a house rule for mixed fleets, not a fault"""
    targets = CLAIM_TARGETS
    needs = Needs.OBJECT_SET  # the request's DeviceClass may pin the slice
    summary = ("A GPU request selects no slice in its driver's terms (NVIDIA MIG profile or memory, AMD partitionProfile, "
               "Intel memory or millicores), in the request or its class.")
    rationale = """
        Without a profile or memory selector a tenant gets whatever device the allocator
        finds first: a 1g.10gb slice today, a whole H200 tomorrow. Pin the slice the
        workload was sized for, e.g.
        `device.attributes['gpu.nvidia.com'].profile == '3g.40gb'` or
        `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0`. Each
        driver pins its own way: NVIDIA by MIG profile or memory, AMD by partitionProfile or
        memory, Intel by memory or millicores. Requests for classes of accelerators that are
        not partitioned (Gaudi) and admin-access requests are not checked."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#devicerequest"
    noncompliant = COMPLIANT_POD.replace("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                         "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for request in device_requests(obj):
            name = request.class_name
            if not is_gpu_class(ctx.objects, name) or not all_compile(request.selectors) or request.admin_access:
                continue  # cel-invalid reports selectors that do not compile; admin access takes no device
            selectors = class_selectors(ctx.objects, name) or []  # a GPU class has its selectors
            drivers = class_drivers(selectors)
            known = [slice_pins()[d] for d in sorted(drivers) if d in slice_pins()]
            if drivers and not known:
                continue  # accelerators without partitions: a whole device is the only slice
            pins = {p for entry in known for p in entry["pins"]} or set(_DEFAULT_PINS)
            if pins & {str(name).rsplit("/", 1)[-1] for name in request.capacity_requests}:
                continue  # capacity.requests takes that much of a device (consumable capacity, KEP-5075)
            if not any(_pins(text, pins) for text in list(request.selectors) + selectors):
                slices = "; ".join(entry["slices"] for entry in known) or "a profile or a memory size"
                yield ctx.finding(self, obj, f"request '{request.full_name}' (class {name}) pins no slice: it names "
                                  f"none of {', '.join(sorted(pins))}", request.fields, "deviceClassName",
                                  help=f"add a CEL selector for the slice the workload was sized for ({slices})")
