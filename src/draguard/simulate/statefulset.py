"""A StatefulSet as its controller drives it (k8s.io/kubernetes
pkg/controller/statefulset/stateful_set_control.go, updateStatefulSet), on the simulated world.

- Pods are named `<set>-<ordinal>`; a pod is made again under its name only once the old one
  is gone, so a StatefulSet never surges: its rolling update frees a pod's devices before
  the replacement asks for them.
- OrderedReady (the default): pods are made in ordinal order, each only once every lower
  one is Running and Ready (and available for minReadySeconds); a terminating pod blocks
  the set until it is gone; surplus pods are deleted from the highest ordinal, one at a
  time. Parallel: pods are made and deleted without waiting for each other.
- RollingUpdate without MaxUnavailableStatefulSet (off by default before 1.37; the API server
  then drops rollingUpdate.maxUnavailable): once every pod is healthy, the pod with the
  highest ordinal not at the update revision is deleted, and the next one only after its
  replacement is Running and Ready, in both pod management policies.
- RollingUpdate with it (updateStatefulSetAfterInvariantEstablished): maxUnavailable (default
  1; a percentage of replicas rounded down, at least 1) bounds the replicas unavailable or
  terminating. OrderedReady deletes that many minus the unavailable ones, from the highest
  ordinal not at the update revision; Parallel first deletes the old pods that are not
  available, then available old ones while the bound allows. Ordinals below the `partition`
  keep (and are made again at) the current revision; OnDelete: pods take the new revision
  only when something else deletes them.
- `ordinals.start` numbers the pods from it (the partition counts from it too); a pod named
  outside the range (adopted from a dump) is condemned.
- Complete: every replica ready, those from the partition up at the update revision, none
  condemned left."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.intstr import scaled_value
from ..model.rollout import statefulset_update_problems
from .template import PodTemplate, ScenarioError
from .world import World


@dataclass
class StatefulSet:
    name: str
    replicas: int
    template: PodTemplate
    world: World
    parallel: bool = False  # podManagementPolicy: Parallel
    on_delete: bool = False  # updateStrategy: OnDelete
    partition: int = 0
    max_unavailable: int | str = 1  # rollingUpdate.maxUnavailable, as written (read while the gate is on)
    start: int = 0  # spec.ordinals.start: pod i is named <set>-<start + i>
    update_revision: int = 1
    current_revision: int = 1  # what ordinals below the partition are made at
    pods: dict = field(default_factory=dict)  # ordinal -> its current pod
    revision_of: dict = field(default_factory=dict)  # pod name -> the revision it was made at
    completed_at: float | None = None

    @property
    def labels(self) -> dict:
        return self.template.labels

    def adopt(self, name: str):
        """A pod of this set found running (a cluster dump's), made as the set would have made
        it and kept at its ordinal, at the current revision."""
        pod = self.template.pod(name, self.name, self.world.now)
        ordinal = name.rpartition("-")[2]
        self.pods[int(ordinal) - self.start if ordinal.isdecimal() else len(self.pods)] = pod
        self.revision_of[name] = self.update_revision
        return pod

    def next_revision(self, advance=None) -> "StatefulSet":
        """spec.template changed: a new update revision, rolled out by reconcile."""
        if all(self.revision_of[p.name] == self.update_revision for p in self.pods.values() if p.phase != "Gone"):
            self.current_revision = self.update_revision  # status.currentRevision: every pod was updated
        self.update_revision += 1
        self.completed_at = None
        return self

    def scale(self, replicas: int) -> None:
        self.replicas = replicas
        self.completed_at = None

    def reconcile(self) -> None:
        self._replicas()
        if self.completed_at is None and self.complete():
            self.completed_at = self.world.now
            self.world.log("statefulset ready", detail=f"{self.name}: {self.replicas} replica(s) at revision "
                                                         f"{self.update_revision}")

    def _healthy(self, pod) -> bool:
        return pod is not None and pod.available(self.world.now, self.template.min_ready)

    def _replicas(self) -> None:
        world = self.world
        for ordinal in range(self.replicas):
            pod = self.pods.get(ordinal)
            if pod is None or pod.phase == "Gone":
                name = f"{self.name}-{self.start + ordinal}"
                pod = self.pods[ordinal] = self.template.pod(name, self.name, world.now)
                self.revision_of[name] = self.update_revision if ordinal >= self.partition else self.current_revision
                world.create_pod(pod)
                if not self.parallel:
                    return
                continue
            if pod.phase == "Terminating" and not self.parallel:
                return  # wait for graceful termination
            if not self._healthy(pod) and not self.parallel:
                return  # OrderedReady: the next ordinal waits for this one
        condemned = sorted((o for o in self.pods if not 0 <= o < self.replicas and self.pods[o].phase != "Gone"),
                           reverse=True)
        for ordinal in condemned:
            pod = self.pods[ordinal]
            if pod.phase == "Terminating":
                if not self.parallel:
                    return
                continue
            if not self.parallel and not all(self._healthy(self.pods.get(o)) for o in range(self.replicas)):
                return  # OrderedReady scales down only a healthy set
            world.delete_pod(pod)
            if not self.parallel:
                return
        if condemned and not self.parallel or self.on_delete:
            return
        if self.world.enabled("MaxUnavailableStatefulSet"):
            self._update_bounded()
            return
        for ordinal in self._updatable():
            pod = self.pods[ordinal]
            if self._old(pod):
                world.delete_pod(pod)
                return
            if not self._healthy(pod):
                return  # wait for unhealthy pods, the one just replaced among them

    def _update_bounded(self) -> None:
        """The rolling update under MaxUnavailableStatefulSet (updateStatefulSetAfterInvariantEstablished)."""
        bound = max(1, scaled_value(self.max_unavailable, self.replicas, round_up=False))
        replicas = [self.pods[o] for o in range(self.replicas)]
        unavailable = [p for p in replicas if not self._healthy(p) or p.phase == "Terminating"]
        needing = [p for p in unavailable if self.parallel and self._old(p)]
        if len(unavailable) >= bound and not needing:
            return
        if not self.parallel:
            for pod in [self.pods[o] for o in self._updatable() if self._old(self.pods[o])][:bound - len(unavailable)]:
                self.world.delete_pod(pod)
            return
        for pod in [self.pods[o] for o in self._updatable()]:  # first the old pods already unavailable
            if self._old(pod) and not self._healthy(pod):
                self.world.delete_pod(pod)
        left = bound - len(unavailable)
        for pod in [self.pods[o] for o in self._updatable()]:
            if left <= 0:
                break
            if self._old(pod) and self._healthy(pod):
                self.world.delete_pod(pod)
                left -= 1

    def _updatable(self) -> range:
        """The ordinals a rolling update replaces, highest first: down to the partition."""
        return range(self.replicas - 1, min(self.partition, self.replicas) - 1, -1)

    def _old(self, pod) -> bool:
        """Not at the update revision, and not already going."""
        return self.revision_of[pod.name] != self.update_revision and pod.phase not in ("Terminating", "Gone")

    def complete(self) -> bool:
        live = [p for o, p in self.pods.items() if p.phase != "Gone"]
        return (len(live) == self.replicas
                and all(self._healthy(self.pods.get(o)) and (o < self.partition
                                                              or self.revision_of[self.pods[o].name] == self.update_revision)
                        for o in range(self.replicas)))

    def fitted(self) -> str | None:
        """Why the start state does not fit, or None."""
        if self.complete():
            return None
        pending = [p for p in self.pods.values() if p.phase == "Pending"]
        ready = sum(self._healthy(self.pods.get(o)) for o in range(self.replicas))
        return (f"{ready} of {self.replicas} pods of StatefulSet '{self.name}' run on the inventory "
                f"({pending[0].why_pending if pending else 'not ready'})")


def statefulset_of(manifest, template: PodTemplate, world: World) -> StatefulSet:
    spec = manifest.spec
    policy = spec.get("podManagementPolicy", "OrderedReady")
    strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
    rolling = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
    if strategy == "Recreate":
        raise ScenarioError(f"StatefulSet '{manifest.name}': updateStrategy Recreate (StatefulSetRecreateStrategy, "
                            "alpha in 1.37, off by default) is not simulated")
    if policy not in ("OrderedReady", "Parallel") or strategy not in ("RollingUpdate", "OnDelete"):
        raise ScenarioError(f"StatefulSet '{manifest.name}': podManagementPolicy {policy!r} / updateStrategy "
                            f"{strategy!r} is not one the API accepts")
    max_unavailable, kept = rolling.get("maxUnavailable"), world.enabled("MaxUnavailableStatefulSet")
    refused = statefulset_update_problems(rolling, kept)
    if refused:
        key, said = refused[0]
        raise ScenarioError(f"StatefulSet '{manifest.name}': rollingUpdate.{key} {rolling[key]!r}: {said}")
    if max_unavailable is not None and not kept:
        world.log("ignored", detail=f"StatefulSet {manifest.name}: rollingUpdate.maxUnavailable {max_unavailable!r} is "
                                 "dropped by the API server (MaxUnavailableStatefulSet is off): one pod at a time")
    ordinals = spec.get("ordinals") or {}
    start = ordinals.get("start", 0) if isinstance(ordinals, dict) else None
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ScenarioError(f"StatefulSet '{manifest.name}': ordinals.start must be a whole number >= 0, not {start!r}")
    return StatefulSet(manifest.name, int(spec.get("replicas", 1)), template, world, policy == "Parallel",
                       strategy == "OnDelete", int(rolling.get("partition") or 0),
                       max_unavailable if max_unavailable is not None else 1, start)
