"""Compliant examples shared by several rules' documentation (and their tests): a complete,
clean DRA workload targeting Kubernetes 1.34+. Rules derive their failing examples from these
by small textual edits, so each failing example differs from a clean one in one place.

The texts keep a 4-space base indentation (docs and tests dedent them); the request and the
pod spec are written once and placed at the depth each object needs."""

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Rule


def replace_last(text: str, old: str, new: str) -> str:
    head, found, tail = text.rpartition(old)
    if not found:
        raise ValueError(f"{old!r} not in example")
    return head + new + tail


def _at(text: str, spaces: int) -> str:
    """`text` with `spaces` before each line that is not blank, as textwrap.indent writes it
    (not imported: every lint imports this module with the rules, and textwrap cost 1 ms)."""
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(True))


_SELECTOR = """selectors:
- cel:
    expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
"""
_FIELDS = "deviceClassName: mig.nvidia.com\nallocationMode: ExactCount\ncount: 1\n" + _SELECTOR
_REQUESTS = "requests:\n- name: gpu\n  exactly:\n" + _at(_FIELDS, 4)
_REQUESTS_V1BETA1 = "requests:\n- name: gpu\n" + _at(_FIELDS, 2)  # fields on the request itself

_POD_SPEC = """terminationGracePeriodSeconds: 60
resourceClaims:
- {name: gpu, resourceClaimTemplateName: mig-1g}
containers:
- name: server
  image: vllm/vllm-openai
  args: [--shutdown-timeout, '30']
  resources:
    claims: [{name: gpu}]
  lifecycle:
    preStop:
      exec: {command: [sh, -c, sleep 10]}
"""


def _template(api_version: str, requests: str) -> str:
    return (f"\n    apiVersion: {api_version}\n    kind: ResourceClaimTemplate\n    metadata: {{name: mig-1g}}\n"
            "    spec:\n      spec:\n        devices:\n" + _at(requests, 10) + "    ")


def resource_claim(name: str) -> str:
    """A ResourceClaim with the same request as the template (for shared-claim examples)."""
    return (f"    apiVersion: resource.k8s.io/v1\n    kind: ResourceClaim\n    metadata: {{name: {name}}}\n"
            "    spec:\n      devices:\n" + _at(_REQUESTS, 8) + "    ")


CLAIM_TEMPLATE = _template("resource.k8s.io/v1", _REQUESTS)
CLAIM_TEMPLATE_V1BETA1 = _template("resource.k8s.io/v1beta1", _REQUESTS_V1BETA1)

POD = "---\n    apiVersion: v1\n    kind: Pod\n    metadata: {name: inference}\n    spec:\n" + _at(_POD_SPEC, 6) + "    "

COMPLIANT_POD = CLAIM_TEMPLATE + POD
V1BETA1_POD = CLAIM_TEMPLATE_V1BETA1 + POD

COMPLIANT_DEPLOYMENT = CLAIM_TEMPLATE + """---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: inference}
    spec:
      replicas: 2
      selector: {matchLabels: {app: inference}}
      strategy:
        type: RollingUpdate
        rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
      template:
        metadata: {labels: {app: inference}}
        spec:
""" + _at(_POD_SPEC, 10) + """    ---
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: inference}
    spec:
      maxUnavailable: 1
      selector: {matchLabels: {app: inference}}
    """


DAEMONSET_EXAMPLE = CLAIM_TEMPLATE + """---
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: node-inference}
    spec:
      selector: {matchLabels: {app: node-inference}}
      updateStrategy:
        type: RollingUpdate
        rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
      template:
        metadata: {labels: {app: node-inference}}
        spec:
""" + _at(_POD_SPEC, 10) + "    "


def example_inventory_file(rule: "Rule", folder: str) -> str | None:
    """The rule's example inventory (Rule.example_inventory) as Nodes and ResourceSlices in a
    file in `folder`, for `--inventory`; None for rules judged without one."""
    if rule.example_inventory is None:
        return None
    import yaml

    from ..dra.generate import generate

    path = os.path.join(folder, f"{rule.id}-inventory.yaml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump_all(generate(rule.example_inventory), handle, sort_keys=False)
    return path
