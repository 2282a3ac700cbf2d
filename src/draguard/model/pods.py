"""One view of every pod spec and container, wherever the pod spec lives (see `workloads`).

Rules read pods through these views only: the claims a pod and a container use, lifecycle
hooks, the grace period, volumes, mounts and environment. Every accessor tolerates a wrong
type where a mapping or a list belongs (the schema rule reports those): it reads as absent.
Each is computed once (every rule asks again, and the data never changes after loading)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from ..core.cached import cached

from ..core.location import Path, format_path
from ..core.unread import shown, unreadable
from ..core.value import Viewed
from ..sources.yamlpos import path_of
from .manifest import Manifest
from .values import Yaml, YamlList, YamlMap
from .workloads import resolve, workload_for

if TYPE_CHECKING:
    from ..core.servers import Server

#: terminationGracePeriodSeconds when a pod does not set it (core/v1 API default).
DEFAULT_GRACE_SECONDS = 30


def mapping(value: Yaml) -> YamlMap:
    return value if isinstance(value, dict) else {}


def items(value: Yaml) -> YamlList:
    """A list as it is (anything else reads as an empty one)."""
    return value if isinstance(value, list) else []


def mappings(value: Yaml) -> list[YamlMap]:
    """The mapping items of a list (other items, and non-lists, read as absent)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def text(value: Yaml) -> str:
    return value if isinstance(value, str) else ""


def named(what: str, name: Yaml) -> str:
    """How a message names a thing: `pod claim 'gpu'`, or `an unnamed pod claim`."""
    return f"{what} '{name}'" if isinstance(name, str) and name else f"an unnamed {what}"


def pre_stop_of(container: YamlMap) -> YamlMap | None:
    """A container's lifecycle.preStop hook, when it has one that is a mapping."""
    hook = mapping(container.get("lifecycle")).get("preStop")
    return hook if isinstance(hook, dict) else None


class ContainerSite(Viewed):
    """One container (or a container-like object of a CRD) and where it sits."""

    __slots__ = ("container", "resources_key", "init", "gpu_aliases")

    def __init__(self, container: YamlMap, resources_key: str = "resources", init: bool = False,
                 gpu_aliases: tuple[str, ...] = ()) -> None:
        self.container = container
        self.resources_key = resources_key
        self.init = init
        self.gpu_aliases = gpu_aliases  # resource names the owning CRD turns into a device-plugin GPU

    @cached
    def path(self) -> Path:
        """From the document root (what fixes address); () in data without paths, which no
        rule judges (the engine judges positioned objects only: Manifest.position)."""
        return path_of(self.container) or ()

    @cached
    def lends_devices(self) -> bool:
        """An init container that runs to completion before the app containers start (not a
        sidecar, restartPolicy: Always): the kubelet's device manager hands its devices on
        to the containers after it (devicemanager.ManagerImpl.Allocate, devicesToReuse),
        and the scheduler counts a pod's resource as the larger of such a container's and
        the app containers' sum."""
        return self.init and self.container.get("restartPolicy") != "Always"

    @cached
    def name(self) -> str:
        return text(self.container.get("name"))

    @cached
    def label(self) -> str:
        """How messages name it: `container 'server'`, or where it is when it has no name."""
        return f"container '{self.name}'" if self.name else f"the container at {format_path(self.path)}"

    @cached
    def resources(self) -> YamlMap:
        return mapping(self.container.get(self.resources_key))

    @cached
    def claims(self) -> list[YamlMap]:
        """resources.claims entries: {name, request?}."""
        return mappings(self.resources.get("claims"))

    @cached
    def env(self) -> list[YamlMap]:
        return mappings(self.container.get("env"))

    @cached
    def env_from(self) -> list[YamlMap]:
        return mappings(self.container.get("envFrom"))

    @cached
    def volume_mounts(self) -> list[YamlMap]:
        return mappings(self.container.get("volumeMounts"))

    @cached
    def security_context(self) -> YamlMap:
        return mapping(self.container.get("securityContext"))

    @cached
    def lifecycle(self) -> YamlMap:
        return mapping(self.container.get("lifecycle"))

    @cached
    def pre_stop(self) -> YamlMap | None:
        return pre_stop_of(self.container)

    @cached
    def server(self) -> Server | None:
        """The inference server it runs (model.teardown.server_of), found once a container:
        three teardown rules ask it of the same containers (18,000 times a lint of 20,000)."""
        from .teardown import server_of  # model.teardown reads this module

        return server_of(self.container)


