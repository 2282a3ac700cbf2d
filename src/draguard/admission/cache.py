"""The webhook's picture of the cluster, fed by watch streams: what the cross-object rules
read (DeviceClasses, claim templates, claims, budgets, namespaces, workloads) and the devices the
satisfiability rule judges against (slices, nodes, taint rules). One LIST per resource at
start, then its watch stream (cluster.watch.stream_changes); a request never LISTs. The
webhook is ready once every LIST has answered.

The objects a request sees (its namespace's and the cluster-scoped ones) are regrouped by the
cache's thread after each burst of changes, never on a request's path: a request sees the last
state built (a claim change takes milliseconds to rebuild; a ResourceSlice change rebuilds the
inventory, a second for 1,000 nodes of 8 GPUs)."""

from __future__ import annotations

import queue
import threading

from ..cluster.live import ClusterError, Connection, list_resource, served_version
from ..cluster.snapshot import RESOURCES, Resource
from ..cluster.watch import apply, stream_changes
from ..dra.inventory import DEVICE_KINDS, Inventory, InventoryError
from ..model.gpu import DEVICE_ENV_VARS
from ..model.manifest import Manifest
from ..model.pods import mapping

#: ConfigMaps, which no audit reads: the webhook keeps of each only the keys that can name a
#: device-selecting variable (trimmed), for the pods that take variables from one by envFrom
CONFIG_MAPS = Resource("", ("v1",), "configmaps", "ConfigMap")
#: what the webhook watches (resource names as RBAC spells them): what the cross-object rules
#: read (the workloads for what a PodDisruptionBudget selects and what a scale resizes, the
#: ConfigMaps a container's envFrom takes variables from) and the devices
WATCHED = ("namespaces", "poddisruptionbudgets.policy", "deviceclasses.resource.k8s.io",
           "resourceclaimtemplates.resource.k8s.io", "resourceclaims.resource.k8s.io",
           "resourceslices.resource.k8s.io", "nodes", "devicetaintrules.resource.k8s.io",
           "deployments.apps", "statefulsets.apps", "daemonsets.apps", "replicasets.apps", "jobs.batch",
           CONFIG_MAPS.name)
_WATCHED_RESOURCES = [r for r in (*RESOURCES, CONFIG_MAPS) if r.name in WATCHED]
#: read through the inventory only, never as a request's context
_INVENTORY_ONLY = DEVICE_KINDS - {("resource.k8s.io", "DeviceClass")}
#: the resources the inventory is built from
_DEVICE_RESOURCES = frozenset(r.name for r in RESOURCES if (r.group, r.kind) in DEVICE_KINDS)


def _trimmed(change: tuple) -> tuple:
    """A change as the cache keeps it: a ConfigMap with only the keys that, behind an envFrom
    prefix or none, name a device-selecting variable (model.gpu.DEVICE_ENV_VARS); its other
    data, often large and none of admission's business, is never held."""
    name, kind, obj = change
    if name != CONFIG_MAPS.name or kind == "DELETED":
        return change
    return name, kind, [_device_keys(o) for o in obj] if kind == "RELIST" else _device_keys(obj)


def _device_keys(config_map: dict) -> dict:
    data = mapping(config_map.get("data"))
    meta = mapping(config_map.get("metadata"))
    kept = {key: value for key, value in data.items()
            if isinstance(key, str) and key and any(variable.endswith(key) for variable in DEVICE_ENV_VARS)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": kept,
            "metadata": {key: meta[key] for key in ("name", "namespace", "uid") if key in meta}}


