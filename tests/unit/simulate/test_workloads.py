"""StatefulSets and Jobs under their simulated controllers, and the scheduler's node filters:
the orders, counts and times upstream's controllers produce, on generated MIG nodes (2 GPUs x
two 3g.20gb slices each: four devices a node)."""

from __future__ import annotations

import re
import textwrap

import pytest
import yaml

from draguard.core.errors import InputError
from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.model.manifest import Manifest
from draguard.simulate.scenario import Step, run_scenario
from draguard.simulate.template import ScenarioError
from draguard.simulate.world import Durations

from .test_drain import SPEC
from .test_rollout import TEMPLATE

PHASES = Durations(start=2, ready=0, shutdown=0, unprepare=0, run=30)
POD = """
    metadata: {labels: {app: %(name)s}}
    spec:
      terminationGracePeriodSeconds: 30
      resourceClaims: [{name: gpu, resourceClaimTemplateName: slice}]
      containers: [{name: main, image: vllm, resources: {claims: [{name: gpu}]}}]
"""


def statefulset(replicas: int = 3, policy: str = "OrderedReady", extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: serving}}
spec:
  replicas: {replicas}
  podManagementPolicy: {policy}
  serviceName: db{extra}
  selector: {{matchLabels: {{app: db}}}}
  template:""" + textwrap.indent(textwrap.dedent(POD % {"name": "db"}), "    ")


def job(parallelism: int, completions: int | None, policy: str | None = None) -> str:
    extra = (f"\n  completions: {completions}" if completions is not None else "") + \
        (f"\n  podReplacementPolicy: {policy}" if policy else "")
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: serving}}
spec:
  parallelism: {parallelism}{extra}
  template:""" + textwrap.indent(textwrap.dedent(POD % {"name": "train"}), "    ").replace(
        "    spec:\n", "    spec:\n      restartPolicy: Never\n", 1)


def inventory(nodes: int = 1, **node) -> Inventory:
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": nodes, "gpus": SPEC, **node}]})
    return Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])


def manifests(*texts: str) -> list[Manifest]:
    return [Manifest.from_data(yaml.safe_load(textwrap.dedent(t))) for t in (TEMPLATE, *texts)]


def steps(*pairs) -> list[Step]:
    return [Step(kind, args, f"scenario.yaml:{i + 1}:3") for i, (kind, args) in enumerate(pairs)]


def created(run) -> list[tuple[float, str]]:
    return [(r.time, r.pod) for r in run.world.timeline if r.what == "created"]


def test_an_ordered_statefulset_makes_each_pod_once_the_one_before_is_ready():
    run = run_scenario(manifests(statefulset()), inventory(), [], PHASES)
    assert created(run) == [(0.0, "db-0"), (2.0, "db-1"), (4.0, "db-2")]


def test_a_parallel_statefulset_makes_them_all_at_once():
    run = run_scenario(manifests(statefulset(policy="Parallel")), inventory(), [], PHASES)
    assert created(run) == [(0.0, "db-0"), (0.0, "db-1"), (0.0, "db-2")]


def test_a_statefulset_rolls_from_the_highest_ordinal_one_pod_at_a_time_under_its_own_name():
    """Each pod deleted, gone once its containers stopped (0 s here), made again under its name
    and ready 2 s later; then the next lower ordinal. On a full node it never deadlocks: a
    StatefulSet does not surge."""
    run = run_scenario(manifests(statefulset(replicas=4)), inventory(), steps(("update", {"statefulset": "db"})),
                       PHASES)
    assert run.verdict.kind == "completes" and run.results[0].verdict.seconds == 8.0
    start = run.start
    terminated = [(r.time - start, r.pod) for r in run.world.timeline if r.what == "terminating"]
    assert terminated == [(0.0, "db-3"), (2.0, "db-2"), (4.0, "db-1"), (6.0, "db-0")]


def terminated(run) -> list[tuple[float, str]]:
    return [(r.time - run.start, r.pod) for r in run.world.timeline if r.what == "terminating"]


BOUNDED = "\n  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}"


def test_a_statefulset_replaces_max_unavailable_pods_at_once_where_the_gate_is_on():
    """MaxUnavailableStatefulSet (on by default in 1.37): OrderedReady deletes the two highest
    old pods together, makes them again in ordinal order, then the next two."""
    run = run_scenario(manifests(statefulset(4, extra=BOUNDED)), inventory(),
                       steps(("update", {"statefulset": "db"})), PHASES, kube_version="1.37")
    assert run.verdict.kind == "completes" and run.results[0].verdict.seconds == 8.0
    assert terminated(run) == [(0.0, "db-3"), (0.0, "db-2"), (4.0, "db-1"), (4.0, "db-0")]


