"""Scenarios run twice, by `draguard simulate` and by the real control plane, for the fidelity
table (issue: simulate). A scenario is the simulator's own: manifests, fake-driver MIG nodes
and steps; `on_the_plane` plays the same steps against the real kube-controller-manager,
kube-scheduler and eviction API, with one fake kubelet for every scenario's nodes (started
pods Running and Ready after START s, Job pods succeeding after their run time, teardown as
draguard's termination model says, nothing done on a node whose driver is gone).

Scenarios run side by side, a few at a time, each in a namespace of its own on nodes of its
own (its pods select them by label)."""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.model.manifest import Manifest
from draguard.simulate.drain import DRAIN_RETRY
from draguard.simulate.scenario import Step, run_scenario
from draguard.simulate.world import Durations

from .cluster import RUN_SECONDS, FakeKubelet
from .simulate import claim_template

START = 2.0  # the fake kubelet's start-up: Running and Ready this long after it sees a pod
LABEL = "fidelity.draguard.io/scenario"
STILL = 12.0  # seconds without a change after which the plane is taken to be done moving
POLL = 0.5  # each scenario's polling: those side by side must leave the 2 cores to the plane
BATCH = 4  # scenarios side by side: more load the plane enough to delay its controllers by seconds


@dataclass
class Fidelity:
    name: str
    workloads: list[dict]  # Deployments, StatefulSets, Jobs (their pods get the scenario's node selector)
    steps: list[tuple[str, dict]]
    gpus: dict
    nodes: int = 1
    profile: str = "3g.20gb"
    extra: list[dict] = field(default_factory=list)  # PodDisruptionBudgets
    run: float = 0.0  # a Job pod's run time
    cordoned: tuple = ()  # the nodes (by index) unschedulable at the start
    classes: list[dict] = field(default_factory=list)  # DeviceClasses its pods need (cluster-wide, applied once)
    key: str = ""  # the namespace, node prefix and label value

    def objects(self) -> tuple[list[dict], list[dict]]:
        """(the namespace's objects, the nodes' objects: Nodes and ResourceSlices)."""
        ns = self.key
        own = [claim_template(self.profile, ns)]
        for workload in self.workloads + self.extra:
            obj = copy.deepcopy(workload)
            obj["metadata"]["namespace"] = ns
            template = obj.get("spec", {}).get("template")
            if template:
                template["spec"]["nodeSelector"] = {LABEL: ns}
                if self.run:
                    template["metadata"].setdefault("annotations", {})[RUN_SECONDS] = str(self.run)
            own.append(obj)
        nodes = generate({"nodes": [{"namePrefix": ns, "count": self.nodes, "gpus": self.gpus,
                                     "labels": {LABEL: ns}}]})
        for node in nodes:
            if node["kind"] == "Node" and int(node["metadata"]["name"].rsplit("-", 1)[1]) in self.cordoned:
                node["spec"] = {"unschedulable": True}
        return own, nodes

    def simulated(self):
        own, nodes = self.objects()
        inventory = Inventory.from_manifests([Manifest.from_data(o, document=i)
                                              for i, o in enumerate(nodes + self.classes)])
        phases = Durations(pull=0, start=START, ready=0, shutdown=0, unprepare=0, run=self.run)
        steps = [Step(kind, self._named(args)) for kind, args in self.steps]
        return run_scenario([Manifest.from_data(o) for o in own], inventory, steps, phases, horizon=600)

    def _named(self, args: dict) -> dict:
        """Node names carry the scenario's prefix: `node: 0` is its first node."""
        return {k: (f"{self.key}-{v}" if k == "node" else v) for k, v in args.items()}


@dataclass
class Outcome:
    verdicts: list[tuple[str, float | None]]  # per step
    running: dict = field(default_factory=dict)  # (workload, 'new' or 'old' revision) -> pods running at the end
    error: str = ""


def simulated_running(run) -> dict:
    """(workload, 'new' or 'old') -> the pods Running at the end of a simulated run: the
    fidelity's "final allocations" (pods running per ReplicaSet, or per revision)."""
    counts: dict = {}
    for (kind, name), controller in run.workloads.items():
        if kind == "Deployment":
            pods = [("new" if rs is controller.new else "old", p) for rs in controller.sets for p in rs.pods]
        elif kind == "StatefulSet":
            pods = [("new" if controller.revision_of[p.name] == controller.update_revision else "old", p)
                    for p in controller.pods.values()]
        else:
            pods = [("new", p) for p in controller.pods]
        for revision, pod in pods:
            if pod.phase == "Running":
                counts[(name, revision)] = counts.get((name, revision), 0) + 1
    return counts


