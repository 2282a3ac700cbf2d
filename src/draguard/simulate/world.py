"""The simulated cluster over time: pods, their claims on draguard's allocator state, an event
queue in seconds, and the parts that move pods between phases: the scheduler (first-fit DRA
allocation, backoff), the kubelet (start-up, readiness, termination) and the resourceclaim
controller (a claim per pod from its templates, deallocated once the pod is gone).

Upstream behaviour mirrored here:
- scheduler backoff: 1 s doubling to 10 s per failed attempt (pkg/scheduler/backend/queue:
  DefaultPodInitialBackoffDuration, DefaultPodMaxBackoffDuration); a pod that failed for lack
  of devices is retried when a claim is deallocated (the DRA plugin's queueing hint on
  ResourceClaim changes) once its backoff has passed, or at once from 1.33, where the
  scheduler pops the backoff queue when nothing else is waiting (SchedulerPopFromBackoffQ,
  beta and on by default; scheduling_queue.go). No preemption frees devices.
- kubelet termination as model.teardown times it (killContainer: the preStop hook inside the
  grace period, then SIGTERM with at least 2 s before SIGKILL); devices are unprepared before
  the pod is terminal.
- the resourceclaim controller removes a generated claim's reservation and deallocates it
  once its pod is terminal or gone (pkg/controller/resourceclaim/controller.go); until then
  the device stays held, also while the pod is Terminating."""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from dataclasses import dataclass, field

from ..dra.devices import Claim
from ..dra.pools import PoolLayout, PoolView
from ..dra.state import ClusterState

BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 10.0


@dataclass(frozen=True)
class Durations:
    """Seconds each phase takes (configurable per workload; the defaults are a cached image and
    a server that is ready a few seconds after it starts)."""

    pull: float = 0.0
    start: float = 2.0
    ready: float = 5.0  # from started to passing its readiness probe
    shutdown: float = 1.0  # from SIGTERM to the containers' exit (SIGKILL cuts it short)
    unprepare: float = 0.5  # the driver releasing the devices


@dataclass
class Pod:
    name: str
    owner: str  # the ReplicaSet
    claims: list[Claim]
    durations: Durations
    stop_after: float  # seconds from the deletion until every container stopped
    created: float
    min_ready: float = 0.0  # minReadySeconds: ready this long before it counts as available
    labels: dict = field(default_factory=dict)
    phase: str = "Pending"  # Pending, Starting, Running, Terminating, Gone
    node: str | None = None
    ready_since: float | None = None
    deleting_since: float | None = None
    attempts: int = 0
    next_attempt: float = 0.0  # inf: waiting for a device to be released
    backoff_until: float = 0.0
    why_pending: str = ""

    @property
    def active(self) -> bool:
        """Counted by its ReplicaSet: not terminal and not being deleted (FilterActivePods)."""
        return self.phase in ("Pending", "Starting", "Running")

    def available(self, now: float, min_ready: float) -> bool:
        return self.phase == "Running" and self.ready_since is not None and now - self.ready_since >= min_ready


@dataclass
class Record:
    """One line of the timeline."""

    time: float
    what: str
    pod: str = ""
    detail: str = ""


@dataclass
class Hold:
    """A device held by a pod's claim from `start` until `end` (None: still held)."""

    device: str  # pool/device
    pod: str
    start: float
    end: float | None = None


