"""The fidelity table (issue: simulate): 26 scenarios run by `draguard simulate` and by the real
kube-controller-manager, kube-scheduler and eviction API (tests/support/fidelity.py), a few
side by side on one control plane: rollouts (release-first, surge-first deadlocks on a full
pool and on another MIG profile, Recreate, partial pools, minReadySeconds), scaling,
StatefulSets (maxUnavailable, Parallel, ordinals from 5 with a partition), a Job, evictions and drains through budgets (a livelock among them), a
NoExecute device taint, driver loss (the `stuck` verdict), and pods asking for an extended
resource a DeviceClass serves (KEP-5004: the scheduler's own claim, dra.extended). Per
scenario the verdicts of every step must agree, the pods running at the end per workload and
revision (new or old ReplicaSet) be the same, and each completion time be within 10% or 5 s
of the simulated one; `-s` prints the table. About two and a half minutes: left out of the
default run (`pytest -m fidelity` runs it; CI does)."""

from __future__ import annotations

import pytest

from support.fidelity import Fidelity, Plane, simulated_running

pytestmark = [pytest.mark.cluster, pytest.mark.fidelity]
MIG = {"model": "A100-40GB", "count": 2, "mig": "static", "layout": ["3g.20gb", "3g.20gb"]}
SMALL = {"model": "A100-40GB", "count": 1, "mig": "static", "layout": ["2g.10gb", "2g.10gb", "2g.10gb"]}
RELEASE_FIRST = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
SURGE_FIRST = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
POD = {"terminationGracePeriodSeconds": 30,
       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "slice"}],
       "containers": [{"name": "main", "image": "vllm/vllm-openai:v0.18.0",
                       "resources": {"claims": [{"name": "gpu"}]}}]}
# a pod whose teardown takes 8 s (its preStop sleep): how many go at once shows in the time
POD_SLOW_STOP = dict(POD, containers=[dict(POD["containers"][0], lifecycle={"preStop": {"sleep": {"seconds": 8}}})])


# KEP-5004: an extended resource a DeviceClass serves, one MIG slice per unit (the scheduler's own claim)
EXTENDED_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fidelity-slice"},
                  "spec": {"extendedResourceName": "example.com/slice", "selectors": [{"cel": {"expression": (
                      "device.driver == 'gpu.nvidia.com' && "
                      "device.attributes['gpu.nvidia.com'].profile == '3g.20gb'")}}]}}
POD_EXTENDED = {"terminationGracePeriodSeconds": 30,
                "containers": [{"name": "main", "image": "vllm/vllm-openai:v0.18.0",
                                "resources": {"limits": {"example.com/slice": 1}}}]}


def deployment(replicas: int, strategy: dict, min_ready: int = 0, pod: dict = POD) -> dict:
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "llm"}}, "strategy": strategy,
            "template": {"metadata": {"labels": {"app": "llm"}}, "spec": dict(pod)}}
    if min_ready:
        spec["minReadySeconds"] = min_ready
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm"}, "spec": spec}


def statefulset(replicas: int, policy: str = "OrderedReady", rolling: dict | None = None, start: int = 0,
                pod: dict = POD) -> dict:
    spec = {"replicas": replicas, "podManagementPolicy": policy, "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": dict(pod)}}
    if rolling:
        spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": rolling}
    if start:
        spec["ordinals"] = {"start": start}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": spec}


def job(parallelism: int, completions: int) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
            "spec": {"parallelism": parallelism, "completions": completions, "backoffLimit": 0,
                     "template": {"metadata": {"labels": {"app": "train"}},
                                  "spec": dict(POD, restartPolicy="Never")}}}


def budget(app: str, max_unavailable: int = 1) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": app},
            "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": app}}}}


