"""cel: device selectors compiled and type-checked as kube-scheduler would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import re
from functools import lru_cache

# a selector's compile facts are read from the per-user cache (the CEL engine loads only for one not seen
# before); imported here, not in each check: an import there cost 2 us a claim, 12,000 a lint of 20,000
from ..cel.summary import MAX_COST, CelDiagnostic, summarize
from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, set_value
from ..facts.shipped import attributes_version, driver_attributes, latest_driver_version
from ..facts.gates import gate_enabled
from ..model.claims import CLAIM_TARGETS, DEVICE_CLASS_TARGETS, RESOURCE_GROUP, device_requests
from ..dra.gpuclasses import class_drivers
from ..dra.published import published_twice
from ..model.classes import class_selectors
from ..model.pods import mapping, mappings
from ..model.manifest import edit_path
from .base import Admission, Needs, Option, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.claims import DeviceRequest
    from ..model.manifest import Manifest
    from ..model.values import YamlMap
    from .context import Context


def selector_sites(obj: Manifest) -> list[tuple[YamlMap, str, DeviceRequest | None]]:
    """(cel mapping, expression, DeviceRequest or None for a DeviceClass) of every selector."""
    if obj.kind == "DeviceClass":
        return [(cel, cel["expression"], None) for selector in mappings(obj.spec.get("selectors"))
                if isinstance((cel := mapping(selector.get("cel"))).get("expression"), str)]
    return [(cel, expression, request) for request in device_requests(obj) for cel, expression in request.cel_sites]


@register
class CelInvalid(Rule):
    id = "cel-invalid"
    name = "Selector does not compile"
    category = "cel"
    severity = Severity.ERROR
    webhook_only = ("compiles each selector with the Kubernetes CEL libraries and cost limits; a policy's "
                    "CEL cannot compile CEL")
    targets = CLAIM_TARGETS | DEVICE_CLASS_TARGETS
    fixable = FixAvailability.SOMETIMES  # the size-literal mistake has a known correction
    summary = ("A CEL selector has a syntax or type error, does not return bool, exceeds 10 KiB, or exceeds the "
               "API server's cost limit.")
    rationale = """
        The API server compiles selectors when the object is created and rejects bad ones;
        a selector that slips through (older clusters, stored objects) makes every allocation
        that uses it fail. draguard compiles each selector in the environment Kubernetes gives
        it (`device.driver`, `device.attributes[domain].name`, `device.capacity[domain].name`
        as Quantity, `device.allowMultipleAllocations` where DRAConsumableCapacity is on; the
        quantity, semver, regex, lists (`includes` where DRAListTypeAttributes is on), IP,
        CIDR, URL and format (`format.dns1123Label().validate(...)`) libraries, optional
        types, sets,
        two-variable comprehensions, strings and `cel.bind`) with cel-cpp's type checker plus
        the checks cel-go makes (homogeneous literals, regex and format literals), and points
        at the offending character in the manifest. The API server also estimates each
        selector's worst-case cost before it stores it (every string, list and map counted at
        its largest possible size, unbounded where it cannot tell) and refuses one over
        1,000,000 as "too complex, exceeds cost limit"; draguard makes the same estimate and
        points at the part that takes it over. With DRADerivedAttributes on, a request's
        derived attributes are compiled the same way: each must evaluate to a string, int,
        bool or semver (or, with DRAListTypeAttributes, a list of them), and the claim's
        derived expressions together stay within the cost limit. Checked against upstream's
        compiler and the real API server on generated selectors. `device` bound to a name
        (`cel.bind(d, device, d.driver == ...)`) is checked as its body; the one form
        draguard's engine cannot type, `device` used as a value (`[device]`), gets an info
        finding saying it is not checked, never an error."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#devicerequest"
    upstream_note = """
        A GPU guideline document in circulation recommends
        `device.attributes['gpu.nvidia.com'].memory >= 40Gi`. That is not CEL (`40Gi` is not a
        literal) and memory is a capacity, not an attribute. Upstream:
        `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0`."""
    noncompliant = COMPLIANT_POD.replace("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                         "device.attributes['gpu.nvidia.com'].memory >= 10Gi")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        # the API server compiles a new object's selectors with device.allowMultipleAllocations
        # declared only while DRAConsumableCapacity is on, `includes` only while
        # DRAListTypeAttributes is (NewExpressions environment)
        consumable = gate_enabled("DRAConsumableCapacity", ctx.kube_version, ctx.config.feature_gates)
        includes = gate_enabled("DRAListTypeAttributes", ctx.kube_version, ctx.config.feature_gates)
        for cel, expression, _ in selector_sites(obj):
            compiled = summarize(expression, consumable, includes)
            if compiled.error is None:
                if compiled.too_complex:
                    yield self._too_complex(obj, ctx, cel, compiled.max_cost, compiled.costliest)
                continue
            if compiled.error.unsupported:
                yield self._not_checked(obj, ctx, cel, compiled.error)
                continue
            suggestion = compiled.error.suggestion
            fix = Fix("compare the capacity as a quantity()", Applicability.UNSAFE,
                      (set_value(edit_path(cel, "expression"), suggestion),)) if suggestion else None
            yield ctx.finding(self, obj, f"CEL: {compiled.error.message}", cel, "expression",
                              offset=compiled.error.offset, help=f"`{suggestion}`" if suggestion else None, fix=fix)
        if gate_enabled("DRADerivedAttributes", ctx.kube_version, ctx.config.feature_gates):
            yield from self._derived(obj, ctx, consumable, includes)

    def _derived(self, obj: Manifest, ctx: Context, consumable: bool, includes: bool) -> Iterator[Finding]:
        """Derived attributes' expressions, as the API server validates a new claim's while
        DRADerivedAttributes is on (validateCELExpression with DerivedAttribute): each must
        compile to a scalar (or, with DRAListTypeAttributes, a list of them) and cost at most
        the limit, and so must all of the claim's together. Without the gate it drops them."""
        from ..dra.derived import compile_derived

        lists = gate_enabled("DRAListTypeAttributes", ctx.kube_version, ctx.config.feature_gates)
        total, last = 0, None
        for request in device_requests(obj):
            for entry in request.derived_attributes:
                expression = entry.get("expression") if isinstance(entry, dict) else None
                if not isinstance(expression, str) or not expression:
                    continue
                compiled = compile_derived(expression, lists, consumable, includes)
                if compiled.error is not None:
                    yield self._not_checked(obj, ctx, entry, compiled.error) if compiled.error.unsupported else \
                        ctx.finding(self, obj, f"CEL: derived attribute {entry.get('name')!r}: "
                                    f"{compiled.error.message}", entry, "expression", offset=compiled.error.offset)
                    continue
                if compiled.too_complex:
                    yield self._too_complex(obj, ctx, entry, compiled.max_cost, compiled.costliest)
                total, last = total + compiled.max_cost, entry
        if total > MAX_COST:
            yield ctx.finding(self, obj, f"CEL: too complex, total cost of derived attribute CEL expressions in the "
                              f"claim exceeds cost limit: the API server estimates {total:,}, over {MAX_COST:,}",
                              last, "expression")

    def _not_checked(self, obj: Manifest, ctx: Context, where: YamlMap, error: CelDiagnostic) -> Finding:
        """An expression draguard's engine cannot check (upstream may accept it): said, not blamed."""
        return ctx.finding(self, obj, f"CEL not checked: {error.message}", where, "expression", offset=error.offset,
                           severity=Severity.INFO)

    def _too_complex(self, obj: Manifest, ctx: Context, cel: YamlMap, max_cost: int, costliest: int) -> Finding:
        return ctx.finding(self, obj, f"CEL: too complex, exceeds cost limit: the API server estimates this selector's "
                           f"worst-case cost at {max_cost:,}, over its limit of {MAX_COST:,}, and refuses "
                           "the object (the part that takes it over starts here)", cel, "expression",
                           offset=costliest,
                           help="the estimate counts every string, list and map at its largest possible size, "
                                "and one it cannot bound (a list built in the expression, a quantity compared "
                                "with !=) as unbounded: write that part another way")


_MIG_ONLY = frozenset({"profile", "parentUUID", "parentIndex"})


def _device_types(ctx: Context, class_name: str | None) -> set[str]:
    """NVIDIA device types ('gpu', 'mig') a request of this class can get: those its
    selectors compare the type attribute with (cel.reads), every one when they do not."""
    selectors = class_selectors(ctx.objects, class_name) or []
    if class_drivers(selectors) - {"gpu.nvidia.com"} and "gpu.nvidia.com" not in class_drivers(selectors):
        return set()  # another driver's class
    types = {t for s in selectors for t in summarize(s).compared.get(_NVIDIA_TYPE, ()) if t in ("gpu", "mig")}
    return types or {"gpu", "mig"}


_NVIDIA_TYPE = ("attributes", "gpu.nvidia.com", "type")


@lru_cache(maxsize=16)
def _published(version: str) -> dict[str, Any]:
    """The attribute and capacity names each device type of NVIDIA's driver `version`
    publishes (facts: driver-attributes.yaml), found once a version, not once an object;
    ValueError (never kept) for a version with no list."""
    return driver_attributes()["gpu.nvidia.com"]["versions"][attributes_version(version)]  # type: ignore[no-any-return]


@register
class CelUnknownAttribute(Rule):
    id = "cel-unknown-attribute"
    name = "Selector reads an attribute the driver does not publish"
    category = "cel"
    severity = Severity.WARNING
    targets = CLAIM_TARGETS | DEVICE_CLASS_TARGETS
    needs = Needs.OBJECT_SET  # the request's DeviceClass tells which device types it can get
    summary = "A selector names an attribute or capacity the target driver version does not publish for that device type."
    rationale = """
        Looking up a name a device does not have is not a non-match in CEL: it is a runtime
        error ("no such key"), and kube-scheduler aborts the whole allocation attempt for the
        pod on it. NVIDIA's driver dropped `index` and `minor` in v25.8 and `pcieBusID` in
        v25.12; `profile` and `parentUUID` exist only on MIG devices, and a full GPU has no
        capacity but `memory`. Guard optional names with `has(...)`, or select on what the
        driver publishes. The driver version is the rule setting `nvidiaDriverVersion`."""
    reference = "https://github.com/NVIDIA/k8s-dra-driver-gpu"
    options = {"nvidiaDriverVersion": Option(latest_driver_version(), "NVIDIA DRA driver version whose attributes count "
                                             "(a release between two listed ones reads the earlier one's list)",
                                             check=attributes_version)}
    noncompliant = COMPLIANT_POD.replace("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                         "device.attributes['gpu.nvidia.com'].index == 0")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        version = str(ctx.option(self, "nvidiaDriverVersion"))
        # a version with no list raises: an internal error says so, never a rule silently off
        schema = _published(version)
        for cel, expression, request in selector_sites(obj):
            compiled = summarize(expression)
            if compiled.error is not None:
                continue
            guarded = compiled.guarded
            types = _device_types(ctx, request.class_name) if request else {"gpu", "mig"}
            for field, domain, name in compiled.references.items:
                if domain != "gpu.nvidia.com" or name is None or (field, domain, name) in guarded or not types:
                    continue
                published = set()
                for t in types:
                    entries = schema[t]["attributes" if field == "attributes" else "capacity"]
                    published |= {n.rstrip("*") for n in entries}
                if name in published or (field == "capacity" and any(name.startswith(p) for p in published
                                                                     if p.endswith("Slice"))):
                    continue
                where = re.search(rf"\.\s*{re.escape(name)}\b|\[\s*['\"]{re.escape(name)}['\"]", expression)
                kinds = " or ".join(sorted(types))
                why = " (MIG devices only)" if name in _MIG_ONLY and types == {"gpu"} else ""
                yield ctx.finding(self, obj, f"NVIDIA driver {version} publishes no {field[:-1] if field == 'attributes' else 'capacity'} "
                                  f"'{name}' on {kinds} devices{why}: upstream the selector fails with a runtime "
                                  "error that aborts the whole allocation", cel, "expression",
                                  offset=(where.start() + 1 if where and where.group(0).startswith(".") else
                                          where.start() if where else 0))


_TWICE_SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-a-gpu.example.com
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool:
    name: node-a
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
      gpu.example.com/model: {string: A100-SXM4-80GB}
    capacity:
      memory: {value: 80Gi}
"""


@register
class DeviceNameTwice(Rule):
    id = "device-name-twice"
    name = "Device attribute or capacity published under two names"
    category = "cel"
    severity = Severity.WARNING
    targets = frozenset({(RESOURCE_GROUP, "ResourceSlice")})
    summary = ("A device publishes an attribute or capacity both without a domain and as '<driver>/name', "
               "so selectors read one of the two at random.")
    rationale = """
        A name without a domain belongs to the slice's driver, so `model` and
        `gpu.example.com/model` are one name to a selector: both are
        `device.attributes['gpu.example.com'].model`. The API server accepts the pair, and
        upstream's CEL binding (k8s.io/dynamic-resource-allocation cel/compile.go) fills the
        selector's map from the device's attributes in Go's random map order, so the same
        selector matches the device on one scheduling attempt and not on the next. A
        `matchAttribute` constraint reads the qualified one (lookupAttribute tries the name
        as written first). draguard's selectors read the qualified one too. Publish each
        name once."""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/resource-slice-v1/"
    admission = Admission(
        "!has(object.spec.devices) || object.spec.devices.all(d, " + " && ".join(
            f"(!has(d.{where}) || d.{where}.all(k, k.contains('/') || !((object.spec.driver + '/' + k) in d.{where})))"
            for where in ("attributes", "capacity")) + ")",
        "a device publishes an attribute or capacity both without a domain and as '<driver>/name': selectors "
        "read either at random")
    noncompliant = _TWICE_SLICE
    compliant = _TWICE_SLICE.replace("      model: {string: A100}\n", "")

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        driver = obj.spec.get("driver")
        if not isinstance(driver, str):
            return
        for device in mappings(obj.spec.get("devices")):
            fields = mapping(device.get("basic")) or device  # v1alpha3/v1beta1 nest them under `basic`
            for what in ("attributes", "capacity"):
                published = mapping(fields.get(what))
                for name in published_twice(published, driver):
                    yield ctx.finding(
                        self, obj, f"device {device.get('name')!r} publishes {what[:-1] if what == 'attributes' else what} "
                        f"{name!r} twice, also as '{driver}/{name}': a selector reads either at random "
                        "(upstream fills its map in Go map order); constraints read the qualified one",
                        published, name, help=f"publish it once (as '{driver}/{name}' or as '{name}')")
