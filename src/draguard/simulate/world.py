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
  beta and on by default; scheduling_queue.go). No preemption frees devices. The periodic
  flush of unschedulable pods (podMaxInUnschedulablePodsDuration, 5 min) only retries pods
  for which nothing changed: it cannot change a verdict, so it is not simulated. A pod no
  node takes is told so as FitError words it ("0/N nodes are available: ...").
- kubelet termination as model.teardown times it (killContainer: the preStop hook inside the
  grace period, then SIGTERM with at least 2 s before SIGKILL); devices are unprepared before
  the pod is terminal.
- the resourceclaim controller removes a generated claim's reservation and deallocates it
  once its pod is terminal or gone (pkg/controller/resourceclaim/controller.go); until then
  the device stays held, also while the pod is Terminating.
- the release and its feature gates: the scheduler runs the allocator variant they select
  (dra.variants), on slices as the API server stores them (dra.storage drops the fields of
  gates that are off); MaxUnavailableStatefulSet decides whether a StatefulSet's
  rollingUpdate.maxUnavailable is read (simulate.statefulset)."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections import Counter
from dataclasses import dataclass, field

from ..core.collector import cyclic_gc_paused
from ..core.versions import DEFAULT_KUBE_VERSION, minor
from ..dra.storage import as_stored, dropped
from ..dra.variants import disabled_gates, variant_for
from ..facts.gates import gate_enabled
from ..model.extended_resources import ClassRef, resolver
from ..dra.devices import Claim
from ..dra.placement import ANYWHERE, NodeFit
from ..dra.pools import PoolLayout, PoolTally
from ..dra.state import ClusterState

BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 10.0
SLICE_WIPING_DELAY = 30.0


@dataclass(frozen=True)
class Durations:
    """Seconds each phase takes (configurable per workload; the defaults are a cached image and
    a server that is ready a few seconds after it starts)."""

    prepare: float = 0.0  # the driver preparing the devices (NodePrepareResources), before the pull
    pull: float = 0.0
    start: float = 2.0
    ready: float = 5.0  # from started to passing its readiness probe
    shutdown: float = 1.0  # from SIGTERM to the containers' exit (SIGKILL cuts it short)
    unprepare: float = 0.5  # the driver releasing the devices
    run: float = 60.0  # a Job's pod: from Running to its containers' exit 0 (a server runs until deleted)
    pre_stop: float | None = None  # a preStop hook's run time; None: the hook's own waits (sleep N, timeout N)


