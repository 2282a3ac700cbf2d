"""`draguard simulate rollout` on generated MIG inventories: the verdicts, their timing from
the phase durations, the deadlock's certificate and its remedy, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import yaml

from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.model.manifest import Manifest
from draguard.simulate.rollout import simulate_rollout
from draguard.simulate.template import ScenarioError
from draguard.simulate.world import Durations

from support.simulate import claim_template

TEMPLATE = yaml.safe_dump(claim_template("3g.20gb", "serving"))


def deployment(strategy: str = "{type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}",
               replicas: int = 4, extra: str = "", pod_extra: str = "") -> str:
    return textwrap.dedent(f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: llm, namespace: serving}}
        spec:
          replicas: {replicas}
          selector: {{matchLabels: {{app: llm}}}}
          strategy: {strategy}
          {extra}
          template:
            metadata: {{labels: {{app: llm}}}}
            spec:
              terminationGracePeriodSeconds: 30
              resourceClaims: [{{name: gpu, resourceClaimTemplateName: slice}}]
              containers:
              - name: server
                image: vllm/vllm-openai:v0.18.0
                resources: {{claims: [{{name: gpu}}]}}
                {pod_extra}
        """)


def inventory(slices_per_gpu: int = 2, gpus: int = 2) -> Inventory:
    spec = {"nodes": [{"namePrefix": "gpu", "count": 1,
                       "gpus": {"model": "A100-40GB", "count": gpus, "mig": "static",
                                "layout": ["3g.20gb"] * slices_per_gpu}}]}
    return Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(generate(spec))])


def simulate(text: str, pool: Inventory | None = None, **kwargs):
    template = Manifest.from_data(yaml.safe_load(TEMPLATE))
    return simulate_rollout(Manifest.from_data(yaml.safe_load(text)), {"slice": template}, pool or inventory(),
                            **kwargs)


def test_surge_first_on_a_full_pool_deadlocks_with_its_certificate_and_remedy():
    simulation = simulate(deployment())
    verdict = simulation.verdict
    assert verdict.kind == "deadlock" and not verdict.ok
    assert verdict.chain[0].startswith("1 new pod(s) Pending") and "4 device(s) held" in verdict.chain[0]
    assert verdict.chain[1] == ("4 old pod(s) cannot be removed: 4 pod(s) available must stay >= 4 "
                                "(replicas 4 - maxUnavailable 0)")
    assert verdict.remedy == "strategy maxSurge: 0, maxUnavailable: 1: re-simulated, completes in 34 s"
    assert verdict.deadline_exceeded == 600  # progressDeadlineSeconds: marked, never rolled back


def test_release_first_completes_one_replica_at_a_time():
    """Each replica: the old pod stops (1 s) and its device is unprepared (0.5 s), then the new
    pod starts (2 s) and gets ready (5 s): 8.5 s, four times."""
    verdict = simulate(deployment("{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}")).verdict
    assert (verdict.kind, verdict.seconds) == ("completes", 34.0)


def test_recreate_replaces_every_pod_at_once():
    assert simulate(deployment("{type: Recreate}")).verdict.seconds == 8.5


def test_spare_devices_let_a_surge_first_rollout_finish():
    """Six slices for four replicas: a new pod starts on a free slice before an old pod goes,
    and the next one finds the other free slice while that old pod still stops: start and
    ready (7 s), four times."""
    verdict = simulate(deployment(), inventory(gpus=3)).verdict
    assert (verdict.kind, verdict.seconds) == ("completes", 4 * 7.0)


def test_min_ready_seconds_and_the_pre_stop_hook_lengthen_each_step():
    hook = "lifecycle: {preStop: {sleep: {seconds: 10}}}"
    verdict = simulate(deployment("{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}",
                                  extra="minReadySeconds: 3", pod_extra=hook)).verdict
    assert verdict.seconds == 4 * (10 + 1 + 0.5 + 2 + 5 + 3)


