"""The structured allocator, with the semantics of the `stable` variant of
k8s.io/dynamic-resource-allocation/structured (Kubernetes 1.37; features AdminAccess,
PrioritizedList, PartitionableDevices and DeviceTaints).

Semantics kept from upstream:
- pools are gathered per node: a slice counts if it is for the node (nodeName, allNodes,
  nodeSelector, or per-device node selection) or publishes shared counters; only the newest
  generation of a pool counts; a pool with fewer slices than `resourceSliceCount` is
  incomplete (skipped, and `All` requests fail on it); duplicate device names or counters
  that do not exist make a pool invalid;
- claims, requests, subrequests and devices are tried in order, depth first with
  backtracking; a device must pass the class selectors, then the request selectors (a CEL
  runtime error aborts the whole allocation), per-device node selection, must not be in use
  (adminAccess may reuse devices, but not twice in one claim), must have its shared counters
  available, must not carry a NoSchedule/NoExecute taint the request does not tolerate, and
  must keep every `matchAttribute` constraint of its claim satisfied;
- `firstAvailable` subrequests are tried in order and the first that fits wins;
- `All` takes every matching device of the node's pools and fails if one is unavailable;
- with DRAConsumableCapacity (the incubating variant, consumable_capacity.go): a device with
  allowMultipleAllocations is shared, each allocation consuming what its request asks of the
  device's capacities (rounded to the request policy; the default, else all of it, when it
  asks nothing) and carrying a shareID; every device must fit what a request asks, beside
  what allocated claims and the other shares of this run consume.

Two deliberate differences: upstream visits pools in Go map order (random); draguard sorts
them by driver and pool name, so the same input always gives the same choice. And upstream
bounds a search by time (kube-scheduler's DynamicResources Filter cancels the allocation after
`filterTimeout`, 10 s by default with DRASchedulerFilterTimeout, checked at the top of
allocateOne); draguard bounds it by a number of allocateOne steps, so the bound does not
depend on the machine: `BudgetExceeded` is its own outcome, never "unschedulable".

The search is depth first with backtracking, as upstream's recursive allocateOne; here each
step is a generator driven from an explicit stack, so no recursion limit applies."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from ..model.claims import DeviceRequest
from ..model.pods import mappings
from . import capacity
from ..cel.env import CelRuntimeError, CelUnsupported, compile_selector
from .derived import compile_derived
from .devices import LIST_KINDS, Attr, Claim, Device, DeviceClass, Node, Slice
from .nodeselector import NodeSelectorError
from ..core.quantity import QuantityError

ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
_FROM_START = (0, 0, 0)  # (pool, slice, device) a request's next device is looked for from
#: allocateOne steps per allocation attempt: about 5 s of search on one core here (~40,000
#: steps/s), half of upstream's default FilterTimeout of 10 s
DEFAULT_SEARCH_BUDGET = 200_000


class AllocationError(Exception):
    """Upstream returns an error, not "unschedulable": the scheduler retries nothing."""


class NotJudged(AllocationError):
    """A selector draguard's CEL engine cannot evaluate where upstream's would (cel.env
    CelUnsupported: its comprehension cap, a function it lacks): neither a match nor the
    runtime error that aborts upstream's allocation, so the attempt decides nothing."""


class BudgetExceeded(Exception):
    """The search took more steps than its budget (upstream: "filter operation aborted")."""

    def __init__(self, steps: int):
        super().__init__(f"search budget exceeded after {steps} steps (upstream's Filter times out on such "
                         "searches too); the claims were neither allocated nor proven unschedulable")
        self.steps = steps


@dataclass
class Outcome:
    """One allocation attempt on one node: `allocated` (with `results`), `unschedulable`,
    `error` (what upstream returns as an error), `budget-exceeded` or `not-judged` (NotJudged)."""

    kind: str
    results: list[AllocationResult] = field(default_factory=list)  # empty unless allocated
    error: str | None = None
    steps: int = 0

    @property
    def allocated(self) -> bool:
        return self.kind == "allocated"


#: the node declared feature a device that skips node operations needs (component-helpers
#: nodedeclaredfeatures/features/draoptionalnodeoperations)
NODE_OPERATIONS_FEATURE = "DRAOptionalNodeOperations"


@dataclass(frozen=True)
class Features:
    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    # DRADerivedAttributes, the experimental variant: requests with derived attributes are
    # refused without it; with it a constraint reads a request's derived attribute (dra.derived)
    derived_attributes: bool = False
    # DRADeviceCompatibilityGroups, the experimental variant: devices drawing from one counter
    # set must share a compatibility group; without it slices that name groups are ignored
    # (their pool is incomplete)
    compatibility_groups: bool = False
    # the upstream variant whose pool gathering to follow: "stable", or "incubating" and
    # "experimental", which share pools_incubating.go (dra.variants picks it from the gates)
    variant: str = "stable"
    # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (KEP-5007), newer variants only:
    # devices with binding conditions become selectable and results carry their conditions
    device_binding_and_status: bool = False
    # DRAConsumableCapacity (KEP-5075), newer variants only: devices with
    # allowMultipleAllocations shared by several allocations, capacity requests with their
    # request policies (dra.capacity), distinctAttribute constraints
    consumable_capacity: bool = False
    fractional_capacity_range: bool = False  # DRAFractionalCapacityRange: milli-value steps
    # DRAListTypeAttributes, the experimental variant: matchAttribute and distinctAttribute
    # compare attributes as sets (a list attribute's values; selectors see lists either way)
    list_type_attributes: bool = False
    # DRAOptionalNodeOperations, the experimental variant: a device of a slice that skips node
    # operations needs the gate and a node that declares the feature; results copy the list
    optional_node_operations: bool = False


