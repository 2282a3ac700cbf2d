"""The six teardown rules' GPU sites (rules.teardown.gpu_sites): a pod with no pod claims has
none, found without asking which of its claims hold GPUs (8,000 of a large lint's 8,500 pods
have no claim); a pod with a GPU claim still has its site, and its findings."""

from __future__ import annotations

from draguard.rules import teardown
from draguard.core.config import Config
from draguard.engine import lint_text

CLAIMED = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: v1
kind: Pod
metadata: {name: claimed}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: gpu}
  containers:
  - name: server
    image: vllm/vllm-openai
    resources: {claims: [{name: gpu}]}
"""
UNCLAIMED = """---
apiVersion: v1
kind: Pod
metadata: {name: unclaimed}
spec:
  containers:
  - name: server
    image: vllm/vllm-openai
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_pod_without_claims_is_not_asked_which_hold_gpus(monkeypatch):
    asked = []
    real = teardown.gpu_claim_entries
    monkeypatch.setattr(teardown, "gpu_claim_entries",
                        lambda site, objects: asked.append(site.owner.name) or real(site, objects))
    result = lint_text("pods.yaml", CLAIMED + UNCLAIMED, Config())
    assert set(asked) == {"claimed"}
    judged = {(f.obj.name, f.rule) for f in result.findings if f.rule.startswith("teardown-")}
    assert ("claimed", "teardown-prestop") in judged and not any(name == "unclaimed" for name, _ in judged)


def test_a_containers_server_is_found_once_for_the_teardown_rules(monkeypatch):
    """Three teardown rules ask each GPU container which inference server it runs: found once
    a container (ContainerSite.server), the same server each rule judges."""
    from draguard.model import teardown as model_teardown

    asked = []
    real = model_teardown.server_of
    monkeypatch.setattr(model_teardown, "server_of", lambda container: asked.append(container["name"]) or real(container))
    result = lint_text("pods.yaml", CLAIMED, Config())
    assert asked == ["server"]
    assert any(f.rule == "teardown-drain-disabled" and "runs vLLM" in f.message for f in result.findings)
