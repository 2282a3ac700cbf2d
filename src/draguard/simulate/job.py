"""A Job as its controller drives it (k8s.io/kubernetes pkg/controller/job/job_controller.go,
manageJob), on the simulated world: its pods run for `durations.run`, then succeed, and a
succeeded pod's claims are deallocated (the pod is terminal).

- Active pods wanted: parallelism, capped by the completions still to do
  (completions - succeeded) when spec.completions is set; without it (a work queue) the Job
  is done once a pod succeeded and none is active.
- podReplacementPolicy (KEP-3939, GA in 1.34): TerminatingOrFailed (the default) makes a
  replacement as soon as a pod is terminating; Failed (the only value with a
  podFailurePolicy) waits until the terminating pod is gone, so its devices are released
  before the replacement asks for them.
- Indexed (completionMode): each index 0..completions-1 must succeed once; the lowest
  indexes without a succeeded or active pod are started first, at most one active pod an
  index (a terminating one counts while podReplacementPolicy is Failed).
- A pod deleted before it succeeded (evicted, drained) counts as failed; more failures than
  spec.backoffLimit (default 6) fail the Job (BackoffLimitExceeded)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .template import PodTemplate, ScenarioError
from .world import World

DEFAULT_BACKOFF_LIMIT = 6


@dataclass
class Job:
    name: str
    parallelism: int
    completions: int | None
    template: PodTemplate
    world: World
    replace_on_failed_only: bool = False  # podReplacementPolicy: Failed
    backoff_limit: int = DEFAULT_BACKOFF_LIMIT
    indexed: bool = False
    pods: list = field(default_factory=list)
    index_of: dict = field(default_factory=dict)  # pod name -> its completion index (Indexed)
    created: int = 0
    failed_at: float | None = None
    completed_at: float | None = None

    @property
    def labels(self) -> dict:
        return self.template.labels

    @property
    def replicas(self) -> int:
        """The pods a PodDisruptionBudget expects of it."""
        return self.parallelism

    def scale(self, parallelism: int) -> None:
        self.parallelism = parallelism

    def succeeded(self) -> int:
        if self.indexed:
            return len({self.index_of[p.name] for p in self.pods if p.succeeded})
        return sum(p.succeeded for p in self.pods)

    def failed(self) -> int:
        return sum(1 for p in self.pods if not p.succeeded and p.deleting_since is not None)

    def reconcile(self) -> None:
        if self.completed_at is not None or self.failed_at is not None:
            return
        world = self.world
        if self.failed() > self.backoff_limit:
            self.failed_at = world.now
            world.log("job failed", detail=f"{self.name}: BackoffLimitExceeded ({self.failed()} failed)")
            for pod in self.pods:
                world.delete_pod(pod)
            return
        if self.complete():
            self.completed_at = world.now
            world.log("job complete", detail=f"{self.name}: {self.succeeded()} succeeded")
            return
        active = [p for p in self.pods if p.active]
        want = self.parallelism
        if self.completions is not None:
            want = min(want, self.completions - self.succeeded())
        elif self.succeeded():
            want = 0  # a work queue: no new pod once one succeeded
        if self.replace_on_failed_only:
            want -= sum(1 for p in self.pods if p.phase == "Terminating")
        for index in self._indexes(want - len(active)):
            self.created += 1
            name = f"{self.name}-{index}-{self.created}" if self.indexed else f"{self.name}-{self.created}"
            pod = self.template.pod(name, self.name, world.now)
            self.index_of[name] = index
            self.pods.append(pod)
            world.create_pod(pod)

    def _indexes(self, count: int) -> list:
        """The completion indexes of the next `count` pods (None each when not Indexed)."""
        if not self.indexed or self.completions is None:  # job_of refuses Indexed without completions
            return [None] * max(count, 0)
        taken = {self.index_of[p.name] for p in self.pods
                 if p.succeeded or p.active or (self.replace_on_failed_only and p.phase == "Terminating")}
        return [i for i in range(self.completions) if i not in taken][:max(count, 0)]

    def complete(self) -> bool:
        if self.completions is not None:
            return self.succeeded() >= self.completions
        return self.succeeded() > 0 and not any(p.active for p in self.pods)


def job_of(manifest, template: PodTemplate, world: World) -> Job:
    spec = manifest.spec
    policy = spec.get("podReplacementPolicy") or ("Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    if policy not in ("Failed", "TerminatingOrFailed"):
        raise ScenarioError(f"Job '{manifest.name}': podReplacementPolicy {policy!r} is not one the API accepts")
    completions = spec.get("completions")
    parallelism = spec.get("parallelism", 1)
    indexed = spec.get("completionMode") == "Indexed"
    if indexed and completions is None:
        raise ScenarioError(f"Job '{manifest.name}': an Indexed Job needs completions (the API refuses it without)")
    if spec.get("backoffLimitPerIndex") is not None or spec.get("successPolicy") is not None:
        raise ScenarioError(f"Job '{manifest.name}': backoffLimitPerIndex and successPolicy are not simulated yet")
    return Job(manifest.name, int(parallelism), None if completions is None else int(completions), template, world,
               policy == "Failed", int(spec.get("backoffLimit", DEFAULT_BACKOFF_LIMIT)), indexed)
