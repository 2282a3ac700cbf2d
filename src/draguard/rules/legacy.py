"""legacy-resources: accelerators requested through device-plugin extended resources."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import combinations
from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Edit, Fix, FixAvailability, NoFix, add_document, append, remove, set_value
from ..core.quantity import QuantityError, parse_quantity
from ..facts.shipped import device_classes, sharing_knobs, structured_claim_version
from ..model.claims import claim_spec, requests_of
from ..model.gpu import (LEGACY_RESOURCE, gpu_share_selected, legacy_resources, mig_profile_selected,
                         required_node_labels, unshared_node_selector)
from ..model.manifest import edit_path
from ..model.pods import mapping, pod_sites, unmodelled_containers
from ..model.values import Yaml, YamlMap
from ..model.workloads import POD_TARGETS, WORKLOADS
from .base import Admission, Needs, Option, Rule
from .examples import COMPLIANT_POD
from .registry import register
from ..core.patterns import Lazy

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from ..model.pods import ContainerSite, PodSite
    from .context import Context



def gpu_alias_cel() -> str:
    """CEL: key `k` of container-like `c` is a GPU alias of the object's kind
    (Workload.gpu_aliases: what a CRD turns into nvidia.com/gpu, Dynamo's `gpu`), `c` being one
    of the objects the kind keeps at a container path (map values), as model.pods reads them:
    a container of a pod spec is no such object."""
    tests = []
    for w in WORKLOADS:
        for path, _ in w.containers if w.gpu_aliases else ():
            *keys, last = path.split(".")
            if last != "*" or any("*" in key for key in keys):
                raise ValueError(f"{w.kind}: GPU aliases are read at map values (a.b.*), not at {path}")
            here, present = "object", []
            for key in keys:
                here += f".{key}"
                present.append(f"has({here})")
            tests.append(f"(k in {sorted(w.gpu_aliases)!r} && variables.kind == '{w.group}/{w.kind}' && "
                         f"{' && '.join(present)} && c in {here}.map(x, {here}[x]))")
    return " || ".join(tests) or "false"


_NOT_LEGACY = f"!k.matches(r'{LEGACY_RESOURCE.pattern}') && !({gpu_alias_cel()})"


def _alias_note(obj: Manifest, resource: str, c: ContainerSite) -> str:
    return f" ({obj.kind} turns it into nvidia.com/gpu)" if resource in c.gpu_aliases else ""


def _suggestion(resource: str) -> str:
    """The DRA request that replaces the resource, in its own vendor's terms."""
    claim = "in a ResourceClaimTemplate, and reference it from spec.resourceClaims and this container's resources.claims"
    found = _dra_class(resource)
    if found is None or found[0] == "gpu.nvidia.com":
        return ("request the device through a ResourceClaimTemplate (class gpu.nvidia.com for a whole GPU, "
                "mig.nvidia.com with a profile selector for a slice) and reference it from spec.resourceClaims "
                "and this container's resources.claims")
    return f"request a device of class {found[0]} {found[4]}{claim}"


def _dra_class(resource: str) -> tuple[str, str | None, str, bool, str] | None:
    """The one map of a device-plugin resource to DRA: (DeviceClass, CEL selector or None,
    name part, whether one device is the whole request, what the suggestion says of it);
    None for a resource with no DRA class."""
    if resource == "nvidia.com/gpu":
        return "gpu.nvidia.com", None, "gpu", True, ""
    if resource.startswith("nvidia.com/mig-"):
        profile = resource[len("nvidia.com/mig-"):]
        selector = f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"
        return "mig.nvidia.com", selector, "mig-" + profile, True, f"with the selector {selector} "
    if resource == "amd.com/gpu":
        selector = "device.attributes['gpu.amd.com'].type == 'amdgpu'"
        return "gpu.amd.com", selector, "amd-gpu", True, \
            f"(a whole GPU: {selector}; a partition: type 'amdgpu-partition' with its partitionProfile) "
    if resource.startswith("gpu.intel.com/"):
        return "gpu.intel.com", None, "intel-gpu", resource in ("gpu.intel.com/i915", "gpu.intel.com/xe"), \
            "(a memory size or millicores pin a share of it) "
    if resource == "habana.ai/gaudi":
        return "gaudi.intel.com", None, "gaudi", True, ""
    return None


#: (DeviceClass, CEL selector or None, name part): the one device a migrated request asks for
DraRequest = tuple[str, str | None, str]


def _dra_request(resource: str) -> DraRequest | None:
    """(DeviceClass, CEL selector or None, name part) for the resources whose DRA request is
    one device each; shares (time-slicing's nvidia.com/gpu.shared, Intel millicores and
    memory) have no such request and get no fix."""
    found = _dra_class(resource)
    return found[:3] if found is not None and found[3] else None


@lru_cache(maxsize=4096)  # bounded: the names come from the input; copies of a workload repeat them
def _label(text: str, limit: int = 63) -> str:
    """`text` as a DNS label: lower case, [a-z0-9-], at most `limit` characters (three a
    migration, 10,000 a lint of 20,000 objects, most of them for names met before)."""
    return _NOT_IN_LABEL.sub("-", text.lower()).strip("-")[:limit].rstrip("-") or "gpu"


_NOT_IN_LABEL = Lazy(r"[^a-z0-9]+")


def _count(value: Yaml) -> int | None:
    """A device-plugin quantity as a device count, read as the API server reads the quantity
    (`2`, `"2"`, `2.0` and `"2000m"` are 2): a whole number 0 or more, else None."""
    try:
        amount = parse_quantity(value)
    except (QuantityError, TypeError):
        return None
    return int(amount) if amount.denominator == 1 and amount >= 0 else None


def _unequal_request(c: ContainerSite, resource: str) -> str | None:
    """Why the counts in limits and requests leave the migration no count to take, where
    they do: the API server refuses a request of an extended resource that differs from its
    limit (it is not overcommitted: validateResourceRequirements), so which one was meant is
    a guess."""
    limits, requests = c.resources.get("limits"), c.resources.get("requests")
    if not (isinstance(limits, dict) and isinstance(requests, dict) and resource in limits and resource in requests):
        return None
    if _count(limits[resource]) == _count(requests[resource]):
        return None
    return (f"its requests ({requests[resource]}) and limits ({limits[resource]}) of {resource} differ, which the "
            "API server refuses (an extended resource's request must equal its limit): make them equal, then migrate")


def _request_fields(request: DraRequest, count: int) -> YamlMap:
    """The fields of the one request a migration's template makes."""
    class_name, selector, _ = request
    fields: YamlMap = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if selector:
        fields["selectors"] = [{"cel": {"expression": selector}}]
    return fields


def _claim_template(name: str, namespace: str, version: str, request: DraRequest, count: int) -> YamlMap:
    fields = _request_fields(request, count)
    entry: YamlMap = {"name": _label(request[2].split("-")[0])}
    entry.update(fields if version == "v1beta1" else {"exactly": fields})
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaimTemplate", "metadata": metadata,
            "spec": {"spec": {"devices": {"requests": [entry]}}}}


