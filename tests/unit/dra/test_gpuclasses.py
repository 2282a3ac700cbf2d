"""Is this a GPU class: one answer (dra.gpuclasses.class_drivers, from the selectors' checked AST), whatever asks."""

from __future__ import annotations

import pytest

from draguard.dra.gpuclasses import class_drivers, is_gpu_class
from draguard.model.manifest import Manifest
from draguard.model.objectset import ObjectSet


def _set(expression: str) -> ObjectSet:
    return ObjectSet([Manifest.from_data({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]}})])


@pytest.mark.parametrize("expression, gpu", [
    ("device.driver == 'gpu.nvidia.com'", True),
    ('device.driver == "gpu.amd.com" && device.attributes["gpu.amd.com"].type == "amdgpu"', True),
    ("device.driver != 'gpu.nvidia.com'", False),  # everything but NVIDIA's GPUs
    ("!(device.driver == 'gpu.nvidia.com')", False),
    ("device.attributes['x'].y == \"device.driver == 'gpu.nvidia.com'\"", False),  # a string, not a read
    ("device.attributes['gpu.nvidia.com'].type == 'gpu'", False),  # pins no driver
    ("device.driver == 'dra.net'", False),
])
def test_a_gpu_class_is_one_that_pins_a_gpu_driver(expression, gpu):
    assert is_gpu_class(_set(expression), "c") is gpu
    assert is_gpu_class(_set(expression), "c") == bool({"gpu.nvidia.com", "gpu.amd.com"} & class_drivers([expression]))


def test_built_in_classes_answer_the_same_way():
    assert is_gpu_class(ObjectSet([]), "mig.nvidia.com") and not is_gpu_class(ObjectSet([]), "no-such-class")


def test_a_class_is_read_once_a_run_however_many_pods_ask(monkeypatch):
    """Whether a class is a GPU class depends on the set's DeviceClasses alone: a run reads
    each class's selectors once, not once per pod claim that names it (nine thousand times
    for a handful of classes in a lint of 20,000 objects)."""
    from draguard.core.config import Config
    from draguard.dra import gpuclasses
    from draguard.engine.run import Inputs, Run

    read = []
    selectors = gpuclasses.class_selectors
    monkeypatch.setattr(gpuclasses, "class_selectors", lambda objects, name: read.append(name) or
                        selectors(objects, name))
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com"}}]}}}}
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
             "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                      "containers": [{"name": "app", "image": "vllm/vllm-openai",
                                      "resources": {"claims": [{"name": "gpu"}]}}]}} for i in range(5)]
    result = Run(Config(), Inputs.objects([template, *pods])).findings()
    assert {f.obj.name for f in result.findings if f.rule == "teardown-prestop"} == {f"p{i}" for i in range(5)}
    assert read.count("gpu.nvidia.com") == 1


def test_a_pod_without_claims_uses_a_gpu_without_a_claim_lookup(monkeypatch):
    """uses_gpu of a pod with no pod claims (most pods of a large lint) reads its containers
    only: no claim lookup, nothing kept in the set; a pod with a GPU claim is still found by it."""
    from draguard.dra import gpuclasses
    from draguard.model.pods import pod_sites

    asked = []
    real = gpuclasses.gpu_claim_entries
    monkeypatch.setattr(gpuclasses, "gpu_claim_entries", lambda site, objects: asked.append(site) or real(site, objects))
    legacy = Manifest.from_data({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy"}, "spec": {
        "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}})
    plain = Manifest.from_data({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}})
    claimed = Manifest.from_data({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "claimed"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],
        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}})
    gpu_claim = Manifest.from_data({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                    "metadata": {"name": "gpu"}, "spec": {"devices": {"requests": [
                                        {"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}})
    objects = ObjectSet([legacy, plain, claimed, gpu_claim])
    assert [gpuclasses.uses_gpu(pod_sites(pod)[0], objects) for pod in (legacy, plain, claimed)] == [True, False, True]
    assert [site.owner.name for site in asked] == ["claimed"]