@dataclass
class SharedUse:
    """What allocated claims hold of shared devices (upstream AllocatedSharedDeviceIDs and
    AggregatedCapacity, built from results with a shareID while DRAConsumableCapacity is on)."""

    shares: Counter = field(default_factory=Counter)  # device id -> shares allocated claims hold
    consumed: dict = field(default_factory=dict)  # device id -> {capacity name: value}, all shares together
    recorded: Counter = field(default_factory=Counter)  # device id -> shares that record consumed capacity

    def holds(self, device_id: tuple) -> bool:
        """Whether some allocated claim holds a share of the device (every device with
        consumed capacity recorded is one)."""
        return device_id in self.shares

    def copy(self) -> "SharedUse":
        return SharedUse(Counter(self.shares), {d: dict(c) for d, c in self.consumed.items()}, Counter(self.recorded))

    def add(self, device_id: tuple, consumed: dict | None) -> None:
        self.shares[device_id] += 1
        if consumed is not None:
            self.recorded[device_id] += 1
            capacity.add(self.consumed.setdefault(device_id, {}), consumed)

    def remove(self, device_id: tuple, consumed: dict | None) -> None:
        self.shares[device_id] -= 1
        if self.shares[device_id] <= 0:
            del self.shares[device_id]
        if consumed is not None and device_id in self.consumed:
            capacity.subtract(self.consumed[device_id], consumed)
            self.recorded[device_id] -= 1
            if self.recorded[device_id] <= 0:
                del self.recorded[device_id], self.consumed[device_id]


@dataclass
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list = field(default_factory=list)  # slices with devices, for the node
    other_slices: list = field(default_factory=list)  # same pool, not for the node (counter use)
    counter_sets: dict = field(default_factory=dict)


@dataclass
class DeviceResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple = ()  # the request's, whatever the device's taints (upstream copies them all)
    binding_conditions: tuple = ()  # the device's, with DeviceBindingAndStatus
    binding_failure_conditions: tuple = ()
    share_id: str | None = None  # a share of a device that allows multiple allocations
    consumed_capacity: dict | None = None  # capacity name -> quantity.Quantity, for a share
    skip_node_operations: tuple = ()  # the slice's, copied by the experimental variant

    def as_json(self) -> dict:
        out: dict[str, object] = {"request": self.request, "driver": self.driver, "pool": self.pool,
                                  "device": self.device}
        if self.admin_access is not None:
            out["adminAccess"] = self.admin_access
        if self.tolerations:
            out["tolerations"] = [dict(t) for t in self.tolerations]
        if self.binding_conditions:
            out["bindingConditions"] = list(self.binding_conditions)
        if self.binding_failure_conditions:
            out["bindingFailureConditions"] = list(self.binding_failure_conditions)
        if self.share_id is not None:
            out["shareID"] = self.share_id
        if self.consumed_capacity:
            out["consumedCapacity"] = {name: str(q) for name, q in self.consumed_capacity.items()}
        if self.skip_node_operations:
            out["skipNodeOperations"] = list(self.skip_node_operations)
        return out


@dataclass
class AllocationResult:
    claim: Claim
    results: list
    config: list
    node_selector: dict | None

    def as_json(self) -> dict:
        out = {"devices": {"results": [r.as_json() for r in self.results], "config": self.config}}
        if self.node_selector is not None:
            out["nodeSelector"] = self.node_selector
        return out


def node_matches(node: Node | None, holder, what: str) -> bool:
    """Upstream NodeMatches for a slice or a per-device selection: its nodeName, allNodes,
    else its node selector; one that does not parse fails the allocation (GatherPools)."""
    if holder.node_name:
        return node is not None and node.name == holder.node_name
    if holder.all_nodes:
        return True
    parsed = holder.parsed_selector
    if parsed is None:
        return False
    if isinstance(parsed, NodeSelectorError):
        raise AllocationError(f"failed to perform node selection for {what}: failed to parse node selector: {parsed}")
    return parsed.matches(node)


def _newest_generation(slices: list[Slice]) -> list[Slice]:
    newest = max(s.generation for s in slices)
    return [s for s in slices if s.generation == newest]


class SliceIndex:
    """Slices by node name and by pool, so gathering one node's pools does not scan the
    whole cluster (upstream rescans every slice on every call)."""

    def __init__(self, slices: list[Slice]):
        self.by_node: dict[str, list] = {}
        self.unbound: list = []  # allNodes, nodeSelector, per-device selection, counters
        self.by_pool: dict[tuple, list[Slice]] = {}
        self.named: dict[str, list[Slice]] = {}  # by nodeName, counter slices too (incubating)
        self.shared: list[Slice] = []  # no nodeName (incubating)
        for position, s in enumerate(slices):
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)
            if s.node_name and not s.shared_counters:
                self.by_node.setdefault(s.node_name, []).append((position, s))
            else:
                self.unbound.append((position, s))
            if s.node_name:
                self.named.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)

    def candidates(self, node: Node | None) -> list[Slice]:
        """In input order: upstream reads a pool's slice count from its first slice."""
        found = (self.by_node.get(node.name, []) if node else []) + self.unbound
        return [s for _, s in sorted(found, key=lambda pair: pair[0])]


def gather_pools(slices, node: Node | None, features: Features = Features(), order=sorted) -> list[Pool]:
    """The node's pools, visited in `order` (a function over (driver, pool) keys) by the stable
    variant; the newer variants sort them themselves."""
    index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
    if features.variant != "stable":
        return _gather_pools_incubating(index, node, features)
    by_pool: dict[tuple, list[Slice]] = {}
    for s in index.candidates(node):
        if _ignored(s, features):
            continue
        # counter slices are always taken, whatever nodes they name
        if s.shared_counters or _targets_node(s, node):
            by_pool.setdefault((s.driver, s.pool), []).append(s)
    pools = []
    for key in order(by_pool):
        taken = _newest_generation(by_pool[key])
        count = taken[0].slice_count
        if len(taken) == count:  # the node's own slices complete the pool: nothing else is read
            pools.append(_build_pool(key, taken, taken, features))
            continue
        all_of_pool = _pool_slices(index, key, taken[0].generation, features)
        if all_of_pool is None:
            continue  # obsolete: a newer generation exists but does not target the node
        if len(all_of_pool) != count:
            pools.append(Pool(key[0], key[1], incomplete=True))
            continue
        pools.append(_build_pool(key, taken, all_of_pool, features))
    return pools


def _ignored(s: Slice, features: Features) -> bool:
    """A slice GatherPools skips: partitionable fields while that feature is off
    (perDeviceNodeSelection set at all, even false), or compatibility groups while theirs is
    (its pool is then incomplete)."""
    return ((not features.partitionable_devices and (s.per_device_node_selection is not None or bool(s.shared_counters)))
            or (not features.compatibility_groups and s.uses_compatibility_groups))


