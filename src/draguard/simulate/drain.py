"""`draguard simulate drain`: a node drained as `kubectl drain` does it, with the Deployments of
the manifests running on the inventory and their PodDisruptionBudgets.

Mirrored upstream behaviour:
- kubectl drain (k8s.io/kubectl/pkg/drain): cordon, then evict every pod of the node (pods of
  DaemonSets aside), each eviction retried every 5 s while the API answers 429, until the
  pods are gone.
- the eviction subresource (pkg/registry/core/pod/storage/eviction.go): a pod not running
  (Pending) is evicted without a budget; a pod that more than one PodDisruptionBudget selects
  is refused (500); otherwise the budget must allow a disruption (429 when it allows none),
  and the eviction is counted against it (DisruptedPods) until the pod is gone.
- the disruption controller (pkg/controller/disruption): currentHealthy = ready, not
  terminating pods the budget selects; desiredHealthy = minAvailable, or expected pods -
  maxUnavailable (percentages of the expected pods, rounded up); disruptionsAllowed =
  currentHealthy - desiredHealthy, never below 0.

Verdicts: `completes` once every evicted pod is gone; `livelock` when an eviction is refused
and nothing else can change any more (a retry finds the world as the previous one left it),
with the chain that holds it; `horizon` when still moving."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.intstr import scaled_value
from ..core.selectors import matches
from ..core.versions import DEFAULT_KUBE_VERSION
from ..dra.inventory import Inventory
from ..model.manifest import Manifest
from ..model.objectset import budget_problems, pdb_selector
from .template import ScenarioError
from .verdict import Recorded, Verdict, blocked, remedy
from .workloads import RUNNING_KINDS, start_state
from .world import Durations, Pod, Timings, World

DRAIN_RETRY = 5.0  # kubectl drain: the wait before evicting again after a 429


@dataclass
class Budget:
    name: str
    selector: dict
    min_available: object
    max_unavailable: object
    expected: int  # the pods its workloads want (the controllers' scale)
    #: pod name -> the evicted pod, until it is gone (a StatefulSet's replacement has its name)
    disrupted: dict = field(default_factory=dict)

    def allowed(self, pods) -> tuple[int, int, int]:
        """(disruptionsAllowed, currentHealthy, desiredHealthy) over `pods`."""
        healthy = sum(1 for p in pods if p.phase == "Running" and p.ready_since is not None
                      and matches(self.selector, p.labels) and self.disrupted.get(p.name) is not p)
        if self.max_unavailable is not None:
            desired = self.expected - scaled_value(self.max_unavailable, self.expected, round_up=True)
        else:
            desired = scaled_value(self.min_available if self.min_available is not None else 0, self.expected,
                                   round_up=True)
        return max(healthy - desired, 0), healthy, desired


@dataclass
class Drain:
    """Evictions as `kubectl drain` makes them: of every pod on `node` (cordoned first), or of
    `pods`."""

    world: World
    budgets: list[Budget]
    node: str | None = None
    pods: list | None = None
    evicting: dict[str, Pod] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # pod -> why its last eviction was refused
    refused_by: set = field(default_factory=set)  # the budgets that refused an eviction
    done_at: float | None = None
    livelock: list[str] | None = None
    _last_retry: tuple | None = None
    _retries: int = 0  # retries waiting in the world's queue

    def start(self) -> None:
        if self.node is not None:
            self.world.state.cordon(self.node)
            self.world.log("cordoned", detail=self.node)
        targets = self.pods if self.pods is not None else [p for p in self.world.pods.values() if p.node == self.node]
        self.evicting = {p.name: p for p in targets if p.phase != "Gone"}
        for pod in list(self.evicting.values()):
            self._evict(pod)
        self.world.on_change.append(self._check_done)

    def stop(self) -> None:
        """The drain is over (its pods gone, or the step given up): the world stops checking it."""
        self.world.on_change.remove(self._check_done)

    def _evict(self, pod: Pod) -> None:
        if pod.phase != "Running" or pod.deleting_since is not None:
            if pod.phase in ("Pending", "Starting"):
                self.world.delete_pod(pod)  # not running: evicted without a budget
            return
        budgets = [b for b in self.budgets if matches(b.selector, pod.labels)]
        if len(budgets) > 1:
            raise ScenarioError(f"pod {pod.name} is selected by more than one PodDisruptionBudget "
                                f"({', '.join(b.name for b in budgets)}): the eviction API refuses it (500)")
        if budgets:
            allowed, healthy, desired = budgets[0].allowed(self.world.pods.values())
            if allowed == 0:
                self.refused_by.add(budgets[0].name)
                self.refused[pod.name] = (f"PodDisruptionBudget {budgets[0].name} allows no disruption (healthy "
                                          f"{healthy}, desired {desired})")
                self.world.log("eviction refused (429)", pod.name, self.refused[pod.name])
                self._retries += 1
                self.world.at(self.world.now + DRAIN_RETRY, self._retry, pod)
                return
            budgets[0].disrupted[pod.name] = pod
        self.refused.pop(pod.name, None)
        self.world.log("evicted", pod.name)
        self.world.delete_pod(pod)

    def _retry(self, pod: Pod) -> None:
        """kubectl's retry of a refused eviction; when only retries are left to happen and a
        whole round of them found the world unchanged, nothing can change any more."""
        self._retries -= 1
        if self.livelock is not None:
            return
        before = self._fingerprint()
        self._evict(pod)
        if pod.name in self.refused and before == self._last_retry and self.world.pending_events() == self._retries:
            self.livelock = self._chain()
            self.world.log("livelock", detail="the evictions are refused and nothing else can change")
        self._last_retry = before

    def _fingerprint(self) -> tuple:
        pods = tuple(sorted((p.name, p.phase, p.node, p.ready_since is not None) for p in self.world.pods.values()))
        return pods, tuple(sorted(self.refused))

    def _check_done(self) -> None:
        for budget in self.budgets:  # the disruption controller forgets evicted pods once they are gone
            budget.disrupted = {n: p for n, p in budget.disrupted.items() if p.phase != "Gone"}
        if self.done_at is None and all(p.phase == "Gone" for p in self.evicting.values()):
            self.done_at = self.world.now
            self.world.log("drained" if self.node else "evicted pod(s) gone", detail=self.node or "")

    def verdict(self, finished: bool, started: float) -> Verdict:
        """The verdict on the drain begun at `started` (`finished`: nothing was left to happen)."""
        if self.done_at is not None:
            return Verdict("completes", self.done_at - started)
        if self.livelock is not None:
            return Verdict("livelock", None, self.livelock)
        return blocked(self.world, finished, [])

    def _chain(self) -> list[str]:
        chain = [f"{len(self.refused)} eviction(s) refused: " + "; ".join(f"{p}: {why}" for p, why in self.refused.items())]
        pending = [p for p in self.world.pods.values() if p.phase == "Pending"]
        if pending:
            chain.append(f"{len(pending)} replacement pod(s) Pending ({pending[0].name}: {pending[0].why_pending}): "
                         "the budget's healthy pods cannot rise")
        return chain


@dataclass
class DrainSimulation(Recorded):
    node: str = ""
    verdict: Verdict | None = None


def simulate_drain(node: str, manifests: list[Manifest], inventory: Inventory, durations: Durations = Durations(),
                   horizon: float = 3600.0, kube_version: str = DEFAULT_KUBE_VERSION,
                   remedies: bool = True, gates: dict | None = None) -> DrainSimulation:
    """The drain of `node`; a livelock comes with the smallest budget change that lets it
    finish, proven by draining again."""
    if node not in {n.name for n in inventory.nodes}:
        raise ScenarioError(f"node '{node}' is not in the inventory")
    if not any(m.kind in RUNNING_KINDS for m in manifests):
        raise ScenarioError("no Deployment or StatefulSet in the manifests: nothing runs on the node")
    world, running = start_state(manifests, inventory, Timings(durations), horizon, kube_version, gates=gates)
    controllers = list(running.values())
    budgets = [budget_of(m, controllers) for m in manifests if m.kind == "PodDisruptionBudget"]
    start, first = world.now, len(world.timeline)
    drain = Drain(world, budgets, node=node)
    drain.start()
    verdict = drain.verdict(world.run(start + horizon), start)
    simulation = DrainSimulation(world, start, first, node, verdict)
    if remedies and verdict.kind == "livelock":
        verdict.remedy = _remedy(node, manifests, inventory, durations, horizon, kube_version, gates,
                                            sorted(drain.refused_by))
    return simulation


def _remedy(node, manifests, inventory, durations, horizon, kube_version, gates, budgets: list[str]) -> str:
    on_node = max(1, sum(m.spec.get("replicas", 1) for m in manifests if m.kind in RUNNING_KINDS))
    return remedy(budget_changes(manifests, budgets, on_node), lambda swaps: simulate_drain(
        node, [swaps.get(id(m), m) for m in manifests], inventory, durations, horizon, kube_version,
        remedies=False, gates=gates).verdict, NO_BUDGET_REMEDY, " (or add capacity for the replacements)")


NO_BUDGET_REMEDY = "no budget change lets it finish: add capacity for the replacements"


def budget_changes(manifests: list[Manifest], budgets: list[str], pods: int) -> list[tuple[str, dict]]:
    """(what changes, {id of a budget: the budget changed}) for each maxUnavailable of the
    refusing budgets from 2 up to the `pods` to evict, smallest first: the node's pods may
    then go without their replacements coming up first."""
    refusing = [m for m in manifests if m.kind == "PodDisruptionBudget" and m.name in budgets]
    return [(f"PodDisruptionBudget {', '.join(budgets)} maxUnavailable: {allowed}",
             {id(m): _loosened(m, allowed) for m in refusing}) for allowed in range(2, pods + 1)]


def _loosened(pdb: Manifest, allowed: int) -> Manifest:
    spec = {k: v for k, v in pdb.spec.items() if k != "minAvailable"}
    return Manifest.from_data(dict(pdb.data, spec=dict(spec, maxUnavailable=allowed)), display=pdb.source.display,
                              positions=False)


def budget_of(pdb: Manifest, controllers) -> Budget:
    """The budget over the pods of `controllers` (their scale: the pods it expects). One the
    API server would refuse (rollout-fields-invalid) is refused here too, at its field: no
    cluster drains through it."""
    spec = pdb.spec
    refused = budget_problems(spec)
    if refused:
        key, said = refused[0]
        where = pdb.location(spec, key, value=True)
        raise ScenarioError(f"{where.file}:{where.line}:{where.column}: PodDisruptionBudget {pdb.name}: {key} "
                            f"{spec[key]!r}: {said} (the API server refuses it)")
    selector = pdb_selector(pdb) or {}
    expected = sum(c.replicas for c in controllers if matches(selector, c.labels))
    return Budget(pdb.name, selector, spec.get("minAvailable"), spec.get("maxUnavailable"), expected)