def _extended_class(resource: str, request: DraRequest) -> YamlMap:
    class_name, selector, part = request
    base = device_classes().get(class_name, {}).get("selector", f"device.driver == '{class_name}'")
    expression = f"{base} && {selector}" if selector else base
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"{_label(part)}-extended"},
            "spec": {"selectors": [{"cel": {"expression": expression}}], "extendedResourceName": resource}}


def migration(obj: Manifest, site: PodSite, c: ContainerSite, resource: str, quantity: Yaml,
              pairs: list[tuple[ContainerSite, str]], strategy: str, ctx: Context) -> Fix | NoFix:
    """The fix that moves one container's device-plugin resource (asking for `quantity`) to
    DRA (see the rule's docs), or why there is none. Names derive from the workload,
    container and resource, so a template made before (by an earlier run) is found and
    reused, and a copy of the workload in another file gets an equal template of the same
    name; one of that name asking for other devices gets a `-N` sibling."""
    request, count = _dra_request(resource), _count(quantity)
    version = structured_claim_version(ctx.config.kube_version)
    if resource in c.gpu_aliases or site.path is None:
        return NoFix(f"{obj.kind} builds its pods itself from this resource count: the claim has to go through "
                     f"what {obj.kind} offers for pod templates, which draguard does not write")
    sliced = ""
    if resource == "nvidia.com/gpu":
        labels = required_node_labels(site)
        shared = gpu_share_selected(labels)
        if shared:
            from ..model.plugin_config import sharing_strategy  # a shared GPU only: it parses device plugin configs

            plugin = sharing_strategy(labels, ctx.objects.plugin_gpu_shares)
            return _shared_migration(obj, site, c, quantity, shared, plugin, version)
        mig = mig_profile_selected(labels)
        if mig:
            request = _dra_request(f"nvidia.com/mig-{mig[0]}")
            sliced = f" (the pod's {mig[1]} makes each nvidia.com/gpu a MIG {mig[0]} slice)"
    if request is None:
        return NoFix(f"{resource} is a share of a device or has no DRA device class draguard knows: a claim "
                     "takes whole devices")
    shares = _sharing_knobs(c)
    if shares:
        return NoFix(f"the container also asks a scheduler extension for its part of each GPU ({shares}), which "
                     "a claim of whole GPUs would leave for the extension to place; move the share to DRA by hand (a "
                     "MIG slice, or one claim shared with the driver's sharing config), or take those limits out "
                     "where they ask for whole GPUs, then migrate (see legacy-gpu-sharing)")
    if count is None:
        return NoFix(f"{quantity!r} is not a whole number of devices: a claim takes whole devices")
    unequal = _unequal_request(c, resource)
    if unequal:
        return NoFix(unequal)
    if version is None:
        return NoFix(f"Kubernetes {ctx.config.kube_version} serves no resource.k8s.io version with structured "
                     "claims (1.32+)")
    removals = _removals(c, resource)
    if count == 0:  # the device plugin allocates nothing for it: nothing to claim
        only = all(isinstance(values, dict) and set(values) == {resource} for values in c.resources.values())
        return Fix(f"remove {resource}: 0 (it asks for no device)", Applicability.SAFE,
                   (remove(c.path + (c.resources_key,)),) if only else tuple(removals))
    if strategy == "extended-resource":
        if version != "v1":
            return NoFix("DeviceClass extendedResourceName needs resource.k8s.io/v1 (Kubernetes 1.34+)")
        device_class = _extended_class(resource, request)
        return Fix(f"serve {resource} through DRA: DeviceClass '{device_class['metadata']['name']}' with "
                   "extendedResourceName (the bridge gives no per-pod selector, no claim sharing, no driver config)"
                   + sliced,
                   Applicability.UNSAFE, (add_document(device_class),))
    lent: list[str] = []
    total, own = 0, count
    if c.lends_devices:
        waiting = [a.label for a in site.containers if not a.init and any(r == resource for r, _, _ in _by_resource(a))]
        if waiting:
            return NoFix(f"an init container's devices pass on to the app containers (the device plugin lends them, "
                         f"and the pod holds the larger of the two counts): it is migrated once {', '.join(waiting)} "
                         f"ask for {resource} through DRA, to share their claims rather than add devices")
        lent, total = _lent(_held_by_app_containers(obj, site, request, ctx), count)
        own = max(0, count - total)
    references = tuple(append(c.path + (c.resources_key, "claims"), {"name": name}) for name in lent)
    if not own:
        more = f"; it sees {total} devices where it asked for {count}" if total > count else ""
        return Fix(f"claim {resource} through DRA: share the app containers' claim(s) {', '.join(lent)} (an init "
                   f"container's devices pass on to them, as under the device plugin){more}",
                   Applicability.UNSAFE, (*references, *removals))
    claim = request[2] if sum(1 for _, r in pairs if r == resource) == 1 else f"{c.name}-{request[2]}"
    claim = _label(claim)
    owner = _label(obj.name or obj.kind, 40)
    named_base = _label(f"{owner}-{c.name}-{request[2]}", 250)
    named = _template_name(ctx, obj, named_base, _request_fields(request, own))
    if named is None:
        return NoFix(f"the template names {named_base!r} to {named_base}-100 are all taken by templates that ask "
                     "for other devices")
    template, exists = named
    made = () if exists else (add_document(_claim_template(template, obj.namespace, version, request, own)),)
    ray = _ray_gpu_count(obj, site, c, resource, count)
    return Fix(f"claim {resource} through DRA: ResourceClaimTemplate '{template}' of class {request[0]}" + sliced
               + (f" for {own} device(s), with the app containers' claim(s) {', '.join(lent)} it shares"
                  if lent else "")
               + (f"; rayStartParams num-gpus: '{count}' keeps Ray's GPU count" if ray else ""),
               Applicability.UNSAFE, (
                   *made,
                   append(site.path + ("resourceClaims",), {"name": claim, "resourceClaimTemplateName": template}),
                   *references,
                   append(c.path + (c.resources_key, "claims"), {"name": claim}),
                   *removals, *ray))