def test_a_parallel_statefulset_keeps_max_unavailable_of_the_replicas_down():
    """Parallel: 50% of 4 is 2 down at a time, replaced at once."""
    extra = BOUNDED.replace("maxUnavailable: 2", "maxUnavailable: 50%")
    run = run_scenario(manifests(statefulset(4, "Parallel", extra)), inventory(),
                       steps(("update", {"statefulset": "db"})), PHASES, kube_version="1.37")
    assert run.results[0].verdict.seconds == 4.0
    assert terminated(run) == [(0.0, "db-3"), (0.0, "db-2"), (2.0, "db-1"), (2.0, "db-0")]


def test_without_the_gate_max_unavailable_is_dropped_and_said():
    """1.36: the API server drops the field, one pod at a time, and the timeline says so;
    the gate set on (as the cluster's components are given it) brings it back."""
    run = run_scenario(manifests(statefulset(4, extra=BOUNDED)), inventory(),
                       steps(("update", {"statefulset": "db"})), PHASES, kube_version="1.36")
    assert run.results[0].verdict.seconds == 8.0 and [p for _, p in terminated(run)] == ["db-3", "db-2", "db-1", "db-0"]
    assert [r for r in run.world.timeline if r.what == "ignored" and "maxUnavailable 2" in r.detail]
    gated = run_scenario(manifests(statefulset(4, extra=BOUNDED)), inventory(),
                         steps(("update", {"statefulset": "db"})), PHASES, kube_version="1.36",
                         gates={"MaxUnavailableStatefulSet": True})
    assert [t for t, _ in terminated(gated)] == [0.0, 0.0, 4.0, 4.0]


@pytest.mark.parametrize("value, said", [("0", "cannot be 0"), ("0%", "cannot be 0"),
                                         ("150%", "must not be greater than 100%"), ("x", "a valid percent string")])
def test_a_max_unavailable_the_api_server_refuses_is_not_simulated(value, said):
    """validateRollingUpdateStatefulSet's verdicts, where the gate keeps the field."""
    with pytest.raises(ScenarioError, match=f"maxUnavailable .*: {said}"):
        run_scenario(manifests(statefulset(2, extra=BOUNDED.replace("2}}", f"{value}}}}}"))), inventory(), [],
                     PHASES, kube_version="1.37")


def test_a_statefulset_numbers_its_pods_from_ordinals_start():
    """spec.ordinals.start: pods db-5.. (the partition counts from the start: db-6 and up roll)."""
    extra = "\n  ordinals: {start: 5}\n  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}"
    run = run_scenario(manifests(statefulset(3, extra=extra)), inventory(),
                       steps(("update", {"statefulset": "db"})), PHASES)
    assert [p for _, p in created(run)][:3] == ["db-5", "db-6", "db-7"]
    assert [p for _, p in terminated(run)] == ["db-7", "db-6"]


def test_a_statefulset_scales_down_from_the_highest_ordinal():
    run = run_scenario(manifests(statefulset(replicas=4)), inventory(), steps(("scale", {"statefulset": "db",
                                                                                       "replicas": 2})), PHASES)
    assert run.verdict.kind == "completes"
    assert [r.pod for r in run.world.timeline if r.what == "terminating"] == ["db-3", "db-2"]


def test_a_job_runs_its_completions_parallelism_at_a_time():
    """Six completions, two at a time: three waves of 2 s start-up and 30 s run; each
    succeeded pod's devices released at once (terminal pods hold nothing)."""
    run = run_scenario(manifests(job(2, 6)), inventory(), steps(("create", {"job": "train"})), PHASES, empty=True)
    assert (run.verdict.kind, run.verdict.seconds) == ("completes", 96.0)
    assert max(sample["devicesAllocated"] for sample in run.world.samples) == 2
    assert run.world.samples[-1]["devicesAllocated"] == 0


def test_a_job_without_completions_is_done_when_a_pod_succeeded_and_none_is_left():
    run = run_scenario(manifests(job(3, None)), inventory(), steps(("create", {"job": "train"})), PHASES, empty=True)
    assert (run.verdict.kind, run.verdict.seconds) == ("completes", 32.0)
    assert len(created(run)) == 3


