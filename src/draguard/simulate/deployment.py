"""A Deployment's rollout as the Deployment and ReplicaSet controllers drive it
(k8s.io/kubernetes pkg/controller/deployment, pkg/controller/replicaset), on the simulated
world: the ReplicaSets' spec.replicas are the controllers' decisions, the pods follow.

RollingUpdate (rolling.go):
- reconcileNewReplicaSet / NewRSNewReplicas: the new ReplicaSet grows to at most
  replicas + maxSurge pods counted by the ReplicaSets' spec.replicas (terminating pods are
  not counted, so a replacement is made at once);
- reconcileOldReplicaSets: old ReplicaSets shrink by at most
  allPods - minAvailable - (new ReplicaSet's unavailable pods), unhealthy pods first
  (cleanupUnhealthyReplicas), then while available pods stay above minAvailable
  (scaleDownOldReplicaSetsForRollingUpdate), oldest ReplicaSet first;
- the fenceposts: maxSurge rounds up, maxUnavailable down, both 0 makes unavailable 1
  (model.rollout.Strategy, deployment_util.go ResolveFenceposts).
Recreate (recreate.go): old ReplicaSets to 0, the new one scaled up only once no old pod is
left (terminating ones included).
ReplicaSet (replica_set.go manageReplicas): active pods (FilterActivePods) are matched to
spec.replicas; surplus pods are deleted in ActivePodsWithRanks order: not scheduled before
scheduled, pending before running, not ready before ready, newer before older.
progressDeadlineSeconds (progress.go): a rollout without progress for that long is marked
ProgressDeadlineExceeded; nothing is rolled back."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from ..model.rollout import Strategy
from .template import PodTemplate
from .world import World

DEFAULT_PROGRESS_DEADLINE = 600.0  # spec.progressDeadlineSeconds' API default


@dataclass
class ReplicaSet:
    name: str
    revision: int
    replicas: int  # spec.replicas, the controllers' decision
    template: PodTemplate
    pods: list = field(default_factory=list)
    created: int = 0  # pods made, for names
    #: (what was counted, the world's pod changes, pods made, now, minReadySeconds) -> the count, of
    #: the last moment: the controllers ask for them several times a moment, and the pods of a
    #: large rollout are tens of thousands (scanning them again was a tenth of its CPU)
    _counted: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def labels(self) -> dict:
        return self.template.labels

    def active(self, world: World) -> list:
        """The pods counted by the ReplicaSet (Pod.active)."""
        return self._count(("active", world.pod_changes, len(self.pods)),
                           lambda: [p for p in self.pods if p.active])

    def available(self, world: World, min_ready: float) -> int:
        return self._count(("available", world.pod_changes, len(self.pods), world.now, min_ready),
                           lambda: sum(p.available(world.now, min_ready) for p in self.pods))

    def _count(self, key: tuple, count: Callable):
        """`count()`, again only when a pod changed phase or readiness, a pod was made, or the
        time or `min_ready` is another (the rest of `key`) since it was last made."""
        found = self._counted.get(key[0])
        if found is None or found[0] != key:
            found = self._counted[key[0]] = (key, count())
        return found[1]


@dataclass
class Rollout:
    """One Deployment with its ReplicaSets; `new` is the revision being rolled out.
    `progress_deadline` holds for this rollout (inf: none watched), `spec_deadline` is the
    Deployment's, for its next one."""

    name: str
    replicas: int
    strategy: Strategy
    min_ready: float
    progress_deadline: float
    old: list[ReplicaSet]
    new: ReplicaSet
    world: World
    spec_deadline: float = DEFAULT_PROGRESS_DEADLINE
    last_progress: float = 0.0
    deadline_exceeded_at: float | None = None
    completed_at: float | None = None
    advance: Callable[[int], None] | None = None  # advance(n): n more updated replicas available (a progress bar)
    _progress: tuple = ()

    @property
    def labels(self) -> dict:
        return self.new.labels

    @property
    def sets(self) -> list[ReplicaSet]:
        return self.old + [self.new]

    def adopt(self, name: str):
        """A pod of this Deployment found running (a cluster dump's), made as its current
        ReplicaSet would have made it and counted among that set's pods."""
        rs = self.new
        pod = rs.template.pod(name, rs.name, self.world.now)
        rs.pods.append(pod)
        rs.created += 1
        return pod

    def next_revision(self, advance=None) -> "Rollout":
        """The Deployment's pod template changed: a new ReplicaSet at 0 rolled out against the
        ones that still have replicas or pods, its controller in place of this one's."""
        live = self.new
        new = dataclasses.replace(live, name=f"{self.name}-{live.revision + 1}", revision=live.revision + 1,
                                  replicas=0, pods=[], created=0)
        old = [rs for rs in self.sets if rs.replicas or any(p.phase != "Gone" for p in rs.pods)]
        rollout = Rollout(self.name, self.replicas, self.strategy, self.min_ready, self.spec_deadline, old, new,
                          self.world, self.spec_deadline, advance=advance)
        controllers = self.world.on_change
        controllers[controllers.index(self.reconcile)] = rollout.reconcile
        return rollout

    def reconcile(self) -> None:
        """The Deployment controller, then each ReplicaSet controller (called at every moment)."""
        if self.strategy.type == "Recreate":
            self._recreate()
        else:
            self._rolling()
        for rs in self.sets:
            self._manage(rs)
        self._watch_progress()
        if self.completed_at is None and self.complete():
            self.completed_at = self.world.now
            self.world.log("rollout complete")

    # -- the Deployment controller --
    def _rolling(self) -> None:
        surge, unavailable = self.strategy.fenceposts()
        new = self.new
        if new.replicas < self.replicas:
            current = sum(rs.replicas for rs in self.sets)
            room = self.replicas + surge - current
            if room > 0:
                new.replicas += min(room, self.replicas - new.replicas)
        old_count = sum(rs.replicas for rs in self.old)
        if old_count == 0:
            return
        all_count = sum(rs.replicas for rs in self.sets)
        min_available = self.replicas - unavailable
        new_unavailable = new.replicas - new.available(self.world, self.min_ready)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        cleaned = 0
        for rs in self.old:  # cleanupUnhealthyReplicas: oldest first
            if rs.replicas == 0:
                continue
            unhealthy = rs.replicas - rs.available(self.world, self.min_ready)
            if unhealthy <= 0:
                continue
            down = min(max_scaled_down - cleaned, unhealthy)
            rs.replicas -= down
            cleaned += down
            if cleaned >= max_scaled_down:
                return
        available = sum(rs.available(self.world, self.min_ready) for rs in self.sets)
        if available <= min_available:
            return
        total, done = available - min_available, 0
        for rs in self.old:  # scaleDownOldReplicaSetsForRollingUpdate
            if rs.replicas == 0 or done >= total:
                continue
            down = min(rs.replicas, total - done)
            rs.replicas -= down
            done += down

    def _recreate(self) -> None:
        for rs in self.old:
            rs.replicas = 0
        if any(p.phase != "Gone" for rs in self.old for p in rs.pods):
            return
        self.new.replicas = self.replicas

    # -- the ReplicaSet controller --
    def _manage(self, rs: ReplicaSet) -> None:
        active = rs.active(self.world)
        if len(active) < rs.replicas:
            for _ in range(rs.replicas - len(active)):
                rs.created += 1
                name = f"{rs.name}-{rs.created}"
                pod = rs.template.pod(name, rs.name, self.world.now)
                rs.pods.append(pod)
                self.world.create_pod(pod)
        elif len(active) > rs.replicas:
            ranked = sorted(active, key=lambda p: (p.node is not None, p.phase != "Pending", p.ready_since is not None,
                                                   -p.created))
            for pod in ranked[:len(active) - rs.replicas]:
                self.world.delete_pod(pod)

    # -- progress --
    def _watch_progress(self) -> None:
        state = (self.new.replicas, self.new.available(self.world, self.min_ready),
                 sum(len(rs.active(self.world)) for rs in self.old))
        if state != self._progress:
            if self.advance is not None and self._progress and state[1] > self._progress[1]:
                self.advance(state[1] - self._progress[1])
            self._progress, self.last_progress = state, self.world.now
            if self.progress_deadline != float("inf"):
                self.world.at(self.world.now + self.progress_deadline, self._deadline, state, inert=True)

    def _deadline(self, state: tuple) -> None:
        if state == self._progress and not self.complete() and self.deadline_exceeded_at is None:
            self.deadline_exceeded_at = self.world.now
            self.world.log("ProgressDeadlineExceeded", detail=f"no progress for {self.progress_deadline:.0f} s "
                                                                "(the rollout is not rolled back)")

    def scale(self, replicas: int) -> None:
        """spec.replicas changed (outside a rollout: the new ReplicaSet takes it all)."""
        self.replicas = self.new.replicas = replicas
        self.completed_at = None

    def fitted(self) -> str | None:
        """Why the Deployment's replicas did not all come up, or None."""
        running = self.new.available(self.world, self.min_ready)
        if running >= self.replicas:
            return None
        pending = next((p for p in self.new.pods if p.phase == "Pending"), None)
        return (f"{running} of {self.replicas} pods of '{self.name}' run on the inventory "
                f"({pending.why_pending if pending else 'not ready'})")

    def complete(self) -> bool:
        """DeploymentComplete (deployment_util.go): every replica updated and available, and
        status.replicas (active pods: a terminating one is not counted) equal to replicas."""
        return (self.new.replicas == self.replicas
                and self.new.available(self.world, self.min_ready) == self.replicas
                and sum(len(rs.active(self.world)) for rs in self.sets) == self.replicas)