@dataclass
class World:
    state: ClusterState
    pop_from_backoff: bool = True  # SchedulerPopFromBackoffQ (1.33+)
    now: float = 0.0
    pods: dict[str, Pod] = field(default_factory=dict)
    timeline: list[Record] = field(default_factory=list)
    samples: list[dict] = field(default_factory=list)  # pool metrics after each moment
    holds: list[Hold] = field(default_factory=list)
    _pending: dict = field(default_factory=dict)  # name -> a Pending pod, in creation order
    _waiting: dict = field(default_factory=dict)  # name -> a Pending pod waiting for a device
    _holding: dict = field(default_factory=dict)  # pod name -> its open holds
    _phases: Counter = field(default_factory=Counter)  # phase -> pods in it
    _layout: tuple = (None, None)  # (the slices it was read from, their dra.pools.PoolLayout)
    _node_views: dict = field(default_factory=dict)  # node -> (its state changes then, its NodeView)
    _queue: list = field(default_factory=list)
    _order: itertools.count = field(default_factory=itertools.count)
    on_change: list = field(default_factory=list)  # controllers: called after each moment

    # -- time --
    def at(self, when: float, action, *args, inert: bool = False) -> None:
        """`action(*args)` at `when`; `inert`: it changes no pod (a condition set on an object),
        so it does not count among the events that could still change the world."""
        heapq.heappush(self._queue, (when, next(self._order), action, args, inert))

    def run(self, horizon: float, until=None) -> bool:
        """Process events until none is left or `until()` holds (True), or the horizon is
        reached (False). After each moment the controllers reconcile and the scheduler tries
        the pending pods."""
        self.settle()
        while self._queue and not (until and until()):
            when = self._queue[0][0]
            if when > horizon:
                self.now = horizon
                return False
            self.now = when
            while self._queue and self._queue[0][0] == when:
                _, _, action, args, _ = heapq.heappop(self._queue)
                action(*args)
            self.settle()
        return True

    def settle(self) -> None:
        for _ in range(100):  # controllers and scheduler until nothing changes at this moment
            before = self._fingerprint()
            for controller in self.on_change:
                controller()
            self.schedule()
            if self._fingerprint() == before:
                break
        self.samples.append(self.metrics())

    def _fingerprint(self) -> tuple:
        """What changed at this moment: every pod's change is logged, every timed step queued."""
        return len(self.timeline), len(self._queue)

    def pending_events(self) -> int:
        """The events to come that may change pods."""
        return sum(1 for event in self._queue if not event[4])

    def log(self, what: str, pod: str = "", detail: str = "") -> None:
        self.timeline.append(Record(self.now, what, pod, detail))

    # -- pods --
    def _move(self, pod: Pod, phase: str) -> None:
        """Every phase change goes through here, which keeps the count per phase."""
        self._phases[pod.phase] -= 1
        self._phases[phase] += 1
        pod.phase = phase

    def create_pod(self, pod: Pod) -> None:
        self._phases[pod.phase] += 1
        self.pods[pod.name] = pod
        self._pending[pod.name] = pod
        self.log("created", pod.name)

    def delete_pod(self, pod: Pod) -> None:
        """A deletion: a pod not yet on a node is gone at once; a scheduled one terminates."""
        if pod.phase == "Pending":
            self._move(pod, "Gone")
            self._pending.pop(pod.name, None)
            self._waiting.pop(pod.name, None)
            self.log("deleted (never scheduled)", pod.name)
            return
        self._move(pod, "Terminating")
        pod.deleting_since = self.now
        self.log("terminating", pod.name)
        self.at(self.now + pod.stop_after + pod.durations.unprepare, self.remove, pod)

    def remove(self, pod: Pod, why: str = "gone: devices released") -> None:
        """The pod is gone (its containers stopped, or the pod garbage collector removed it):
        its claims are deallocated and the pods waiting for devices are woken."""
        self._move(pod, "Gone")
        for claim in pod.claims:
            if claim.key in self.state.allocations:
                self.state.release(claim.key)
        for hold in self._holding.pop(pod.name, ()):
            hold.end = self.now
        self.log(why, pod.name)
        for waiting in self._waiting.values():  # the DRA queueing hint: a freed device may fit
            waiting.next_attempt = self.now if self.pop_from_backoff else max(self.now, waiting.backoff_until)
            self.at(waiting.next_attempt, self._wake)
        self._waiting.clear()

    def _wake(self) -> None:
        """A moment for the scheduler (a pod's backoff is over)."""

    # -- scheduler --
    def schedule(self) -> None:
        for pod in [p for p in self._pending.values() if p.next_attempt <= self.now]:  # oldest first
            node, outcome = self.state.place(pod.claims)
            pod.attempts += 1
            if node is None:
                backoff = min(BACKOFF_INITIAL * 2 ** (pod.attempts - 1), BACKOFF_MAX)
                pod.next_attempt = float("inf")  # until a device is released (then after its backoff)
                self._waiting[pod.name] = pod
                pod.backoff_until = self.now + backoff
                pod.why_pending = outcome.error or "no node has free devices for its claims"
                if pod.attempts == 1 or outcome.kind != "unschedulable":
                    self.log("unschedulable", pod.name, pod.why_pending)
                continue
            for result in outcome.results:
                self.state.commit(result.claim.key, result)
                held = [Hold(f"{r.pool}/{r.device}", pod.name, self.now) for r in result.results if not r.admin_access]
                self.holds.extend(held)
                self._holding.setdefault(pod.name, []).extend(held)
            self._move(pod, "Starting")
            pod.node, pod.why_pending = node.name, ""
            del self._pending[pod.name]
            self.log("scheduled", pod.name, node.name)
            d = pod.durations
            self.at(self.now + d.pull + d.start, self._started, pod)

    def _started(self, pod: Pod) -> None:
        if pod.phase != "Starting":
            return
        self._move(pod, "Running")
        self.log("running", pod.name)
        self.at(self.now + pod.durations.ready, self._ready, pod)

    def _ready(self, pod: Pod) -> None:
        if pod.phase == "Running":
            pod.ready_since = self.now
            self.log("ready", pod.name)
            if pod.min_ready:
                self.at(self.now + pod.min_ready, self._wake)  # when it becomes available

    # -- metrics --
    def _pool_view(self) -> PoolView:
        """dra.pools' view of the devices now, each node's part viewed again only when the
        state committed or released a claim there (or the slices changed)."""
        slices = self.state.inventory.slices
        if self._layout[0] is not slices:
            labels = {n.name: n.labels for n in self.state.inventory.nodes}
            self._layout, self._node_views = (slices, PoolLayout.of(self.state.inventory, labels)), {}
        layout, in_use, views = self._layout[1], self.state.in_use, []
        for name in sorted(layout.parts):
            known, changes = self._node_views.get(name), self.state.changes_on(name)
            if known is None or known[0] != changes:
                known = self._node_views[name] = (changes, layout.node(name, in_use))
            views.append(known[1])
        return PoolView(views)

    def metrics(self) -> dict:
        """Pods by phase and the pool view of dra.pools (the audit's definitions: devices held
        and free, allocatable and stranded capacity per profile, the largest placeable profile
        per GPU, the cluster autoscaler's utilization)."""
        phases = {phase: n for phase, n in self._phases.items() if n and phase != "Gone"}
        pool = self._pool_view().summary()
        return {"time": self.now, "pods": phases, "devicesAllocated": len(self.state.in_use), "devices": pool["devices"],
                "allocatable": pool["allocatable"], "stranded": pool["stranded"],
                "largestPlaceable": pool["largestPlaceable"], "utilization": pool["utilization"]}