def _removals(c: ContainerSite, resource: str) -> list[Edit]:
    """The edits that take `resource` out of the container's limits and requests (a section
    it leaves empty goes with it)."""
    removals: list[Edit] = []
    for section in ("limits", "requests"):
        values = c.resources.get(section)
        if isinstance(values, dict) and resource in values:
            target = values if len(values) > 1 else c.resources
            removals.append(remove(edit_path(target, resource if target is values else section)))
    return removals


def _shared_migration(obj: Manifest, site: PodSite, c: ContainerSite, quantity: Yaml, selected: str,
                      strategy: tuple[str, str] | str, version: str | None) -> Fix | NoFix:
    """Pods on shared nvidia.com/gpu replicas (`selected`, the node label that says so) move to
    the DRA way of sharing: one ResourceClaim of one GPU that every pod of the workload
    references by resourceClaimName, with NVIDIA's GpuConfig sharing it the same way
    (`strategy`: (TimeSlicing or MPS, where that was read), else why it is not known). Unsafe:
    the pods then share one GPU on one node, where the plugin spread its replicas over many."""
    why = f"the pod selects nodes where nvidia.com/gpu is a shared replica ({selected}), and a claim takes whole GPUs"
    if isinstance(strategy, str):
        return NoFix(f"{why}; {strategy}: share one ResourceClaim between the pods with the driver's GpuConfig "
                     "(sharing.strategy TimeSlicing or MPS) by hand")
    if _count(quantity) != 1:
        return NoFix(f"{why}; it asks for {quantity!r} replicas, which one shared GPU does not give it")
    if version is None or version == "v1beta1":
        return NoFix(f"{why}; the shared claim needs resource.k8s.io/v1beta2 or v1 (Kubernetes 1.33+)")
    how, source = strategy
    name, claimed = _shared_claim(obj, site, c, version, how)
    selector, unshare = _unshare_selector(site, selected)
    return Fix(f"share one GPU through DRA: ResourceClaim '{name}' with GpuConfig sharing.strategy {how} (as "
               f"{source}), referenced by every pod; they then run on one GPU of one node; {selector}",
               Applicability.UNSAFE, (*claimed, *_removals(c, "nvidia.com/gpu"), *unshare))