def test_durations_are_configurable():
    verdict = simulate(deployment("{type: Recreate}"), durations=Durations(start=10, ready=20)).verdict
    assert verdict.seconds == 1.5 + 10 + 20


def test_input_it_cannot_simulate_is_refused_with_the_reason():
    with pytest.raises(ScenarioError, match="start state does not fit: 4 of 6 pods"):
        simulate(deployment(replicas=6))
    with pytest.raises(ScenarioError, match="ResourceClaimTemplate 'other' is not among the manifests"):
        simulate(deployment().replace("resourceClaimTemplateName: slice", "resourceClaimTemplateName: other"))


def test_an_object_the_api_server_refuses_is_not_simulated(cli, tmp_path):
    """Fields of the wrong type were read as they came: `replicas: "2"` raised an internal
    error in the Deployment controller (and in lint's rollout-deadlock)."""
    with pytest.raises(ScenarioError, match="Deployment 'llm' is not valid on Kubernetes 1.37: spec.replicas: "
                                            "\"2\" is not of type \"integer\""):
        simulate(deployment(replicas="'2'"))
    broken = yaml.safe_load(TEMPLATE)
    broken["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = "one"
    with pytest.raises(ScenarioError, match="ResourceClaimTemplate 'slice' is not valid"):
        simulate_rollout(Manifest.from_data(yaml.safe_load(deployment())), {"slice": Manifest.from_data(broken)},
                         inventory())
    pool = tmp_path / "inventory.yaml"
    pool.write_text(yaml.safe_dump_all(generate({"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": {
        "model": "A100-40GB", "count": 2, "mig": "static", "layout": ["3g.20gb", "3g.20gb"]}}]})))
    bad = tmp_path / "bad.yaml"
    text = TEMPLATE + "---" + deployment(replicas="'2'")
    bad.write_text(text)
    line = 1 + next(i for i, x in enumerate(text.splitlines()) if "replicas: '2'" in x)
    run = cli("simulate", "rollout", bad, "--inventory", pool)
    assert run.code == 2 and f"manifests {bad}:{line}:" in run.err and "Deployment 'llm' is not valid" in run.err
    linted = cli("lint", bad, "--inventory", pool, "--no-config", "-f", "json").json["findings"]
    assert "internal-error" not in {f["rule"] for f in linted}
    assert any(f["rule"] == "rollout-deadlock" and "not simulated" in f["message"] for f in linted)


