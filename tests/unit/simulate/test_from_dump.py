"""A scenario that starts from a cluster dump (tests/support/audit_dump: the bundle `draguard
audit --save-dump` writes): the dump's pods run on the devices their claims hold there, under
their Deployments' controllers and budgets, and the steps go on from there."""

from __future__ import annotations

import json
import subprocess
import sys

from draguard.cluster.dump import read_dump, write_bundle
from draguard.cluster.snapshot import Snapshot
from draguard.model.live import allocation_results
from draguard.simulate.scenario import Step, run_scenario
from draguard.simulate.world import Durations

from support.audit_dump import CAPTURED, cluster

PHASES = Durations(start=2, ready=0, shutdown=0, unprepare=0)


def bundle(tmp_path, pods: int, bare: bool = False):
    raw = cluster(2, 2, pods, deployments=2)  # 2 nodes x 2 H100s, two 1g.10gb devices a GPU: 8
    if bare:  # a pod no controller owns, holding the first pod's claim
        pod = raw["pods"][0]
        pod["metadata"]["ownerReferences"] = []
    write_bundle(str(tmp_path / "dump"), Snapshot([], CAPTURED, "v1.34.2", "generated"), raw)
    return read_dump(str(tmp_path / "dump"))[0].manifests


def test_the_pods_start_on_the_devices_the_dump_says(tmp_path):
    dump = bundle(tmp_path, 4)
    run = run_scenario([], None, [], PHASES, dump=dump)
    held = {(h.pod, h.device) for h in run.world.holds}
    expected = {(c.data["status"]["reservedFor"][0]["name"], f"{r['pool']}/{r['device']}")
                for c in dump if c.kind == "ResourceClaim" for r in allocation_results(c)}
    assert held == expected and len(held) == 4
    assert [r.what for r in run.world.timeline if r.pod] == ["adopted"] * 4  # whole as found: nothing to make


def test_a_drain_from_the_dump_goes_through_its_budgets(tmp_path):
    """Both Deployments' two pods sit on gpu-node-0; their budgets (maxUnavailable 1 each) let
    one pod of each go at once, the other at the 5 s retry once the replacement is ready (2 s)
    on gpu-node-1; each evicted pod runs its 10 s preStop: the drain ends at 15 s."""
    dump = bundle(tmp_path, 4)
    run = run_scenario([], None, [Step("drain", {"node": "gpu-node-0"})], PHASES, dump=dump)
    assert (run.verdict.kind, run.verdict.seconds) == ("completes", 15.0)
    assert {p.node for p in run.world.pods.values() if p.phase == "Running"} == {"gpu-node-1"}


def test_a_pod_no_controller_owns_keeps_its_devices_and_is_not_replaced(tmp_path):
    dump = bundle(tmp_path, 4, bare=True)
    run = run_scenario([], None, [Step("drain", {"node": "gpu-node-0"})], PHASES, dump=dump)
    bare = next(p for p in run.world.pods.values() if p.owner == "")
    assert bare.phase == "Gone" and run.verdict.kind == "completes"
    assert sum(p.phase == "Running" for p in run.world.pods.values()) == 4  # its Deployment made a new one


def test_the_command_starts_a_scenario_from_a_dump(tmp_path):
    bundle(tmp_path, 8)
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("apiVersion: draguard.io/v1alpha1\nkind: Scenario\nstart: {dump: dump}\n"
                        "durations: {start: 2, ready: 0, shutdown: 0, unprepare: 0}\n"
                        "steps:\n- drain: {node: gpu-node-0}\n")
    run = subprocess.run([sys.executable, "-m", "draguard", "simulate", str(scenario), "-f", "json"],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    answer = json.loads(run.stdout)
    assert answer["verdict"]["kind"] == "livelock"  # eight pods fill both nodes: no room for a replacement
    both = scenario.read_text().replace("start: {dump: dump}\n", "start: {dump: dump}\ninventory: [x.yaml]\n")
    scenario.write_text(both)
    refused = subprocess.run([sys.executable, "-m", "draguard", "simulate", str(scenario)], capture_output=True,
                             text=True)
    assert refused.returncode == 2 and "scenario.yaml:4:1: inventory: a scenario starting from a dump" in refused.stderr


def test_a_drain_of_a_full_dumped_cluster_comes_with_the_budget_that_lets_it_finish(tmp_path):
    """Both nodes full, infer-0's four pods on gpu-node-0: no replacement can come up, so its
    budget must let all four go; then the drain ends after their 10 s preStop."""
    dump = bundle(tmp_path, 8)
    run = run_scenario([], None, [Step("drain", {"node": "gpu-node-0"})], PHASES, dump=dump)
    assert run.verdict.kind == "livelock"
    assert run.verdict.remedy == "PodDisruptionBudget infer-0 maxUnavailable: 4: re-simulated, completes in 10 s"
