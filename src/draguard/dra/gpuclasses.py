"""Which devices a DeviceClass selects and which pods hold GPUs through their claims, read
from the classes' selectors as compiled (cel.reads): the one answer to "is this a GPU
class" for every rule and for the explanations. A class pins a driver with
`device.driver == '...'`; one that merely names a driver (`device.driver != '...'`, an
attribute's domain) pins none. A selector that does not compile pins nothing (cel-invalid
says why).

What marks a pod as a GPU consumer (model.gpu's other signs: device-plugin resources,
device environment variables, host device paths) joins it here in uses_gpu."""

from __future__ import annotations

from ..facts.shipped import gpu_drivers
from ..model.claims import device_requests
from ..model.classes import class_selectors
from ..model.gpu import GPU_SPECIFIC_PATH, device_env, host_gpu_path, legacy_resources
from ..model.extended_resources import IMPLICIT_PREFIX
from ..model.objectset import ObjectSet
from ..model.pods import PodSite, mapping


def class_drivers(selectors: list[str]) -> set[str]:
    """Drivers a class pins with `device.driver == '...'` (empty: not pinned)."""
    from ..cel.summary import summarize  # the CEL engine loads only for a selector not seen before

    return {driver for expression in selectors for driver in summarize(expression).compared.get(("driver",), ())}


def is_gpu_class(objects: ObjectSet, name: str | None) -> bool:
    """True when DeviceClass `name` pins a GPU driver; found once a run (ObjectSet.lasting)."""
    return objects.lasting(_is_gpu_class, name)


def _is_gpu_class(objects: ObjectSet, name: str | None) -> bool:
    selectors = class_selectors(objects, name)
    return selectors is not None and not class_drivers(selectors).isdisjoint(gpu_drivers())


def holds_gpu(objects: ObjectSet, namespace: str, entry: dict) -> bool:
    """Whether a pod's resourceClaims entry holds GPU devices: its claim or template (in the
    set) requests a GPU class without admin access. A claim outside the set may: it counts."""
    target = objects.claims.referenced(namespace, entry)
    if target is None:
        return True
    return any(is_gpu_class(objects, r.class_name) and r.admin_access is not True for r in device_requests(target))


#: the DeviceClass of an IMEX channel (NVIDIA/k8s-dra-driver-gpu, deployments/helm/*/templates/
#: deviceclass-compute-domain-default-channel.yaml); a ComputeDomain's claim template asks for it
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"


def holds_channel(objects: ObjectSet, namespace: str, entry: dict) -> bool:
    """Whether a pod's resourceClaims entry holds an IMEX channel, not a GPU: the claim template
    a ComputeDomain makes (spec.channel.resourceClaimTemplate), or a claim (template) in the
    set whose requests all ask for the channel class."""
    target = objects.claims.referenced(namespace, entry)
    if target is None:
        return False
    if (target.group, target.kind) == ("resource.nvidia.com", "ComputeDomain"):
        return True
    requests = device_requests(target)
    return bool(requests) and all(r.class_name == CHANNEL_CLASS for r in requests)


def gpu_claim_entries(site: PodSite, objects: ObjectSet) -> list[dict]:
    """The pod's resourceClaims entries that hold GPUs (holds_gpu), once per pod and object set."""
    return objects.remembered(_gpu_claim_entries, site)


def _gpu_claim_entries(site: PodSite, objects: ObjectSet) -> list[dict]:
    return [entry for entry in site.claims if holds_gpu(objects, site.owner.namespace, entry)]


def uses_gpu(site: PodSite, objects: ObjectSet) -> bool:
    if site.claims and gpu_claim_entries(site, objects):  # most pods have no claim: nothing to look up or keep
        return True
    for c in site.containers:
        if any(True for _ in legacy_resources(c.resources, c.gpu_aliases)) or any(True for _ in device_env(c)):
            return True
        if any(is_gpu_class(objects, served) for served in _extended_classes(c.resources, objects)):
            return True
    return any(isinstance(path := host_gpu_path(v), str) and GPU_SPECIFIC_PATH.match(path) for v in site.volumes)


def _extended_classes(resources: dict, objects: ObjectSet):
    """The DeviceClasses that serve the extended resources a container asks for through DRA
    (KEP-5004): a class's extendedResourceName in the set, or the implicit
    `deviceclass.resource.kubernetes.io/<class>` of any class."""
    served = objects.extended_resource_classes
    for section in ("limits", "requests"):
        for name in mapping(resources.get(section)):
            if isinstance(name, str) and (name in served or name.startswith(IMPLICIT_PREFIX)):
                yield served.get(name) or name.removeprefix(IMPLICIT_PREFIX)
