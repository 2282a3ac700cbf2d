"""`draguard simulate SCENARIO`: steps one after another on the manifests' Deployments, the
verdict of the first that does not complete, and a scenario's mistakes at file:line:column."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
import yaml

from draguard.core.errors import InputError
from draguard.dra.generate import generate
from draguard.simulate.reader import load_scenario

from .test_drain import BUDGET, DEPLOYMENT, SPEC
from .test_rollout import TEMPLATE

SCENARIO = """
apiVersion: draguard.io/v1alpha1
kind: Scenario
manifests: [stack.yaml]
inventory: [inventory.yaml]
kubeVersion: "1.34"
durations: {start: 2, ready: 5}
steps:
- rollout: {deployment: llm}
- scale: {deployment: llm, replicas: 6}
- drain: {node: gpu-0}
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump_all(generate(
        {"nodes": [{"namePrefix": "gpu", "count": 2, "gpus": SPEC}]})))
    (tmp_path / "stack.yaml").write_text("---".join(textwrap.dedent(t) for t in (TEMPLATE, DEPLOYMENT, BUDGET)))
    return tmp_path


def scenario(folder, text: str = SCENARIO):
    path = folder / "scenario.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return load_scenario(str(path))


def test_steps_run_one_after_another_until_one_cannot_finish(folder):
    run = scenario(folder).run()
    kinds = [(r.step.kind, r.verdict.kind) for r in run.results]
    assert kinds == [("rollout", "completes"), ("scale", "completes"), ("drain", "livelock")]
    rollout, scale, drain = run.results
    assert rollout.started == 0 and scale.started == rollout.verdict.seconds
    assert drain.started == scale.started + scale.verdict.seconds
    assert run.verdict.kind == "livelock" and "PodDisruptionBudget llm allows no disruption" in run.verdict.chain[0]


def test_a_scenario_that_fits_completes_with_the_total_time(folder):
    run = scenario(folder, SCENARIO.replace("replicas: 6", "replicas: 3")).run()
    assert run.verdict.kind == "completes"
    assert run.verdict.seconds == sum(r.verdict.seconds for r in run.results)


@pytest.mark.parametrize("change, message", [
    (("kind: Scenario", "kind: Scenaro"), "scenario.yaml:2:1: a scenario is apiVersion: draguard.io/v1alpha1"),
    (("- drain: {node: gpu-0}", "- dran: {node: gpu-0}"), "scenario.yaml:10:3: unknown step 'dran'"),
    (("durations: {start: 2, ready: 5}", "durations: {boot: 2}"), "scenario.yaml:6:13: durations: unknown phase"),
    (("kubeVersion: \"1.34\"", "kubeVersion: \"1.9\""), "scenario.yaml:5:1: unsupported Kubernetes version"),
    (("inventory: [inventory.yaml]", "inventory: inventory.yaml"), "scenario.yaml:4:1: inventory: a list of paths"),
    (("durations: {start: 2, ready: 5}", "workloadDurations: {llm: {ready: -1}}"),
     "scenario.yaml:6:27: workloadDurations.llm.ready: seconds, a finite number >= 0"),
    # YAML floats a readiness time that never arrives, or an endless horizon (a NaN ran forever)
    (("durations: {start: 2, ready: 5}", "durations: {start: 2, ready: .nan}"),
     "scenario.yaml:6:23: durations.ready: seconds, a finite number >= 0"),
    (("durations: {start: 2, ready: 5}", "durations: {start: 2, ready: 5}\nhorizon: .inf"),
     "scenario.yaml:7:1: horizon: seconds, a finite number > 0"),
    (("kubeVersion: \"1.34\"", "start: full"), "scenario.yaml:5:1: start: manifests (their Deployments and "
                                                "StatefulSets running), empty, or {dump: PATH}"),
    (("kubeVersion: \"1.34\"", "featureGates: {DRAConsumableCapacty: true}"),
     "scenario.yaml:5:16: unknown feature gate 'DRAConsumableCapacty'"),
    (("kubeVersion: \"1.34\"", "featureGates: {DRAConsumableCapacity: 'yes'}"),
     "scenario.yaml:5:1: featureGates: a mapping of gate name -> true or false"),
    (("kubeVersion: \"1.34\"", "featureGates: [DRAConsumableCapacity]"),
     "scenario.yaml:5:1: featureGates: a mapping of gate name -> true or false"),
])
def test_mistakes_are_reported_at_their_line_and_column(folder, change, message):
    with pytest.raises(InputError, match=re.escape(message)):
        scenario(folder, SCENARIO.replace(*change))