def _shared_claim(obj: Manifest, site: PodSite, c: ContainerSite, version: str,
                  how: str) -> tuple[str, tuple[Edit, ...]]:
    """(name, edits) of the DRA form of a shared GPU: one ResourceClaim of one NVIDIA GPU with
    the driver's GpuConfig sharing it by `how` (TimeSlicing or MPS, k8s-dra-driver-gpu's
    api/nvidia.com/resource/v1beta1 GpuConfig), that the pod spec at `site` references by
    resourceClaimName (every pod of the workload, one allocation) for container `c`."""
    name = _label(f"{_label(obj.name or obj.kind, 40)}-{c.name}-shared-gpu", 253)
    claim = {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
             "metadata": {"name": name, **({"namespace": obj.namespace} if obj.namespace else {})},
             "spec": {"devices": {
                 "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
                 "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
                     "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
                     "sharing": {"strategy": how}}}}]}}}
    return name, (add_document(claim),
                  append(edit_path(site.spec, "resourceClaims"), {"name": "shared-gpu", "resourceClaimName": name}),
                  append(c.path + (c.resources_key, "claims"), {"name": "shared-gpu"}))


def _unshare_selector(site: PodSite, selected: str) -> tuple[str, tuple[Edit, ...]]:
    """(what the fix says, the edits) for the pod's node selection of shared replicas
    (`selected`): left as it is, a pod of the migrated workload would wait for nodes labelled
    for the device plugin's sharing, which no node running the DRA driver instead carries."""
    entries = unshared_node_selector(site)
    if not entries:
        return (f"the node affinity that selects shared replicas ({selected}) is left as written: edit it, or the "
                "pods wait for nodes of the device plugin's sharing", ())
    selector = site.spec["nodeSelector"]
    if all(value is None for value in entries.values()) and len(entries) == len(selector):
        edits: tuple[Edit, ...] = (remove(edit_path(site.spec, "nodeSelector")),)
    else:
        edits = tuple(remove(edit_path(selector, key)) if value is None else set_value(edit_path(selector, key), value)
                      for key, value in entries.items())
    said = ", ".join(f"{key}: {selector[key]} {'goes' if value is None else f'becomes {value}'}"
                     for key, value in entries.items())
    return f"the nodeSelector for shared replicas follows ({said})", edits


def _held_by_app_containers(obj: Manifest, site: PodSite, request: DraRequest, ctx: Context) -> list[tuple[str, int]]:
    """(pod claim, device count) of the claims the app containers use whose template asks
    for what a migration of this resource asks, at any count (the ones an earlier round
    made for them, or a user's of that very shape)."""
    templates = {entry.get("name"): entry.get("resourceClaimTemplateName") for entry in site.claims}
    held: dict[str, int] = {}
    for app in site.containers:
        if app.init:
            continue
        for entry in app.claims:
            name = entry.get("name")
            template_name = templates.get(name)
            if not isinstance(name, str) or "request" in entry or name in held or not isinstance(template_name, str):
                continue
            template = ctx.objects.claims.template(obj.namespace, template_name)
            count = _migrated_count(template, request) if template is not None else None
            if count:
                held[name] = count
    return list(held.items())


def _migrated_count(template: Manifest, request: DraRequest) -> int | None:
    """The device count of a template whose only request is a migration's of `request`."""
    requests = requests_of(template)
    count = requests[0].fields.get("count", 1) if len(requests) == 1 else None
    return count if type(count) is int and _asks_for(template, _request_fields(request, count)) else None


#: the most app claims whose combinations are tried (a pod rarely has more than a few)
_MOST_COMBINED = 12


def _lent(held: list[tuple[str, int]], count: int) -> tuple[list[str], int]:
    """(the app claims an init container asking for `count` devices shares, their devices):
    the combination with the fewest devices at or above `count` (fewest claims at equal), so
    that the pod holds no device more than under the device plugin and the container sees
    as few extra as can be; else every claim (and the caller adds the shortfall)."""
    held = held[:_MOST_COMBINED]
    candidates = [combo for size in range(1, len(held) + 1) for combo in combinations(held, size)
                  if sum(n for _, n in combo) >= count]
    if not candidates:
        return [name for name, _ in held], sum(n for _, n in held)
    best = min(candidates, key=lambda combo: (sum(n for _, n in combo), len(combo)))
    return [name for name, _ in best], sum(n for _, n in best)


#: the resource names KubeRay counts as GPUs (utils.IsGPUResourceKey): a name ending in "gpu",
#: or an NVIDIA MIG profile
_RAY_GPU = Lazy(r".*gpu|nvidia\.com/mig-\d+g\..*")


