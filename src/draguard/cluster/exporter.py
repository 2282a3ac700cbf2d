"""`draguard exporter`'s state: the audit's answers about DRA devices and claims (the pool view
of dra.pools, the claim rules of rules.cluster_claims), kept current from the watch streams
one change at a time, and served as Prometheus metrics (docs/exporter.md lists them).

Incremental: each change is applied to the objects held and to the joins the claim rules
read (pods by uid and by name, claims by device, pool and node, slices by pool and node);
then only what it touches is judged again: the claims that reserve, are owned by or name a
changed pod, that hold a changed claim's devices, or are allocated from a changed pool or on
its nodes; and the pool view of the nodes whose slices, label, or devices' allocations
changed. A claim is judged by the same rules through the same engine as `draguard audit`,
on a ClusterView of its neighbourhood (the objects those rules can look up for it), so both
give one answer. The counts served are tallies that each judging updates by its difference;
`draguard_exporter_judged_total` counts the judgings (a benchmark and a test check that a
change re-judges only what it touches).

A finding that only time can make (a claim deleting past the rule's threshold, a reserving
pod finished long enough ago) is found by judging the claims it can befall again every
`TICK` seconds: those deleting or reserved by a finished or deleting pod."""

from __future__ import annotations

import gc
import json
import queue
import sys
import threading
import time
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..core.config import Config
from ..dra.inventory import Inventory, InventoryError
from ..dra.pools import NodeView, PoolLayout, stranded
from ..engine.run import Inputs, Run
from ..model.claims import device_requests
from ..model.live import (
    AllocatedDevice, ClusterView, allocation_node, allocation_results, blocks_others, is_allocated, reserved_for,
)
from ..model.manifest import Manifest
from ..model.objectset import ObjectSet
from ..model.pods import mapping, text
from ..rules import REGISTRY
from ..rules.base import Needs
from ..rules.cluster_claims import CLAIM
from .watch import uid_of

NODES, PODS = "nodes", "pods"
CLAIMS, SLICES = "resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io"
TAINTS = "devicetaintrules.resource.k8s.io"
#: What the exporter LISTs and watches: what the claim rules and the pool view read.
WATCHED = (NODES, PODS, CLAIMS, SLICES, TAINTS)
LOAD_CHUNK = 2000  # claims judged together after the initial LIST (their nodes viewed by an eighth of it)
TICK = 10.0  # seconds between judgings of the claims whose findings time alone can change
OTHER = "other"  # the namespace label of the namespaces past --max-namespaces
#: Claim phases; the age histogram covers those that should not last.
PHASES = ("pending", "reserved", "allocated-unreserved", "deleting")
AGED = ("pending", "allocated-unreserved", "deleting")
AGE_BUCKETS = (60, 300, 900, 1800, 3600, 6 * 3600, 24 * 3600, float("inf"))
STATES = ("free", "allocated", "tainted", "admin-held")


def is_leak_rule(rule) -> bool:
    """The rules of leaked and stuck claim state: the cluster rules that judge ResourceClaims."""
    return rule.needs is Needs.CLUSTER and rule.targets == CLAIM


LEAK_RULES = tuple(r for r in REGISTRY if is_leak_rule(r))


def compact(resource: str, obj: dict) -> dict:
    """What is kept of an object, as an informer's transform would keep it: all but
    metadata.managedFields, and of a pod all but its containers and volumes, which nothing
    here reads; its mappings of plain values (a device's attribute and capacity values, a
    selector) shared with the equal ones of the objects held (`_SHARED`), and so are a
    claim's spec and node selector. A slice's devices repeat the same attribute values on
    every node, and the claims of one template the same spec: shared, the benchmark's
    cluster takes a third less memory. Nothing here writes to an object held.""" 
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    spec = obj.get("spec")
    if resource == PODS and isinstance(spec, dict):
        for key in ("containers", "initContainers", "ephemeralContainers", "volumes"):
            spec.pop(key, None)
    if resource == CLAIMS:  # the claims of one template ask alike; those on one node are pinned alike
        _SHARED.whole(obj, "spec")
        _SHARED.whole(mapping(mapping(obj.get("status")).get("allocation")), "nodeSelector")
    return _SHARED.share(obj)