class ClusterCache:
    def __init__(self, connection: Connection, log, devices_for=None):
        """`devices_for(inventory)`: what requests judge the cluster's devices with (the webhook:
        the inventory with its allocator, dra.target.Target), built by the cache's thread once
        per change of the devices; None: the inventory itself."""
        self.connection, self.log = connection, log
        self._devices_for = devices_for
        self.store: dict[str, dict] = {}
        self.unreadable: dict[str, str] = {}
        self._changes: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._version = 0
        self._device_version = 0  # changes of the resources the inventory is built from
        self._built: tuple | None = None  # (version, context by namespace, device version, devices)
        self._streaming = False  # the thread applies changes and rebuilds after each burst

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True, name="cluster-cache").start()

    def stop(self) -> None:
        self._stop.set()

    def ready(self) -> bool:
        return self._ready.is_set()

    def _run(self) -> None:
        resources = _WATCHED_RESOURCES
        while not self._stop.is_set() and not self._ready.is_set():
            try:
                for resource in resources:
                    if resource.name in self.store or resource.name in self.unreadable:
                        continue
                    version = served_version(self.connection, resource)
                    items, why = list_resource(self.connection, resource, version) if version else ([], "not served")
                    with self._lock:
                        if why:
                            self.unreadable[resource.name] = why
                        else:
                            self._apply((resource.name, "RELIST", items))
            except ClusterError as exc:  # not reachable yet: not ready, try again
                self.log("cache list failed", error=str(exc))
                self._stop.wait(2)
                continue
            for name, why in self.unreadable.items():
                self.log("cache cannot read", resource=name, reason=why)
            for resource in resources:
                if resource.name in self.store:
                    threading.Thread(target=stream_changes, args=(self.connection, resource, self._changes, self._stop),
                                     daemon=True).start()
            self._rebuild()
            self._streaming = True
            self._ready.set()
            self.log("cache synced", objects=sum(len(v) for v in self.store.values()))
        while not self._stop.is_set():
            try:
                change = self._changes.get(timeout=1)
            except queue.Empty:
                continue
            with self._lock:
                self._apply(change)
                while not self._changes.empty():  # the rest of the burst, then one rebuild
                    self._apply(self._changes.get_nowait())
            self._rebuild()

    def _apply(self, change: tuple) -> None:
        apply(self.store, _trimmed(change))
        self._version += 1
        self._device_version += change[0] in _DEVICE_RESOURCES

    def view(self, namespace: str) -> tuple[list[Manifest], object]:
        """(the cached objects a request in `namespace` can refer to: that namespace's and the
        cluster-scoped ones but devices and nodes; the devices as `devices_for` made them, None
        when no driver publishes any), as last built. A cache driven without its thread (tests,
        benchmarks) is rebuilt here when it changed."""
        built = self._built
        if built is None or (not self._streaming and built[0] != self._version):
            built = self._rebuild()
        by_namespace, devices = built[1], built[3]
        return by_namespace.get(namespace, []) + by_namespace.get("", []), devices

    def _rebuild(self) -> tuple:
        """The objects as manifests by namespace, and the devices (1.6 s for 1,000 nodes of 8
        GPUs, and their allocator) only when what they are built from changed, not after each
        claim a pod adds."""
        with self._lock:
            built = self._built
            if built is not None and built[0] == self._version:
                return built
            version, device_version = self._version, self._device_version
            objects = [o for items in self.store.values() for o in items.values()]
        manifests = [Manifest.from_data(o, display="(cluster)", document=i, positions=False)
                     for i, o in enumerate(objects)]
        if built is not None and built[2] == device_version:
            devices = built[3]
        else:
            devices = self._inventory([m for m in manifests if (m.group, m.kind) in DEVICE_KINDS])
            if devices is not None and self._devices_for is not None:
                devices = self._devices_for(devices)
        by_namespace: dict[str, list[Manifest]] = {}
        for m in manifests:
            if (m.group, m.kind) not in _INVENTORY_ONLY:
                by_namespace.setdefault(m.namespace, []).append(m)
        built = (version, by_namespace, device_version, devices)
        with self._lock:
            self._built = built
        return built

    def _inventory(self, devices: list[Manifest]) -> Inventory | None:
        """The cluster's devices, None when no driver publishes any (or they cannot be modelled:
        satisfiability is then judged against the built-in GPU inventory, and the log says so)."""
        try:
            inventory = Inventory.from_manifests(devices)
        except InventoryError as exc:
            self.log("cluster devices cannot be modelled: satisfiability judged against the built-in GPU inventory", error=str(exc))
            return None
        return inventory if inventory.slices else None