def _ray_gpu_count(obj: Manifest, site: PodSite, c: ContainerSite, resource: str, count: int) -> tuple[Edit, ...]:
    """KubeRay starts Ray with the Ray container's (the first one's) GPU limit as --num-gpus,
    and its autoscaler reads the group's GPUs there too, unless the group's rayStartParams set
    num-gpus (generateRayStartCommand, computeGPU). Once the limit is gone, Ray would count no
    GPU on the group and never scale it for GPU work: the migration writes the count into
    rayStartParams (not where the group sets `resources`, which KubeRay refuses beside it)."""
    pod_path = site.path
    if obj.group != "ray.io" or pod_path is None or pod_path[-2:] != ("template", "spec") or \
            c.path != pod_path + ("containers", 0) or not _RAY_GPU.fullmatch(resource):
        return ()
    group = obj.data
    for part in pod_path[:-2]:
        group = group[part]
    params = group.get("rayStartParams")
    if "resources" in group or "num-gpus" in mapping(params) or (params is not None and not isinstance(params, dict)):
        return ()
    return (set_value(pod_path[:-2] + ("rayStartParams", "num-gpus"), str(count)),)


def _template_name(ctx: Context, obj: Manifest, base: str, fields: YamlMap) -> tuple[str, bool] | None:
    """(the template name the migration uses, whether the workload's own file holds that
    template already): the derived name when it is free or holds the very request the
    migration would make (an earlier run's, or a copy of the workload's), else the first free
    or equal `base-N`; None (no fix) when the first hundred are all taken. A template of that
    name asking for something else (a user's own, a same-named workload's with another
    count) is never reused: the pod would get other devices. An equal template in another
    file (a same-named workload's, as in per-environment folders or alternative examples) is
    not relied on: the file gets its own copy, so that it still applies alone, as it did
    before the migration."""
    claims = ctx.objects.claims
    for n in range(1, 101):
        name = base if n == 1 else f"{base}-{n}"
        own = claims.template_in(obj.source.display, obj.namespace, name)
        existing = own or claims.template(obj.namespace, name)
        if existing is None or _asks_for(existing, fields):
            return name, own is not None
    return None


def _asks_for(template: Manifest, fields: YamlMap) -> bool:
    """Whether a claim template's only request is `fields` (API defaults filled in), with no
    constraints or config beside it."""
    devices = claim_spec(template).get("devices")
    requests = requests_of(template)
    if not isinstance(devices, dict) or set(devices) != {"requests"} or len(requests) != 1:
        return False
    body = {k: v for k, v in requests[0].fields.items() if k != "name"}
    return requests[0].shape in ("flat", "exactly") and {"allocationMode": "ExactCount", "count": 1, **body} == fields


