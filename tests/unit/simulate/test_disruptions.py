"""Steps that disturb a running cluster: a DRA driver that stops (pods stuck Terminating, the
`stuck` verdict), restarts or loses its slices; a device taint and its eviction; one pod
evicted through its budget. Two generated MIG nodes of four devices each unless said."""

from __future__ import annotations

import pytest

from draguard.simulate.scenario import run_scenario
from draguard.simulate.template import ScenarioError
from draguard.simulate.world import SLICE_WIPING_DELAY, Durations

from .test_drain import BUDGET, DEPLOYMENT
from .test_workloads import inventory, manifests, steps

PHASES = Durations(start=2, ready=0, shutdown=0, unprepare=0)
RELEASE_FIRST = DEPLOYMENT.replace("  replicas: 4\n", "  replicas: 4\n  strategy: {type: RollingUpdate, rollingUpdate: "
                                                   "{maxSurge: 0, maxUnavailable: 1}}\n")


def test_a_rollout_on_a_node_whose_driver_is_gone_is_stuck_with_its_chain():
    """The first old pod stops but its devices are never unprepared: it stays Terminating, its
    claim allocated, and the new pod waits for that device for ever."""
    run = run_scenario(manifests(RELEASE_FIRST), inventory(1), steps(("driverStop", {"node": "gpu-0"}),
                                                                     ("update", {"deployment": "llm"})), PHASES)
    assert [r.verdict.kind for r in run.results] == ["completes", "stuck"]
    assert run.verdict.said == "stuck: pods wait for a DRA driver that is gone"
    assert run.verdict.chain[0].startswith("1 pod(s) stay Terminating on gpu-0 (llm-1-")
    assert "new pod(s) Pending" in run.verdict.chain[1]
    assert [p.phase for p in run.world.pods.values()].count("Terminating") == 1


def test_a_driver_restart_inside_the_wiping_delay_only_delays_the_rollout():
    """Away 10 s: the slices stay (the kubelet wipes them after 30 s); the stopped pod's
    devices are unprepared when the driver is back, and the rollout completes."""
    run = run_scenario(manifests(RELEASE_FIRST), inventory(1), steps(("driverRestart", {"node": "gpu-0", "seconds": 10}),
                                                                     ("update", {"deployment": "llm"})), PHASES)
    assert [r.verdict.kind for r in run.results] == ["completes", "completes"]
    assert run.results[0].verdict.seconds == 10.0
    assert "ResourceSlices wiped" not in {r.what for r in run.world.timeline}


def test_a_driver_away_longer_than_the_wiping_delay_loses_its_slices_until_it_is_back():
    run = run_scenario(manifests(RELEASE_FIRST), inventory(2), steps(("driverRestart", {"node": "gpu-0", "seconds": 45})),
                       PHASES)
    wiped = [r.time - run.start for r in run.world.timeline if r.what == "ResourceSlices wiped"]
    assert wiped == [SLICE_WIPING_DELAY]
    gpu0 = [s["devices"] for s in run.world.samples if s["time"] - run.start == SLICE_WIPING_DELAY]
    assert gpu0 and gpu0[-1]["total"] == 4  # only gpu-1's devices are published meanwhile
    assert run.world.samples[-1]["devices"]["total"] == 8


