"""The pool view: how much of each node's devices is used, what is still allocatable per
partition profile, and how much capacity the current placement strands.

Definitions (shared by `draguard audit` and the simulator):

- **allocatable per profile**, as KEP-5677's PoolStatus.partitionSummary counts it: the
  number of additional devices of that profile that could still be allocated together given
  the counters already consumed (free, untainted devices; for devices without counters, the
  free ones). A device's profile is its `profile` attribute (MIG), else its `type`, else
  `device`.
- **stranded capacity per profile**: 1 - allocatable under the actual placement / allocatable
  under the best repacking of the same in-use devices. Repacking moves each in-use partition
  to another placement of the same profile on the same GPU (counter set); moving it to another
  GPU means rescheduling its pod, which the audit does not assume. 0 when nothing of the
  profile could be placed either way.
- **largest placeable profile per GPU**: the profile with the most memory of which one more
  device fits on that GPU now ('none' when nothing fits); the GPU's **top profile** is its
  profile with the most memory, whether it fits or not.
- **device states** per profile: allocated (held exclusively), tainted (free but blocked by
  a NoSchedule/NoExecute taint), admin-held (free for other claims, but allocated with
  admin access, which the scheduler does not count: KEP-5018) and free (the rest).
- **utilization** per node as the cluster autoscaler computes it for DRA
  (kubernetes/autoscaler cluster-autoscaler/simulator/dynamicresources/utils/utilization.go,
  calculatePoolUtil and HighestDynamicResourceUtilization): per pool, the most consumed
  shared counter weighs the partitionable devices and the allocated fraction the atomic
  ones; a node's utilization is its highest pool's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from .allocator import _newest_generation
from .inventory import Inventory

#: Node labels that name a node pool, by provider; the first one present wins.
NODE_POOL_LABELS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool",
                    "kubernetes.azure.com/agentpool", "node.kubernetes.io/instance-type")
_BLOCKING = ("NoSchedule", "NoExecute")


def profile_of(device) -> str:
    for name in ("profile", "type"):
        attr = device.attribute(f"{device.driver}/{name}")
        if attr is not None and isinstance(attr.value, str):
            return attr.value
    return "device"


def _memory(device) -> Fraction:
    return device.capacity.get(device.driver, {}).get("memory", Fraction(0))


@dataclass
class GpuView:
    """One counter set (a physical GPU split into partitions) or one atomic device."""

    node: str
    name: str
    allocatable: dict[str, int]  # profile -> under the actual placement
    best: dict[str, int]  # profile -> under the best repacking
    largest: str  # the largest placeable profile, 'none'
    top: str  # the profile with the most memory, placeable or not


@dataclass
class NodeView:
    name: str
    node_pool: str
    total: int = 0
    allocated: int = 0
    tainted: int = 0
    utilization: float = 0.0  # the cluster autoscaler's
    gpus: list[GpuView] = field(default_factory=list)
    states: dict[tuple[str, str], int] = field(default_factory=dict)  # (profile, state) -> devices

    @property
    def free(self) -> int:
        return self.total - self.allocated - self.tainted

    def allocatable(self) -> dict[str, int]:
        return _added(g.allocatable for g in self.gpus)

    def as_json(self) -> dict:
        return {"name": self.name, "nodePool": self.node_pool, "devices": {
            "total": self.total, "allocated": self.allocated, "free": self.free, "tainted": self.tainted},
            "utilization": round(self.utilization, 4), "allocatable": dict(sorted(self.allocatable().items())),
            "largestPlaceable": dict(sorted(Counter(g.largest for g in self.gpus).items()))}


@dataclass
class PoolView:
    nodes: list[NodeView]

    def totals(self) -> dict:
        return {key: sum(getattr(n, key) for n in self.nodes) for key in ("total", "allocated", "free", "tainted")}

    def allocatable(self) -> dict[str, int]:
        return dict(sorted(_added(g.allocatable for n in self.nodes for g in n.gpus).items()))

    def stranded(self) -> dict[str, float]:
        gpus = [g for n in self.nodes for g in n.gpus]
        return stranded(_added(g.allocatable for g in gpus), _added(g.best for g in gpus))

    def largest_placeable(self) -> dict[str, int]:
        return dict(sorted(Counter(g.largest for n in self.nodes for g in n.gpus).items()))

    def node_pools(self) -> dict[str, dict]:
        grouped: dict[str, list[NodeView]] = {}
        for node in self.nodes:
            grouped.setdefault(node.node_pool, []).append(node)
        return {name: PoolView(nodes).summary() for name, nodes in sorted(grouped.items())}

    def summary(self) -> dict:
        gpus = [g for n in self.nodes for g in n.gpus]
        return _summary(self.totals(), _added(g.allocatable for g in gpus), _added(g.best for g in gpus),
                        Counter(g.largest for g in gpus), [n.utilization for n in self.nodes])

    def as_json(self) -> dict:
        return {"cluster": self.summary(), "nodePools": self.node_pools(), "nodes": [n.as_json() for n in self.nodes]}


def _summary(totals: dict, allocatable: dict[str, int], best: dict[str, int], largest: Mapping[str, int],
             utilizations: list[float]) -> dict:
    """The cluster summary from its sums over the GPUs (`largest`: GPUs per largest placeable
    profile) and each node's utilization, in node order (their mean is summed in that order)."""
    return {"nodes": len(utilizations), "devices": totals, "allocatable": dict(sorted(allocatable.items())),
            "stranded": stranded(allocatable, best), "largestPlaceable": dict(sorted(largest.items())),
            "utilization": round(sum(utilizations) / len(utilizations), 4) if utilizations else 0.0}


