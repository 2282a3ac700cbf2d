"""api-currency: resource.k8s.io versions, kinds and fields as the target release serves them.

Facts come from `data/resource-api-lifecycle.yaml` (read off k8s.io/api and kube-apiserver)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import re

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, remove, set_value
from ..core.versions import minor
from ..dra.convert import to_v1
from ..facts.shipped import resource_api_lifecycle, structured_claim_version
from ..model.claims import RESOURCE_GROUP, claim_spec
from ..model.pods import named, pod_sites
from ..model.values import YamlMap
from ..model.workloads import POD_TARGETS
from ..model.manifest import edit_path
from .base import Rule
from .examples import COMPLIANT_POD, V1BETA1_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

_REMOVED_KINDS = {
    "ResourceClass": "use a DeviceClass (resource.k8s.io/v1)",
    "PodSchedulingContext": "nothing replaces it: the scheduler allocates structured claims itself",
    "PodScheduling": "nothing replaces it: the scheduler allocates structured claims itself",
    "ResourceClaimParameters": "put selectors and opaque config in the claim itself",
    "ResourceClassParameters": "put selectors and opaque config in the DeviceClass itself",
}
#: one kind's row of facts/data/resource-api-lifecycle.yaml: introduced, deprecated, removed
#: (minors, None when not set), default (served by default), replacement
ApiLifecycle = YamlMap
_CLASSIC_FIELDS = {
    "resourceClassName": "name a DeviceClass per request (exactly.deviceClassName)",
    "parametersRef": "put CEL selectors and opaque driver config in the claim",
    "allocationMode": "drop it: claims are allocated when their first pod is scheduled",
}


def _structured_claim(obj: Manifest, spec: YamlMap, kube_version: str) -> Fix | None:
    """A classic claim (`resourceClassName`, no opaque `parametersRef`) as one structured
    request of the DeviceClass of the same name: what the NVIDIA and example drivers name
    their classes. Unsafe: the class must exist, and `allocationMode: Immediate` has no
    structured equivalent (claims are allocated when their first pod is scheduled)."""
    class_name = spec.get("resourceClassName")
    version = structured_claim_version(kube_version)
    if not isinstance(class_name, str) or not class_name or "parametersRef" in spec or "devices" in spec \
            or version is None:
        return None
    name = re.sub(r"[^a-z0-9-]", "-", class_name.split(".")[0].lower()).strip("-") or "device"
    fields = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": 1}
    request = {"name": name, **fields} if version == "v1beta1" else {"name": name, "exactly": fields}
    edits = [remove(edit_path(spec, key)) for key in _CLASSIC_FIELDS if key in spec]
    edits.append(set_value(edit_path(spec, "devices"), {"requests": [request]}))
    if obj.api_version != f"{RESOURCE_GROUP}/{version}":
        edits.append(set_value(edit_path(obj.data, "apiVersion"), f"{RESOURCE_GROUP}/{version}"))
    return Fix(f"request DeviceClass '{class_name}' with a structured {RESOURCE_GROUP}/{version} request",
               Applicability.UNSAFE, tuple(edits))


def _flatten_source(entry: YamlMap) -> Fix | None:
    """`source: {resourceClaimTemplateName: x}` -> `resourceClaimTemplateName: x` (what 1.31
    renamed; the meaning is the same)."""
    source = entry.get("source")
    if not isinstance(source, dict):
        return None
    moved = {key: source[key] for key in ("resourceClaimName", "resourceClaimTemplateName") if key in source}
    if not moved or len(moved) != len(source) or any(key in entry for key in moved):
        return None
    edits = [set_value(edit_path(entry, key), value) for key, value in moved.items()]
    edits.append(remove(edit_path(entry, "source")))
    return Fix("move the claim source onto the entry", Applicability.SAFE, tuple(edits))


def _lifecycle(obj: Manifest) -> tuple[str, ApiLifecycle | None]:
    """(version, its lifecycle entry or None) of a resource.k8s.io object."""
    version = obj.api_version.rsplit("/", 1)[-1]
    return version, resource_api_lifecycle().get((version, obj.kind))


def _v1_fix(obj: Manifest) -> Fix | None:
    """The object moved to resource.k8s.io/v1 (the same meaning: upstream converts it so)."""
    edits = to_v1(obj)
    return Fix("move to resource.k8s.io/v1", Applicability.SAFE, edits) if edits else None


def _known_lifecycle(obj: Manifest, ctx: Context) -> tuple[str, ApiLifecycle, int] | None:
    """(version, lifecycle entry, target minor) for a resource.k8s.io kind the table knows."""
    if obj.group != RESOURCE_GROUP:
        return None
    found = _lifecycle(obj)
    if not found[1]:
        return None
    return found[0], found[1], minor(ctx.kube_version)


@register
class ApiRemoved(Rule):
    id = "api-removed"
    name = "Removed DRA API"
    category = "api-currency"
    severity = Severity.ERROR
    lint_only = "a version the cluster no longer serves is refused by the API server before admission"
    fixable = FixAvailability.SOMETIMES  # the pod claim `source:` wrapper
    summary = ("Kinds, versions and fields Kubernetes removed: ResourceClass, PodScheduling(Context), v1alpha1 to v1alpha3 "
               "objects, classic resourceClassName/parametersRef/allocationMode, the pod claim `source:` form.")
    rationale = """
        "Classic" DRA (KEP-3063: ResourceClass, PodSchedulingContext, claim parameters,
        claim-level `allocationMode: Immediate | WaitForFirstConsumer`) was replaced by
        structured parameters (KEP-4381) and removed: resource.k8s.io/v1alpha2 was last served
        in 1.30, PodSchedulingContext in 1.31, the v1alpha3 claim kinds in 1.33. The pod-level
        `resourceClaims[].source` wrapper became the flat `resourceClaimName` /
        `resourceClaimTemplateName` fields in 1.31. The API server of the target release
        rejects all of these."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    upstream_note = """
        Several GPU guideline documents in circulation still show a ResourceClaim with
        `resourceClassName: gpu.nvidia.com`, `allocationMode: WaitForFirstConsumer` and a
        ResourceClass, or a pod claim wrapped in `source:`. None of it exists in Kubernetes
        1.32+. Upstream: a DeviceClass installed by the driver, a ResourceClaimTemplate whose
        request names it (`exactly.deviceClassName` in resource.k8s.io/v1, with CEL selectors
        for the slice), allocation when the pod is scheduled, and
        `resourceClaimTemplateName` directly on the pod claim."""
    noncompliant = """
        apiVersion: resource.k8s.io/v1alpha2
        kind: ResourceClaim
        metadata: {name: gpu}
        spec:
          resourceClassName: gpu.nvidia.com
          allocationMode: WaitForFirstConsumer
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: inference}
        spec:
          resourceClaims:
          - name: gpu
            source: {resourceClaimName: gpu}
          containers:
          - name: server
            image: vllm/vllm-openai
            resources: {claims: [{name: gpu}]}
        """
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if obj.group == RESOURCE_GROUP:
            target = minor(ctx.kube_version)  # only here: 20,000 objects ask, a few hundred are DRA's
            version, life = _lifecycle(obj)
            spec = claim_spec(obj)
            fix = _structured_claim(obj, spec, ctx.kube_version)
            if obj.kind in _REMOVED_KINDS:
                yield ctx.finding(self, obj, f"{obj.kind} ({obj.api_version}) was removed with classic DRA; "
                                  f"{_REMOVED_KINDS[obj.kind]}", obj.data, "kind", value=True)
            elif version == "v1alpha2" or (life and life["removed"] is not None and target >= life["removed"]):
                gone = f"1.{life['removed'] - 1}" if life else "1.30"
                yield ctx.finding(self, obj, f"{obj.api_version} {obj.kind} is not served by Kubernetes "
                                  f"{ctx.kube_version} (last served in {gone}); use resource.k8s.io/v1",
                                  obj.data, "apiVersion", value=True, fix=fix)
            for field, instead in _CLASSIC_FIELDS.items():
                if field in spec:
                    yield ctx.finding(self, obj, f"claim field '{field}' belongs to classic DRA, removed from "
                                      f"Kubernetes; {instead}", spec, field, fix=fix)
        if (obj.group, obj.kind) in POD_TARGETS:
            for site in pod_sites(obj):
                for entry in site.claims:
                    if "source" in entry:
                        yield ctx.finding(self, obj, f"{named('pod claim', entry.get('name'))} uses the removed `source:` "
                                          "wrapper; put resourceClaimName or resourceClaimTemplateName directly on "
                                          "the entry", entry, "source", fix=_flatten_source(entry))


@register
class ApiVersionUnavailable(Rule):
    id = "api-version-unavailable"
    name = "DRA API version newer than the target"
    category = "api-currency"
    severity = Severity.ERROR
    lint_only = "a version the cluster does not serve is refused by the API server before admission"
    summary = "A resource.k8s.io version/kind the target release does not have yet (e.g. v1 before 1.34)."
    rationale = """
        resource.k8s.io/v1beta1 arrived in 1.32, v1beta2 in 1.33, v1 (DRA GA) in 1.34, and
        DeviceTaintRule in v1 in 1.37. Manifests written for a newer cluster fail with "no
        matches for kind" on the target; lint with the `--kube-version` the cluster runs. A
        Helm chart that picks the version with `.Capabilities.APIVersions.Has` is rendered
        by `helm template` with every version helm knows, whatever the target (`helm
        install` asks the cluster): there the finding is `info`, and says so."""
    reference = "https://kubernetes.io/docs/reference/using-api/#api-versioning"
    noncompliant = """
        apiVersion: resource.k8s.io/v1
        kind: DeviceTaintRule
        metadata: {name: gpu-maintenance}
        spec:
          deviceSelector: {driver: gpu.nvidia.com}
          taint: {key: maintenance, effect: NoSchedule}
        """
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        known = _known_lifecycle(obj, ctx)
        if not known or known[2] >= known[1]["introduced"]:
            return
        served = (f"{obj.api_version} {obj.kind} is served from Kubernetes 1.{known[1]['introduced']}; the target is "
                  f"{ctx.kube_version}")
        if obj.api_version in obj.source.capability_checks:
            yield ctx.finding(self, obj, f"{served}, but the chart chose {obj.api_version} by "
                              f".Capabilities.APIVersions.Has, which `helm template` answers from every version helm "
                              f"knows: `helm install` asks the cluster's API server and chooses what it serves",
                              obj.data, "apiVersion", value=True, severity=Severity.INFO,
                              help="to judge the objects the cluster would get, set the chart's value that pins the "
                                   "API version, if it has one (--set)")
            return
        yield ctx.finding(self, obj, served, obj.data, "apiVersion", value=True,
                          help=f"if the cluster runs 1.{known[1]['introduced']} or later, lint with "
                               f"--kube-version 1.{known[1]['introduced']} (or kubeVersion in .draguard.yaml)")


@register
class ApiVersionNotDefault(Rule):
    id = "api-version-not-default"
    name = "DRA API version not served by default"
    category = "api-currency"
    severity = Severity.WARNING
    authored_only = True
    fixable = FixAvailability.SOMETIMES  # claims, templates, classes and slices, where v1 is served
    summary = "A resource.k8s.io version the target serves only with --runtime-config (beta and alpha versions)."
    rationale = """
        Beta and alpha API versions are disabled by default in kube-apiserver
        (beta since 1.24). resource.k8s.io/v1 is the only DRA version served by default, from
        1.34; v1beta1 and v1beta2 then need `--runtime-config=resource.k8s.io/v1beta1=true`
        (most managed clusters do not set it). On 1.32 and 1.33 no DRA version is on by
        default: the cluster must enable the `DynamicResourceAllocation` feature gate and the
        beta API, so the finding is `info` there."""
    reference = "https://kubernetes.io/docs/reference/using-api/#enabling-or-disabling"
    noncompliant = V1BETA1_POD
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        known = _known_lifecycle(obj, ctx)
        if known is None:
            return
        version, life, target = known
        served = life["introduced"] <= target and (life["removed"] is None or target < life["removed"])
        deprecated = life["deprecated"] is not None and target >= life["deprecated"]
        if not served or life["default"] or deprecated:
            return
        v1_default = resource_api_lifecycle().get(("v1", obj.kind), {}).get("introduced", 99) <= target
        severity = Severity.WARNING if v1_default or version.startswith("v1alpha") else Severity.INFO
        instead = "use resource.k8s.io/v1" if v1_default else \
            f"enable it with --runtime-config=resource.k8s.io/{version}=true"
        yield ctx.finding(self, obj, f"{obj.api_version} is not served by default in Kubernetes {ctx.kube_version}; "
                          f"{instead}", obj.data, "apiVersion", value=True, severity=severity,
                          fix=_v1_fix(obj) if v1_default else None)


@register
class ApiVersionDeprecated(Rule):
    id = "api-version-deprecated"
    name = "Deprecated DRA API version"
    category = "api-currency"
    severity = Severity.WARNING
    authored_only = True
    fixable = FixAvailability.SOMETIMES  # claims, templates, classes and slices, where v1 is served
    examples_target = "1.35"
    summary = "A resource.k8s.io version deprecated in the target release, with its replacement."
    rationale = """
        Deprecated versions are removed three releases later (v1beta1: deprecated 1.35,
        removed 1.38; v1beta2: deprecated 1.36, removed 1.39). Migrate while both are served:
        `kubectl convert` does not cover DRA; `draguard fix` rewrites the manifests."""
    reference = "https://kubernetes.io/docs/reference/using-api/deprecation-policy/"
    noncompliant = V1BETA1_POD
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        known = _known_lifecycle(obj, ctx)
        if known is None:
            return
        _, life, target = known
        if life["deprecated"] is None or target < life["deprecated"]:
            return
        if life["removed"] is not None and target >= life["removed"]:
            return
        extra = "" if life["default"] else " and not served by default"
        v1_served = resource_api_lifecycle().get(("v1", obj.kind), {}).get("introduced", 99) <= target
        yield ctx.finding(self, obj, f"{obj.api_version} {obj.kind} is deprecated since 1.{life['deprecated']}"
                          f"{extra} (removed in 1.{life['removed']}); use resource.k8s.io/{life['replacement']}",
                          obj.data, "apiVersion", value=True,
                          fix=_v1_fix(obj) if life["replacement"] == "v1" and v1_served else None)