def _targets_node(s: Slice, node: Node | None) -> bool | None:
    """Whether the slice (its nodeName, allNodes or nodeSelector), or with per-device
    selection one of its devices, targets the node; None when it names no node at all."""
    if s.node_name or s.all_nodes or s.node_selector is not None:
        return node_matches(node, s, f"slice {s.name}")
    if s.per_device_node_selection:
        return any(node_matches(node, d, f"device {d.name} in slice {s.name}") for d in s.devices)
    return None


def _pool_slices(index: SliceIndex, key: tuple, generation: int, features: Features) -> list[Slice] | None:
    """checkSlicesInPool: every slice of the pool at `generation` (those using compatibility
    groups left out while that feature is off), or None when a newer generation exists."""
    everything = index.by_pool[key]
    if any(s.generation > generation for s in everything):
        return None
    return [s for s in everything if s.generation == generation
            and (features.compatibility_groups or not s.uses_compatibility_groups)]


def _build_pool(key, taken: list[Slice], all_of_pool: list[Slice], features: Features) -> Pool:
    """buildPool of the stable variant: the node's slices in the order seen, counter slices
    among them (GatherPools always takes those), the rest of the pool for counter use."""
    partitionable = features.partitionable_devices
    taken_ids = {id(s) for s in taken}
    elsewhere = [s for s in all_of_pool if id(s) not in taken_ids and not s.shared_counters]
    return _validated(key, [s for s in taken if not (partitionable and s.shared_counters)],
                      [s for s in taken if partitionable and s.shared_counters], elsewhere, partitionable)


def _gather_pools_incubating(index: SliceIndex, node: Node | None, features: Features) -> list[Pool]:
    """GatherPools of the incubating and experimental variants (pools_incubating.go): the
    node's slices, then those naming no node; a counter slice counts only where it targets the
    node (an incomplete pool then reads the rest); slices by name within a pool; pools by
    (driver, pool), those with binding conditions last."""
    by_pool: dict[tuple, list[Slice]] = {}
    for s in (index.named.get(node.name, []) if node else []) + index.shared:
        if _ignored(s, features) or not _targets_node(s, node):
            continue
        taken = by_pool.setdefault((s.driver, s.pool), [])
        if taken and s.generation > taken[0].generation:
            taken.clear()
        if not taken or s.generation == taken[0].generation:
            taken.append(s)
    pools: list[Pool] = []
    bound: list[Pool] = []
    for key, taken in by_pool.items():
        count = taken[0].slice_count
        all_of_pool = None
        if len(taken) != count:
            all_of_pool = _pool_slices(index, key, taken[0].generation, features)
            if all_of_pool is None:
                continue  # obsolete
            if len(all_of_pool) != count:
                pools.append(Pool(key[0], key[1], incomplete=True))
                continue
        pool = _build_pool_incubating(key, taken, all_of_pool, features)
        binding = any(d.binding_conditions for s in pool.slices for d in s.devices)
        (bound if binding else pools).append(pool)
    by_id = lambda pool: (pool.driver, pool.name)  # noqa: E731
    return sorted(pools, key=by_id) + sorted(bound, key=by_id)


def _build_pool_incubating(key, taken: list[Slice], all_of_pool: list[Slice] | None, features: Features) -> Pool:
    """buildPool of pools_incubating.go: slices sorted by name; counter sets from every slice
    of the pool; device names checked among the node's slices; counter use checked for the
    node's devices and the rest of the pool's."""
    partitionable = features.partitionable_devices
    taken = sorted(taken, key=lambda s: s.name)
    counter_slices = [s for s in taken if partitionable and s.shared_counters]
    device_slices = [s for s in taken if not (partitionable and s.shared_counters)]
    elsewhere: list[Slice] = []
    if all_of_pool is not None and len(taken) < len(all_of_pool):
        names = {s.name for s in taken}
        for s in all_of_pool:
            if s.name not in names:
                (counter_slices if partitionable and s.shared_counters else elsewhere).append(s)
    return _validated(key, device_slices, counter_slices, elsewhere, partitionable)


def _validated(key, device_slices, counter_slices, elsewhere, partitionable: bool) -> Pool:
    """The pool, or an invalid one: duplicate device or counter set names, devices consuming
    counters the pool does not define (getAndValidateCounterSets, validateDeviceCounterConsumption)."""
    names = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in names:
                return Pool(key[0], key[1], invalid=True, invalid_reason=f"duplicate device name {d.name}")
            names.add(d.name)
    if not partitionable:
        return Pool(key[0], key[1], slices=device_slices)
    pool = Pool(key[0], key[1], slices=device_slices, other_slices=elsewhere)
    for s in counter_slices:
        for name, counters in s.shared_counters:
            if name in pool.counter_sets:
                return Pool(key[0], key[1], invalid=True, invalid_reason=f"duplicate counter set name {name}")
            pool.counter_sets[name] = counters
    for s in device_slices + elsewhere:
        for d in s.devices:
            for set_name, counters in d.consumes_counters:
                if set_name not in pool.counter_sets:
                    return Pool(key[0], key[1], invalid=True, invalid_reason=f"counter set {set_name} not found")
                for counter in counters:
                    if counter not in pool.counter_sets[set_name]:
                        return Pool(key[0], key[1], invalid=True,
                                    invalid_reason=f"counter {counter} not found in counter set {set_name}")
    return pool


@dataclass
class _RequestData:
    request: DeviceRequest  # a request or one subrequest
    parent: DeviceRequest | None
    device_class: DeviceClass | None
    num_devices: int = 0
    all_devices: list = field(default_factory=list)
    selected_sub: int = 0
    capacity: dict | None = None  # capacity.requests, parsed (with DRAConsumableCapacity)
    selected: dict = field(default_factory=dict)  # device -> whether its class's and its selectors pass
    derived: dict = field(default_factory=dict)  # attribute name -> expression (DRADerivedAttributes)

    @property
    def name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent else self.request.name

    def attribute(self, device: Device, name: str) -> Attr | None:
        """The attribute a constraint reads of a device this request takes (upstream
        lookupAttribute): the request's derived attribute of that name evaluated on the
        device, else the device's own. An expression that does not compile or evaluate ends
        the allocation with an error, as upstream's does."""
        expression = self.derived.get(name) if self.derived else None
        if expression is None:
            return device.attribute(name)
        compiled = compile_derived(expression)
        if compiled.error is not None:
            raise AllocationError(f"compile derived attribute {name} failed: {compiled.error.message}")
        try:
            return compiled.evaluate(device)
        except CelRuntimeError as exc:
            raise AllocationError(f"evaluate derived attribute {name} on device {'/'.join(device.id)} failed: "
                                  f"{exc}") from None