@pytest.mark.parametrize("policy, replacement_at", [("TerminatingOrFailed", 0.0), ("Failed", 20.0)])
def test_a_job_replaces_an_evicted_pod_as_its_replacement_policy_says(policy, replacement_at):
    """The evicted pod stops after its 20 s preStop: TerminatingOrFailed makes the replacement
    at once (it then waits for a device on the full node), Failed only once the pod is gone."""
    text = job(4, 4, policy).replace("containers: [{name: main,", "containers: [{name: main, lifecycle: "
                                                                  "{preStop: {sleep: {seconds: 20}}},")
    run = run_scenario(manifests(text), inventory(), steps(("create", {"job": "train", "wait": False}),
                                                           ("wait", {"seconds": 10}), ("evict", {"pod": "train-1"})),
                       Durations(start=2, ready=0, shutdown=0, unprepare=0, run=600), empty=True)
    evicted_at = next(r.time for r in run.world.timeline if r.what == "evicted")
    assert next(r.time for r in run.world.timeline if r.pod == "train-5") - evicted_at == replacement_at
    scheduled = next(r.time for r in run.world.timeline if r.pod == "train-5" and r.what == "scheduled")
    assert scheduled - evicted_at == 20.0  # the device is free only once the evicted pod is gone


def test_a_node_selector_and_taints_keep_pods_off_nodes():
    """gpu-0 is tainted NoSchedule; the pods select gpu-1 by label or tolerate the taint."""
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": 2, "gpus": SPEC}]})
    for o in objects:
        if o["kind"] == "Node" and o["metadata"]["name"] == "gpu-0":
            o["spec"] = {"taints": [{"key": "team", "value": "a", "effect": "NoSchedule"}]}
    pool = Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])
    base = statefulset(replicas=4, policy="Parallel")
    run = run_scenario(manifests(base), pool, [], PHASES)
    assert {p.node for p in run.world.pods.values()} == {"gpu-1"}
    tolerant = base.replace("      terminationGracePeriodSeconds: 30", "      terminationGracePeriodSeconds: 30\n"
                            "      tolerations: [{key: team, operator: Exists}]")
    run = run_scenario(manifests(tolerant), pool, [], PHASES)
    assert {p.node for p in run.world.pods.values()} == {"gpu-0"}
    pinned = base.replace("      terminationGracePeriodSeconds: 30", "      terminationGracePeriodSeconds: 30\n"
                          "      nodeSelector: {kubernetes.io/hostname: gpu-0}")
    with pytest.raises(ScenarioError, match=re.escape("0 of 4 pods of StatefulSet 'db' run on the inventory (0/2 nodes "
                                                      "are available: 1 node(s) didn't match Pod's node "
                                                      "affinity/selector, 1 node(s) had untolerated taint(s))")):
        run_scenario(manifests(pinned), pool, [], PHASES)


def test_bad_workloads_are_refused_with_the_reason():
    with pytest.raises(ScenarioError, match="an Indexed Job needs completions"):
        run_scenario(manifests(job(1, None).replace("  parallelism: 1", "  parallelism: 1\n  completionMode: Indexed")),
                     inventory(), steps(("create", {"job": "train"})), PHASES, empty=True)
    with pytest.raises(ScenarioError, match="a Job's pod template cannot be updated"):
        run_scenario(manifests(job(1, 1)), inventory(), steps(("create", {"job": "train"}),
                                                              ("update", {"job": "train"})), PHASES, empty=True)
    with pytest.raises(ScenarioError, match="scenario.yaml:1:3: create names Job 'x'"):
        run_scenario(manifests(job(1, 1)), inventory(), steps(("create", {"job": "x"})), PHASES, empty=True)
    with pytest.raises(InputError, match="required node affinity"):
        bad = statefulset().replace("      terminationGracePeriodSeconds: 30", "      terminationGracePeriodSeconds: 30\n"
                                    "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                    "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Gt, values: [x]}]}]}}}")
        run_scenario(manifests(bad), inventory(), [], PHASES)


def test_a_hook_s_run_time_and_the_driver_s_prepare_time_are_durations_too():
    """An exec preStop hook whose command names no wait: it takes `preStop` seconds (15), so
    each of the four pods of the rolling update goes 15 s after its deletion; a driver that
    prepares in 3 s delays each start by that much: 4 x (15 + 3 + 2) s."""
    hooked = statefulset(replicas=4).replace(
        "containers: [{name: main,", "containers: [{name: main, lifecycle: {preStop: {exec: {command: [drain]}}},")
    timed = Durations(start=2, ready=0, shutdown=0, unprepare=0, prepare=3, pre_stop=15)
    run = run_scenario(manifests(hooked), inventory(), steps(("update", {"statefulset": "db"})), timed)
    assert run.results[0].verdict.seconds == 80.0