@register
class LegacyGpuResource(Rule):
    id = "legacy-gpu-resource"
    name = "GPU requested through the device plugin"
    category = "legacy-resources"
    severity = Severity.ERROR
    needs = Needs.OBJECT_SET  # DeviceClasses that serve the resource through DRA
    admission = Admission(
        "!has(c.resources) || "
        f"((!has(c.resources.limits) || c.resources.limits.all(k, {_NOT_LEGACY})) && "
        f"(!has(c.resources.requests) || c.resources.requests.all(k, {_NOT_LEGACY})))",
        "a container asks for a GPU through a device-plugin resource; request it with a ResourceClaim",
        over="containers", targets=POD_TARGETS, through="1.35",
        beyond="from 1.36 (DRAExtendedResource on by default) a DeviceClass with extendedResourceName may serve "
               "the limit through DRA (KEP-5004); only the webhook's cache sees the cluster's classes")
    summary = ("A container asks for nvidia.com/gpu, nvidia.com/mig-*, amd.com/gpu, gpu.intel.com/* or habana.ai/gaudi in "
               "limits or requests.")
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
        any other mapping that holds `resources` beside an `image` (a CRD's own single
        container), and what is found there is `info` too, saying that the kind is judged
        only by that shape. The fix
        gives each container a claim of its own, except an init container that runs to
        completion: the kubelet hands its devices on to the app containers, and the
        scheduler counts the larger of the two, so it shares the app containers' claims
        (and claims only what they lack), and the pod holds no device more than before.
        `nvidia.com/gpu` means what the pod's node labels say: on nodes it selects by a
        MIG product (`...-MIG-1g.5gb`, the single MIG strategy) or a GKE GPU partition it
        is that MIG slice, and the claim asks for it; on nodes whose GPUs are time-sliced or
        MPS replicas (a `-SHARED` product, `nvidia.com/gpu.replicas`, GKE's sharing labels)
        it is a share, which a claim template cannot express: where the input says how the
        replicas are shared (GKE's `gke-gpu-sharing-strategy` label, or the one strategy
        the NVIDIA device plugin's config in the input gives nvidia.com/gpu) the fix makes
        one ResourceClaim of one GPU that every pod of the workload references, with
        NVIDIA's `GpuConfig` sharing it the same way (`sharing.strategy: TimeSlicing` or
        `MPS`); the pods then share one GPU of one node, where the plugin spread its
        replicas, which is why it is unsafe. The pod's nodeSelector follows: a `-SHARED`
        product names the model without the suffix (what GPU Feature Discovery labels once
        the plugin no longer shares the GPU) and the sharing labels go; a node affinity
        saying the same is left and named. Where the input does not say, no fix, and why. Nor where
        the container's requests and limits of the resource differ: the API server refuses
        that, and which count was meant is a guess."""
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
    fixable = FixAvailability.SOMETIMES  # one device per unit; not shares, not a CRD's own count
    options = {"strategy": Option("claims", choices=("claims", "extended-resource"), help="how the fix migrates: 'claims' (a ResourceClaimTemplate per container "
                                  "and resource) or 'extended-resource' (keep the limit; a DeviceClass with "
                                  "extendedResourceName serves it, KEP-5004, 1.34+)")}

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if (obj.group, obj.kind) in POD_TARGETS:
            sites = pod_sites(obj)
        elif _custom(obj.group):
            yield from self._unmodelled(obj, ctx)
            return
        else:
            return
        mapped = ctx.objects.extended_resource_classes
        strategy = ctx.option(self, "strategy")
        for site in sites:
            found = [(c, resource, section_list, values) for c in site.containers
                     for resource, section_list, (_, values) in _by_resource(c)]
            pairs = [(c, resource) for c, resource, _, _ in found]
            for c, resource, section_list, values in found:
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
                        f"not tied to the pod", values, resource, help=_suggestion(resource),
                        fix=migration(obj, site, c, resource, values[resource], pairs, strategy, ctx))

    def _unmodelled(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for c in unmodelled_containers(obj):
            for resource, section_list, (section, values) in _by_resource(c):
                yield ctx.finding(self, obj, f"{c.label} asks for {resource}: {values[resource]} in {section_list} "
                                  f"through the device plugin ({obj.kind} is not a kind draguard models: judged only by "
                                  "the shape of what it holds, a container with an image and resources)", values, resource, severity=Severity.INFO,
                                  help=_suggestion(resource))


def _custom(group: str) -> bool:
    """A custom resource's group (a domain, not a built-in group such as apps or *.k8s.io)."""
    return "." in group and not group.endswith(".k8s.io")


def _by_resource(c: ContainerSite) -> Iterator[tuple[str, str, tuple[str, YamlMap]]]:
    """(resource, 'limits and requests', the first (section, mapping)): limits and requests of
    one resource are one fault."""
    found: dict[str, list[tuple[str, YamlMap]]] = {}
    for section, values, resource in legacy_resources(c.resources, c.gpu_aliases):
        found.setdefault(resource, []).append((section, values))
    for resource, places in found.items():
        yield resource, " and ".join(section for section, _ in places), places[0]


@lru_cache(maxsize=None)
def _knobs(kind: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(entry["pattern"]), entry["what"]) for entry in sharing_knobs()[kind])


@lru_cache(maxsize=4096)
def _knob(kind: str, name: Yaml) -> str | None:
    """What sharing resource or annotation `name` is (data/sharing.yaml), else None: found
    once a name (a lint of 20,000 objects asks it of the same few names 30,000 times)."""
    return next((what for pattern, what in _knobs(kind) if isinstance(name, str) and pattern.search(name)), None)


def _container_knobs(c: ContainerSite) -> Iterator[tuple[YamlMap, str, str]]:
    """(the mapping, resource, what) of each sharing resource a container asks for, once: in
    its limits, else in its requests."""
    for section in ("limits", "requests"):
        values = c.resources.get(section)
        if not isinstance(values, dict):
            continue
        for resource in values:
            what = _knob("resources", resource)
            if what and not (section == "requests" and resource in (c.resources.get("limits") or {})):
                yield values, resource, what


def _sharing_knobs(c: ContainerSite) -> str:
    """The container's sharing resources (HAMi's nvidia.com/gpumem beside nvidia.com/gpu), as
    `names: what`, or ''."""
    found: dict[str, list[str]] = {}  # what -> names
    for _, resource, what in _container_knobs(c):
        found.setdefault(what, []).append(resource)
    return "; ".join(f"{', '.join(names)}: {what}" for what, names in found.items())


_CONFIG_MAP = ("", "ConfigMap")
#: what each of the device plugin's sharing strategies shares between the pods on one GPU
_SHARING_EFFECT = {"timeSlicing": "they share its memory and fault domain with no isolation",
                   "mps": "they share one MPS server and its memory, isolated only by per-client limits"}