class _Constraint:
    """A claim constraint over the devices of its requests (all of them when it names none);
    add and remove come in stack order, as the search takes and gives back devices."""

    def __init__(self, requests, attribute: str):
        self.requests, self.attribute = set(requests), attribute

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)


class _MatchAttribute(_Constraint):
    """Every device has the attribute, with one value (upstream matchAttributeConstraint). With
    DRAListTypeAttributes (the experimental variant) values are sets, a scalar a set of one,
    and the devices' sets must have an element in common: the running intersection is kept
    per device added, so that a removal restores the one before."""

    def __init__(self, requests, attribute: str, sets: bool):
        super().__init__(requests, attribute)
        self.sets = sets
        self.value: Attr | None = None
        self.count = 0
        self.intersections: list = []  # with sets: after each device added

    def add(self, base: str, sub: str, device: Device, data: _RequestData) -> bool:
        if not self.applies(base, sub):
            return True
        value = data.attribute(device, self.attribute)
        if value is None:
            return False
        if self.sets:
            values = attribute_set(value)
            if values is None:
                return False
            if self.count:
                values = _common(self.intersections[-1], values)
                if values is None:
                    return False
            self.intersections.append(values)
        elif self.count == 0:
            self.value = value  # upstream keeps the first device's attribute, a list too
        elif value.kind in LIST_KINDS or value != self.value:  # a list has no scalar value to compare
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self.applies(base, sub):
            self.count -= 1
            if self.sets:
                self.intersections.pop()


class _DistinctAttribute(_Constraint):
    """Every device has the attribute, no two with one value (upstream incubating
    distinctAttributeConstraint): values of different types never collide, and Attr compares
    its type with its value. With DRAListTypeAttributes the devices' sets must be pairwise
    disjoint; without it a list collides with every value before it."""

    def __init__(self, requests, attribute: str, sets: bool):
        super().__init__(requests, attribute)
        self.sets = sets
        self.values: list = []  # the devices' attributes, or with sets their attribute sets

    def add(self, base: str, sub: str, device: Device, data: _RequestData) -> bool:
        if not self.applies(base, sub):
            return True
        value = data.attribute(device, self.attribute)
        if value is None:
            return False
        if self.sets:
            values = attribute_set(value)
            if values is None or any(_common(values, other) for other in self.values):
                return False
            self.values.append(values)
            return True
        if self.values and (value.kind in LIST_KINDS or value in self.values):
            return False
        self.values.append(value)
        return True

    def remove(self, base: str, sub: str) -> None:
        if self.applies(base, sub):
            self.values.pop()


class _Groups(NamedTuple):
    """The compatibility-group state of a counter set some device draws from (upstream
    compatibilityGroupIntersection; None while none does): whether every such device
    declared no groups, else the intersection of their groups (empty when allocated devices
    already disagree: then nothing more fits)."""

    all_empty: bool
    groups: frozenset


def _admits(current: _Groups | None, groups: frozenset) -> bool:
    if current is None:
        return True
    if not groups:
        return current.all_empty  # no groups go only with no groups
    return not current.all_empty and bool(current.groups & groups)


def _joined(current: _Groups | None, groups: frozenset) -> _Groups:
    if current is None:
        return _Groups(not groups, groups)
    if current.all_empty or not groups:
        return current
    return _Groups(False, current.groups & groups)


def attribute_set(attribute: Attr) -> tuple | None:
    """(item kind, frozenset of values) of an attribute, a scalar as a set of one; None for an
    empty list (upstream attributeAsSet: no type to compare)."""
    if attribute.kind in LIST_KINDS:
        return (LIST_KINDS[attribute.kind], frozenset(attribute.value)) if attribute.value else None
    return attribute.kind, frozenset((attribute.value,))


def _common(a: tuple, b: tuple) -> tuple | None:
    """The intersection of two attribute sets; None when they share no element or their types
    differ (upstream deviceAttributeListAsSet.intersection)."""
    if a[0] != b[0]:
        return None
    both = a[1] & b[1]
    return (a[0], both) if both else None