class Plane:
    """The steps of many scenarios on one control plane, side by side."""

    def __init__(self, plane, scenarios: list[Fidelity]):
        self.plane, self.scenarios = plane, scenarios
        self.nodes = {s.key: s.objects()[1] for s in scenarios}
        self.kubelet = FakeKubelet(plane, [o for objs in self.nodes.values() for o in objs if o["kind"] == "Node"],
                                   start_seconds=START, every=0.1)

    def run(self) -> dict[str, Outcome]:
        self.kubelet.register_nodes()
        self.plane.apply(list({c["metadata"]["name"]: c for s in self.scenarios for c in s.classes}.values()))
        self.plane.apply([o for objs in self.nodes.values() for o in objs if o["kind"] == "ResourceSlice"])
        self.kubelet.start()
        outcomes: dict[str, Outcome] = {}
        try:
            for first in range(0, len(self.scenarios), BATCH):
                threads = [threading.Thread(target=self._one, args=(s, outcomes), daemon=True)
                           for s in self.scenarios[first:first + BATCH]]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=600)
        finally:
            self.kubelet.stopping.set()
        return outcomes

    def _one(self, scenario: Fidelity, outcomes: dict) -> None:
        try:
            outcomes[scenario.key] = _Run(self, scenario).play()
        except Exception as exc:  # reported per scenario by the test
            outcomes[scenario.key] = Outcome([], f"{type(exc).__name__}: {exc}")


def _owner(pod) -> str | None:
    refs = [r for r in pod.metadata.owner_references or () if r.controller]
    return refs[0].name if refs else None


