"""request-unsatisfiable says only what is true (issue: precision): a shortfall is named as
one, "enough devices" only when there are, and what draguard cannot judge (other vendors
without an inventory) is info, never an error."""

import pytest

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {node}}}
spec:
  driver: gpu.nvidia.com
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
  devices:
{devices}
"""
DEVICE = "  - {{name: gpu-{i}, attributes: {{type: {{string: gpu}}}}{extra}}}\n"


def _inventory(tmp_path, nodes: dict, extra: str = "") -> str:
    text = "---\n".join(SLICE.format(node=node, devices="".join(DEVICE.format(i=i, extra=extra) for i in range(n)))
                        for node, n in nodes.items())
    path = tmp_path / "inventory.yaml"
    path.write_text(text)
    return str(path)


def _claim(count: int = 1, extra: str = "") -> str:
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
            f"    requests:\n    - name: gpu\n      exactly: {{deviceClassName: gpu.nvidia.com, allocationMode: "
            f"ExactCount, count: {count}{extra}}}\n")


def _unsatisfiable(lint_json, text, *args, kube_version: str = "1.37"):
    return [(f["severity"], f["message"]) for f in lint_json(text, "--kube-version", kube_version, *args)["findings"]
            if f["rule"] == "request-unsatisfiable"]


def test_too_few_devices_in_all_is_a_shortfall_not_enough(tmp_path, lint_json):
    [(severity, message)] = _unsatisfiable(lint_json, _claim(count=5), "--inventory",
                                           _inventory(tmp_path, {"a": 2, "b": 2}))
    assert severity == "error"
    assert "only 4 matching devices are free across all nodes, it needs 5" in message
    assert "enough" not in message


def test_enough_in_all_but_not_on_one_node_says_so(tmp_path, lint_json):
    [(severity, message)] = _unsatisfiable(lint_json, _claim(count=3), "--inventory",
                                           _inventory(tmp_path, {"a": 2, "b": 2}))
    assert severity == "error"
    assert "4 matching devices are free across all nodes (3 needed), but not on one node" in message


def test_a_claim_that_fits_has_no_finding(tmp_path, lint_json):
    assert _unsatisfiable(lint_json, _claim(count=2), "--inventory", _inventory(tmp_path, {"a": 2})) == []


def test_consumable_capacity_is_judged(tmp_path, lint_json):
    """DRAConsumableCapacity (1.36+ defaults): capacity requests take their share of a device,
    and a device that allows several allocations is shared by claims, never twice by one request."""
    memory = ", capacity: {memory: {value: 80Gi}}"
    asked = _claim(count=1, extra=", capacity: {requests: {memory: 100Gi}}")
    [(severity, message)] = _unsatisfiable(lint_json, asked, "--inventory", _inventory(tmp_path, {"a": 1}, memory))
    assert severity == "error" and "cannot be allocated" in message  # more memory than the GPU has
    assert _unsatisfiable(lint_json, asked.replace("100Gi", "80Gi"), "--inventory",
                          _inventory(tmp_path, {"a": 1}, memory)) == []
    shared = _inventory(tmp_path, {"a": 1}, memory + ", allowMultipleAllocations: true")
    assert _unsatisfiable(lint_json, _claim(count=1, extra=", capacity: {requests: {memory: 10Gi}}"),
                          "--inventory", shared) == []
    [(severity, _)] = _unsatisfiable(lint_json, _claim(count=2), "--inventory", shared)
    assert severity == "error"


def test_the_experimental_variant_is_judged(tmp_path, lint_json):
    """Every feature of the experimental variant (alpha gates) is modelled: a claim is judged
    with them on, and a constraint reads a request's derived attribute (DRADerivedAttributes)."""
    inventory = _inventory(tmp_path, {"a": 2})
    for gate in ("DRADerivedAttributes", "DRAListTypeAttributes"):
        [(severity, _)] = _unsatisfiable(lint_json, _claim(count=5), "--inventory", inventory,
                                         "--feature-gates", f"{gate}=true")
        assert severity == "error"
    # the devices publish no bucket: a constraint on it fits only through the derived one
    bucket = "    constraints: [{matchAttribute: gpu.nvidia.com/bucket}]\n    requests:"
    plain = _claim(count=2).replace("    requests:", bucket)
    derived = _claim(count=2, extra=", derivedAttributes: [{name: gpu.nvidia.com/bucket, expression: \"'one'\"}]")
    gates = ("--feature-gates", "DRADerivedAttributes=true")
    [(severity, _)] = _unsatisfiable(lint_json, plain, "--inventory", inventory, *gates)
    assert severity == "error"
    assert _unsatisfiable(lint_json, derived.replace("    requests:", bucket), "--inventory", inventory, *gates) == []