class Allocator:
    """Allocates claims against a fixed inventory. `allocated` holds the device ids
    (driver, pool, device) that already-allocated claims use."""

    def __init__(self, slices: list[Slice], classes: dict[str, DeviceClass], allocated=(),
                 features: Features = Features(), pool_order=sorted, budget: int | None = DEFAULT_SEARCH_BUDGET,
                 shared: SharedUse | None = None):
        """`pool_order` orders the (driver, pool) keys the search visits: sorted by default;
        the differential tests pass other orders to cover upstream's random map order.
        `budget` bounds the allocateOne steps of one attempt (None: unbounded). `shared`:
        what allocated claims hold of shared devices (with DRAConsumableCapacity); like
        `allocated`, it is copied: what the allocator is told later does not reach the caller's."""
        self.slices, self.classes, self.features = slices, classes, features
        self.pool_order = pool_order
        self.budget = budget
        self.index = SliceIndex(slices)
        self.allocated = set(allocated)
        self.shared = shared.copy() if shared is not None and features.consumable_capacity else SharedUse()
        if shared is not None and not features.consumable_capacity:  # the scheduler counts a share as the device
            self.allocated |= set(shared.shares)
        self._pools_by_node: dict = {}
        self._selected: dict = {}  # (class selectors, request selectors) -> {device: they pass}

    def holds(self, device_id: tuple) -> bool:
        """IsDeviceAllocated: an allocated claim holds the device, or a share of it."""
        return device_id in self.allocated or self.shared.holds(device_id)

    def invalidate(self, slices: list[Slice] | None = None) -> None:
        """Forget what was derived from the slices (new slices, or devices re-tainted)."""
        if slices is not None:
            self.slices = slices
        self.index = SliceIndex(self.slices)
        self._pools_by_node.clear()
        self._selected.clear()

    def selections(self, class_selectors: tuple, request_selectors: tuple) -> dict:
        """Whether the selectors pass, per device judged so far: the same for every attempt
        until the slices change (a device of their pools judged once, not once per attempt;
        the scheduler's attempts on a 5,000-node rollout evaluated 1.7 million selectors).
        Keyed by the device object, which the pools hold: never a dead device's answer."""
        return self._selected.setdefault((class_selectors, request_selectors), {})

    def pools(self, node: Node | None) -> list[Pool]:
        key = (node.name, tuple(sorted(node.labels.items()))) if node else None
        if key not in self._pools_by_node:
            self._pools_by_node[key] = gather_pools(self.index, node, self.features, self.pool_order)
        return self._pools_by_node[key]

    def allocate(self, claims: list[Claim], node: Node | None) -> list[AllocationResult] | None:
        """The allocation of all `claims` on `node`, None when they do not fit there; raises
        AllocationError where upstream returns an error, BudgetExceeded past the budget."""
        return _Run(self, claims, node).run()

    def attempt(self, claims: list[Claim], node: Node | None) -> Outcome:
        """`allocate` as an outcome value: what long-running callers (simulate, audit) branch on."""
        run = _Run(self, claims, node)
        try:
            results = run.run()
        except NotJudged as exc:
            return Outcome("not-judged", error=str(exc), steps=run.steps)
        except AllocationError as exc:
            return Outcome("error", error=str(exc), steps=run.steps)
        except BudgetExceeded as exc:
            return Outcome("budget-exceeded", error=str(exc), steps=run.steps)
        return Outcome("allocated" if results is not None else "unschedulable", results or [], steps=run.steps)


