"""Why a request can or cannot be satisfied: the funnel of candidate devices.

The scheduler only says "cannot allocate all claims". For each request (and each
firstAvailable subrequest) draguard counts the devices that survive each step:

    in slices -> driver -> class selectors -> request selector #0 .. #n -> free

and names the step that emptied the funnel. When every step keeps a device but the claim
still does not fit on any node, the count, the claim's constraints or shared counters are to
blame, and the explanation says how many devices were free on the best node."""

from __future__ import annotations

from dataclasses import dataclass, field

from .gpuclasses import class_drivers
from . import capacity
from ..core.quantity import QuantityError
from .allocator import AllocationResult, Allocator, gather_pools
from ..cel.env import CelRuntimeError, CelUnsupported, compile_selector
from .devices import Claim, Device
from .funnel import RequestExplanation, Stage


def visible_devices(allocator: Allocator, nodes, skipped: list | None = None) -> dict:
    """Every device of complete, valid pools visible from any node, by id; the pools left out
    are said in `skipped` (their devices count nowhere in the funnel)."""
    found: dict[tuple, Device] = {}
    left_out: dict[tuple, str] = {}
    for node in nodes or [None]:
        for pool in gather_pools(allocator.index, node, allocator.features):
            if pool.incomplete or pool.invalid:
                why = (f"invalid ({pool.invalid_reason})" if pool.invalid else
                       "incomplete (fewer slices of its newest generation than its resourceSliceCount; the "
                       "allocator waits for the rest)")
                left_out.setdefault((pool.driver, pool.name), f"pool {pool.driver}/{pool.name} not read: {why}")
                continue
            for s in pool.slices:
                for d in s.devices:
                    found.setdefault(d.id, d)
    if skipped is not None:
        skipped.extend(left_out.values())
    return found


def _survivors(devices, expression: str, out: RequestExplanation, what: str):
    compiled = compile_selector(expression)
    if compiled.error is not None:
        (out.unjudged if compiled.error.unsupported else out.errors).append(
            f"{what} does not compile: {compiled.error.message}")
        return []
    kept = []
    failures: dict[str, int] = {}
    for d in devices:
        try:
            if compiled.evaluate(d):
                kept.append(d)
        except CelUnsupported as exc:
            out.unjudged.append(f"{what} is not evaluated: {exc}")
            return []
        except CelRuntimeError as exc:
            failures.setdefault(str(exc), 0)
            failures[str(exc)] += 1
    for message, count in failures.items():
        out.errors.append(f"{what} fails at runtime on {count} device(s) ({message}); upstream aborts the "
                           "whole allocation on such an error")
    return kept


def explain_request(allocator: Allocator, request, name: str, devices: list) -> RequestExplanation:
    wanted = "all devices" if request.mode == "All" else f"{request.count} device" + ("s" if request.count != 1 else "")
    needed = 1 if request.mode == "All" else max(request.count, 1)
    out = RequestExplanation(name, wanted, [Stage("in slices", len(devices))], needed)
    cls = allocator.classes.get(request.class_name or "")
    if cls is None:
        out.note = f"device class {request.class_name!r} does not exist"
        out.stages.append(Stage(f"class {request.class_name}", 0))
        out.emptied_at = out.stages[-1]
        return out
    pool = devices
    drivers = class_drivers(cls.selectors)
    if drivers:
        pool = [d for d in pool if d.driver in drivers]
        out.stages.append(Stage(f"driver {'/'.join(sorted(drivers))}", len(pool)))
    for i, expression in enumerate(cls.selectors):
        pool = _survivors(pool, expression, out, f"class {cls.name} selector #{i}")
    out.stages.append(Stage(f"class {cls.name} selectors", len(pool)))
    for i, expression in enumerate(request.selectors):
        pool = _survivors(pool, expression, out, f"selector #{i}")
        out.stages.append(Stage(f"selector #{i} ({expression.strip()})", len(pool), selector=i))
    admin = request.admin_access is True
    free = [d for d in pool if admin or d.id not in allocator.allocated]
    free = [d for d in free if not any(t.effect in ("NoSchedule", "NoExecute") and
                                       not any(tol.tolerates(t) for tol in request.tolerations)
                                       for t in d.taints)]
    out.stages.append(Stage("free (unallocated, untainted)", len(free)))
    if allocator.features.consumable_capacity and not admin and \
            (request.capacity_requests or any(d.allow_multiple_allocations for d in free)):
        free = _with_capacity(allocator, request, free, out.errors)
        out.stages.append(Stage("capacity left for what it asks", len(free)))
    out.emptied_at = next((s for s in out.stages if s.count == 0), None)
    return out


def _with_capacity(allocator: Allocator, request, devices: list, errors: list) -> list:
    """The devices whose capacities still fit what the request asks (DRAConsumableCapacity),
    beside what allocated claims' shares consume."""
    try:
        asked = capacity.requested_capacities(request.capacity_requests) if request.capacity_requests else None
        return [d for d in devices if capacity.fits(allocator.shared.consumed.get(d.id, {}), asked,
                                                    capacity.of_device(d), {},
                                                    allocator.features.fractional_capacity_range)]
    except (QuantityError, capacity.CapacityError) as exc:
        errors.append(f"capacity: {exc}")
        return []


def explain(allocator: Allocator, claim: Claim, nodes) -> list[RequestExplanation]:
    skipped: list = []
    devices = list(visible_devices(allocator, nodes, skipped).values())
    out = []
    for request in claim.requests:
        if request.subrequests is None:
            out.append(explain_request(allocator, request, request.name, devices))
        else:
            out.extend(explain_request(allocator, sub, f"{request.name}/{sub.name}", devices)
                       for sub in request.subrequests)
    for explanation in out:
        explanation.skipped = skipped
    return out


@dataclass
class Verdict:
    claim: Claim
    node: str | None = None  # where it fits
    allocation: AllocationResult | None = None
    error: str | None = None  # an error upstream would return, or the search budget's
    #: undecided: neither allocated nor proven unschedulable (the search budget ran out, or a
    #: selector is one draguard's CEL engine cannot evaluate: allocator.NotJudged)
    budget_exceeded: bool = False
    requests: list = field(default_factory=list)  # RequestExplanation, when it does not fit

    @property
    def satisfiable(self) -> bool:
        return self.node is not None or (self.allocation is not None)


def verdict(allocator: Allocator, claim: Claim, nodes) -> Verdict:
    """Try the claim on every node in order (as the scheduler's filter would), and explain
    a failure."""
    result = Verdict(claim)
    for node in nodes or [None]:
        outcome = allocator.attempt([claim], node)
        if outcome.allocated:
            result.node, result.allocation = (node.name if node else None), outcome.results[0]
            return result
        if outcome.kind != "unschedulable":
            result.error = outcome.error
            result.budget_exceeded = outcome.kind in ("budget-exceeded", "not-judged")
            break
    result.requests = explain(allocator, claim, nodes)
    if result.error is None and all(r.emptied_at is None for r in result.requests):
        for r in result.requests:
            r.note = _shortfall(r)
    return result


def _shortfall(r: RequestExplanation) -> str:
    """Why a request whose funnel never empties still does not fit: too few free devices in
    all, or enough in all but not on one node with the rest of the claim."""
    free = r.stages[-1].count
    if free < r.needed:
        return f"only {free} matching device{'s are' if free != 1 else ' is'} free across all nodes, it needs {r.needed}"
    return (f"{free} matching devices are free across all nodes ({r.needed} needed), but not on one node together "
            "with the claim's other requests, constraints and shared counters")
