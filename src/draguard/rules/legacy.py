"""legacy-resources: accelerators requested through device-plugin extended resources."""

from __future__ import annotations

from ..core.finding import Severity
from ..model.gpu import LEGACY_RESOURCE, legacy_resources
from ..model.pods import pod_sites
from ..model.workloads import POD_TARGETS
from .base import Admission, Needs, Rule
from .examples import COMPLIANT_POD
from .registry import register

_NOT_LEGACY = f"!k.matches(r'{LEGACY_RESOURCE.pattern}')"


def _suggestion(resource: str) -> str:
    if resource.startswith("nvidia.com/mig-"):
        profile = resource[len("nvidia.com/mig-"):]
        return (f"request a device of class mig.nvidia.com with the selector "
                f"device.attributes['gpu.nvidia.com'].profile == '{profile}' in a ResourceClaimTemplate, "
                f"and reference it from spec.resourceClaims and this container's resources.claims")
    return ("request the device through a ResourceClaimTemplate (class gpu.nvidia.com for a whole GPU, "
            "mig.nvidia.com with a profile selector for a slice) and reference it from spec.resourceClaims "
            "and this container's resources.claims")


@register
class LegacyGpuResource(Rule):
    id = "legacy-gpu-resource"
    name = "GPU requested through the device plugin"
    category = "legacy-resources"
    severity = Severity.ERROR
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET  # DeviceClasses that serve the resource through DRA
    admission = Admission(
        "variables.containers.all(c, !has(c.resources) || "
        f"((!has(c.resources.limits) || c.resources.limits.all(k, {_NOT_LEGACY})) && "
        f"(!has(c.resources.requests) || c.resources.requests.all(k, {_NOT_LEGACY}))))",
        "a container asks for a GPU through a device-plugin resource; request it with a ResourceClaim")
    summary = "A container asks for nvidia.com/gpu, nvidia.com/mig-*, amd.com/gpu or gpu.intel.com/* in limits or requests."
    rationale = """
        Device-plugin resources are opaque counters: the scheduler cannot see which GPU, which
        MIG profile or how much memory a pod gets, tenants cannot be pinned to a hardware
        slice, and nothing ties the device's release to the pod's teardown. DRA
        ResourceClaims name a DeviceClass and select devices by attribute (MIG profile,
        memory), and the claim is released when the pod is gone. Only the resource keys of
        limits/requests are flagged; tolerations, node labels, node selectors and quotas that
        merely mention the name are not. Where a DeviceClass in the linted set maps the name
        to DRA (`extendedResourceName`, KEP-5004) the finding is `info`: the implicit claim
        works but cannot pin a slice, so an explicit claim is still recommended."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    upstream_note = """
        Some guideline documents present `nvidia.com/mig-1g.5gb: 1` limits as the way to give a
        tenant a slice. Upstream DRA expresses the same with a request of class
        `mig.nvidia.com` and a CEL selector on `device.attributes['gpu.nvidia.com'].profile`."""
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: inference}
        spec:
          containers:
          - name: server
            image: vllm/vllm-openai
            resources:
              limits:
                nvidia.com/gpu: 1
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        mapped = ctx.objects.extended_resource_classes
        for site in pod_sites(obj):
            for c in site.containers:
                found: dict[str, list] = {}  # one finding per resource: limits and requests are one fault
                for section, values, resource in legacy_resources(c.resources):
                    found.setdefault(resource, []).append((section, values))
                for resource, places in found.items():
                    section, values = places[0]
                    sections = " and ".join(s for s, _ in places)
                    device_class = mapped.get(resource)
                    if device_class:
                        yield ctx.finding(
                            self, obj,
                            f"{c.label} asks for {resource} in {sections}; DeviceClass '{device_class}' maps it to "
                            f"DRA (extendedResourceName), but the implicit claim cannot pin a slice",
                            values, resource, severity=Severity.INFO, help=_suggestion(resource))
                    else:
                        yield ctx.finding(
                            self, obj,
                            f"{c.label} asks for {resource}: {values[resource]} in {sections} through the device "
                            f"plugin: the scheduler only counts it, and its release is not tied to the pod",
                            values, resource, help=_suggestion(resource))