class _Run:
    """One allocation attempt; the state upstream keeps in its `allocator` struct."""

    def __init__(self, owner: Allocator, claims: list[Claim], node: Node | None):
        self.owner, self.claims, self.node = owner, claims, node
        self.features = owner.features
        self.pools = owner.pools(node)
        self.request_data: dict[tuple, _RequestData] = {}
        self.constraints: list[list[_Constraint]] = []
        self.allocating: dict[tuple, set] = {}
        self.results: list[list] = [[] for _ in claims]
        self.matches: dict = {}
        self.available: dict = {}
        self.groups: dict = {}  # pool key -> counter set -> _Groups, this run's (DRADeviceCompatibilityGroups)
        self.groups_baseline: dict = {}  # pool key -> counter set -> _Groups of the allocated devices
        self.consumed: dict = {}
        self.allocating_capacity: dict = {}  # device id -> what this run's shares consume of it
        self.steps = 0

    # -- validation (upstream validateDeviceRequest) --
    def _validate(self, claim: Claim, request, parent, key) -> _RequestData:
        data = _RequestData(request, parent, None)
        where = f"claim {claim.key}, request {data.name}"
        if request.derived_attributes and not self.features.derived_attributes:  # every variant but one refuses
            raise AllocationError(f"claim {claim.key}, request {request.name}: cannot handle request with derived "
                                  "attributes, the feature is disabled")
        data.derived = {str(entry.get("name", "")): str(entry.get("expression", ""))
                        for entry in request.derived_attributes if isinstance(entry, dict)}
        if any(not expr for expr in request.selectors):
            raise AllocationError(f"{where}: CEL expression empty (unsupported selector type?)")
        if not self.features.admin_access and request.admin_access is not None:
            raise AllocationError(f"{where}: admin access is requested, but the feature is disabled")
        if not request.class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        data.device_class = self.owner.classes.get(request.class_name)
        if data.device_class is None:
            raise AllocationError(f"{where}: could not retrieve device class {request.class_name}: not found")
        data.selected = self.owner.selections(tuple(data.device_class.selectors), request.selectors)
        if self.features.consumable_capacity and request.capacity_requests:
            try:
                data.capacity = capacity.requested_capacities(request.capacity_requests)
            except QuantityError as exc:
                raise AllocationError(f"{where}: capacity requests: {exc}") from None
        if request.mode == "ExactCount":
            data.num_devices = request.count
        elif request.mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"{where}: asks for all devices, but resource pool "
                                          f"{pool.driver}/{pool.name} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"{where}: asks for all devices, but resource pool "
                                          f"{pool.driver}/{pool.name} is currently invalid")
                for s in pool.slices:
                    for device in s.devices:
                        if not self._selectable(key, data, s, device):
                            continue
                        # static capacity only: what others consume is checked when allocating,
                        # so a device short of it stays here and "All" fails
                        if self.features.consumable_capacity and self._consumption(
                                claim, data, device, {}, {}, f"checking capacity for device {device.name}") is None:
                            continue
                        data.all_devices.append((device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {request.mode}")
        return data

    def _constraint(self, claim: Claim, index: int, c) -> _Constraint:
        if c.match_attribute is not None:  # a pointer: an empty name is a constraint no device meets
            return _MatchAttribute(c.requests, c.match_attribute, self.features.list_type_attributes)
        if c.distinct_attribute is not None and self.features.variant != "stable":  # the newer variants know it, gate or not
            return _DistinctAttribute(c.requests, c.distinct_attribute, self.features.list_type_attributes)
        raise AllocationError(f"claim {claim.key}, constraint #{index}: empty constraint (unsupported constraint type?)")

    def _check_capacity_gate(self, claim: Claim, request) -> None:
        """The newer variants refuse capacity requests while DRAConsumableCapacity is off (the
        stable one does not know the field)."""
        if self.features.variant == "stable" or self.features.consumable_capacity:
            return
        for asking in request.subrequests if request.subrequests is not None else [request]:
            if asking.fields.get("capacity") is not None:
                what = "subrequest" if asking.parent is not None else "request"
                raise AllocationError(f"claim {claim.key}, {what} {asking.name}: has capacity requests, but the "
                                      "DRAConsumableCapacity feature is disabled")

    def run(self) -> list[AllocationResult] | None:
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.requests):
                if request.subrequests is not None and not self.features.prioritized_list:
                    raise AllocationError(f"claim {claim.key}, request {request.name}: has subrequests, but "
                                          "the DRAPrioritizedList feature is disabled")
                self._check_capacity_gate(claim, request)
                if request.subrequests is not None:
                    smallest = None
                    for si, sub in enumerate(request.subrequests):
                        data = self.request_data[(ci, ri, si)] = self._validate(claim, sub, request, (ci, ri, si))
                        smallest = data.num_devices if smallest is None else min(smallest, data.num_devices)
                    per_request = smallest or 0
                else:
                    data = self.request_data[(ci, ri, 0)] = self._validate(claim, request, None, (ci, ri, 0))
                    per_request = data.num_devices
                if per_request > ALLOCATION_RESULTS_MAX_SIZE - minimum:
                    raise AllocationError(f"claim {claim.key}, request {request.name}: adding {per_request} devices "
                                          f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {minimum} "
                                          "already accounted for")
                minimum += per_request
            self.constraints.append([self._constraint(claim, i, c) for i, c in enumerate(claim.constraints)])
        done = self._search((0, 0, 0, 0, False))
        if not done:
            if any(p.invalid for p in self.pools):
                raise AllocationError("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    # -- the search (upstream allocateOne) --
    def _search(self, start: tuple) -> bool:
        """Drive `_allocate_one` steps from an explicit stack: each step yields the arguments of
        the step it needs next and is sent that step's result (or has its exception thrown in),
        exactly as the recursive calls upstream return or fail."""
        budget = self.owner.budget
        stack = [self._allocate_one(*start)]
        self.steps = 1
        value, error = None, None
        while True:
            top = stack[-1]
            try:
                call = top.throw(error) if error is not None else top.send(value)
            except StopIteration as done:
                stack.pop()
                if not stack:
                    return done.value
                value, error = done.value, None
                continue
            except Exception as exc:  # noqa: BLE001 - re-raised in the caller's frame
                stack.pop()
                if not stack:
                    raise
                value, error = None, exc
                continue
            if budget is not None and self.steps >= budget:
                for frame in reversed(stack):
                    frame.close()
                raise BudgetExceeded(self.steps)
            self.steps += 1
            stack.append(self._allocate_one(*call))
            value, error = None, None

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple = _FROM_START):
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return (yield (ci + 1, 0, 0, 0, False))
            except _MaxSizeExceeded:
                return False
        data = self.request_data[(ci, ri, si)]
        if not in_sub and data.parent is not None:
            exceeded_all = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = yield (ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                exceeded_all = False
                if ok:
                    for s in range(len(claim.requests[ri].subrequests)):
                        self.request_data[(ci, ri, s)].selected_sub = sub
                    return True
                sub += 1
            if exceeded_all:
                raise _MaxSizeExceeded()
            return False
        request = data.request
        if request.mode == "All" and not data.all_devices:
            return False
        if di >= data.num_devices:
            return (yield (ci, ri + 1, 0, 0, False))
        if data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded()
        if request.mode == "All":
            device, s, pool = data.all_devices[di]
            ok, undo = self._allocate_device(ci, ri, si, device, s, pool, must=True)
            return ok and (yield from self._search_on(undo, ci, ri, si, di, in_sub))
        admin = request.admin_access is True
        allocated, allocating = self.owner.allocated, self.allocating
        # the newer variants go on with a request's next device after the one just taken
        # (startLocation): a request never takes one device twice, even a shared one
        resume = self.features.variant != "stable"
        start_pool, start_slice, start_device = start
        for pi, pool in enumerate(self.pools[start_pool:] if start_pool else self.pools, start_pool):
            if pool.incomplete or pool.invalid:
                continue
            first_slice = start_slice if pi == start_pool else 0
            for sj, s in enumerate(pool.slices[first_slice:] if first_slice else pool.slices, first_slice):
                first = start_device if pi == start_pool and sj == start_slice else 0
                for dk, device in enumerate(s.devices[first:] if first else s.devices, first):
                    device_id = device.id
                    if admin:
                        if ci in allocating.get(device_id, ()):
                            continue
                    elif device_id in allocated or allocating.get(device_id):
                        continue
                    if not self._selectable((ci, ri, si), data, s, device):
                        continue
                    if self.features.consumable_capacity and self._consumption_now(ci, data, device) is None:
                        continue
                    ok, undo = self._allocate_device(ci, ri, si, device, s, pool, must=False)
                    if ok and (yield from self._search_on(undo, ci, ri, si, di, in_sub,
                                                          (pi, sj, dk + 1) if resume else _FROM_START)):
                        return True
        return False

    def _search_on(self, undo, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple = _FROM_START):
        """Continue the search with a device added; take it back unless the search succeeds."""
        try:
            if (yield (ci, ri, si, di + 1, in_sub, start)):
                return True
        except BaseException:
            undo()
            raise
        undo()
        return False

    def _in_use(self, device_id) -> bool:
        return device_id in self.owner.allocated or bool(self.allocating.get(device_id))

    def _capacity_in_use(self, device_id) -> bool:
        """deviceCapacityInUse: some allocated claim or this run holds a share of it."""
        return self.owner.shared.holds(device_id) or device_id in self.allocating_capacity

    @staticmethod
    def _device_capacities(device: Device) -> tuple:
        try:
            return capacity.of_device(device)
        except QuantityError as exc:
            raise AllocationError(f"device {'/'.join(device.id)}: capacity: {exc}") from None

    def _consumption(self, claim: Claim, data: _RequestData, device: Device, current: dict, allocating: dict,
                     doing: str) -> dict | None:
        """What the request consumes of the device, None when it does not fit (dra.capacity)."""
        capacities = self._device_capacities(device)
        try:
            if data.capacity is None and not current and not allocating:
                return capacity.alone(capacities, self.features.fractional_capacity_range)
            return capacity.consumption(current, data.capacity, capacities, allocating,
                                        self.features.fractional_capacity_range)
        except capacity.CapacityError as exc:
            raise AllocationError(f"claim {claim.key}, request {data.request.name}: {doing}: {exc}") from None

    def _consumption_now(self, ci: int, data: _RequestData, device: Device) -> dict | None:
        """alloc.CmpRequestOverCapacity: beside what allocated claims and this run consume."""
        return self._consumption(self.claims[ci], data, device, self.owner.shared.consumed.get(device.id, {}),
                                 self.allocating_capacity.get(device.id, {}),
                                 f"checking capacity for device {'/'.join(device.id)}")

    def _selectable(self, key, data: _RequestData, s: Slice, device: Device) -> bool:
        if device.binding_conditions and not self.features.device_binding_and_status:
            return False  # the stable variant never selects such devices (isSelectable)
        cache_key = (device.id, key)
        found = self.matches.get(cache_key)
        if found is not None:
            return found
        matched = data.selected.get(device)
        if matched is None:
            matched = True
            if data.device_class is not None:
                matched = self._selectors_match(device, data.device_class.selectors,
                                                f"class {data.device_class.name}")
            if matched:
                matched = self._selectors_match(device, data.request.selectors, f"claim {self.claims[key[0]].key}")
            data.selected[device] = matched
        if matched and s.per_device_node_selection:
            matched = node_matches(self.node, device, f"device {device.name}")
        self.matches[cache_key] = matched
        return matched

    def _selectors_match(self, device: Device, selectors, owner: str) -> bool:
        # the stable variant's CEL device has no allowMultipleAllocations: it reads false there
        multiple = self.features.variant != "stable"
        for i, expression in enumerate(selectors):
            compiled = compile_selector(expression)
            if compiled.error is not None:
                if compiled.error.unsupported:
                    raise NotJudged(f"{owner}: selector #{i}: not evaluated: {compiled.error.message}")
                raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {compiled.error.message}")
            try:
                if not compiled.evaluate(device, multiple):
                    return False
            except CelUnsupported as exc:
                raise NotJudged(f"{owner}: selector #{i} on device {'/'.join(device.id)}: {exc}") from None
            except CelRuntimeError as exc:
                raise AllocationError(f"{owner}: selector #{i} on device {'/'.join(device.id)}: "
                                      f"CEL runtime error: {exc}") from None
        return True

    def _node_operations_allowed(self, s: Slice) -> bool:
        """The experimental variant takes a device whose slice skips node operations only with
        DRAOptionalNodeOperations and on a node that declares the feature (the older variants
        do not know the field)."""
        if not s.skip_node_operations or self.features.variant != "experimental":
            return True
        return self.features.optional_node_operations and self.node is not None and \
            NODE_OPERATIONS_FEATURE in self.node.declared_features

    def _allocate_device(self, ci, ri, si, device: Device, s: Slice, pool: Pool, must: bool):
        data = self.request_data[(ci, ri, si)]
        request = data.request
        admin = request.admin_access is True
        multiple = self.features.consumable_capacity and device.allow_multiple_allocations
        if not multiple and admin and ci in self.allocating.get(device.id, ()):
            return False, None
        if not admin and self._in_use(device.id):
            return False, None
        if not self.features.partitionable_devices and device.consumes_counters:
            return False, None
        if not self._node_operations_allowed(s):
            return False, None
        reserved, restore_groups = False, None
        # a further share of a shared device does not consume its counters again
        if device.consumes_counters and not (multiple and self._capacity_in_use(device.id)):
            if self.features.compatibility_groups:  # before the counters, as upstream checks them
                restore_groups = self._join_groups(device, pool)
                if restore_groups is None:
                    return False, None
            if not self._reserve_counters(device, pool):
                if restore_groups is not None:
                    restore_groups()
                return False, None
            reserved = True
        base = data.parent.name if data.parent else request.name
        sub = request.name if data.parent else ""
        added: list = []
        marked, consumed, entry_existed = False, None, None

        def undo():
            if entry_existed is not None:
                self._release_share(device.id, consumed, entry_existed)
            if marked:
                self.allocating[device.id].discard(ci)
            for c in reversed(added):
                c.remove(base, sub)
            if reserved:
                self._release_counters(device, pool)
            if restore_groups is not None:
                restore_groups()

        if self.features.device_taints and self._tainted(device, request):
            undo()
            return False, None
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, device, data):
                undo()
                if must:
                    raise AllocationError(f"claim {self.claims[ci].key}, request {request.name}: cannot add device "
                                          f"{'/'.join(device.id)} because a claim constraint would not be satisfied")
                return False, None
            added.append(constraint)
        if not multiple:
            self.allocating.setdefault(device.id, set()).add(ci)
            marked = True
        if self.features.consumable_capacity:
            consumption = self._consumption_now(ci, data, device)
            if consumption is None:
                undo()
                return False, None
            if multiple:
                consumed = consumption
                entry_existed = device.id in self.allocating_capacity  # an earlier share of this run's
                capacity.add(self.allocating_capacity.setdefault(device.id, {}), consumed)
        self.results[ci].append((data.name, device, s, True if admin else None, data.request.fields.get("tolerations"),
                                 consumed if multiple else None))
        size = len(self.results[ci])

        def undo_all():
            del self.results[ci][size - 1:]
            undo()
        return True, undo_all

    def _release_share(self, device_id: tuple, consumed: dict, existed: bool) -> None:
        """ConsumedCapacityCollection.Remove; an entry an earlier share made stays (empty)."""
        entry = self.allocating_capacity.get(device_id)
        if entry is not None:
            capacity.subtract(entry, consumed)
            if all(v == 0 for v in entry.values()):
                del self.allocating_capacity[device_id]
        if existed and device_id not in self.allocating_capacity:
            self.allocating_capacity[device_id] = {}

    @staticmethod
    def _tainted(device: Device, request) -> bool:
        for taint in device.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and \
                    not any(t.tolerates(taint) for t in request.tolerations):
                return True
        return False

    def _join_groups(self, device: Device, pool: Pool):
        """DRADeviceCompatibilityGroups (upstream checkAndConsumeCompatibilityGroups): on each
        counter set it draws from, the device's groups must meet those of every device already
        drawing from it (allocated ones and this run's); a device without groups goes only with
        devices without groups. Returns what restores the state before, or None when the
        device does not fit."""
        running = self.groups.setdefault((pool.driver, pool.name), {})
        baseline = self._groups_baseline(pool)
        saved: list[tuple[str, object]] = []  # (counter set, its groups before), to restore

        def restore() -> None:
            for set_name, before in reversed(saved):
                if before is None:
                    del running[set_name]
                else:
                    running[set_name] = before

        for set_name, groups in device.compatibility_groups:
            before = running.get(set_name)
            current = before if before is not None else baseline.get(set_name)
            if not _admits(current, groups):
                restore()
                return None
            saved.append((set_name, before))
            running[set_name] = _joined(current, groups)
        return restore

    def _groups_baseline(self, pool: Pool) -> dict:
        """Per counter set, the groups of the pool's allocated devices (compatibilityGroupsBaselineForPool)."""
        key = (pool.driver, pool.name)
        if key not in self.groups_baseline:
            baseline: dict = {}
            for s in pool.slices + pool.other_slices:
                for d in s.devices:
                    if self.owner.holds(d.id):
                        for set_name, groups in d.compatibility_groups:
                            baseline[set_name] = _joined(baseline.get(set_name), groups)
            self.groups_baseline[key] = baseline
        return self.groups_baseline[key]

    def _available_counters(self, pool: Pool) -> dict:
        key = (pool.driver, pool.name)
        if key not in self.available:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in pool.slices + pool.other_slices:
                for d in s.devices:
                    if not self.owner.holds(d.id):
                        continue
                    for set_name, counters in d.consumes_counters:
                        for counter, value in counters.items():
                            if counter in available.get(set_name, {}):
                                available[set_name][counter] -= value
            self.available[key] = available
        return self.available[key]

    def _reserve_counters(self, device: Device, pool: Pool) -> bool:
        available = self._available_counters(pool)
        consumed = self.consumed.setdefault((pool.driver, pool.name), {})
        for set_name, counters in device.consumes_counters:
            target = consumed.setdefault(set_name, {})
            for counter, value in counters.items():
                target[counter] = target.get(counter, Fraction(0)) + value
        for set_name, counters in available.items():
            for counter, value in counters.items():
                if value < consumed.get(set_name, {}).get(counter, 0):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: Device, pool: Pool) -> None:
        consumed = self.consumed[(pool.driver, pool.name)]
        for set_name, counters in device.consumes_counters:
            for counter, value in counters.items():
                consumed[set_name][counter] -= value

    # -- the result (upstream Allocate, after the search) --
    def _result(self, ci: int, claim: Claim) -> AllocationResult:
        binding = self.features.device_binding_and_status
        experimental = self.features.variant == "experimental"
        results = [DeviceResult(name, d.driver, d.pool, d.name, admin, tuple(mappings(tolerations)),
                                d.binding_conditions if binding else (), d.binding_failure_conditions if binding else (),
                                _share_id(claim, name, d) if consumed is not None else None, consumed or None,
                                s.skip_node_operations if experimental else ())
                   for name, d, s, admin, tolerations, consumed in self.results[ci]]
        config: list[dict] = []
        class_configs: dict[str, tuple[int, int]] = {}  # class name -> its entries in config
        for ri, request in enumerate(claim.requests):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                data = self.request_data[(ci, ri, data.selected_sub)]
            cls = data.device_class
            if cls is None:
                continue
            if cls.name in class_configs:
                start, end = class_configs[cls.name]
                for entry in config[start:end]:
                    entry["requests"].append(data.name)
                continue
            start = len(config)
            for entry in cls.config:
                config.append({"source": "FromClass", "requests": [data.name],
                               **{k: v for k, v in entry.items() if k != "requests"}})
            class_configs[cls.name] = (start, len(config))
        chosen = {}
        for ri, request in enumerate(claim.requests):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                chosen[request.name] = f"{request.name}/{request.subrequests[data.selected_sub].name}"
        for entry in claim.config:
            names = list(entry.get("requests") or [])
            if not names or any(n in names or chosen.get(n) in names for n in (r.name for r in claim.requests)):
                config.append({"source": "FromClaim", "requests": names,
                               **{k: v for k, v in entry.items() if k != "requests"}})
        all_names = [r.name for r in claim.requests]
        for entry in config:
            names = entry["requests"]
            if names and all(n in names or chosen.get(n) in names for n in all_names):
                entry["requests"] = []
        return AllocationResult(claim, results, config, self._node_selector(ci))

    def _node_selector(self, ci: int) -> dict | None:
        match_fields: list[dict] = []
        match_expressions: list[dict] = []
        for _, device, s, *_ in self.results[ci]:
            node_name, selector = ((device.node_name, device.node_selector) if s.per_device_node_selection
                                   else (s.node_name, s.node_selector))
            if node_name or (device.binds_to_node and self.features.variant != "stable"):
                # local to one node, or binding to the node it is allocated for (createNodeSelector of
                # the newer variants reads bindsToNode whatever DRADeviceBindingConditions says)
                target = self.node.name if self.node is not None else node_name
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [target]}]}]}
            if selector is not None:
                terms = selector.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
                if terms:
                    _add_new_requirements(terms[0].get("matchFields") or [], match_fields)
                    _add_new_requirements(terms[0].get("matchExpressions") or [], match_expressions)
        if not match_fields and not match_expressions:
            return None
        term = {}
        if match_fields:
            term["matchFields"] = match_fields
        if match_expressions:
            term["matchExpressions"] = match_expressions
        return {"nodeSelectorTerms": [term]}


def _share_id(claim: Claim, request: str, device: Device) -> str:
    """A share's UID. Upstream draws a random one; draguard derives it from the claim, the
    request and the device, so that a result reads the same on every run. (uuid is imported
    here: it loads `platform`, and only shared devices need it.)"""
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"draguard:{claim.key}/{request}/{'/'.join(device.id)}"))


def _add_new_requirements(new: list, into: list) -> None:
    """Upstream addNewNodeSelectorRequirements: a requirement is already there when key,
    operator and the set of values are equal."""
    def same(a, b) -> bool:
        return a.get("key") == b.get("key") and a.get("operator") == b.get("operator") and \
            set(map(str, a.get("values") or [])) == set(map(str, b.get("values") or []))
    for requirement in new:
        if isinstance(requirement, dict) and not any(same(requirement, existing) for existing in into):
            into.append(requirement)


class _MaxSizeExceeded(Exception):
    """Upstream errAllocationResultMaxSizeExceeded: this subrequest choice cannot fit."""