@pytest.mark.parametrize("step", ["rollout: {deployment: %s}", "scale: {deployment: %s, replicas: 2}",
                                  "drain: {node: %s}", "evict: {pod: %s}"])
@pytest.mark.parametrize("value", ["[llm]", "{a: 1}", "5"])
def test_a_name_of_another_type_is_reported_at_the_step(folder, step, value):
    """A list or a mapping where a step names a workload, node or pod was an internal error
    (unhashable), a number a confusing 'not running'."""
    text = SCENARIO.replace("- rollout: {deployment: llm}", "- " + step % value)
    with pytest.raises(InputError, match=r"scenario.yaml:\d+:\d+: \w+: \w+ is a name, not "):
        scenario(folder, text).run(60)


def test_a_step_naming_what_is_not_there_is_reported_at_the_step(folder):
    with pytest.raises(InputError, match=r"scenario.yaml:8:3: rollout names Deployment 'lm'"):
        scenario(folder, SCENARIO.replace("rollout: {deployment: llm}", "rollout: {deployment: lm}")).run()
    with pytest.raises(InputError, match=r"scenario.yaml:10:3: drain names node 'gpu-7'"):
        scenario(folder, SCENARIO.replace("node: gpu-0", "node: gpu-7")).run()


def test_the_command_runs_a_scenario(folder):
    (folder / "scenario.yaml").write_text(textwrap.dedent(SCENARIO).lstrip())
    run = subprocess.run([sys.executable, "-m", "draguard", "simulate", str(folder / "scenario.yaml"), "-f", "json"],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    answer = json.loads(run.stdout)
    assert [s["verdict"] for s in answer["steps"]] == ["completes", "completes", "livelock"]
    assert answer["steps"][1]["replicas"] == 6 and answer["verdict"]["kind"] == "livelock"
    mixed = subprocess.run([sys.executable, "-m", "draguard", "simulate", str(folder / "scenario.yaml"),
                            "--inventory", "x.yaml"], capture_output=True, text=True)
    assert mixed.returncode == 2 and "names its manifests and inventory itself" in mixed.stderr
    ignored = subprocess.run([sys.executable, "-m", "draguard", "simulate", str(folder / "scenario.yaml"),
                              "--start", "9"], capture_output=True, text=True)
    assert ignored.returncode == 2 and "--start: a scenario file sets these itself" in ignored.stderr
    gated = subprocess.run([sys.executable, "-m", "draguard", "simulate", str(folder / "scenario.yaml"),
                            "--feature-gates", "DRADeviceTaints=false"], capture_output=True, text=True)
    assert gated.returncode == 2 and "--feature-gates: a scenario file sets these itself" in gated.stderr


def test_a_deleted_node_s_pods_are_collected_and_replaced_elsewhere(folder):
    """The pod garbage collector removes them 40 s after the node went; the replacements start
    (2 s) and get ready (5 s) on the other node. With no other node they stay Pending."""
    steps = "steps:\n- deleteNode: {node: gpu-0}\n"
    run = scenario(folder, SCENARIO[:SCENARIO.index("steps:")] + steps).run()
    assert (run.verdict.kind, run.verdict.seconds) == ("completes", 47.0)
    assert "removed by the pod garbage collector (its node is gone)" in {r.what for r in run.timeline()}
    (folder / "inventory.yaml").write_text(yaml.safe_dump_all(generate(
        {"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": SPEC}]})))
    stuck = scenario(folder, SCENARIO[:SCENARIO.index("steps:")] + steps).run()
    assert stuck.verdict.kind == "deadlock" and stuck.verdict.chain[0].startswith("4 pod(s) Pending")


