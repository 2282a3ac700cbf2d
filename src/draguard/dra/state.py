"""Allocator state over time: what a simulator or an audit keeps between allocations.

`ClusterState` wraps the allocator with the claims allocated so far: `commit` records an
allocation (its devices are then in use, as the scheduler's allocated-devices tracker and the
claim's status.allocation make them), `release` frees them (the claim was deallocated), and
`invalidate` replaces what the allocator derived from slices, taints and nodes after they
changed (a driver republished its pool, an admin tainted devices, a node was drained).
Admin-access results hold no device, as upstream's tracker skips them."""

from __future__ import annotations

from collections import Counter

from .allocator import DEFAULT_SEARCH_BUDGET, AllocationResult, Features, Outcome
from .devices import Claim, Node
from .inventory import Inventory
from .placement import ANYWHERE, NodeFit


class StateError(ValueError):
    """A commit or release that contradicts the state (a device already held, an unknown claim)."""


class ClusterState:
    def __init__(self, inventory: Inventory, features: Features = Features(),
                 budget: int | None = DEFAULT_SEARCH_BUDGET):
        self.inventory = inventory
        self.allocations: dict[str, AllocationResult] = {}
        self.cordoned: set[str] = {n.name for n in inventory.nodes if n.unschedulable}
        #: read it (to explain, to try); change what is allocated only through commit/release
        self.allocator = inventory.allocator(features, budget=budget)
        #: device id -> the node it belongs to, as dra.pools groups devices ('' for none); read
        #: with the node order and whether every slice is one node's own, from the slices
        self._node_of: dict | None = None
        self._index: dict = {}  # node name -> its place in the inventory's node order
        self._node_local = False
        self._changes: Counter = Counter()  # node -> commits and releases that touched its devices
        #: claims' shape -> (the first node that may fit them: those before did not, unchanged
        #: since; the outcome of the last that did not)
        self._first: dict = {}
        #: (node, claims' shape) -> (its changes, the outcome) when they last did not fit there
        self._did_not_fit: dict = {}
        self._unavailable: dict = {}  # (node filters, cordons, nodes) -> the scheduler's text

    @property
    def in_use(self) -> set:
        """Device ids (driver, pool, device) no new non-admin request may take."""
        return self.allocator.allocated

    @property
    def held(self) -> set:
        """Device ids some allocation holds, whole or a share of it (what views count as
        allocated: a shared device is in use, whatever capacity it has left)."""
        shares = self.allocator.shared.shares
        return self.allocator.allocated | set(shares) if shares else self.allocator.allocated

    def attempt(self, claims: list[Claim], node: Node | None) -> Outcome:
        """Try `claims` together on `node` against the current state; nothing is recorded."""
        return self.allocator.attempt(claims, node)

    def place(self, claims: list[Claim], fit: NodeFit = ANYWHERE) -> tuple[Node | None, Outcome]:
        """The first schedulable node (by name) where `claims` fit together, as a first-fit
        scheduler would pick, or (None, the last outcome) when none fits; an error or an
        exceeded budget stops the search, as it stops the scheduler's Filter. `fit`: the
        pod's node filters (a cordoned node is skipped without them).

        When every slice is one node's own, an attempt on a node depends only on the claims'
        shape and what was committed or released there: first-fit placement on a busy pool
        then skips the nodes where nothing changed since the same claims did not fit, instead
        of running the allocator on each again."""
        if not self.inventory.nodes:
            return None, self.attempt(claims, None)
        self._read_slices()
        shape, nodes, shortcut = (_shape(claims), fit.key), self.inventory.nodes, self._node_local
        start, outcome = self._first.get(shape, (0, None)) if shortcut else (0, None)
        for index in range(start, len(nodes)):
            node = nodes[index]
            if not fit.admits(node, node.name in self.cordoned):
                continue
            used = self._changes[node.name]
            known = self._did_not_fit.get((node.name, shape)) if shortcut else None
            if known is not None and known[0] == used:
                outcome = known[1]  # nothing changed on the node since these claims did not fit there
                continue
            outcome = self.attempt(claims, node)
            if outcome.kind != "unschedulable":
                if shortcut:
                    self._first[shape] = (index, None)
                return (node if outcome.allocated else None), outcome
            if shortcut:
                self._did_not_fit[(node.name, shape)] = (used, outcome)
        if outcome is None:
            outcome = Outcome("unschedulable")  # every node refused by the filters
        if shortcut:
            self._first[shape] = (len(nodes), outcome)  # the last node's answer, for the next call
        return None, outcome

    def unavailable(self, fit: NodeFit = ANYWHERE) -> str:
        """Why no node took a pod whose claims fit none, in the scheduler's words (FitError:
        each node's reason counted; the DRA plugin's is "cannot allocate all claims")."""
        key = (fit.key, frozenset(self.cordoned), id(self.inventory.nodes))
        if key not in self._unavailable:
            reasons: Counter[str] = Counter()
            for node in self.inventory.nodes:
                reasons[fit.why_not(node, node.name in self.cordoned) or "cannot allocate all claims"] += 1
            total = len(self.inventory.nodes)
            self._unavailable[key] = (f"0/{total} nodes are available: "
                                      + ", ".join(sorted(f"{n} {why}" for why, n in reasons.items())))
        return self._unavailable[key]

    def changes_on(self, node: str) -> int:
        """How many commits and releases touched the node's devices (dra.pools' grouping):
        what a view of the node has to be computed again after."""
        return self._changes[node]

    def _read_slices(self) -> dict[tuple, str]:
        """Each device's node ('' for none), read from the slices once after each change."""
        if self._node_of is None:
            slices = self.inventory.slices
            self._node_of = {(s.driver, s.pool, d.name): d.node_name or s.node_name or "" for s in slices
                             for d in s.devices}
            self._node_local = all(s.node_name for s in slices)
            self._index = {n.name: i for i, n in enumerate(self.inventory.nodes)}
        return self._node_of

    def _touched(self, devices) -> None:
        node_of = self._read_slices()
        for device in devices:
            node = node_of.get(device, "")
            self._changes[node] += 1
            index = self._index.get(node, 0)
            for shape, (first, last) in self._first.items():
                if first > index:
                    self._first[shape] = (index, last)

    def commit(self, key: str, allocation: AllocationResult) -> None:
        if key in self.allocations:
            raise StateError(f"claim {key} is already allocated")
        devices = _held(allocation)
        taken = devices & self.in_use
        if taken:
            raise StateError(f"claim {key}: device {'/'.join(sorted(taken)[0])} is already allocated")
        self.allocations[key] = allocation
        self.allocator.allocated |= devices
        shares = _shares(allocation)
        for device_id, consumed in shares:
            self.allocator.shared.add(device_id, consumed)
        self._touched(devices | {device_id for device_id, _ in shares})

    def release(self, key: str) -> AllocationResult:
        allocation = self.allocations.pop(key, None)
        if allocation is None:
            raise StateError(f"claim {key} is not allocated")
        devices, shares = _held(allocation), _shares(allocation)
        self.allocator.allocated -= devices
        for device_id, consumed in shares:
            self.allocator.shared.remove(device_id, consumed)
        self._touched(devices | {device_id for device_id, _ in shares})
        return allocation

    def cordon(self, node: str) -> None:
        self.cordoned.add(node)

    def uncordon(self, node: str) -> None:
        self.cordoned.discard(node)
        self._first = {}  # the node may now be tried again

    def invalidate(self, *, slices: list | None = None, taint_rules: list | None = None,
                   nodes: list[Node] | None = None) -> None:
        """Replace what changed and drop everything derived from it. Allocations stay: a claim
        keeps its devices when its slice changes, as upstream keeps status.allocation."""
        if slices is not None:
            self.inventory.slices = slices
        if taint_rules is not None:
            self.inventory.taint_rules = taint_rules
        if nodes is not None:
            self.inventory.nodes = sorted(nodes, key=lambda n: n.name)
        self.inventory.apply_taint_rules()
        self.allocator.invalidate(self.inventory.slices)
        self._node_of, self._did_not_fit, self._index, self._first, self._unavailable = None, {}, {}, {}, {}


def _shape(claims: list[Claim]) -> str:
    """What of `claims` the allocator reads, not their names: the claims of one template have
    one shape."""
    def request(r) -> tuple:
        return (r.name, r.class_name, r.selectors, r.mode, r.count, r.admin_access, r.tolerations,
                sorted(r.capacity_requests.items()), [request(s) for s in r.subrequests or ()])

    return repr([([request(r) for r in c.requests], [(k.requests, k.match_attribute, k.distinct_attribute)
                                                    for k in c.constraints], c.config) for c in claims])


def _held(allocation: AllocationResult) -> set:
    """The devices an allocation holds whole (not with admin access, not a share)."""
    return {(r.driver, r.pool, r.device) for r in allocation.results if not r.admin_access and r.share_id is None}


def _shares(allocation: AllocationResult) -> list:
    """(device id, consumed capacity) of each share of a device the allocation holds."""
    return [((r.driver, r.pool, r.device), r.consumed_capacity) for r in allocation.results
            if not r.admin_access and r.share_id is not None]
