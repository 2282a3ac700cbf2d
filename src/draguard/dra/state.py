"""Allocator state over time: what a simulator or an audit keeps between allocations.

`ClusterState` wraps the allocator with the claims allocated so far: `commit` records an
allocation (its devices are then in use, as the scheduler's allocated-devices tracker and the
claim's status.allocation make them), `release` frees them (the claim was deallocated), and
`invalidate` replaces what the allocator derived from slices, taints and nodes after they
changed (a driver republished its pool, an admin tainted devices, a node was drained).
Admin-access results hold no device, as upstream's tracker skips them."""

from __future__ import annotations

from .allocator import DEFAULT_SEARCH_BUDGET, AllocationResult, Allocator, Features, Outcome
from .devices import Claim, Node
from .inventory import Inventory


class StateError(ValueError):
    """A commit or release that contradicts the state (a device already held, an unknown claim)."""


class ClusterState:
    def __init__(self, inventory: Inventory, features: Features = Features(),
                 budget: int | None = DEFAULT_SEARCH_BUDGET):
        self.inventory = inventory
        self.allocations: dict[str, AllocationResult] = {}
        self.cordoned: set[str] = set()
        #: read it (to explain, to try); change what is allocated only through commit/release
        self.allocator = Allocator(inventory.slices, inventory.classes, inventory.allocated, features,
                                   budget=budget)

    @property
    def in_use(self) -> set:
        """Device ids (driver, pool, device) no new non-admin request may take."""
        return self.allocator.allocated

    def schedulable_nodes(self) -> list[Node]:
        return [n for n in self.inventory.nodes if n.name not in self.cordoned]

    def attempt(self, claims: list[Claim], node: Node | None) -> Outcome:
        """Try `claims` together on `node` against the current state; nothing is recorded."""
        return self.allocator.attempt(claims, node)

    def place(self, claims: list[Claim]) -> tuple[Node | None, Outcome]:
        """The first schedulable node (by name) where `claims` fit together, as a first-fit
        scheduler would pick, or (None, the last outcome) when none fits; an error or an
        exceeded budget stops the search, as it stops the scheduler's Filter."""
        outcome = Outcome("unschedulable")
        for node in self.schedulable_nodes() or ([None] if not self.inventory.nodes else []):
            outcome = self.attempt(claims, node)
            if outcome.kind != "unschedulable":
                return (node if outcome.allocated else None), outcome
        return None, outcome

    def commit(self, key: str, allocation: AllocationResult) -> None:
        if key in self.allocations:
            raise StateError(f"claim {key} is already allocated")
        devices = _held(allocation)
        taken = devices & self.in_use
        if taken:
            raise StateError(f"claim {key}: device {'/'.join(sorted(taken)[0])} is already allocated")
        self.allocations[key] = allocation
        self.allocator.allocated |= devices

    def release(self, key: str) -> AllocationResult:
        allocation = self.allocations.pop(key, None)
        if allocation is None:
            raise StateError(f"claim {key} is not allocated")
        self.allocator.allocated -= _held(allocation)
        return allocation

    def cordon(self, node: str) -> None:
        self.cordoned.add(node)

    def uncordon(self, node: str) -> None:
        self.cordoned.discard(node)

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


def _held(allocation: AllocationResult) -> set:
    return {(r.driver, r.pool, r.device) for r in allocation.results if not r.admin_access}