def test_the_scale_shorthand_scales_one_workload(folder):
    """Four pods on two nodes of four devices: six fit, nine do not (a deadlock, exit 1)."""
    base = [sys.executable, "-m", "draguard", "simulate", "scale"]
    where = [str(folder / "stack.yaml"), "--inventory", str(folder / "inventory.yaml"), "-f", "json"]
    fits = subprocess.run(base + ["6"] + where, capture_output=True, text=True)
    assert fits.returncode == 0, fits.stderr
    assert json.loads(fits.stdout)["steps"][0] == {"step": "scale", "deployment": "llm", "replicas": 6,
                                                   "started": 0.0, "verdict": "completes", "seconds": 7.0}
    too_many = subprocess.run(base + ["9"] + where, capture_output=True, text=True)
    assert too_many.returncode == 1 and json.loads(too_many.stdout)["verdict"]["kind"] == "deadlock"
    # one pod is left Pending: eight replicas fit, as the scenario run again shows
    assert json.loads(too_many.stdout)["verdict"]["remedy"] == "replicas: 8: re-simulated, completes in 7 s (or add " \
                                                            "capacity)"
    for replicas in ("six", "\u00b2"):  # a superscript two is a digit to str.isdigit, not to int()
        wrong = subprocess.run(base + [replicas] + where, capture_output=True, text=True)
        assert wrong.returncode == 2 and "the replicas (a whole number)" in wrong.stderr


def test_a_workload_may_have_durations_of_its_own(folder):
    """The rollout goes in two waves of start-up and readiness: 2 x (2 + 5) s, or with llm's
    own readiness of 60 s, 2 x (2 + 60) s."""
    plain = scenario(folder, SCENARIO.replace("replicas: 6", "replicas: 3")).run()
    slow = scenario(folder, SCENARIO.replace("replicas: 6", "replicas: 3").replace(
        "durations: {start: 2, ready: 5}", "durations: {start: 2, ready: 5}\nworkloadDurations: {llm: {ready: 60}}")).run()
    assert (plain.results[0].verdict.seconds, slow.results[0].verdict.seconds) == (14.0, 124.0)


def test_a_step_that_cannot_finish_comes_with_its_remedy_proven_by_running_again(folder):
    """The surge-first rollout on a full pool deadlocks, release-first completes; the drain
    of a full node livelocks against its budget, a larger maxUnavailable lets it finish."""
    full = SCENARIO.replace("- scale: {deployment: llm, replicas: 6}\n", "- scale: {deployment: llm, replicas: 8}\n")
    stack = (folder / "stack.yaml").read_text().replace("  replicas: 4\n", "  replicas: 4\n  strategy: {type: "
                                                        "RollingUpdate, rollingUpdate: {maxSurge: 1, "
                                                        "maxUnavailable: 0}}\n", 1)
    (folder / "stack.yaml").write_text(stack)
    run = scenario(folder, full.replace("- rollout: {deployment: llm}\n", "")
                   .replace("- drain: {node: gpu-0}\n", "- rollout: {deployment: llm}\n")).run()
    assert run.verdict.kind == "deadlock"
    assert run.verdict.remedy.startswith("strategy maxSurge: 0, maxUnavailable: 1: re-simulated, completes in ")
    drained = scenario(folder, full.replace("- rollout: {deployment: llm}\n", "")).run()
    assert drained.verdict.kind == "livelock"
    assert drained.verdict.remedy.startswith("PodDisruptionBudget llm maxUnavailable: 4: re-simulated")