class PoolTally:
    """PoolView.summary of a fixed set of nodes, kept as their views are replaced one by one:
    what a node's view adds to the sums is taken out again when a new view of the node comes.
    The simulator summarizes the pool after every moment, and a moment changes few nodes of
    thousands (summing every GPU again was a sixth of a 5,000-node rollout). The sums are
    integers, so they equal the ones made from scratch; a profile is named while some GPU's
    counts name it, as `_added` names it."""

    _TOTALS = ("total", "allocated", "free", "tainted")

    def __init__(self, names: list[str]):
        self._index = {name: i for i, name in enumerate(names)}
        self._views: list[NodeView | None] = [None] * len(names)
        self._utilizations = [0.0] * len(names)
        self._totals = dict.fromkeys(self._TOTALS, 0)
        self._sums: tuple[_Sums, _Sums, _Sums] = (_Sums(), _Sums(), _Sums())  # allocatable, best, largest

    def replace(self, view: NodeView) -> None:
        """`view` is the node's view from now on (the node is one of the tally's)."""
        i = self._index[view.name]
        old = self._views[i]
        if old is not None:
            self._count(old, -1)
        self._count(view, 1)
        self._views[i], self._utilizations[i] = view, view.utilization

    def _count(self, view: NodeView, sign: int) -> None:
        totals = self._totals
        for key in self._TOTALS:
            totals[key] += sign * getattr(view, key)
        allocatable, best, largest = self._sums
        for g in view.gpus:
            allocatable.add(g.allocatable, sign)
            best.add(g.best, sign)
            largest.add({g.largest: 1}, sign)

    def summary(self) -> dict:
        """PoolView(every node's view).summary(), the nodes in the order the tally was given."""
        allocatable, best, largest = self._sums
        return _summary(dict(self._totals), allocatable.total, best.total, largest.total, self._utilizations)


class _Sums:
    """Per-profile counts summed over GPUs, with how many GPUs' counts name each profile."""

    def __init__(self) -> None:
        self.total: dict[str, int] = {}
        self._naming: dict[str, int] = {}

    def add(self, counts: dict[str, int], sign: int) -> None:
        total, naming = self.total, self._naming
        for profile, n in counts.items():
            left = naming.get(profile, 0) + sign
            if left:
                naming[profile], total[profile] = left, total.get(profile, 0) + sign * n
            else:
                del naming[profile], total[profile]