@register
class LegacyGpuSharing(Rule):
    id = "legacy-gpu-sharing"
    name = "GPU shared by a scheduler extension"
    category = "legacy-resources"
    severity = Severity.ERROR
    webhook_only = ("matches resource names and pod-template annotations against the sharing table "
                    "(data/sharing.yaml), which the webhook carries")
    targets = POD_TARGETS | {_CONFIG_MAP}
    fixable = FixAvailability.SOMETIMES  # KAI's annotations; not the extensions' resources, not the plugin's config
    summary = ("A container asks for a share of a GPU through a scheduler extension's resources (HAMi's nvidia.com/"
               "gpumem and gpucores, Volcano vgpu-*, Koordinator, Alibaba Cloud) or a pod through KAI's gpu-fraction or "
               "gpu-memory annotation.")
    rationale = """
        These knobs split a GPU outside the scheduler's view of devices: HAMi and similar
        extensions enforce memory and compute shares, if at all, with an interception
        library inside the container; KAI's fractions are not enforced (no memory isolation
        between the pods on a GPU). The DRA allocator does not see the share, nothing ties
        its release to the pod, and one tenant can still take the whole device. With DRA a
        hardware slice is a device of its own (a MIG profile, an AMD partition), and a
        deliberately shared GPU is one claim with the driver's sharing configuration (MPS
        with memory limits, time-slicing). The resource names and annotations come from the
        projects' own charts and documentation (`data/sharing.yaml`). A ConfigMap holding the
        NVIDIA device plugin's own config with `sharing.timeSlicing` or `sharing.mps`
        replicas above 1 is the same habit for a whole node pool: every `nvidia.com/gpu` the
        plugin advertises there is a share, time-slicing with no memory or fault isolation
        between the tenants on one GPU. With DRA the sharing is a property of one claim
        (NVIDIA's `GpuConfig` with `sharing.strategy: TimeSlicing` or `MPS`), chosen per
        workload and visible to the allocator. The unsafe fix moves KAI's `gpu-fraction` or
        `gpu-memory` pod there: one ResourceClaim of one GPU with `TimeSlicing` (like KAI's
        share, it isolates no memory between the pods), claimed by the container KAI gives
        the GPU to (`gpu-fraction-container-name`, else the first) and referenced by every
        pod of the workload, the share's annotations removed; not a share of several GPUs
        (`gpu-fraction-num-devices` above 1), nor a container that also asks for a
        device-plugin GPU. A `schedulerName` is left: that scheduler must then allocate DRA
        claims. The scheduler extensions' resources have no fix: their shares are enforced
        in ways a claim's config does not say."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    upstream_note = """
        Guideline documents that suggest HAMi's `nvidia.com/gpumem` or a `gpu-fraction`
        annotation for tenant isolation describe shares that upstream Kubernetes neither
        schedules nor enforces; MIG slices through DRA are isolated in hardware."""
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: gpu-pod}
        spec:
          containers:
          - name: ubuntu-container
            image: ubuntu:22.04
            resources:
              limits:
                nvidia.com/gpu: 1
                nvidia.com/gpumem: 3000
                nvidia.com/gpucores: 30
        """
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        help_text = ("request a hardware slice with a ResourceClaimTemplate (a MIG profile, an AMD partition), or "
                     "share one claim with the driver's MPS or time-slicing configuration")
        if (obj.group, obj.kind) == _CONFIG_MAP:
            from ..model.plugin_config import shared_resources  # ConfigMaps only

            for sharing in obj.derive(shared_resources):
                yield ctx.finding(self, obj, f"ConfigMap key '{sharing.key}' configures the NVIDIA device plugin to "
                                  f"share each {sharing.resource} among {sharing.replicas} pods ({sharing.strategy}): "
                                  f"{_SHARING_EFFECT[sharing.strategy]}, for every tenant of the nodes that use it",
                                  obj.data["data"], sharing.key, value=True, offset=sharing.offset,
                                  help="share a GPU per workload with one ResourceClaim and the DRA driver's GpuConfig "
                                       "(sharing.strategy TimeSlicing or MPS), or give tenants MIG slices")
            return
        for site in pod_sites(obj):
            annotations = mapping(site.metadata.get("annotations"))
            for key in annotations:
                what = _knob("annotations", key)
                if what:
                    yield ctx.finding(self, obj, f"the pod is shared through annotation {key}: {annotations[key]} "
                                      f"({what}): a share of a GPU the DRA allocator does not see", annotations, key,
                                      help=help_text, fix=_annotation_migration(obj, site, annotations, key, ctx))
            for c in site.containers:
                for values, resource, what in _container_knobs(c):
                    yield ctx.finding(self, obj, f"{c.label} asks for {resource}: {values[resource]} ({what}): "
                                      "a share of a GPU the DRA allocator does not see", values, resource,
                                      help=help_text)


def _migrated_to(key: object) -> str | None:
    """The GpuConfig sharing strategy that keeps what a pod annotation's share gave the pod
    (data/sharing.yaml `migrate`), None where no DRA form is known."""
    return next((entry.get("migrate") for entry in sharing_knobs()["annotations"]
                 if isinstance(key, str) and re.search(entry["pattern"], key)), None)


#: KAI Scheduler's pod annotations beside the share (NVIDIA/KAI-Scheduler pkg/common/constants/
#: constants.go): the container that gets the GPU (else the first app container, as KAI's
#: binder picks it), and the number of GPUs the fraction is taken of
_KAI_CONTAINER, _KAI_DEVICES = "gpu-fraction-container-name", "gpu-fraction-num-devices"