@dataclass(frozen=True)
class Timings:
    """The phase durations of every workload: the scenario's, and some workloads' own (by
    name)."""

    default: Durations = Durations()
    own: tuple = ()  # ((workload name, its Durations), ...)

    def of(self, workload: str) -> Durations:
        return dict(self.own).get(workload, self.default)


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
    fit: NodeFit = ANYWHERE  # its node filters
    completes: bool = False  # a Job's pod: it succeeds after durations.run
    phase: str = "Pending"  # Pending, Starting, Running, Succeeded, Terminating, Gone
    node: str | None = None
    ready_since: float | None = None
    deleting_since: float | None = None
    attempts: int = 0
    next_attempt: float = 0.0  # inf: waiting for a device to be released
    backoff_until: float = 0.0
    why_pending: str = ""
    succeeded: bool = False
    unprepared: bool = True  # False: stopped, its devices wait for the driver to unprepare them
    prepare_failed: bool = False  # scheduled while the driver was gone: ContainerCreating until it is back

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

    def shifted(self, start: float) -> "Record":
        """The record timed from `start` (dataclasses.replace, which reads the fields anew for
        each of the hundreds of thousands of records a large rollout makes, took seconds)."""
        return Record(self.time - start, self.what, self.pod, self.detail)


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
    kube_version: str = DEFAULT_KUBE_VERSION
    gates: dict = field(default_factory=dict)  # those set differently from the release's defaults
    # extended resource name -> the DeviceClass that serves it (DRAExtendedResource, 1.36+)
    extended_resources: dict = field(default_factory=dict)
    now: float = 0.0
    pods: dict[str, Pod] = field(default_factory=dict)
    #: changes of a pod's phase or readiness so far: counts of pods made since none are current
    #: (a ReplicaSet's active and available pods, asked several times a moment, simulate.deployment)
    pod_changes: int = 0
    timeline: list[Record] = field(default_factory=list)
    samples: list[dict] = field(default_factory=list)  # pool metrics after each moment
    holds: list[Hold] = field(default_factory=list)
    _pending: dict = field(default_factory=dict)  # name -> a Pending pod, in creation order
    _waiting: dict = field(default_factory=dict)  # name -> a Pending pod waiting for a device
    _holding: dict = field(default_factory=dict)  # pod name -> its open holds
    _phases: Counter = field(default_factory=Counter)  # phase -> pods in it
    _layout: tuple = (None, None, None)  # (the slices it was read from, their dra.pools.PoolLayout, PoolTally)
    _node_changes: dict = field(default_factory=dict)  # node -> its state changes when last viewed
    drivers_down: set = field(default_factory=set)  # nodes whose DRA driver is gone
    _driver_epoch: dict = field(default_factory=dict)  # node -> driver starts, so a stale wipe is dropped
    _wiped: dict = field(default_factory=dict)  # node -> the ResourceSlices the kubelet wiped
    _queue: list = field(default_factory=list)
    _order: itertools.count = field(default_factory=itertools.count)
    on_change: list = field(default_factory=list)  # controllers: called after each moment

    @classmethod
    def on(cls, inventory, kube_version: str, gates: dict | None = None) -> "World":
        """An empty world on a copy of `inventory`'s allocation state, with the scheduler of
        `kube_version` and its feature `gates` (those set differently from the release's
        defaults); what storing the slices drops is noted at time 0."""
        gates = gates or {}
        disabled = disabled_gates(kube_version, gates)
        stored = as_stored(inventory, disabled)
        served = resolver([ClassRef(c.name, c.extended_resource_name,
                                    str(c.manifest.metadata.get("creationTimestamp") or "") if c.manifest else "")
                           for c in stored.classes.values()]) \
            if gate_enabled("DRAExtendedResource", kube_version, gates) else {}
        world = cls(ClusterState(dataclasses.replace(stored, allocated=set(stored.allocated)),
                                 variant_for(kube_version, gates).features()),
                    pop_from_backoff=minor(kube_version) >= 33, extended_resources=served, kube_version=kube_version,
                    gates=gates)
        for line in dropped(inventory, disabled):
            world.log("ignored", detail=f"Kubernetes {kube_version}: {line}")
        return world

    # -- time --
    def at(self, when: float, action, *args, inert: bool = False) -> None:
        """`action(*args)` at `when`; `inert`: it changes no pod (a condition set on an object),
        so it does not count among the events that could still change the world."""
        heapq.heappush(self._queue, (when, next(self._order), action, args, inert))

    def run(self, horizon: float, until=None) -> bool:
        """Process events until none is left or `until()` holds (True), or the horizon is
        reached (False). After each moment the controllers reconcile and the scheduler tries
        the pending pods. The cyclic collector is paused meanwhile: what a run makes (pods,
        records, allocations) lives to its end, and the collector's full passes over it and
        the inventory were a third of a 5,000-node rollout's CPU (measured); reference
        counting frees the rest."""
        with cyclic_gc_paused():
            return self._run(horizon, until)

    def _run(self, horizon: float, until) -> bool:
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

    def enabled(self, gate: str) -> bool:
        """Whether the cluster runs with `gate` on (MaxUnavailableStatefulSet, DRADeviceTaints)."""
        return gate_enabled(gate, self.kube_version, self.gates)

    def log(self, what: str, pod: str = "", detail: str = "") -> None:
        self.timeline.append(Record(self.now, what, pod, detail))

    def misfit(self, problem: str) -> str:
        """Why the start state does not fit, with what the release ignored (a gate that is
        off can be the reason: a device no longer shared, a taint no longer read)."""
        ignored = [r.detail for r in self.timeline if r.what == "ignored"]
        return f"the start state does not fit: {problem}" + "".join(f"; note: {text}" for text in ignored)

    # -- pods --
    def _move(self, pod: Pod, phase: str) -> None:
        """Every phase change goes through here, which keeps the count per phase."""
        self._phases[pod.phase] -= 1
        self._phases[phase] += 1
        pod.phase = phase
        self.pod_changes += 1

    def create_pod(self, pod: Pod) -> None:
        known = self.pods.get(pod.name)
        if known is not None and known.phase != "Gone":
            raise ValueError(f"pod {pod.name} exists")  # a StatefulSet reuses a name only once the pod is gone
        self._phases[pod.phase] += 1
        self.pods[pod.name] = pod
        self._pending[pod.name] = pod
        self.log("created", pod.name)

    def adopt(self, pod: Pod, node: str | None, allocations: list, ready: bool = True, deleting: bool = False) -> None:
        """A pod found running (a cluster dump's): on `node`, its claims allocated as
        `allocations` ((claim key, AllocationResult)) say; a pod without a node is created
        Pending instead, and one being deleted terminates from now."""
        if node is None:
            self.create_pod(pod)
            return
        pod.phase, pod.node = "Running", node
        self._phases["Running"] += 1
        self.pod_changes += 1
        self.pods[pod.name] = pod
        for key, allocation in allocations:
            self._hold(pod, key, allocation)
        self.log("adopted", pod.name, node)
        if deleting:
            self.delete_pod(pod)
        elif ready:
            pod.ready_since = self.now
            self.pod_changes += 1
        else:
            self.at(self.now + pod.durations.ready, self._ready, pod)

    def delete_pod(self, pod: Pod) -> None:
        """A deletion: a pod not yet on a node is gone at once; a scheduled one terminates."""
        if pod.phase == "Pending":
            self._move(pod, "Gone")
            self._pending.pop(pod.name, None)
            self._waiting.pop(pod.name, None)
            self.log("deleted (never scheduled)", pod.name)
            return
        if pod.phase in ("Terminating", "Gone"):
            return
        if pod.phase == "Succeeded":  # terminal already: the object goes, its devices went with the exit
            self._move(pod, "Gone")
            return
        self._move(pod, "Terminating")
        pod.deleting_since = self.now
        self.log("terminating", pod.name)
        self.at(self.now + pod.stop_after, self._stopped, pod)

    def _stopped(self, pod: Pod) -> None:
        """Every container stopped: the kubelet unprepares the devices, then the pod is gone."""
        self._unprepare(pod, "gone: devices released", gone=True)

    def _unprepare(self, pod: Pod, why: str, gone: bool) -> None:
        """NodeUnprepareResources needs the node's driver; while it is away the kubelet retries
        and the pod is not finished (kubelet SyncTerminatedPod returns the error), so a deleted
        pod stays Terminating and its claims stay allocated."""
        if pod.node in self.drivers_down:
            pod.unprepared = False
            self.log("unprepare failed", pod.name, f"the DRA driver on {pod.node} is gone")
            return
        pod.unprepared = True
        self.at(self.now + pod.durations.unprepare, self.remove if gone else self._release, pod, why)

    def remove(self, pod: Pod, why: str = "gone: devices released") -> None:
        """The pod is gone (its containers stopped, or the pod garbage collector removed it):
        its claims are deallocated and the pods waiting for devices are woken."""
        if pod.phase == "Gone":
            return
        self._move(pod, "Gone")
        self._pending.pop(pod.name, None)
        self._waiting.pop(pod.name, None)
        self._release(pod, why)

    def _release(self, pod: Pod, why: str) -> None:
        """The pod's claims deallocated (it is gone, or terminal: a Job's that succeeded, whose
        object may stay or be deleted meanwhile)."""
        for claim in pod.claims:
            if claim.key in self.state.allocations:
                self.state.release(claim.key)
        for hold in self._holding.pop(pod.name, ()):
            hold.end = self.now
        self.log(why, pod.name)
        self.wake_waiting()

    def wake_waiting(self) -> None:
        """The DRA queueing hint: a freed device (or a new slice) may fit the waiting pods."""
        for waiting in self._waiting.values():
            waiting.next_attempt = self.now if self.pop_from_backoff else max(self.now, waiting.backoff_until)
            self.at(waiting.next_attempt, self._wake)
        self._waiting.clear()

    def _wake(self) -> None:
        """A moment for the scheduler (a pod's backoff is over)."""

    def stuck(self) -> list[Pod]:
        """Pods that wait for a driver that is gone: deleted ones whose devices it must
        unprepare, scheduled ones whose devices it must prepare."""
        return [p for p in self.pods.values()
                if (not p.unprepared and p.phase in ("Terminating", "Succeeded"))
                or (p.prepare_failed and p.phase == "Starting")]

    # -- drivers --
    def driver_stop(self, node: str) -> None:
        """The node's DRA driver stops (crashed, uninstalled, restarting): nothing is prepared
        or unprepared there; after the kubelet's wiping delay its ResourceSlices are deleted
        (pkg/kubelet/cm/dra/manager.go defaultWipingDelay 30 s), and no new claim is
        allocated there."""
        self.drivers_down.add(node)
        self.log("driver stopped", detail=node)
        self.at(self.now + SLICE_WIPING_DELAY, self._wipe, node, self._driver_epoch.get(node, 0))

    def _wipe(self, node: str, epoch: int) -> None:
        if node not in self.drivers_down or self._driver_epoch.get(node, 0) != epoch:
            return
        inventory = self.state.inventory
        self._wiped[node] = [s for s in inventory.slices if s.node_name == node]
        self.state.invalidate(slices=[s for s in inventory.slices if s.node_name != node])
        self.log("ResourceSlices wiped", detail=f"{node}: the driver stayed away {SLICE_WIPING_DELAY:.0f} s")

    def driver_start(self, node: str) -> None:
        """The driver is back: it publishes its slices again, and the kubelet's retries
        prepare and unprepare what waited."""
        self.drivers_down.discard(node)
        self._driver_epoch[node] = self._driver_epoch.get(node, 0) + 1
        self.log("driver started", detail=node)
        if node in self._wiped:
            self.state.invalidate(slices=self.state.inventory.slices + self._wiped.pop(node))
            self.wake_waiting()
        for pod in [p for p in self.pods.values() if p.node == node]:
            if not pod.unprepared:
                self._unprepare(pod, "gone: devices released", gone=pod.phase == "Terminating")
            elif pod.phase == "Starting" and pod.prepare_failed:
                pod.prepare_failed = False
                self.at(self.now + pod.durations.start, self._started, pod)

    # -- scheduler --
    def schedule(self) -> None:
        for pod in [p for p in self._pending.values() if p.next_attempt <= self.now]:  # oldest first
            node, outcome = self.state.place(pod.claims, pod.fit)
            pod.attempts += 1
            if node is None:
                backoff = min(BACKOFF_INITIAL * 2 ** (pod.attempts - 1), BACKOFF_MAX)
                pod.next_attempt = float("inf")  # until a device is released (then after its backoff)
                self._waiting[pod.name] = pod
                pod.backoff_until = self.now + backoff
                pod.why_pending = outcome.error or self.state.unavailable(pod.fit)
                if pod.attempts == 1 or outcome.kind != "unschedulable":
                    self.log("unschedulable", pod.name, pod.why_pending)
                continue
            for result in outcome.results:
                self._hold(pod, result.claim.key, result)
            self._move(pod, "Starting")
            pod.node, pod.why_pending = node.name, ""
            del self._pending[pod.name]
            self.log("scheduled", pod.name, node.name)
            waits = sorted({c for r in outcome.results for d in r.results for c in d.binding_conditions})
            if waits:  # PreBind waits for them; the driver's controller that sets them is not simulated
                self.log("assumed", pod.name, f"binding conditions {', '.join(waits)} met at once (the scheduler "
                                              "waits for the driver to set them, up to its binding timeout)")
            d = pod.durations
            self.at(self.now + d.prepare + d.pull + d.start, self._started, pod)

    def _hold(self, pod: Pod, key: str, allocation) -> None:
        """The claim `key` allocated for `pod`: its devices held from now (for the Gantt chart)."""
        self.state.commit(key, allocation)
        held = [Hold(f"{r.pool}/{r.device}", pod.name, self.now) for r in allocation.results if not r.admin_access]
        self.holds.extend(held)
        self._holding.setdefault(pod.name, []).extend(held)

    # -- kubelet --
    def _started(self, pod: Pod) -> None:
        if pod.phase != "Starting":
            return
        if pod.node in self.drivers_down:  # NodePrepareResources fails: the pod stays ContainerCreating
            pod.prepare_failed = True
            self.log("FailedPrepareDynamicResources", pod.name, f"the DRA driver on {pod.node} is gone")
            return
        self._move(pod, "Running")
        self.log("running", pod.name)
        self.at(self.now + pod.durations.ready, self._ready, pod)
        if pod.completes:
            self.at(self.now + pod.durations.run, self._exited, pod)

    def _ready(self, pod: Pod) -> None:
        if pod.phase == "Running":
            pod.ready_since = self.now
            self.pod_changes += 1
            self.log("ready", pod.name)
            if pod.min_ready:
                self.at(self.now + pod.min_ready, self._wake)  # when it becomes available

    def _exited(self, pod: Pod) -> None:
        """A Job's pod ran to its exit 0: Succeeded, a terminal phase, so its devices are
        unprepared and its claims deallocated while the object stays."""
        if pod.phase != "Running":
            return
        self._move(pod, "Succeeded")
        pod.succeeded, pod.ready_since = True, None
        self.pod_changes += 1
        self.log("succeeded", pod.name)
        self._unprepare(pod, "succeeded: devices released", gone=False)

    # -- metrics --
    def _pool_summary(self) -> dict:
        """dra.pools' summary of the devices now, each node's part viewed again only when the
        state committed or released a claim there (or the slices changed), and summed again
        only for those nodes (PoolTally)."""
        slices = self.state.inventory.slices
        if self._layout[0] is not slices:
            labels = {n.name: n.labels for n in self.state.inventory.nodes}
            layout = PoolLayout.of(self.state.inventory, labels)
            self._layout, self._node_changes = (slices, layout, PoolTally(sorted(layout.parts))), {}
        _, layout, tally = self._layout
        held, seen, changes_on = self.state.held, self._node_changes, self.state.changes_on
        for name in layout.parts:
            changes = changes_on(name)
            if seen.get(name) != changes:
                seen[name] = changes
                tally.replace(layout.node(name, held))
        return tally.summary()

    def metrics(self) -> dict:
        """Pods by phase and the pool view of dra.pools (the audit's definitions: devices held
        and free, allocatable and stranded capacity per profile, the largest placeable profile
        per GPU, the cluster autoscaler's utilization)."""
        phases = {phase: n for phase, n in self._phases.items() if n and phase != "Gone"}
        pool = self._pool_summary()
        return {"time": self.now, "pods": phases, "devicesAllocated": len(self.state.held), "devices": pool["devices"],
                "allocatable": pool["allocatable"], "stranded": pool["stranded"],
                "largestPlaceable": pool["largestPlaceable"], "utilization": pool["utilization"]}