def stranded(actual: dict[str, int], best: dict[str, int]) -> dict[str, float]:
    """Profile -> stranded capacity, from what is allocatable under the actual placement and
    under the best repacking (each summed over the same GPUs)."""
    return {p: round(1 - actual.get(p, 0) / best[p], 4) if best[p] else 0.0 for p in sorted(best)}


def _added(counts) -> dict[str, int]:
    """The per-profile counts summed (plain dicts: Counter arithmetic was a tenth of a large
    audit's report)."""
    total: dict[str, int] = {}
    for c in counts:
        for profile, n in c.items():
            total[profile] = total.get(profile, 0) + n
    return total


def pool_view(inventory: Inventory, allocated: Container, node_labels: dict[str, dict],
              admin: Container = frozenset()) -> PoolView:
    """The view of `inventory`'s devices with `allocated` (device ids) in use and `admin`
    (device ids) allocated with admin access only; `node_labels` name each node's pool."""
    layout = PoolLayout.of(inventory, node_labels)
    return PoolView([layout.node(name, allocated, admin) for name in sorted(layout.parts)])


@dataclass
class PoolLayout:
    """Each node's devices grouped by pool (the newest generation of each) with the pool's
    counters, and its node pool: what does not depend on the allocation, read once. The
    simulator views it at every moment, again only for the nodes whose devices changed."""

    parts: dict[str, list["_Part"]]  # node -> its devices of each pool
    node_pools: dict[str, str]

    @classmethod
    def of(cls, inventory: Inventory, node_labels: dict[str, dict]) -> "PoolLayout":
        parts: dict[str, list] = {}
        by_pool: dict[tuple, list] = {}
        for s in inventory.slices:
            by_pool.setdefault((s.driver, s.pool), []).append(s)
        for slices in by_pool.values():
            current = _newest_generation(slices)
            counters = {name: dict(values) for s in current for name, values in s.shared_counters}
            devices = [(s, d) for s in current for d in s.devices]
            for node_name, members in _by_node(devices).items():
                parts.setdefault(node_name, []).append(_part(members, counters))
        pools = {}
        for name in parts:
            labels = node_labels.get(name, {})
            pools[name] = next((str(labels[k]) for k in NODE_POOL_LABELS if k in labels), "")
        return cls(parts, pools)

    def node(self, name: str, allocated: Container, admin: Container = frozenset()) -> NodeView:
        view = NodeView(name, self.node_pools[name])
        for part in self.parts[name]:
            _add_pool(view, part, allocated, admin)
        return view


@dataclass(frozen=True)
class _Gpu:
    """One GPU's devices (a counter set's, or one atomic device's) and what a view reads of
    them that no allocation changes: read once per layout, not at every view (the simulator
    views a node again after each claim placed on it)."""

    name: str
    devices: list
    profiles: tuple[str, ...]  # profile_of each device
    memories: tuple  # _memory of each device
    layout: "_Layout | None"  # the partitions' counters; None: atomic devices
    memory: dict  # profile -> its memory (partitions)
    top: str  # the profile with the most memory, placeable or not


@dataclass(frozen=True)
class _Part:
    """A node's devices of one pool, the pool's counters, and its GPUs by name."""

    devices: list
    counters: dict
    profiles: tuple[str, ...]  # profile_of each device
    gpus: tuple[_Gpu, ...]


def _part(devices: list, counters: dict) -> _Part:
    groups: dict[str, list] = {}
    for d in devices:
        groups.setdefault(_gpu_of(d), []).append(d)
    return _Part(devices, counters, tuple(profile_of(d) for d in devices),
                 tuple(_gpu_shape(name, members, counters.get(name, {})) for name, members in sorted(groups.items())))