class _Shared:
    """Equal mappings of plain values, one instance each. Forgotten when past LIMIT entries
    (the values of objects long deleted would stay otherwise): what is held stays shared,
    and sharing starts again."""

    LIMIT = 500_000

    def __init__(self):
        self.table: dict = {}
        self.trees: dict = {}

    def whole(self, container: dict, key: str) -> None:
        """`container[key]` replaced by the equal tree held (equal as JSON)."""
        value = container.get(key)
        if isinstance(value, (dict, list)):
            if len(self.trees) > self.LIMIT:
                self.trees.clear()
            container[key] = self.trees.setdefault(json.dumps(value, sort_keys=True), value)

    def share(self, value):
        if isinstance(value, dict):
            plain = True
            for k, v in value.items():
                if isinstance(v, (dict, list)):
                    plain = False
                    shared = self.share(v)
                    if shared is not v:
                        value[k] = shared
            if plain:
                key = tuple((k, v.__class__, v) for k, v in value.items())  # 1 and True hash alike
                if len(self.table) > self.LIMIT:
                    self.table.clear()
                return self.table.setdefault(key, value)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)):
                    value[i] = self.share(v)
        return value


_SHARED = _Shared()


def claim_phase(claim: Manifest) -> str:
    if claim.metadata.get("deletionTimestamp"):
        return "deleting"
    if not is_allocated(claim):
        return "pending"
    return "reserved" if reserved_for(claim) else "allocated-unreserved"


def _epoch(value) -> float | None:
    from ..model.live import timestamp

    moment = timestamp(value)
    return None if moment is None else moment.timestamp()


def _classes(claim: Manifest) -> dict[str, int]:
    """Allocated devices by the DeviceClass of the request (or subrequest) each was allocated
    for; '' where the request names none or is not found."""
    by_request = {leaf.full_name: leaf.class_name or "" for leaf in device_requests(claim)}
    found: dict[str, int] = {}
    for result in allocation_results(claim):
        name = by_request.get(text(result.get("request")), "")
        found[name] = found.get(name, 0) + 1
    return found


@dataclass
class ClaimRow:
    """What one claim adds to the tallies."""

    namespace: str
    phase: str
    since: float | None  # when its phase's age starts (deletion, else creation), epoch seconds
    classes: dict[str, int]
    findings: dict[tuple[str, str], int]
    timed: bool  # time alone may change its findings


class Tally(dict):
    """Counts by label values, changed by a row's contribution (a key at zero is dropped, so
    its series goes)."""

    def add(self, counts: dict, sign: int = 1) -> None:
        for key, n in counts.items():
            value = self.get(key, 0) + sign * n
            if value:
                self[key] = value
            else:
                self.pop(key, None)


def _node_counts(view: NodeView) -> dict:
    """A node's view as it adds to its node pool's tallies."""
    counts: dict = {}

    def add(key, n):
        counts[key] = counts.get(key, 0) + n

    for (profile, state), n in view.states.items():
        add(("devices", view.node_pool, profile, state), n)
    for gpu in view.gpus:
        for profile, n in gpu.allocatable.items():
            add(("allocatable", view.node_pool, profile), n)
        for profile, n in gpu.best.items():
            add(("best", view.node_pool, profile), n)
        add(("largest", view.node_pool, gpu.largest), 1)
        add(("top-gpus", view.node_pool, gpu.top), 1)
        add(("top", view.node_pool, gpu.top), gpu.allocatable.get(gpu.top, 0))
    return counts


class _Holders:
    """Device ids, read as `pool_view` reads its `allocated` set: held exclusively (`admin`
    False), or allocated with admin access only (`admin` True)."""

    def __init__(self, holders: dict, admin: bool):
        self.holders, self.admin = holders, admin

    def __contains__(self, device) -> bool:
        found = self.holders.get(device)
        if not found:
            return False
        return blocks_others(found.values()) != self.admin


@dataclass
class Health:
    """The exporter's own state."""

    started: float
    ready: bool = False
    restarts: dict = field(default_factory=dict)  # (resource, why) -> n
    events: dict = field(default_factory=dict)  # (resource, type) -> n
    last_event: dict = field(default_factory=dict)  # resource -> the clock when its last event came
    judged: dict = field(default_factory=lambda: {"claim": 0, "node": 0})


