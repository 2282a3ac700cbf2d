"""The webhook's picture of the cluster, fed by watch streams: what the cross-object rules
read (DeviceClasses, claim templates, claims, budgets, namespaces) and the devices the
satisfiability rule judges against (slices, nodes, taint rules). One LIST per resource at
start, then its watch stream (cluster.watch.stream_changes); a request never LISTs. The
webhook is ready once every LIST has answered.

The objects a request sees (its namespace's and the cluster-scoped ones) are regrouped only
after a change, not per request."""

from __future__ import annotations

import queue
import threading

from ..cluster.live import ClusterError, Connection, list_resource, served_version
from ..cluster.snapshot import RESOURCES
from ..cluster.watch import apply, stream_changes
from ..dra.inventory import DEVICE_KINDS, Inventory, InventoryError
from ..model.manifest import Manifest

#: what the webhook watches (resource names as RBAC spells them)
WATCHED = ("namespaces", "poddisruptionbudgets.policy", "deviceclasses.resource.k8s.io",
           "resourceclaimtemplates.resource.k8s.io", "resourceclaims.resource.k8s.io",
           "resourceslices.resource.k8s.io", "nodes", "devicetaintrules.resource.k8s.io")
#: read through the inventory only, never as a request's context
_INVENTORY_ONLY = DEVICE_KINDS - {("resource.k8s.io", "DeviceClass")}


class ClusterCache:
    def __init__(self, connection: Connection, log):
        self.connection, self.log = connection, log
        self.store: dict[str, dict] = {}
        self.unreadable: dict[str, str] = {}
        self._changes: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._version = 0
        self._built: tuple | None = None  # (version, context by namespace, inventory)

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True, name="cluster-cache").start()

    def stop(self) -> None:
        self._stop.set()

    def ready(self) -> bool:
        return self._ready.is_set()

    def _run(self) -> None:
        resources = [r for r in RESOURCES if r.name in WATCHED]
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
                            apply(self.store, (resource.name, "RELIST", items))
                            self._version += 1
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
            self._ready.set()
            self.log("cache synced", objects=sum(len(v) for v in self.store.values()))
        while not self._stop.is_set():
            try:
                change = self._changes.get(timeout=1)
            except queue.Empty:
                continue
            with self._lock:
                apply(self.store, change)
                self._version += 1

    def view(self, namespace: str) -> tuple[list[Manifest], Inventory | None]:
        """(the cached objects a request in `namespace` can refer to: that namespace's and the
        cluster-scoped ones but devices and nodes, the devices as an inventory or None when no
        driver publishes any), rebuilt after a change, not per request."""
        by_namespace, inventory = self._current()
        return by_namespace.get(namespace, []) + by_namespace.get("", []), inventory

    def _current(self) -> tuple[dict, Inventory | None]:
        with self._lock:
            built = self._built
            if built is not None and built[0] == self._version:
                return built[1], built[2]
            version = self._version
            objects = [o for items in self.store.values() for o in items.values()]
        manifests = [Manifest.from_data(o, display="(cluster)", document=i, positions=False)
                     for i, o in enumerate(objects)]
        try:
            inventory = Inventory.from_manifests([m for m in manifests if (m.group, m.kind) in DEVICE_KINDS])
        except InventoryError as exc:
            self.log("cluster devices cannot be modelled: satisfiability judged against the catalog", error=str(exc))
            inventory = None
        inventory = inventory if inventory is not None and inventory.slices else None
        by_namespace: dict[str, list[Manifest]] = {}
        for m in manifests:
            if (m.group, m.kind) not in _INVENTORY_ONLY:
                by_namespace.setdefault(m.namespace, []).append(m)
        with self._lock:
            self._built = (version, by_namespace, inventory)
        return by_namespace, inventory