def test_devices_with_binding_conditions_count_where_the_clusters_gates_let_them(tmp_path, lint_json):
    """Selected with DeviceBindingAndStatus (DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus, 1.36+ defaults); stored without their conditions where
    DRADeviceBindingConditions is off (1.35), so plain devices there; never selected while the
    conditions are kept but DRAResourceClaimDeviceStatus is off."""
    inventory = _inventory(tmp_path, {"a": 1}, ", bindingConditions: [attached], bindingFailureConditions: [failed]")
    assert _unsatisfiable(lint_json, _claim(count=1), "--inventory", inventory) == []
    assert _unsatisfiable(lint_json, _claim(count=1), "--inventory", inventory, kube_version="1.35") == []
    [(severity, _)] = _unsatisfiable(lint_json, _claim(count=1), "--inventory", inventory,
                                     "--feature-gates", "DRAResourceClaimDeviceStatus=false")
    assert severity == "error"


@pytest.mark.parametrize("class_name, expected", [
    ("gpu.amd.com", [("info", "gpu.amd.com")]),
    ("gpu.intel.com", [("info", "gpu.intel.com")]),
    ("gaudi.intel.com", [("info", "gaudi.intel.com")]),
    ("neuron.aws.com", [("info", "neuron.aws.com")]),
    ("compute-domain-default-channel.nvidia.com", []),  # a channel, not a GPU: nothing to judge
    ("efa.networking.k8s.aws", []),  # AWS's DRANET class of EFA adapters: a NIC
])
def test_the_builtin_inventory_says_when_it_cannot_judge_another_vendor(lint_json, class_name, expected):
    text = _claim().replace("gpu.nvidia.com", class_name)
    report = lint_json(text)
    found = [(severity, class_name) for severity, message in _unsatisfiable(lint_json, text)
             if "built-in GPU inventory (NVIDIA GPUs and their MIG slices) has no device of class" in message]
    assert found == expected
    assert "request-device-class" not in [f["rule"] for f in report["findings"]]  # a class its driver installs


def test_distinct_attribute_is_judged_where_the_gate_is_on(tmp_path, lint_json):
    """distinctAttribute is modelled (the incubating variant's constraint, DRAConsumableCapacity
    on by default from 1.36): two devices of one `type` cannot both be taken."""
    claim = _claim(count=2).replace("    requests:", "    constraints: [{distinctAttribute: type}]\n    requests:")
    inventory = _inventory(tmp_path, {"a": 2})
    [(severity, message)] = _unsatisfiable(lint_json, claim, "--inventory", inventory)
    assert severity == "error" and "not judged" not in message
    assert _unsatisfiable(lint_json, _claim(count=2), "--inventory", inventory) == []


EXTENDED = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu-extended}}
spec:
  extendedResourceName: nvidia.com/gpu
  selectors: [{{cel: {{expression: "device.driver == 'gpu.nvidia.com'"}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: server
    image: vllm/vllm-openai
    resources:
      limits: {{nvidia.com/gpu: {count}}}
"""


def test_a_pods_extended_resources_are_judged_through_the_schedulers_claim(tmp_path, lint_json):
    """KEP-5004 (DRAExtendedResource, on from 1.36): the DeviceClass serves nvidia.com/gpu, so
    the pod's 3 GPUs are one claim's ExactCount request; one node of 2 cannot hold it. Before
    1.36 the gate is off and the device plugin would serve it: not judged here."""
    inventory = _inventory(tmp_path, {"a": 2})
    [(severity, message)] = _unsatisfiable(lint_json, EXTENDED.format(count=3), "--inventory", inventory)
    assert severity == "error"
    assert message.startswith("the claim the scheduler makes for its extended resources cannot be allocated")
    assert _unsatisfiable(lint_json, EXTENDED.format(count=2), "--inventory", inventory) == []
    assert _unsatisfiable(lint_json, EXTENDED.format(count=3), "--inventory", inventory, kube_version="1.35") == []


def test_a_pod_that_asks_for_no_served_resource_builds_no_schedulers_claim(tmp_path, lint_json, monkeypatch):
    """Only a pod asking (in limits or requests, in any container) for a resource that a
    DeviceClass serves has a claim built for it; the others are not looked at again."""
    from draguard.rules import satisfiability  # the rule's own name for dra.extended.special_claim_object

    asked = []
    special_claim_object = satisfiability.special_claim_object
    monkeypatch.setattr(satisfiability, "special_claim_object",
                        lambda spec, *a, **k: asked.append(spec) or special_claim_object(spec, *a, **k))
    inventory = _inventory(tmp_path, {"a": 2})
    others = "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: o{i}}}\nspec:\n  initContainers:\n"
                     f"  - {{name: i, image: x, resources: {{requests: {{cpu: '1'}}}}}}\n  containers:\n"
                     f"  - {{name: c, image: x, resources: {{limits: {{memory: 1Gi, example.com/fpga: 1}}}}}}\n"
                     for i in range(3))
    asking = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: r}\nspec:\n  initContainers:\n" \
             "  - {name: i, image: x, resources: {requests: {nvidia.com/gpu: 3}}}\n  containers: [{name: c, image: x}]\n"
    found = _unsatisfiable(lint_json, EXTENDED.format(count=1) + others + asking, "--inventory", inventory)
    assert [spec["containers"][0]["name"] for spec in asked] == ["server", "c"]  # the pod p, then r
    assert len(found) == 1 and "extended resources" in found[0][1]
