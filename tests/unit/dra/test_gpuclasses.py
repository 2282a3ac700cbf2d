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