def _gpu_shape(name: str, devices: list, capacity: dict) -> _Gpu:
    profiles, memories = tuple(profile_of(d) for d in devices), tuple(_memory(d) for d in devices)
    if not capacity:
        return _Gpu(name, devices, profiles, memories, None, {}, profile_of(max(devices, key=_memory)))
    layout = _layout(devices, capacity)
    memory = {layout.profiles[i]: _memory(d) for i, d in enumerate(devices)}
    return _Gpu(name, devices, profiles, memories, layout, memory, max(memory, key=lambda p: (memory[p], p)))


def _by_node(devices) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for s, d in devices:
        grouped.setdefault(d.node_name or s.node_name or "", []).append(d)
    return grouped


def _add_pool(node: NodeView, part: _Part, allocated: Container, admin: Container) -> None:
    devices = part.devices
    used = [d for d in devices if d.id in allocated]
    blocked = [d for d in devices if d.id not in allocated and _blocked(d)]
    for d, profile in zip(devices, part.profiles):
        state = ("allocated" if d.id in allocated else "tainted" if _blocked(d) else
                 "admin-held" if d.id in admin else "free")
        key = (profile, state)
        node.states[key] = node.states.get(key, 0) + 1
    node.total += len(devices)
    node.allocated += len(used)
    node.tainted += len(blocked)
    node.utilization = max(node.utilization, _ca_utilization(devices, used, part.counters))
    for gpu in part.gpus:
        node.gpus.append(_gpu(node.name, gpu, allocated))


def _blocked(device) -> bool:
    """Tainted so that no request without a toleration gets it (KEP-5055 NoSchedule/NoExecute)."""
    return any(t.effect in _BLOCKING for t in device.taints)


def _gpu_of(device) -> str:
    """The physical GPU a device is (part of): its counter set, else the GPU its `parentUUID`
    names (static MIG), else the device itself."""
    sets = {name for name, _ in device.consumes_counters}
    if len(sets) == 1:
        return next(iter(sets))
    parent = device.attribute(f"{device.driver}/parentUUID")
    if parent is not None and isinstance(parent.value, str):
        return f"device:{parent.value}"
    return f"device:{device.name}"


def _gpu(node: str, gpu: _Gpu, allocated: Container) -> GpuView:
    devices, profiles = gpu.devices, gpu.profiles
    if gpu.layout is None:  # atomic devices: each is allocatable while free and untainted
        free = [i for i, d in enumerate(devices) if d.id not in allocated and not _blocked(d)]
        counts = dict(Counter(profiles[i] for i in free))
        heaviest = max(free, key=gpu.memories.__getitem__, default=None)
        return GpuView(node, gpu.name.removeprefix("device:"), counts, counts,
                       profiles[heaviest] if heaviest is not None else "none", gpu.top)
    layout, memory = gpu.layout, gpu.memory
    usable = tuple(i for i, d in enumerate(devices) if not _blocked(d))
    in_use = tuple(i for i, d in enumerate(devices) if d.id in allocated)
    actual = _allocatable(layout, in_use, usable)
    best = _best_repacking(layout, in_use, usable)
    placeable = [p for p, n in actual.items() if n > 0]
    largest = max(placeable, key=lambda p: (memory[p], p)) if placeable else "none"
    return GpuView(node, gpu.name, actual, best, largest, gpu.top)


@dataclass(frozen=True)
class _Layout:
    """One GPU's partitions: their profiles and what each consumes, as counter vectors."""

    profiles: tuple[str, ...]
    needs: tuple[tuple[Fraction, ...], ...]
    capacity: tuple[Fraction, ...]


def _layout(devices: list, capacity: dict) -> _Layout:
    names = sorted(capacity)
    needs = []
    for d in devices:
        consumed = {c: q for _, values in d.consumes_counters for c, q in values.items()}
        needs.append(tuple(_plain(consumed.get(c, 0)) for c in names))
    return _Layout(tuple(profile_of(d) for d in devices), tuple(needs), tuple(_plain(capacity[c]) for c in names))