def test_a_no_execute_device_taint_evicts_the_pods_on_it_after_their_toleration():
    """gpu-0's devices tainted NoExecute: its pods are deleted (a request tolerating the taint
    for 20 s goes 20 s later) and replaced on gpu-1; new claims avoid the tainted devices."""
    manifests_ = manifests(RELEASE_FIRST)
    run = run_scenario(manifests_, inventory(2), steps(("deviceTaint", {"node": "gpu-0", "key": "health",
                                                                        "effect": "NoExecute"})), PHASES)
    assert run.verdict.kind == "completes" and run.verdict.seconds == 2.0
    assert {p.node for p in run.world.pods.values() if p.phase == "Running"} == {"gpu-1"}
    tolerant = manifests(RELEASE_FIRST)
    tolerant[0].data["spec"]["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "health", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20}]
    run = run_scenario(tolerant, inventory(2), steps(("deviceTaint", {"node": "gpu-0", "key": "health",
                                                                      "effect": "NoExecute"})), PHASES)
    evicted = {r.time - run.start for r in run.world.timeline if r.what.startswith("evicted by the device taint")}
    assert evicted == {20.0}


def test_a_no_schedule_taint_keeps_new_claims_off_and_evicts_nobody():
    run = run_scenario(manifests(RELEASE_FIRST), inventory(1), steps(
        ("deviceTaint", {"node": "gpu-0", "key": "health", "effect": "NoSchedule"}), ("update", {"deployment": "llm"})),
        PHASES)
    assert [r.verdict.kind for r in run.results] == ["completes", "deadlock"]
    assert run.verdict.chain[0] == ("1 new pod(s) Pending (llm-2-1: 0/1 nodes are available: 1 cannot allocate all "
                                    "claims; 3 device(s) held)")
    assert not any(r.what.startswith("evicted") for r in run.world.timeline)


def test_a_device_taint_needs_its_gate():
    """DeviceTaintRules exist only where DRADeviceTaints is on (by default from 1.36)."""
    taint = steps(("deviceTaint", {"node": "gpu-0", "key": "health", "effect": "NoSchedule"}))
    with pytest.raises(ScenarioError, match="scenario.yaml:1:3: deviceTaint: DeviceTaintRules need the DRADeviceTaints "
                                            "feature gate, off in 1.35"):
        run_scenario(manifests(RELEASE_FIRST), inventory(1), taint, PHASES, kube_version="1.35")
    run = run_scenario(manifests(RELEASE_FIRST), inventory(1), taint, PHASES, kube_version="1.35",
                       gates={"DRADeviceTaints": True})
    assert run.verdict.kind == "completes"


def test_an_eviction_goes_through_the_budget_and_the_pod_is_replaced():
    run = run_scenario(manifests(RELEASE_FIRST, BUDGET), inventory(2), steps(("evict", {"pod": "llm-1-1"})), PHASES)
    assert run.verdict.kind == "completes" and run.verdict.seconds == 2.0
    with pytest.raises(ScenarioError, match="scenario.yaml:1:3: evict names pod 'llm-9', which does not exist"):
        run_scenario(manifests(RELEASE_FIRST), inventory(2), steps(("evict", {"pod": "llm-9"})), PHASES)
    with pytest.raises(ScenarioError, match="the driver on gpu-0 is running"):
        run_scenario(manifests(RELEASE_FIRST), inventory(2), steps(("driverStart", {"node": "gpu-0"})), PHASES)


def test_a_deployment_s_pod_replacement_policy_is_said_to_be_ignored():
    """KEP-5882's field for Deployments is alpha at most, its gate off by default: the API
    server drops it, and the simulation says so instead of honouring it silently."""
    text = RELEASE_FIRST.replace("  replicas: 4\n", "  replicas: 4\n  podReplacementPolicy: TerminationComplete\n")
    run = run_scenario(manifests(text), inventory(1), [], PHASES)
    assert [r.detail for r in run.world.timeline if r.what == "ignored"] == [
        "Deployment llm: spec.podReplacementPolicy is alpha (KEP-5882, off by default): the API server drops it, so "
        "replacements start at once"]


def test_pods_scheduled_to_a_node_whose_driver_is_gone_are_stuck_creating():
    """Surge-first on a node with a free device: the new pod lands there while the driver is
    away (inside the 30 s before its slices are wiped) and is never prepared."""
    surge = DEPLOYMENT.replace("  replicas: 4\n", "  replicas: 3\n  strategy: {type: RollingUpdate, rollingUpdate: "
                                                 "{maxSurge: 1, maxUnavailable: 0}}\n")
    run = run_scenario(manifests(surge), inventory(1), steps(("driverStop", {"node": "gpu-0"}),
                                                             ("update", {"deployment": "llm"})), PHASES)
    assert run.verdict.kind == "stuck"
    assert run.verdict.chain[0].startswith("1 pod(s) stay ContainerCreating on gpu-0 (llm-2-1): the DRA driver is gone")
