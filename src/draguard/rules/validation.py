"""schema: what the API server's validation rejects and the OpenAPI schema cannot express.

Mirrors kubernetes v1.37.2 pkg/apis/resource/validation/validation.go:
validateResourceSliceSpec and validateDevice (node access), validateDeviceRequest,
validateDeviceSubRequest and validateDeviceAllocationMode (names, counts),
validateDeviceConstraint and validateDeviceClaimConfiguration (request references),
validateDeviceDerivedAttribute (constraints that read derived attributes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

from ..core.finding import Finding, Severity
from ..dra import apivalidation
from ..facts.gates import gate_enabled
from ..model.claims import CLAIM_TARGETS, DEVICE_CLASS_TARGETS, RESOURCE_GROUP, claim_spec, device_requests, \
    requests_of
from ..model.pods import mapping, mappings
from ..model.values import Yaml, YamlMap
from .base import Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..dra.apivalidation import Problem
    from ..model.claims import DeviceRequest
    from ..model.manifest import Manifest
    from .context import Context

_SLICE_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
_DEVICE_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes")
#: the names a claim defines: its requests' (under None) and each request's subrequests'
Names = dict[str | None, set[str]]


def _name_problem(name: Yaml) -> str | None:
    if name is None or name == "":
        return "is required"
    if not isinstance(name, str):
        return "must be a string"
    if apivalidation.dns_label(name):  # request, subrequest and device names (corevalidation.ValidateDNS1123Label)
        return "must be a DNS label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric"
    return None


@register
class ApiValidation(Rule):
    id = "api-validation"
    name = "Rejected by the API server's validation"
    category = "schema"
    severity = Severity.ERROR
    lint_only = "the API server runs its own validation before admission and refuses the object"
    targets = CLAIM_TARGETS | DEVICE_CLASS_TARGETS | {(RESOURCE_GROUP, "ResourceSlice")}
    summary = ("A resource.k8s.io object the API server rejects for a rule its schema does not state: a ResourceSlice "
               "without exactly one node field, a request or device name that is not a DNS label, a count with allocationMode "
               "All, a constraint naming no request, a list past its limit, a malformed name, quantity, toleration or taint.")
    rationale = """
        The OpenAPI schema only knows field types, so `kubectl apply --dry-run=client` and
        schema validators accept these objects; the API server then refuses them. The
        checks mirror upstream's validation code: a ResourceSlice sets exactly one of
        `nodeName`, `nodeSelector`, `allNodes` and `perDeviceNodeSelection` (and a device
        sets its own node field only under `perDeviceNodeSelection`); device, request and
        subrequest names are unique DNS labels (a MIG profile's dot does not belong in one); `count` is not set with `allocationMode: All` and is
        positive with `ExactCount`; constraints and config name requests of the claim; with
        DRADerivedAttributes, a request derives each attribute once and a `matchAttribute` or
        `distinctAttribute` constraint over it (or over every request) reads each one. Field by
        field (dra.apivalidation): object names are DNS subdomains; allocationMode is All or
        ExactCount; lists stay within upstream's limits (32 requests, constraints, configs and
        selectors, 8 subrequests, 16 tolerations and taints, 128 devices a slice, 64 with
        taints, counters or list attributes, 32 attributes and capacities a device, 8 counter
        sets); class, driver, pool and node names, attribute and capacity names (`ID` or
        `domain/ID`), constraint attributes (`domain/ID`), taint and toleration keys and values,
        and node selectors are well formed; an attribute holds exactly one value (a string or
        version of at most 64 characters, versions semver 2.0.0); quantities parse; a capacity's
        requestPolicy sits on a device that allows multiple allocations and holds sorted,
        distinct validValues with their default, or a validRange whose default and max lie on
        its step's grid within the capacity; binding conditions come with failure conditions,
        at most 4 each, none in both; opaque
        configuration names a driver and holds a JSON object of at most 10 KiB; a DeviceClass's
        extendedResourceName is a domain-prefixed extended resource name; labels and annotation
        keys are well formed, and a ResourceClaimTemplate's spec.metadata holds only labels and
        annotations."""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/resource-claim-v1/"
    noncompliant = COMPLIANT_POD.replace("- name: gpu\n", "- name: GPU_0\n", 1)
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        yield from self._found(obj, ctx, apivalidation.metadata(mapping(obj.data.get("metadata"))))
        if obj.kind == "ResourceClaimTemplate":
            yield from self._found(obj, ctx, apivalidation.template_metadata(mapping(obj.spec.get("metadata"))))
        if obj.kind == "ResourceSlice":
            yield from self._slice(obj, ctx)
            devices = [(d, _fields_of(d)) for d in mappings(obj.spec.get("devices"))]
            problems = apivalidation.resource_slice(obj.spec, devices, gate_enabled(
                "DRAFractionalCapacityRange", ctx.kube_version, ctx.config.feature_gates))
        elif obj.kind == "DeviceClass":
            problems = apivalidation.device_class(obj.spec)
        else:
            yield from self._claim(obj, ctx)
            problems = apivalidation.claim(mapping(claim_spec(obj).get("devices")), requests_of(obj))
        yield from self._found(obj, ctx, problems)

    def _found(self, obj: Manifest, ctx: Context, problems: Iterable[Problem]) -> Iterator[Finding]:
        """dra.apivalidation's problems as this rule's findings."""
        for p in problems:
            yield ctx.finding(self, obj, p.message, p.holder, p.key, value=p.at_value)

    def _slice(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        spec = obj.spec
        set_fields = [f for f in _SLICE_NODE_FIELDS if spec.get(f) not in (None, "", False)]
        for field in ("nodeName", "allNodes", "perDeviceNodeSelection"):
            if field in spec and spec[field] in ("", False):
                yield ctx.finding(self, obj, f"{field} must be unset or {'true' if field != 'nodeName' else 'a name'}, "
                                  f"not {spec[field]!r}", spec, field, value=True)
        if len(set_fields) != 1:
            listed = ", ".join(set_fields) if set_fields else "none of them"
            yield ctx.finding(self, obj, "a ResourceSlice sets exactly one of nodeName, nodeSelector, allNodes and "
                              f"perDeviceNodeSelection; this one sets {listed}",
                              spec if set_fields else obj.data, set_fields[1] if len(set_fields) > 1 else
                              ("spec" if "spec" in obj.data else None))
        if "sharedCounters" in spec and "devices" in spec:
            yield ctx.finding(self, obj, "only one of sharedCounters or devices is allowed in one ResourceSlice",
                              spec, "devices")
        per_device = spec.get("perDeviceNodeSelection") is True
        seen: set[str] = set()
        for device in mappings(spec.get("devices")):
            yield from self._name(obj, ctx, device, seen, "device")
            body = _fields_of(device)
            chosen = [f for f in _DEVICE_NODE_FIELDS if f in body]
            if chosen and not per_device:
                yield ctx.finding(self, obj, f"device '{device.get('name')}' sets {chosen[0]}, which is only allowed "
                                  "when the slice sets perDeviceNodeSelection: true", body, chosen[0])
            elif per_device and len(chosen) != 1:
                yield ctx.finding(self, obj, f"device '{device.get('name')}' must set exactly one of nodeName, "
                                  f"nodeSelector and allNodes under perDeviceNodeSelection; it sets "
                                  f"{', '.join(chosen) or 'none'}", body if chosen else device,
                                  chosen[1] if chosen else "name")

    def _claim(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        devices = mapping(claim_spec(obj).get("devices"))
        names: Names = {}
        for top in requests_of(obj):
            yield from self._name(obj, ctx, top.request, names.setdefault(None, set()), "request")
            if top.subrequests is not None:
                subnames = names.setdefault(top.name, set())
                for sub in top.subrequests:
                    yield from self._name(obj, ctx, sub.fields, subnames, "subrequest")
        for request in device_requests(obj):
            yield from self._count(obj, ctx, request)
        for section in ("constraints", "config"):
            for entry in mappings(devices.get(section)):
                refs = entry.get("requests")
                for i, ref in enumerate(refs if isinstance(refs, list) else ()):
                    if not _resolves(ref, names):
                        yield ctx.finding(self, obj, f"{section} names request {ref!r}, which the claim does not have "
                                          "(a request, or request/subrequest)", refs, i)
        if gate_enabled("DRADerivedAttributes", ctx.kube_version, ctx.config.feature_gates):
            yield from self._derived(obj, ctx, _constraint_attributes(devices.get("constraints")))

    def _derived(self, obj: Manifest, ctx: Context, used: dict[str, set[str]]) -> Iterator[Finding]:
        """Derived attributes (with their gate; the API server drops them otherwise): unique
        names per request, each read by a constraint that targets the request (validateDeviceDerivedAttribute)."""
        for request in device_requests(obj):
            seen: set[str] = set()
            for entry in (e for e in request.derived_attributes if isinstance(e, dict)):
                name = entry.get("name")
                if not isinstance(name, str) or not name:
                    continue
                if name in seen:
                    yield ctx.finding(self, obj, f"request '{request.full_name}' derives attribute '{name}' twice",
                                      entry, "name", value=True)
                elif not _reads(used, name, request.full_name):
                    yield ctx.finding(self, obj, f"derived attribute '{name}' of request '{request.full_name}' must be "
                                      "referenced by at least one matchAttribute or distinctAttribute constraint "
                                      "targeting this request", entry, "name", value=True)
                seen.add(name)

    def _name(self, obj: Manifest, ctx: Context, holder: YamlMap, seen: set[str], what: str) -> Iterator[Finding]:
        name = holder.get("name")
        problem = _name_problem(name)
        if problem:
            yield ctx.finding(self, obj, f"{what} name {name!r} {problem}", holder,
                              "name" if "name" in holder else None, value="name" in holder)
        elif name in seen:
            yield ctx.finding(self, obj, f"{what} name '{name}' is used twice", holder, "name", value=True)
        if isinstance(name, str):
            seen.add(name)

    def _count(self, obj: Manifest, ctx: Context, request: DeviceRequest) -> Iterator[Finding]:
        fields = request.fields
        if request.shape == "empty" or "count" not in fields:
            return
        count = fields["count"]
        if request.mode == "All" and count != 0:  # 0 is Go's zero value: the API server reads it as not set
            yield ctx.finding(self, obj, f"request '{request.full_name}' sets count with allocationMode All (All takes "
                              "every matching device; the API server refuses a count)", fields, "count")
        elif isinstance(count, int) and not isinstance(count, bool) and count < 0:  # 0 is defaulted to 1
            yield ctx.finding(self, obj, f"request '{request.full_name}' count must be greater than zero, not {count}",
                              fields, "count", value=True)


def _fields_of(device: YamlMap) -> YamlMap:
    """A device's fields: v1alpha3/v1beta1 nest them under `basic`."""
    return device["basic"] if isinstance(device.get("basic"), dict) else device


def _constraint_attributes(constraints: Yaml) -> dict[str, set[str]]:
    """request reference ('' for a constraint over every request) -> the attributes its
    constraints name (upstream gatherConstraintAttributes)."""
    used: dict[str, set[str]] = {}
    for constraint in mappings(constraints):
        name = constraint.get("matchAttribute") or constraint.get("distinctAttribute")
        if not isinstance(name, str):
            continue
        refs = constraint.get("requests")
        for ref in refs if isinstance(refs, list) and refs else [""]:
            if isinstance(ref, str):  # another type is schema-invalid (and was unhashable here)
                used.setdefault(ref, set()).add(name)
    return used


def _reads(used: dict[str, set[str]], name: str, request: str) -> bool:
    """Whether a constraint over every request, over this one, or over its parent request names
    the attribute (upstream isAttributeUsedByConstraint)."""
    return any(name in used.get(ref, ()) for ref in ("", request, request.partition("/")[0]))


def _resolves(ref: Yaml, names: Names) -> bool:
    """A constraint's or config's request reference: 'request' or 'request/subrequest'."""
    if not isinstance(ref, str):
        return False
    top, _, sub = ref.partition("/")
    if top not in names.get(None, set()):
        return False
    return not sub or sub in names.get(top, set())