def _plain(value):
    """Counters are whole numbers in practice: as ints the layouts hash and compare fast (they
    key the caches shared by every GPU of a model)."""
    return int(value) if getattr(value, "denominator", 1) == 1 else value


def _remaining(layout: _Layout, in_use) -> tuple | None:
    left = list(layout.capacity)
    for i in in_use:
        left = [a - b for a, b in zip(left, layout.needs[i])]
    return tuple(left) if all(v >= 0 for v in left) else None


@lru_cache(maxsize=65536)
def _allocatable(layout: _Layout, in_use: tuple, usable: tuple) -> dict[str, int]:
    """Profile -> how many more devices of it fit together with `in_use` (exact: a GPU has few
    placements of one profile)."""
    left = _remaining(layout, in_use)
    counts: dict[str, int] = {}
    taken = set(in_use)
    for profile in dict.fromkeys(layout.profiles):
        candidates = [i for i in usable if layout.profiles[i] == profile and i not in taken]
        counts[profile] = _max_fit(layout, candidates, left) if left is not None else 0
    return counts


def _max_fit(layout: _Layout, candidates: list, left: tuple) -> int:
    best = 0

    def search(start: int, left: tuple, count: int):
        nonlocal best
        best = max(best, count)
        if count + len(candidates) - start <= best:
            return
        for k in range(start, len(candidates)):
            rest = tuple(a - b for a, b in zip(left, layout.needs[candidates[k]]))
            if all(v >= 0 for v in rest):
                search(k + 1, rest, count + 1)

    search(0, left, 0)
    return best


@lru_cache(maxsize=65536)
def _best_repacking(layout: _Layout, in_use: tuple, usable: tuple) -> dict[str, int]:
    """Profile -> the most devices of it that fit once the in-use partitions are moved to the
    placements (of their own profiles, on this GPU) that leave the most room for it."""
    best: dict[str, int] = {}
    wanted = sorted(layout.profiles[i] for i in in_use)

    def place(k: int, chosen: tuple, left: tuple):
        if k == len(wanted):
            for profile, n in _allocatable(layout, tuple(sorted(chosen)), usable).items():
                best[profile] = max(best.get(profile, 0), n)
            return
        for i in range(len(layout.profiles)):
            if layout.profiles[i] != wanted[k] or i in chosen or (chosen and k and wanted[k] == wanted[k - 1]
                                                                  and i < chosen[-1]):
                continue
            rest = tuple(a - b for a, b in zip(left, layout.needs[i]))
            if all(v >= 0 for v in rest):
                place(k + 1, chosen + (i,), rest)

    place(0, (), layout.capacity)
    return best or _allocatable(layout, in_use, usable)


def _ca_utilization(devices: list, used: list, counters: dict) -> float:
    """calculatePoolUtil of the cluster autoscaler's utilization.go, for one pool of a node."""
    atomic = [d for d in devices if not d.consumes_counters]
    atomic_used = [d for d in used if not d.consumes_counters]
    atomic_util = len(atomic_used) / len(atomic) if atomic else 0.0
    totals = {(s, c): q for s, values in counters.items() for c, q in values.items() if q}
    if not totals:
        return atomic_util
    consumed: dict = {}
    for d in used:
        for s, values in d.consumes_counters:
            for c, q in values.items():
                consumed[(s, c)] = consumed.get((s, c), 0) + q
    partitionable_util = max((float(consumed.get(k, 0) / v) for k, v in totals.items()), default=0.0)
    seen, unique = set(), 0  # getUniquePartitionableDevicesCount: hardware, not partitions
    for d in used:
        if d.consumes_counters:
            sets = [s for s, _ in d.consumes_counters]
            if not any(s in seen for s in sets):
                unique += 1
            seen.update(sets)
    total_unique = unique + len(atomic)
    weight = unique / total_unique if total_unique else 0.0
    return partitionable_util * weight + atomic_util * (1 - weight)