def _annotation_migration(obj: Manifest, site: PodSite, annotations: YamlMap, key: str,
                          ctx: Context) -> Fix | NoFix | None:
    """The pod's share through annotations (KAI's gpu-fraction or gpu-memory) moved to DRA:
    one ResourceClaim of one GPU with the GpuConfig sharing that isolates no more and no less
    (data/sharing.yaml), that the container KAI gives the GPU to claims and every pod of the
    workload references; the share's annotations go. None where no DRA form is known; else
    the reason there is no fix."""
    how = _migrated_to(key)
    if how is None:
        return None
    shares = [k for k in annotations if _migrated_to(k)]
    if key != shares[0]:
        return NoFix(f"the fix of annotation {shares[0]} migrates this one too")
    why = f"KAI's {key}: {annotations[key]} shares a GPU"
    version = structured_claim_version(ctx.config.kube_version)
    if version is None or version == "v1beta1":
        return NoFix(f"{why}; the shared claim needs resource.k8s.io/v1beta2 or v1 (Kubernetes 1.33+)")
    devices = annotations.get(_KAI_DEVICES)
    if devices is not None and str(devices) != "1":
        return NoFix(f"{why} on each of {_KAI_DEVICES}: {devices} GPUs, which one shared claim of one GPU does not give")
    named = annotations.get(_KAI_CONTAINER)
    apps = [c for c in site.containers if not c.init]
    c = next((c for c in apps if c.name == named), None) if named is not None else next(iter(apps), None)
    if c is None or site.path is None:
        return NoFix(f"{why}; the container it goes to ({named or 'the first'}) is not in the pod spec")
    taken = [resource for resource, _, _ in _by_resource(c)]
    if taken:
        return NoFix(f"{why}; {c.label} also asks for {', '.join(taken)}: migrate that first (legacy-gpu-resource)")
    name, claimed = _shared_claim(obj, site, c, version, how)
    kai = [k for k in annotations if k in shares or k in (_KAI_CONTAINER, _KAI_DEVICES)]
    removals = ((remove(edit_path(site.metadata, "annotations")),) if len(kai) == len(annotations)
                else tuple(remove(edit_path(annotations, k)) for k in kai))
    scheduler = site.spec.get("schedulerName")
    left = (f"; schedulerName {scheduler} is left: it must allocate DRA claims, or the default scheduler does"
            if isinstance(scheduler, str) and scheduler != "default-scheduler" else "")
    return Fix(f"share one GPU through DRA: ResourceClaim '{name}' with GpuConfig sharing.strategy {how} for "
               f"{c.label} (like {key}: {annotations[key]}, it isolates no memory between the pods; MPS with a "
               f"per-client memory limit would enforce a share), referenced by every pod of it; removes "
               f"annotation(s) {', '.join(kai)}{left}", Applicability.UNSAFE, (*claimed, *removals))


#: node labels that GPU feature discovery sets for the device plugin's scheduling
_PLUGIN_LABEL = Lazy(r"^(nvidia\.com/(gpu\.(present|count|deploy\..+)|mig\..+)|amd\.com/gpu\..+|gpu\.intel\.com/.+)$")


@register
class LegacySchedulingLeftover(Rule):
    id = "legacy-scheduling-leftover"
    name = "Device-plugin scheduling left on a DRA pod"
    category = "legacy-resources"
    severity = Severity.INFO
    targets = POD_TARGETS
    summary = ("A pod that gets its devices from DRA claims, and asks for no device-plugin resource, still tolerates "
               "the device plugin's taint or selects nodes by its labels.")
    rationale = """
        Tolerations for the `nvidia.com/gpu` taint and node selectors on
        `nvidia.com/gpu.present` or `nvidia.com/gpu.count` were there for the device plugin.
        With DRA the allocator places the pod on a node whose ResourceSlices can satisfy its
        claims, and the claim's selectors say which device. These entries may still be
        needed: the nodes may keep the taint, and a label may carry meaning of its own. So
        `draguard fix` leaves them in place, and this note says where they are."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("terminationGracePeriodSeconds: 60\n",
                                         "terminationGracePeriodSeconds: 60\n      tolerations:\n"
                                         "      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            if not site.claims or any(True for c in site.containers for _ in _by_resource(c)):
                continue
            tolerations = site.spec.get("tolerations")
            for toleration in tolerations if isinstance(tolerations, list) else ():
                key = toleration.get("key") if isinstance(toleration, dict) else None
                if isinstance(key, str) and LEGACY_RESOURCE.match(key):
                    yield ctx.finding(self, obj, f"the pod tolerates the device plugin's taint {key}; with DRA claims "
                                      "it is needed only where nodes keep that taint: left as it is", toleration, "key",
                                      help="remove it once the GPU nodes no longer carry the taint")
            selector = site.spec.get("nodeSelector")
            for key in selector if isinstance(selector, dict) else ():
                if isinstance(key, str) and _PLUGIN_LABEL.match(key):
                    yield ctx.finding(self, obj, f"the pod selects nodes by {key}, a label set for the device plugin; "
                                      "the claims already place it on a node with the devices: left as it is",
                                      selector, key, help="remove it, or move what it means into the claim's selectors")