class PodSite(Viewed):
    """One pod spec inside an object, with its template metadata ({} when it has none)."""

    __slots__ = ("owner", "spec", "metadata", "containers")

    def __init__(self, owner: Manifest, spec: YamlMap, metadata: YamlMap,
                 containers: list[ContainerSite] | None = None) -> None:
        self.owner = owner
        self.spec = spec
        self.metadata = metadata
        self.containers: list[ContainerSite] = [] if containers is None else containers

    @cached
    def labels(self) -> YamlMap:
        return mapping(self.metadata.get("labels"))

    @cached
    def path(self) -> Path | None:
        """The pod spec's path from the document root (None for a bare container site)."""
        return path_of(self.spec)

    @cached
    def claims(self) -> list[YamlMap]:
        """spec.resourceClaims entries: {name, resourceClaimName | resourceClaimTemplateName}."""
        return mappings(self.spec.get("resourceClaims"))

    @cached
    def volumes(self) -> list[YamlMap]:
        return mappings(self.spec.get("volumes"))

    @property
    def grace_period(self) -> tuple[int, bool]:
        """(terminationGracePeriodSeconds, whether the pod states it) - the API default when not.
        A value that is no int64 (`.nan`, 1e400, a map) is said unreadable to the rule asking
        (core.unread): the default would be a guess."""
        grace = self.spec.get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and not isinstance(grace, bool) and -(2**63) <= grace < 2**63:  # an int64
            return grace, True
        if grace is not None:
            unreadable(self.spec, "terminationGracePeriodSeconds", f"is {shown(grace)}, not a number of seconds")
        return DEFAULT_GRACE_SECONDS, False

    @cached
    def generated_claims(self) -> dict[str, Yaml]:
        """A live Pod's status.resourceClaimStatuses: pod claim name -> the ResourceClaim its
        controller generated from the template (None: none was needed). The reference is
        resolved whether or not that claim is in the linted set."""
        if self.owner.kind != "Pod" or self.spec is not self.owner.spec:
            return {}
        return generated_claims_of(self.owner)

    def uses_template_claims(self) -> bool:
        return any(isinstance(entry.get("resourceClaimTemplateName"), str) for entry in self.claims)


def generated_claims_of(pod: Manifest) -> dict[str, Yaml]:
    """A live Pod's status.resourceClaimStatuses: pod claim name -> the ResourceClaim
    generated for it (None: none was needed)."""
    statuses = mappings(mapping(pod.data.get("status")).get("resourceClaimStatuses"))
    return {s["name"]: s.get("resourceClaimName") for s in statuses if isinstance(s.get("name"), str)}


def pod_sites(manifest: Manifest) -> list[PodSite]:
    """Every pod spec of `manifest` (none for kinds that hold no pods); computed once."""
    return manifest.derive(_find_pod_sites)


def claim_sites(manifest: Manifest) -> list[PodSite]:
    """Pod sites that consume DRA claims."""
    return [site for site in pod_sites(manifest) if site.claims]


def _pod_containers(spec: YamlMap, inline: tuple[str, ...]) -> list[ContainerSite]:
    sites: list[ContainerSite] = []
    # ephemeral containers (kubectl debug) run beside the others, with the pod's volumes and env
    for list_key, init in (("initContainers", True), ("containers", False), ("ephemeralContainers", False)):
        items = spec.get(list_key)
        if isinstance(items, list):
            sites.extend(ContainerSite(c, init=init) for c in items if isinstance(c, dict))
    for key in inline:
        value = spec.get(key)
        if isinstance(value, dict):
            sites.append(ContainerSite(value))
    return sites


def _find_pod_sites(manifest: Manifest) -> list[PodSite]:
    workload = workload_for(manifest)
    if workload is None:
        return []
    data = manifest.data
    sites: list[PodSite] = []
    for template_path in workload.templates:
        for template, _ in resolve(data, template_path):
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                spec = template["spec"]
                sites.append(PodSite(manifest, spec, mapping(template.get("metadata")),
                                     _pod_containers(spec, workload.inline_containers)))
    for spec_path in workload.pod_specs:
        for spec, _ in resolve(data, spec_path):
            if isinstance(spec, dict):
                meta = manifest.metadata if spec_path == "spec" else {}
                sites.append(PodSite(manifest, spec, meta, _pod_containers(spec, workload.inline_containers)))
    for container_path, resources_key in workload.containers:
        for container, _ in resolve(data, container_path):
            if isinstance(container, dict):
                sites.append(PodSite(manifest, {}, {}, [ContainerSite(container, resources_key,
                                                                      gpu_aliases=workload.gpu_aliases)]))
    return sites


_CONTAINER_LISTS = ("containers", "initContainers")


def unmodelled_containers(manifest: Manifest) -> list[ContainerSite]:
    """Containers found anywhere in an object of a kind the workload table does not know, by
    their shape: every `containers`/`initContainers` list item that has `resources`, and any
    other mapping that holds a `resources` mapping beside a string `image` (a CRD's own single
    container: OME's `runner`, a serving runtime's `server`). A safety net, not a model."""
    return manifest.derive(_find_unmodelled_containers)


def _container_shaped(node: YamlMap) -> bool:
    return isinstance(node.get("image"), str) and isinstance(node.get("resources"), dict)


def _find_unmodelled_containers(manifest: Manifest) -> list[ContainerSite]:
    found: list[ContainerSite] = []
    listed: set[int] = set()
    stack: list[Yaml] = [manifest.data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if _container_shaped(node) and id(node) not in listed:
                found.append(ContainerSite(node))
            for key, value in node.items():
                if key in _CONTAINER_LISTS and isinstance(value, list):
                    items = [c for c in value if isinstance(c, dict) and isinstance(c.get("resources"), dict)]
                    listed.update(map(id, items))
                    found.extend(ContainerSite(c, init=key == "initContainers") for c in items)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(found, key=lambda c: c.path)
