"""legacy-resources: accelerators requested through device-plugin extended resources."""

from __future__ import annotations

from ..core.finding import Severity
from ..model.gpu import LEGACY_RESOURCE, legacy_resources
from ..model.pods import pod_sites, unmodelled_containers
from ..model.workloads import POD_TARGETS
from .base import Admission, Needs, Rule
from .examples import COMPLIANT_POD
from .registry import register

_NOT_LEGACY = f"!k.matches(r'{LEGACY_RESOURCE.pattern}')"


def _alias_note(obj, resource: str, c) -> str:
    return f" ({obj.kind} turns it into nvidia.com/gpu)" if resource in c.gpu_aliases else ""


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
        works but cannot pin a slice, so an explicit claim is still recommended. Custom
        resources of kinds draguard does not model are searched for `containers` lists, and
        what is found there is `info` too, saying that the kind is not modelled."""
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
        if (obj.group, obj.kind) in POD_TARGETS:
            containers = [c for site in pod_sites(obj) for c in site.containers]
        elif _custom(obj.group):
            yield from self._unmodelled(obj, ctx)
            return
        else:
            return
        mapped = ctx.objects.extended_resource_classes
        for c in containers:
            for resource, section_list, (section, values) in _by_resource(c):
                device_class = mapped.get(resource)
                if device_class:
                    yield ctx.finding(
                        self, obj,
                        f"{c.label} asks for {resource} in {section_list}; DeviceClass '{device_class}' maps it to "
                        f"DRA (extendedResourceName), but the implicit claim cannot pin a slice",
                        values, resource, severity=Severity.INFO, help=_suggestion(resource))
                else:
                    yield ctx.finding(
                        self, obj,
                        f"{c.label} asks for {resource}: {values[resource]} in {section_list} through the device "
                        f"plugin{_alias_note(obj, resource, c)}: the scheduler only counts it, and its release is "
                        f"not tied to the pod", values, resource, help=_suggestion(resource))

    def _unmodelled(self, obj, ctx):
        for c in unmodelled_containers(obj):
            for resource, section_list, (section, values) in _by_resource(c):
                yield ctx.finding(self, obj, f"{c.label} asks for {resource}: {values[resource]} in {section_list} "
                                  f"through the device plugin ({obj.kind} is not a kind draguard models: found in its "
                                  "containers list)", values, resource, severity=Severity.INFO,
                                  help=_suggestion(resource))


def _custom(group: str) -> bool:
    """A custom resource's group (a domain, not a built-in group such as apps or *.k8s.io)."""
    return "." in group and not group.endswith(".k8s.io")


def _by_resource(c):
    """(resource, 'limits and requests', the first (section, mapping)): limits and requests of
    one resource are one fault."""
    found: dict[str, list] = {}
    for section, values, resource in legacy_resources(c.resources, c.gpu_aliases):
        found.setdefault(resource, []).append((section, values))
    for resource, places in found.items():
        yield resource, " and ".join(section for section, _ in places), places[0]