SCENARIOS = [
    Fidelity("release-first", [deployment(4, RELEASE_FIRST)], [("update", {"deployment": "llm"})], MIG),
    Fidelity("surge-first on a full pool", [deployment(4, SURGE_FIRST)], [("update", {"deployment": "llm"})], MIG),
    Fidelity("recreate", [deployment(4, {"type": "Recreate"})], [("update", {"deployment": "llm"})], MIG),
    Fidelity("half at a time", [deployment(4, {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": "50%"}})], [("update", {"deployment": "llm"})], MIG),
    Fidelity("drain with a budget, a second node", [deployment(4, RELEASE_FIRST)],
             [("uncordon", {"node": 1}), ("drain", {"node": 0})], MIG, nodes=2, cordoned=(1,), extra=[budget("llm")]),
    Fidelity("drain with a budget, a full pool", [deployment(4, RELEASE_FIRST)], [("drain", {"node": 0})], MIG,
             extra=[budget("llm")]),
    Fidelity("surge on a partial pool", [deployment(6, {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 2, "maxUnavailable": 0}})], [("update", {"deployment": "llm"})], MIG, nodes=2),
    Fidelity("surge 25% with a free device", [deployment(3, {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": "25%", "maxUnavailable": 0}})], [("update", {"deployment": "llm"})], MIG),
    Fidelity("minReadySeconds", [deployment(4, RELEASE_FIRST, min_ready=3)], [("update", {"deployment": "llm"})], MIG),
    Fidelity("2g.10gb profile, surge-first", [deployment(3, SURGE_FIRST)], [("update", {"deployment": "llm"})], SMALL,
             profile="2g.10gb"),
    Fidelity("recreate on two nodes", [deployment(6, {"type": "Recreate"})], [("update", {"deployment": "llm"})], MIG,
             nodes=2),
    Fidelity("scale past the pool", [deployment(4, RELEASE_FIRST)], [("scale", {"deployment": "llm", "replicas": 6})],
             MIG),
    Fidelity("scale down, then up", [deployment(4, RELEASE_FIRST)],
             [("scale", {"deployment": "llm", "replicas": 2}), ("scale", {"deployment": "llm", "replicas": 4})], MIG),
    Fidelity("statefulset rolling update", [statefulset(4)], [("update", {"statefulset": "db"})], MIG),
    Fidelity("parallel statefulset update and scale", [statefulset(3, "Parallel")],
             [("update", {"statefulset": "db"}), ("scale", {"statefulset": "db", "replicas": 4})], MIG),
    Fidelity("statefulset maxUnavailable 2", [statefulset(4, rolling={"maxUnavailable": 2}, pod=POD_SLOW_STOP)],
             [("update", {"statefulset": "db"})], MIG),
    Fidelity("parallel statefulset maxUnavailable 50%",
             [statefulset(4, "Parallel", rolling={"maxUnavailable": "50%"}, pod=POD_SLOW_STOP)],
             [("update", {"statefulset": "db"})], MIG),
    Fidelity("statefulset from ordinal 5, partition 1", [statefulset(3, rolling={"partition": 1}, start=5)],
             [("update", {"statefulset": "db"}), ("scale", {"statefulset": "db", "replicas": 4})], MIG),
    Fidelity("job waves on a small pool", [job(6, 6)], [("create", {"job": "train"})], MIG, run=4.0),
    Fidelity("evict a statefulset pod", [statefulset(3)], [("evict", {"pod": "db-1"})], MIG, extra=[budget("db")]),
    Fidelity("drain statefulset with budget", [statefulset(4, "Parallel")],
             [("uncordon", {"node": 1}), ("drain", {"node": 0})], MIG, nodes=2, cordoned=(1,), extra=[budget("db")]),
    Fidelity("a NoExecute device taint", [deployment(4, RELEASE_FIRST)],
             [("uncordon", {"node": 1}), ("deviceTaint", {"node": 0, "key": "health", "effect": "NoExecute"})], MIG,
             nodes=2, cordoned=(1,)),
    Fidelity("driver gone, then a rollout", [deployment(4, RELEASE_FIRST)],
             [("driverStop", {"node": 0}), ("update", {"deployment": "llm"})], MIG),
    Fidelity("driver restart, then a rollout", [deployment(4, RELEASE_FIRST)],
             [("driverRestart", {"node": 0, "seconds": 8}), ("update", {"deployment": "llm"})], MIG),
    Fidelity("extended resource, surge-first on a full pool", [deployment(4, SURGE_FIRST, pod=POD_EXTENDED)],
             [("update", {"deployment": "llm"})], MIG, classes=[EXTENDED_CLASS]),
    Fidelity("extended resource, release-first", [deployment(4, RELEASE_FIRST, pod=POD_EXTENDED)],
             [("update", {"deployment": "llm"})], MIG, classes=[EXTENDED_CLASS]),
]
for index, scenario in enumerate(SCENARIOS):
    scenario.key = f"fid{index}"


@pytest.fixture(scope="module")
def table(plane):
    real = Plane(plane, SCENARIOS).run()
    rows = {}
    print("\n| scenario | step | simulated | real |\n|---|---|---|---|")
    for scenario in SCENARIOS:
        run = scenario.simulated()
        simulated = [(r.verdict.kind, r.verdict.seconds) for r in run.results]
        outcome = real[scenario.key]
        rows[scenario.name] = (simulated, simulated_running(run), outcome)
        for i, (kind, args) in enumerate(scenario.steps):
            sim = simulated[i] if i < len(simulated) else ("-", None)
            got = outcome.verdicts[i] if i < len(outcome.verdicts) else (outcome.error or "-", None)
            print(f"| {scenario.name} | {kind} | {_cell(sim)} | {_cell(got)} |")
        print(f"| {scenario.name} | pods running | {_pods(simulated_running(run))} | {_pods(outcome.running)} |")
    return rows


def _pods(running: dict) -> str:
    return ", ".join(f"{name} {revision} {n}" for (name, revision), n in sorted(running.items())) or "none"


def _cell(verdict) -> str:
    kind, seconds = verdict
    return f"{kind} {seconds:.1f} s" if seconds is not None else kind


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_the_simulator_agrees_with_the_control_plane(table, name):
    simulated, running, outcome = table[name]
    assert not outcome.error, outcome.error
    assert [kind for kind, _ in outcome.verdicts] == [kind for kind, _ in simulated]
    assert outcome.running == running  # the same pods running per workload and revision at the end
    for (_, real), (_, sim) in zip(outcome.verdicts, simulated):
        if real is not None:
            assert abs(real - sim) <= max(5.0, 0.1 * real), (real, sim)