class _Run:
    def __init__(self, plane: Plane, scenario: Fidelity):
        api = plane.plane.api()
        self.plane, self.scenario, self.ns = plane, scenario, scenario.key
        self.core, self.apps = client.CoreV1Api(api), client.AppsV1Api(api)
        self.batch, self.policy = client.BatchV1Api(api), client.PolicyV1Api(api)
        self.running: list[dict] = []

    def play(self) -> Outcome:
        own, _ = self.scenario.objects()
        self.core.create_namespace({"metadata": {"name": self.ns}})
        for obj in own:
            if obj["kind"] != "Job":
                self.plane.plane.apply([obj])
        self.running = [o for o in own if o["kind"] in ("Deployment", "StatefulSet")]
        if not self._wait(lambda: all(self._whole(o) for o in self.running), 90)[0]:
            raise AssertionError("the start state did not come up")
        verdicts = []
        for kind, args in self.scenario.steps:
            started = time.monotonic()
            verdict = getattr(self, "_" + kind)(self.scenario._named(args), own)
            verdicts.append((verdict, time.monotonic() - started if verdict == "completes" else None))
            if verdict != "completes":
                break
        return Outcome(verdicts, self._running())

    def _running(self) -> dict:
        """(workload, 'new' or 'old') -> its pods Running and not being deleted, now."""
        pods = [p for p in self.core.list_namespaced_pod(self.ns).items
                if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]
        counts: dict = {}
        for obj in self.running:
            name, kind = obj["metadata"]["name"], obj["kind"]
            if kind == "Deployment":
                sets = [rs for rs in self.apps.list_namespaced_replica_set(self.ns).items
                        if any(o.name == name for o in rs.metadata.owner_references or ())]
                newest = max(sets, key=lambda rs: int(rs.metadata.annotations["deployment.kubernetes.io/revision"]))
                owned = {rs.metadata.name: "new" if rs is newest else "old" for rs in sets}
                revision = {p.metadata.name: owned.get(_owner(p)) for p in pods}
            elif kind == "StatefulSet":
                update = self.apps.read_namespaced_stateful_set_status(name, self.ns).status.update_revision
                revision = {p.metadata.name: ("new" if p.metadata.labels.get("controller-revision-hash") == update
                                              else "old") for p in pods if _owner(p) == name}
            else:
                revision = {p.metadata.name: "new" for p in pods if _owner(p) == name}
            for pod_revision in revision.values():
                if pod_revision:
                    counts[(name, pod_revision)] = counts.get((name, pod_revision), 0) + 1
        return counts

    # -- what is whole, and waiting for it --
    def _whole(self, obj: dict) -> bool:
        name, kind = obj["metadata"]["name"], obj["kind"]
        if kind == "Deployment":
            d = self.apps.read_namespaced_deployment_status(name, self.ns)
            s, want = d.status, d.spec.replicas
            return (s.observed_generation or 0) >= d.metadata.generation and s.updated_replicas == want \
                and s.available_replicas == want and s.replicas == want
        if kind == "StatefulSet":  # the ordinals below a partition stay at the current revision
            d = self.apps.read_namespaced_stateful_set_status(name, self.ns)
            s, want = d.status, d.spec.replicas
            rolling = d.spec.update_strategy.rolling_update if d.spec.update_strategy else None
            kept = min(want, (rolling.partition or 0) if rolling else 0)
            return (s.observed_generation or 0) >= d.metadata.generation and s.replicas == want \
                and (s.ready_replicas or 0) == want and (s.updated_replicas or 0) >= want - kept \
                and (kept > 0 or s.current_revision == s.update_revision)
        job = self.batch.read_namespaced_job_status(name, self.ns)
        return (job.status.succeeded or 0) >= (job.spec.completions or 1)

    def _fingerprint(self) -> tuple:
        pods = self.core.list_namespaced_pod(self.ns).items
        return tuple(sorted((p.metadata.name, p.status.phase, p.spec.node_name or "",
                             p.metadata.deletion_timestamp is not None) for p in pods))

    def _wait(self, done, still: float = STILL) -> tuple[bool, bool]:
        """(done() came true, a pod of a driverless node stays Terminating) once done() holds or
        nothing changed for `still` seconds."""
        last, moved = None, time.monotonic()
        while time.monotonic() - moved < still:
            if done():
                return True, False
            now = self._fingerprint()
            if now != last:
                last, moved = now, time.monotonic()
            time.sleep(POLL)
        stuck = any(p[3] and p[2] in self.plane.kubelet.driver_down for p in last or ())
        return False, stuck

    def _settle(self, also=lambda: True) -> str:
        done, stuck = self._wait(lambda: also() and all(self._whole(o) for o in self.running))
        return "completes" if done else ("stuck" if stuck else "deadlock")

    # -- the steps --
    def _update(self, args: dict, own) -> str:
        self._patch(args, {"spec": {"template": {"metadata": {"annotations": {
            "draguard.io/revision": str(time.time())}}}}})
        return self._settle()  # whole once the controller observed the new generation

    _rollout = _update

    def _scale(self, args: dict, own) -> str:
        self._patch(args, {"spec": {"replicas": args["replicas"]}})
        return self._settle()

    def _patch(self, args: dict, patch: dict) -> None:
        """`patch` applied to the Deployment or StatefulSet the step names."""
        (kind, name), = [(k, v) for k, v in args.items() if k in ("deployment", "statefulset")]
        apply = self.apps.patch_namespaced_deployment if kind == "deployment" else \
            self.apps.patch_namespaced_stateful_set
        apply(name, self.ns, patch)

    def _create(self, args: dict, own) -> str:
        job = next(o for o in own if o["kind"] == "Job" and o["metadata"]["name"] == args["job"])
        self.batch.create_namespaced_job(self.ns, job)
        self.running.append(job)
        return self._settle()

    def _evict_until_gone(self, names: set[str]) -> str:
        """kubectl drain's evictions: each retried every 5 s on 429, until the pods are gone."""
        next_try, started = {n: 0.0 for n in names}, time.monotonic()

        def gone() -> bool:
            now = time.monotonic() - started
            for name, due in list(next_try.items()):
                if due <= now:
                    try:
                        self.core.create_namespaced_pod_eviction(name, self.ns, {
                            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": self.ns}})
                        del next_try[name]
                    except client.exceptions.ApiException as exc:
                        if exc.status != 429:
                            raise
                        next_try[name] = now + DRAIN_RETRY
            present = {p.metadata.name: p.metadata.uid for p in self.core.list_namespaced_pod(self.ns).items}
            return all(n not in present or uids.get(n) != present[n] for n in names)

        uids = {p.metadata.name: p.metadata.uid for p in self.core.list_namespaced_pod(self.ns).items}
        done, stuck = self._wait(gone)
        return "completes" if done else ("stuck" if stuck else "livelock" if next_try else "deadlock")

    def _drain(self, args: dict, own) -> str:
        node = args["node"]
        self.core.patch_node(node, {"spec": {"unschedulable": True}})
        pods = {p.metadata.name for p in self.core.list_namespaced_pod(self.ns).items if p.spec.node_name == node}
        return self._evict_until_gone(pods)

    def _uncordon(self, args: dict, own) -> str:
        self.core.patch_node(args["node"], {"spec": {"unschedulable": False}})
        return self._settle()

    def _evict(self, args: dict, own) -> str:
        verdict = self._evict_until_gone({args["pod"]})
        return self._settle() if verdict == "completes" else verdict

    def _deviceTaint(self, args: dict, own) -> str:
        """A DeviceTaintRule over the node's pool (the fake driver names its pool after the node)."""
        rule = {"kind": "DeviceTaintRule", "metadata": {"name": f"{self.ns}-{args['key']}"},
                "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": args["node"]},
                         "taint": {"key": args["key"], "value": args.get("value", ""), "effect": args["effect"]}}}
        created = None
        for version in ("v1", "v1beta2", "v1alpha3"):  # the newest the apiserver serves
            try:
                self.plane.plane.apply([dict(rule, apiVersion=f"resource.k8s.io/{version}")])
                created = version
                break
            except ResourceNotFoundError:  # not served at this version
                continue
        if created is None:
            raise AssertionError("no DeviceTaintRule version is served")
        node = args["node"]  # whole again once the taint eviction controller emptied the node
        return self._settle(lambda: not any(p.spec.node_name == node
                                            for p in self.core.list_namespaced_pod(self.ns).items))

    def _driverStop(self, args: dict, own) -> str:
        self.plane.kubelet.driver(args["node"], up=False)
        return self._settle()

    def _driverRestart(self, args: dict, own) -> str:
        self.plane.kubelet.driver(args["node"], up=False)
        time.sleep(args.get("seconds", 10))
        self.plane.kubelet.driver(args["node"], up=True)
        return self._settle()