def test_the_command_answers_with_the_verdict_and_its_exit_status(tmp_path):
    pool = tmp_path / "inventory.yaml"
    pool.write_text(yaml.safe_dump_all(generate({"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": {
        "model": "A100-40GB", "count": 2, "mig": "static", "layout": ["3g.20gb", "3g.20gb"]}}]})))
    stuck = tmp_path / "stuck.yaml"
    stuck.write_text(TEMPLATE + "---" + deployment())
    run = subprocess.run([sys.executable, "-m", "draguard", "simulate", "rollout", str(stuck), "--inventory",
                          str(pool)], capture_output=True, text=True)
    assert run.returncode == 1 and "deadlock: nothing can happen any more" in run.stdout
    assert "remedy: strategy maxSurge: 0, maxUnavailable: 1" in run.stdout
    fine = tmp_path / "fine.yaml"
    fine.write_text(TEMPLATE + "---" + deployment("{type: Recreate}"))
    run = subprocess.run([sys.executable, "-m", "draguard", "simulate", "rollout", str(fine), "--inventory",
                          str(pool), "-f", "json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["verdict"]["kind"] == "completes" and answer["verdict"]["seconds"] == 8.5
    assert answer["timeline"][0]["what"] == "rollout started" and answer["samples"][-1]["devicesAllocated"] == 4
    missing = subprocess.run([sys.executable, "-m", "draguard", "simulate", "rollout", str(fine), "--inventory",
                              str(tmp_path / "nope.yaml")], capture_output=True, text=True)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    # a new image that takes 30 s to pull: both Recreate pods pull it, 30 s more
    pulled = subprocess.run([sys.executable, "-m", "draguard", "simulate", "rollout", str(fine), "--inventory",
                             str(pool), "-f", "json", "--image", "vllm/vllm-openai:v0.19.0", "--pull", "30"],
                            capture_output=True, text=True)
    answer = json.loads(pulled.stdout)
    assert answer["verdict"]["seconds"] == 38.5
    assert answer["timeline"][0]["detail"] == "revision 2 of llm, image vllm/vllm-openai:v0.19.0"
    # a NaN readiness time never arrives (the simulation ran forever); a horizon of 0 read as none
    for flag, value, said in [("--ready", "nan", "finite number 0 or more"), ("--pull", "-1", "finite number 0 or more"),
                              ("--horizon", "0", "finite number above 0")]:
        bad = subprocess.run([sys.executable, "-m", "draguard", "simulate", "rollout", str(fine), "--inventory",
                              str(pool), flag, value], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and f"argument {flag}: '{value}': seconds must be a {said}" in bad.stderr
    gated = subprocess.run([sys.executable, "-m", "draguard", "simulate", "rollout", str(fine), "--inventory",
                            str(pool), "--feature-gates", "DRADeviceTaints=false"], capture_output=True, text=True)
    assert gated.returncode == 0, gated.stderr
    unknown = subprocess.run([sys.executable, "-m", "draguard", "simulate", "drain", "gpu-0", str(fine), "--inventory",
                              str(pool), "--feature-gates", "NoSuchGate=true"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "--feature-gates: unknown feature gate 'NoSuchGate'" in unknown.stderr


def test_before_1_33_a_pod_waits_out_its_backoff_after_a_device_is_released():
    """Without SchedulerPopFromBackoffQ (1.32) a pod that failed waits 1 s (doubling) even when
    the device it waits for is released at once; from 1.33 it is popped from the backoff
    queue."""
    instant = Durations(pull=0, start=0, ready=0, shutdown=0, unprepare=0)
    release_first = deployment("{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}")
    assert simulate(release_first, durations=instant, kube_version="1.32").verdict.seconds == 4 * 1.0
    assert simulate(release_first, durations=instant, kube_version="1.33").verdict.seconds == 0.0


def test_progress_counts_the_updated_pods_as_they_become_available():
    stages, advanced = [], []

    def progress(stage, total):
        stages.append((stage, total))
        return advanced.append

    simulate(deployment("{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}"), progress=progress)
    assert stages == [("rolling out", 4)] and sum(advanced) == 4 and len(advanced) == 4


def test_each_moment_samples_the_pool_view():
    """The audit's definitions (dra.pools): on a full pool nothing is allocatable; with six
    slices for four replicas two are, until the surge-first rollout takes one."""
    full = simulate(deployment("{type: Recreate}")).samples()
    assert full[0]["devices"] == {"total": 4, "allocated": 4, "free": 0, "tainted": 0}
    assert full[0]["allocatable"] == {} and full[0]["utilization"] == 1.0
    roomy = simulate(deployment(), inventory(gpus=3)).samples()
    assert roomy[0]["allocatable"] == {"3g.20gb": 2}
    assert min(s["allocatable"].get("3g.20gb", 0) for s in roomy) == 0  # a surge pod and a new one hold both


def test_extended_resources_a_device_class_serves_are_claimed_as_the_scheduler_claims_them():
    """KEP-5004 (on from 1.36): `nvidia.com/gpu: 1` that a DeviceClass serves is one ExactCount
    claim per pod (dra.extended), so a surge-first rollout over two whole GPUs deadlocks like a
    claim's; before 1.36 the device plugin would serve it and nothing is claimed."""
    classes = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu-extended"},
               "spec": {"extendedResourceName": "nvidia.com/gpu",
                        "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": 1,
                                   "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}}]}) + [classes]
    pool = Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])
    text = deployment(replicas=2).replace("resources: {claims: [{name: gpu}]}", "resources: {limits: {nvidia.com/gpu: 1}}")
    text = text.replace("resourceClaims: [{name: gpu, resourceClaimTemplateName: slice}]", "resourceClaims: []")
    verdict = simulate(text, pool).verdict
    assert verdict.kind == "deadlock" and "2 device(s) held" in verdict.chain[0]
    assert simulate(text.replace("maxSurge: 1, maxUnavailable: 0", "maxSurge: 0, maxUnavailable: 1"),
                    pool).verdict.kind == "completes"
    with pytest.raises(ScenarioError, match="claims no devices"):
        simulate(text, pool, kube_version="1.35")


SHARED_POOL = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: shared-gpu}
spec: {selectors: [{cel: {expression: "device.driver == 'shared.example.com'"}}]}
---
apiVersion: v1
kind: Node
metadata: {name: node-0}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-0-gpus}
spec:
  driver: shared.example.com
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    capacity: {memory: {value: 40Gi, requestPolicy: {default: 8Gi, validRange: {min: 4Gi, step: 4Gi}}}}
"""
SHARE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: slice, namespace: serving}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: shared-gpu, allocationMode: ExactCount, count: 1, capacity: {requests: {memory: 10Gi}}}
"""


def test_a_shared_device_is_shared_where_the_release_s_scheduler_shares_it():
    """Consumable capacity (DRAConsumableCapacity, beta and on from 1.36): three pods of 10Gi
    (12Gi after the 4Gi step) share the 40Gi device, and a surge of a fourth does not fit. On
    1.35 the API server stores the slice without allowMultipleAllocations: one pod fits, and
    the refusal says why."""
    pool = Inventory.from_manifests([Manifest.from_data(d, document=i)
                                     for i, d in enumerate(yaml.safe_load_all(SHARED_POOL))])
    template = {"slice": Manifest.from_data(yaml.safe_load(SHARE))}
    three = Manifest.from_data(yaml.safe_load(deployment(replicas=3)))
    verdict = simulate_rollout(three, template, pool).verdict
    assert verdict.kind == "deadlock" and verdict.remedy.startswith("strategy maxSurge: 0, maxUnavailable: 1")
    with pytest.raises(ScenarioError, match=r"1 of 3 pods .*; note: Kubernetes 1.35: DRAConsumableCapacity is off"):
        simulate_rollout(three, template, pool, kube_version="1.35")


def test_a_replica_sets_counts_follow_its_pods_phases_their_readiness_and_the_clock():
    """The controllers ask a ReplicaSet for its active and available pods several times a
    moment; what it counted is counted again after a pod changed phase or became ready (at
    the same moment too), or the clock moved (minReadySeconds), never kept past such a change."""
    from draguard.core.versions import DEFAULT_KUBE_VERSION
    from draguard.simulate.deployment import ReplicaSet
    from draguard.simulate.world import Pod, World

    world = World.on(inventory(), DEFAULT_KUBE_VERSION)
    late, early = (Pod(f"llm-{i}", "llm-1", [], Durations(ready=0.0), 1.0, 0.0) for i in range(2))
    rs = ReplicaSet("llm-1", 1, 2, None, [late, early])
    world.adopt(late, "gpu-0", [], ready=False)  # ready when its readiness event runs, at this moment
    world.adopt(early, "gpu-0", [], ready=True)
    assert len(rs.active(world)) == 2 and rs.available(world, 0) == 1
    world.run(60)
    assert world.now == 0 and rs.available(world, 0) == 2 and rs.available(world, 10) == 0
    world.at(12, lambda: None)
    world.run(60)
    assert world.now == 12 and rs.available(world, 10) == 2
    world.delete_pod(early)
    assert [p.name for p in rs.active(world)] == ["llm-0"] and rs.available(world, 0) == 1