def test_an_indexed_job_runs_each_index_once_lowest_first_and_replaces_an_evicted_index():
    """Five indexes, four devices: indexes 0-3 start, 4 once one succeeds; index 1 evicted at
    10 s is made again under its index (TerminatingOrFailed: at once)."""
    text = job(4, 5).replace("  parallelism: 4", "  parallelism: 4\n  completionMode: Indexed")
    run = run_scenario(manifests(text), inventory(), steps(("create", {"job": "train", "wait": False}),
                                                           ("wait", {"seconds": 10}), ("evict", {"pod": "train-1-2"}),
                                                           ("wait", {"seconds": 200})), PHASES, empty=True)
    made = [r.pod for r in run.world.timeline if r.what == "created"]
    assert made == ["train-0-1", "train-1-2", "train-2-3", "train-3-4", "train-1-5", "train-4-6"]
    assert run.workloads[("Job", "train")].complete()


def test_a_statefulset_partition_updates_only_the_ordinals_from_it_up():
    text = statefulset(replicas=4).replace("  podManagementPolicy: OrderedReady",
                                           "  podManagementPolicy: OrderedReady\n"
                                           "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}")
    run = run_scenario(manifests(text), inventory(), steps(("update", {"statefulset": "db"})), PHASES)
    assert run.verdict.kind == "completes" and run.results[0].verdict.seconds == 4.0
    start = run.start
    assert [(r.time - start, r.pod) for r in run.world.timeline if r.what == "terminating"] == [(0.0, "db-3"),
                                                                                               (2.0, "db-2")]
    db = run.workloads[("StatefulSet", "db")]
    assert [db.revision_of[f"db-{o}"] for o in range(4)] == [1, 1, 2, 2]


def tainted_inventory() -> Inventory:
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": SPEC}]})
    for obj in objects:
        for device in obj.get("spec", {}).get("devices", []) if obj["kind"] == "ResourceSlice" else []:
            device["taints"] = [{"key": "maintenance", "effect": "NoSchedule"}]
    return Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])


def test_the_release_and_its_gates_decide_what_the_scheduler_reads():
    """Device taints published in slices: 1.35 stores the slices without them (DRADeviceTaints
    is alpha, off) and the timeline says so; from 1.36 they keep the pod off, unless the gate
    is set off."""
    run = run_scenario(manifests(statefulset(1)), tainted_inventory(), [], PHASES, kube_version="1.35")
    assert run.verdict.kind == "completes" and created(run) == [(0.0, "db-0")]
    assert [r for r in run.world.timeline if r.what == "ignored" and "DRADeviceTaints" in r.detail]
    with pytest.raises(ScenarioError, match="the start state does not fit"):
        run_scenario(manifests(statefulset(1)), tainted_inventory(), [], PHASES, kube_version="1.36")
    off = run_scenario(manifests(statefulset(1)), tainted_inventory(), [], PHASES, kube_version="1.36",
                       gates={"DRADeviceTaints": False})
    assert off.verdict.kind == "completes"


def test_a_negative_partition_is_refused_as_the_api_server_does():
    extra = "\n  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: -1}}"
    with pytest.raises(ScenarioError, match="rollingUpdate.partition -1: must be greater than or equal to 0"):
        run_scenario(manifests(statefulset(2, extra=extra)), inventory(), [], PHASES)


def test_binding_conditions_are_said_to_be_assumed_met():
    """From 1.36 the scheduler allocates devices with binding conditions and waits in PreBind
    for the driver to set them: the simulation takes them as met at once, and says so; on
    1.35 the API server stores the slices without them (and that is said)."""
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": SPEC}]})
    for obj in objects:
        for device in obj.get("spec", {}).get("devices", []) if obj["kind"] == "ResourceSlice" else []:
            device["bindingConditions"] = ["attached"]
            device["bindingFailureConditions"] = ["failed"]
    pool = Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])
    run = run_scenario(manifests(statefulset(1)), pool, [], PHASES)
    assert [(r.what, r.pod) for r in run.world.timeline if r.what == "assumed"] == [("assumed", "db-0")]
    assert "binding conditions attached met at once" in next(r.detail for r in run.world.timeline if r.what == "assumed")
    old = run_scenario(manifests(statefulset(1)), pool, [], PHASES, kube_version="1.35")
    assert not [r for r in old.world.timeline if r.what == "assumed"]
    assert [r for r in old.world.timeline if r.what == "ignored" and "DRADeviceBindingConditions" in r.detail]
