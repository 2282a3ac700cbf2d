"""The device taint eviction controller (pkg/controller/devicetainteviction, KEP-5055), on the
simulated world: pods whose allocated devices carry a NoExecute taint they do not tolerate
are deleted, after the smallest tolerationSeconds of the tolerations that match the taint."""

from __future__ import annotations

from ..model.claims import tolerations


def evict_tainted(world) -> list:
    """The device taint eviction controller: each pod whose allocated devices carry a
    NoExecute taint it does not tolerate is deleted, after the smallest tolerationSeconds of
    the tolerations that match the taint (at once with none). The pods it will delete."""
    doomed = []
    taints = {(s.driver, s.pool, d.name): d.taints for s in world.state.inventory.slices for d in s.devices}
    for pod in [p for p in world.pods.values() if p.phase in ("Starting", "Running")]:
        delays = []
        for claim in pod.claims:
            allocation = world.state.allocations.get(claim.key)
            for result in allocation.results if allocation else ():
                for taint in taints.get((result.driver, result.pool, result.device), ()):
                    if taint.effect == "NoExecute":
                        delays.append(_tolerated_for(taint, result.tolerations or ()))
        due = [d for d in delays if d is not None]
        if due:
            doomed.append(pod)
        if due and min(due) == 0:
            _taint_evict(world, pod)
        elif due:
            world.at(world.now + min(due), _taint_evict, world, pod)
    return doomed


def _tolerated_for(taint, raw: tuple) -> float | None:
    """Seconds the tolerations keep a pod on the tainted device: 0 when none matches, the
    smallest tolerationSeconds among the matching ones, None (for ever) when none of them
    sets it (as tainteviction's getMinTolerationTime reads them)."""
    matching = [t for t, parsed in zip(raw, tolerations(list(raw))) if parsed.tolerates(taint)]
    if not matching:
        return 0.0
    seconds = [max(0.0, float(t["tolerationSeconds"])) for t in matching if t.get("tolerationSeconds") is not None]
    return min(seconds) if seconds else None


def _taint_evict(world, pod) -> None:
    if pod.phase in ("Starting", "Running"):
        world.log("evicted by the device taint eviction controller", pod.name)
        world.delete_pod(pod)