class ExporterState:
    """The objects the exporter holds, their joins, and the tallies served. Every method
    that changes or reads them takes `lock`."""

    def __init__(self, config: Config, clock=time.time, max_namespaces: int = 50, unreadable=(), source: str = ""):
        from prometheus_client import Histogram
        from prometheus_client.registry import CollectorRegistry

        self.config, self.clock, self.max_namespaces = config, clock, max_namespaces
        self.unreadable, self.source = sorted(unreadable), source
        self.lock = threading.RLock()
        self.store: dict[str, dict[str, Manifest]] = {name: {} for name in WATCHED}
        self._pods_by_key: dict[tuple, str] = {}
        self._nodes: dict[str, Manifest] = {}
        self._claims_by_pod: dict = {}  # pod uid, or (namespace, name) -> claim uids that reserve or own it
        self._holders: dict[tuple, dict[str, AllocatedDevice]] = {}  # device id -> claim uid -> its result
        self._claims_by_pool: dict[tuple, set] = {}
        self._claims_by_node: dict[str, set] = {}
        self._slices_by_pool: dict[tuple, dict[str, Manifest]] = {}
        self._slices_by_node: dict[str, dict[str, Manifest]] = {}
        self._pools_by_node: dict[str, set] = {}
        self._nodes_of_pool: dict[tuple, set] = {}
        self._slice_nodes: dict[str, set] = {}  # slice uid -> the nodes its devices are on
        self.claim_rows: dict[str, ClaimRow] = {}
        self.node_rows: dict[str, NodeView] = {}
        self.claims, self.classes, self.findings, self.pools = Tally(), Tally(), Tally(), Tally()
        self.health = Health(clock())
        self.registry = CollectorRegistry()
        self.judge_seconds = Histogram("draguard_exporter_judge_duration_seconds",
                                       "seconds to apply a batch of changes and judge what they touched",
                                       registry=self.registry,
                                       buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10))
        from .metrics import Collector

        self.registry.register(Collector(self))

    # -- changes --
    def load(self, manifests: list[Manifest], resource_of) -> None:
        """The initial LIST: every object indexed, then everything judged once; ready after."""
        with self.lock, self.judge_seconds.time():
            claims, nodes = set(), set()
            for m in manifests:
                resource = resource_of(m)
                compact(resource, m.data)
                c, n = self._put(resource, m)
                claims |= c
                nodes |= n
            ordered, by_name = sorted(claims), sorted(nodes)
            for i in range(0, len(ordered), LOAD_CHUNK):  # a neighbourhood at a time: no view of everything
                self._judge(set(ordered[i:i + LOAD_CHUNK]))
            for i in range(0, len(by_name), LOAD_CHUNK // 8):
                self._view(set(by_name[i:i + LOAD_CHUNK // 8]))
            self.health.ready = True
        gc.freeze()  # what the LIST read lives long: the cyclic collector's full passes need not walk it

    def apply(self, changes) -> None:
        """A batch of watch changes, (resource name, ADDED / MODIFIED / DELETED / RELIST,
        object or objects): applied, then what they touched judged once."""
        with self.lock, self.judge_seconds.time():
            claims, nodes = set(), set()
            now = self.clock()
            for resource, kind, obj in changes:
                if resource not in self.store:
                    continue
                self.health.events[(resource, kind)] = self.health.events.get((resource, kind), 0) + 1
                self.health.last_event[resource] = now
                if kind == "RELIST":
                    fresh = {uid_of(o): o for o in obj}
                    for uid in set(self.store[resource]) - set(fresh):
                        c, n = self._drop(resource, uid)
                        claims |= c
                        nodes |= n
                    items = list(fresh.values())
                elif kind == "DELETED":
                    c, n = self._drop(resource, uid_of(obj))
                    claims |= c
                    nodes |= n
                    continue
                else:
                    items = [obj]
                for item in items:
                    c, n = self._put(resource, _manifest(resource, item, self.source))
                    claims |= c
                    nodes |= n
            self._judge(claims)
            self._view(nodes)

    def restarted(self, resource: str, why: str) -> None:
        with self.lock:
            self.health.restarts[(resource, why)] = self.health.restarts.get((resource, why), 0) + 1

    def tick(self) -> None:
        """Judge again the claims whose findings time alone can change."""
        with self.lock, self.judge_seconds.time():
            self._judge({uid for uid, row in self.claim_rows.items() if row.timed})

    def _put(self, resource: str, m: Manifest) -> tuple[set, set]:
        uid = uid_of(m.data)
        claims, nodes = self._drop(resource, uid, replacing=True)
        self.store[resource][uid] = m
        c, n = self._index(resource, uid, m, +1)
        return claims | c, nodes | n

    def _drop(self, resource: str, uid: str, replacing: bool = False) -> tuple[set, set]:
        old = self.store[resource].pop(uid, None)
        if old is None:
            return set(), set()
        claims, nodes = self._index(resource, uid, old, -1)
        if resource == CLAIMS and not replacing:
            self._forget(uid)
        return claims, nodes

    def _index(self, resource: str, uid: str, m: Manifest, sign: int) -> tuple[set, set]:
        """Add (`sign` +1) or remove (-1) `m` from the joins; (claims, nodes) it touches."""
        if resource == PODS:
            key = (m.namespace, m.name)
            if sign > 0:
                self._pods_by_key[key] = uid
            elif self._pods_by_key.get(key) == uid:
                del self._pods_by_key[key]
            return set(self._claims_by_pod.get(uid, ())) | set(self._claims_by_pod.get(key, ())), set()
        if resource == NODES:
            if sign > 0:
                self._nodes[m.name] = m
            else:
                self._nodes.pop(m.name, None)
            return set(), {m.name}
        if resource == TAINTS:
            return set(), set(self.node_rows) | set(self._pools_by_node)
        if resource == CLAIMS:
            return self._index_claim(uid, m, sign)
        if resource == SLICES:
            return self._index_slice(uid, m, sign)
        return set(), set()

    def _index_claim(self, uid: str, m: Manifest, sign: int) -> tuple[set, set]:
        refs = [text(r.get("uid")) for r in reserved_for(m)] + [(m.namespace, text(r.get("name")))
                                                                for r in reserved_for(m)]
        owner = m.controller
        if owner is not None:
            refs.append(text(owner.get("uid")))
        node = allocation_node(m)
        claims, nodes = {uid}, set()
        for ref in refs:
            _join(self._claims_by_pod, ref, uid, sign)
        _join(self._claims_by_node, node, uid, sign)
        for result in allocation_results(m):
            held = AllocatedDevice(m, result)
            device = held.device_id
            holders = self._holders.setdefault(device, {})
            if sign > 0:
                holders[uid] = held
            else:
                holders.pop(uid, None)
                if not holders:
                    del self._holders[device]
            claims |= set(holders)
            _join(self._claims_by_pool, device[:2], uid, sign)
            nodes |= self._nodes_of_pool.get(device[:2], set())
        return claims, nodes

    def _index_slice(self, uid: str, m: Manifest, sign: int) -> tuple[set, set]:
        pool = (text(m.spec.get("driver")), text(mapping(m.spec.get("pool")).get("name")))
        on = _nodes_of(m) if sign > 0 else self._slice_nodes.pop(uid, set())
        nodes = set(self._nodes_of_pool.get(pool, ()))
        if sign > 0:
            self._slice_nodes[uid] = on
            self._slices_by_pool.setdefault(pool, {})[uid] = m
        else:
            members = self._slices_by_pool.get(pool, {})
            members.pop(uid, None)
            if not members:
                self._slices_by_pool.pop(pool, None)
        for node in on:
            if sign > 0:
                self._slices_by_node.setdefault(node, {})[uid] = m
            else:
                self._slices_by_node.get(node, {}).pop(uid, None)
        self._nodes_of_pool[pool] = {n for s in self._slices_by_pool.get(pool, {}) for n in self._slice_nodes[s]}
        if not self._nodes_of_pool[pool]:
            del self._nodes_of_pool[pool]
        for node in on | nodes:
            pools = {p for p in self._pools_by_node.get(node, ()) if node in self._nodes_of_pool.get(p, ())}
            pools |= {pool} if node in self._nodes_of_pool.get(pool, ()) else set()
            if pools:
                self._pools_by_node[node] = pools
            else:
                self._pools_by_node.pop(node, None)
        claims = set(self._claims_by_pool.get(pool, ()))
        for node in on:
            claims |= self._claims_by_node.get(node, set())
        return claims, nodes | on

    # -- judging --
    def _neighbourhood(self, claims: list[Manifest]) -> list[Manifest]:
        """The claims and every object the claim rules may look up for them: the pods they
        name or are owned by, the claims holding their devices, their pools' slices and the
        slices on the node they are allocated on."""
        found: dict[int, Manifest] = {}
        pods = self.store[PODS]
        for claim in claims:
            found[id(claim)] = claim
            uids = [text(r.get("uid")) for r in reserved_for(claim)]
            uids += [self._pods_by_key.get((claim.namespace, text(r.get("name"))), "") for r in reserved_for(claim)]
            owner = claim.controller
            if owner is not None:
                uids.append(text(owner.get("uid")))
            for uid in uids:
                pod = pods.get(uid)
                if pod is not None:
                    found[id(pod)] = pod
            for result in allocation_results(claim):
                device = AllocatedDevice(claim, result).device_id
                for held in self._holders.get(device, {}).values():
                    found[id(held.claim)] = held.claim
                for s in self._slices_by_pool.get(device[:2], {}).values():
                    found[id(s)] = s
            for s in self._slices_by_node.get(allocation_node(claim), {}).values():
                found[id(s)] = s
        return list(found.values())

    def _judge(self, uids: set) -> None:
        for uid in uids - set(self.store[CLAIMS]):
            self._forget(uid)
        claims = [self.store[CLAIMS][uid] for uid in uids if uid in self.store[CLAIMS]]
        if not claims:
            return
        manifests = self._neighbourhood(claims)
        now = self.clock()
        view = ClusterView(ObjectSet(manifests), datetime.fromtimestamp(int(now), timezone.utc), self.unreadable)
        judged = {id(c) for c in claims}
        inputs = Inputs.snapshot(manifests, view, judged=lambda m: id(m) in judged)
        result = Run(self.config, inputs).findings(is_leak_rule, notes=False)
        by_claim: dict = {c.ref: {} for c in claims}
        for f in result.findings:
            counts = by_claim.get(f.obj)
            if counts is not None:
                counts[(f.rule, str(f.severity))] = counts.get((f.rule, str(f.severity)), 0) + 1
        for claim in claims:
            uid = uid_of(claim.data)
            self._forget(uid)
            phase = claim_phase(claim)
            since = _epoch(claim.metadata.get("deletionTimestamp" if phase == "deleting" else "creationTimestamp"))
            row = ClaimRow(claim.namespace, phase, since, _classes(claim), by_claim[claim.ref],
                           phase == "deleting" or any(self._finishing(r) for r in reserved_for(claim)))
            self.claim_rows[uid] = row
            self._count(row, +1)
        self.health.judged["claim"] += len(claims)

    def _finishing(self, ref: dict) -> bool:
        pod = self.store[PODS].get(text(ref.get("uid")))
        return pod is not None and (bool(pod.metadata.get("deletionTimestamp"))
                                    or text(mapping(pod.data.get("status")).get("phase")) in ("Succeeded", "Failed"))

    def _forget(self, uid: str) -> None:
        row = self.claim_rows.pop(uid, None)
        if row is not None:
            self._count(row, -1)

    def _count(self, row: ClaimRow, sign: int) -> None:
        self.claims.add({(row.namespace, row.phase): 1}, sign)
        self.classes.add({(row.namespace, c): n for c, n in row.classes.items()}, sign)
        self.findings.add(row.findings, sign)

    def _view(self, nodes: set) -> None:
        """The pool view of `nodes` again, from every pool with devices on them."""
        for name in nodes:
            old = self.node_rows.pop(name, None)
            if old is not None:
                self.pools.add(_node_counts(old), -1)
        nodes = {n for n in nodes if n in self._pools_by_node}
        if not nodes:
            return
        slices = {id(s): s for n in nodes for p in self._pools_by_node[n] for s in self._slices_by_pool[p].values()}
        try:
            inventory = Inventory.from_manifests([*slices.values(), *self.store[TAINTS].values()],
                                                 with_builtin_classes=False)
        except InventoryError as exc:
            sys.stderr.write(f"draguard exporter: nodes {', '.join(sorted(nodes))} not viewed: {exc}\n")
            return
        layout = PoolLayout.of(inventory, {n: dict(self._nodes[n].labels) for n in nodes if n in self._nodes})
        held, admin = _Holders(self._holders, False), _Holders(self._holders, True)
        for name in sorted(nodes & set(layout.parts)):
            view = self.node_rows[name] = layout.node(name, held, admin)
            self.pools.add(_node_counts(view), +1)
        self.health.judged["node"] += len(nodes)

    # -- what is served --
    def namespace_labels(self) -> dict[str, str]:
        """Namespace -> its label: the `max_namespaces` with the most claims keep their name,
        the others are `other`."""
        totals: dict[str, int] = {}
        for (namespace, _), n in self.claims.items():
            totals[namespace] = totals.get(namespace, 0) + n
        for namespace, _ in self.classes:
            totals.setdefault(namespace, 0)
        ranked = sorted(totals, key=lambda ns: (-totals[ns], ns))
        return {ns: ns if i < self.max_namespaces else OTHER for i, ns in enumerate(ranked)}

    def ages(self) -> dict[str, tuple[list[int], float]]:
        """Phase -> (claims per age bucket, cumulative as a histogram's buckets; the sum of
        their ages), now."""
        now = self.clock()
        counts = {phase: [0] * len(AGE_BUCKETS) for phase in AGED}
        sums = dict.fromkeys(AGED, 0.0)
        for row in self.claim_rows.values():
            if row.phase in counts:
                age = max(0.0, now - row.since) if row.since is not None else 0.0
                counts[row.phase][bisect_left(AGE_BUCKETS, age)] += 1
                sums[row.phase] += age
        for buckets in counts.values():
            for i in range(1, len(buckets)):
                buckets[i] += buckets[i - 1]
        return {phase: (counts[phase], sums[phase]) for phase in AGED}

    def stranded(self) -> dict[tuple[str, str], float]:
        actual: dict[str, dict] = {}
        best: dict[str, dict] = {}
        for (what, pool, profile, *_), n in self.pools.items():
            if what in ("allocatable", "best"):
                (actual if what == "allocatable" else best).setdefault(pool, {})[profile] = n
        return {(pool, profile): value for pool in sorted(best)
                for profile, value in stranded(actual.get(pool, {}), best[pool]).items()}


def _manifest(resource: str, obj: dict, source: str) -> Manifest:
    return Manifest.from_data(compact(resource, obj), display=f"{source}:{resource}", positions=False)


def _join(index: dict, key, uid: str, sign: int) -> None:
    if not key:
        return
    if sign > 0:
        index.setdefault(key, set()).add(uid)
    else:
        members = index.get(key)
        if members is not None:
            members.discard(uid)
            if not members:
                del index[key]


def _nodes_of(m: Manifest) -> set:
    """The nodes a slice's devices are on (a device's own nodeName, else the slice's), as
    dra.pools groups them; '' for devices on no one node."""
    from ..dra.devices import ModelError, slice_from

    try:
        s = slice_from(m)
    except ModelError:  # a slice the model refuses: said when its nodes are viewed (Inventory)
        return {text(m.spec.get("nodeName"))}
    return {d.node_name or s.node_name or "" for d in s.devices} or {s.node_name or ""}


def follow(connection, state: ExporterState, stop: threading.Event) -> None:
    """Apply the watch streams' changes to `state` (listed through `connection`) until `stop`."""
    from .snapshot import RESOURCES
    from .watch import stream_changes

    changes: queue.Queue = queue.Queue()
    for resource in RESOURCES:
        if resource.name in WATCHED and resource.name in connection.listed:
            threading.Thread(target=stream_changes, args=(connection, resource, changes, stop, state.restarted),
                             daemon=True).start()
    consume(changes, state, stop)


def consume(changes: queue.Queue, state: ExporterState, stop: threading.Event) -> None:
    """Apply the changes queued (as `watch.stream_changes` queues them) to `state` until
    `stop`: each batch as soon as it arrives, every change queued meanwhile with it (no
    waiting for a burst to end, unlike `--watch`); `tick` every TICK seconds."""
    next_tick = time.monotonic() + TICK
    while not stop.is_set():
        try:
            batch = [changes.get(timeout=max(0.0, min(1.0, next_tick - time.monotonic())))]
        except queue.Empty:
            batch = []
        while batch and len(batch) < 10000:
            try:
                batch.append(changes.get_nowait())
            except queue.Empty:
                break
        if batch:
            state.apply(batch)
        if time.monotonic() >= next_tick:
            state.tick()
            next_tick = time.monotonic() + TICK
