"""`draguard simulate drain` on generated MIG inventories: evictions through the budget, the
livelock a full pool makes of a drain, and what the eviction API refuses."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
import yaml

from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.model.manifest import Manifest
from draguard.simulate.drain import simulate_drain
from draguard.simulate.template import ScenarioError

from .test_rollout import TEMPLATE

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: serving}
spec:
  replicas: 4
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: slice}]
      containers:
      - {name: server, image: vllm, resources: {claims: [{name: gpu}]}}
"""
BUDGET = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: llm, namespace: serving}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: llm}}
"""
SPEC = {"model": "A100-40GB", "count": 2, "mig": "static", "layout": ["3g.20gb", "3g.20gb"]}


def inventory(nodes: int) -> Inventory:
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": nodes, "gpus": SPEC}]})
    return Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])


def manifests(*texts: str) -> list[Manifest]:
    return [Manifest.from_data(yaml.safe_load(textwrap.dedent(t))) for t in (TEMPLATE, *texts)]


def test_a_budget_lets_one_pod_go_at_a_time_as_replacements_come_up_elsewhere():
    """Each pod: evicted, its replacement ready on the other node 7 s later, the next eviction
    at the following 5 s retry; the last one is gone 1.5 s after its eviction at 30 s."""
    simulation = simulate_drain("gpu-0", manifests(DEPLOYMENT, BUDGET), inventory(2))
    assert (simulation.verdict.kind, simulation.verdict.seconds) == ("completes", 31.5)
    evicted = [r.time for r in simulation.timeline() if r.what == "evicted"]
    assert evicted == [0.0, 10.0, 20.0, 30.0]


def test_without_a_budget_every_pod_goes_at_once():
    assert simulate_drain("gpu-0", manifests(DEPLOYMENT), inventory(2)).verdict.seconds == 1.5


def test_a_budget_on_a_full_pool_livelocks_the_drain_with_its_chain():
    verdict = simulate_drain("gpu-0", manifests(DEPLOYMENT, BUDGET), inventory(1)).verdict
    assert verdict.kind == "livelock" and not verdict.ok
    assert verdict.chain[0].startswith("3 eviction(s) refused: llm-1-2: PodDisruptionBudget llm allows no "
                                       "disruption (healthy 3, desired 3)")
    assert verdict.chain[1].startswith("1 replacement pod(s) Pending (llm-1-5: 0/1 nodes are available: 1 node(s) "
                                       "were unschedulable)")
    # the budget must let all four pods of the only node go: re-drained, that completes
    assert verdict.remedy == ("PodDisruptionBudget llm maxUnavailable: 4: re-simulated, completes in 2 s (or add "
                              "capacity for the replacements)")


def test_what_cannot_be_drained_is_refused_with_the_reason():
    second = BUDGET.replace("name: llm, namespace", "name: llm-too, namespace")
    with pytest.raises(ScenarioError, match="more than one PodDisruptionBudget"):
        simulate_drain("gpu-0", manifests(DEPLOYMENT, BUDGET, second), inventory(2))
    with pytest.raises(ScenarioError, match="node 'gpu-9' is not in the inventory"):
        simulate_drain("gpu-9", manifests(DEPLOYMENT), inventory(2))


@pytest.mark.parametrize("budget, said", [
    ("maxUnavailable: -1", "maxUnavailable -1: must be greater than or equal to 0"),
    ("maxUnavailable: 150%", "maxUnavailable '150%': must not be greater than 100%"),
    ("maxUnavailable: 1\n  minAvailable: 2", "maxUnavailable 1: cannot be set with minAvailable"),
])
def test_a_budget_the_api_server_refuses_is_refused_at_its_field(budget, said):
    """No cluster drains through a budget it never stored (rollout-fields-invalid lints it)."""
    with pytest.raises(ScenarioError, match=f"PodDisruptionBudget llm: {re.escape(said)} \\(the API server refuses it\\)"):
        simulate_drain("gpu-0", manifests(DEPLOYMENT, BUDGET.replace("maxUnavailable: 1", budget)), inventory(2))


def test_the_command_drains_and_says_so(tmp_path):
    pool = tmp_path / "inventory.yaml"
    pool.write_text(yaml.safe_dump_all(generate({"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": SPEC}]})))
    stack = tmp_path / "stack.yaml"
    stack.write_text(textwrap.dedent(TEMPLATE) + "---" + textwrap.dedent(DEPLOYMENT) + "---" + textwrap.dedent(BUDGET))
    run = subprocess.run([sys.executable, "-m", "draguard", "simulate", "drain", "gpu-0", str(stack), "--inventory",
                          str(pool)], capture_output=True, text=True)
    assert run.returncode == 1 and "livelock: the evictions are refused for ever" in run.stdout, run.stderr
    usage = subprocess.run([sys.executable, "-m", "draguard", "simulate", "drain", "gpu-0", "--inventory", str(pool)],
                           capture_output=True, text=True)
    assert usage.returncode == 2 and "name the node, then the manifests" in usage.stderr
