from fractions import Fraction

import pytest

from draguard.dra.celenv import (CelRuntimeError, MAX_EXPRESSION_LENGTH, compile_selector, rewrite_device_fields,
                                 suggest)
from draguard.dra.devices import Attr, Device

NV = "gpu.nvidia.com"


def gpu(**attrs) -> Device:
    values = {"type": Attr("string", "gpu"), "productName": Attr("string", "NVIDIA H100 80GB HBM3"),
              "cudaComputeCapability": Attr("version", "9.0.0")}
    values.update(attrs)
    return Device("gpu-0", NV, "node-a", {NV: values}, {NV: {"memory": Fraction(80 * 2**30)}})


@pytest.mark.parametrize("expression, expected", [
    ("device.driver == 'gpu.nvidia.com'", True),
    ("device.attributes['gpu.nvidia.com'].type == 'gpu'", True),
    ('device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100")', True),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", True),
    ("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('80Gi'))", False),
    ("device.capacity['gpu.nvidia.com'].memory == quantity('81920Mi')", True),
    ("device.capacity['gpu.nvidia.com'].memory.asInteger() == 85899345920", True),
    ("quantity('1') == quantity('1000m') && quantity('1.5').isInteger() == false", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.major() == 9", True),
    ("semver('v1.2', true) == semver('1.2.0')", True),
    ("cel.bind(g, device.attributes['gpu.nvidia.com'], g.type == 'gpu' && g.productName.startsWith('NVIDIA'))", True),
    ("'a100-x'.find('a[0-9]+') == 'a100'", True),
    ("has(device.attributes['gpu.nvidia.com'].profile)", False),
    ("device.allowMultipleAllocations == false", True),
])
def test_upstream_environment(expression, expected):
    compiled = compile_selector(expression)
    assert compiled.error is None, compiled.error
    assert compiled.matches(gpu()) is expected


def test_unknown_domain_is_an_empty_map_so_missing_names_are_runtime_errors():
    compiled = compile_selector("device.attributes['other.example.com'].model == 'x'")
    with pytest.raises(CelRuntimeError, match="not found"):
        compiled.matches(gpu())
    assert compile_selector("device.attributes['other.example.com'].size() == 0").matches(gpu())


@pytest.mark.parametrize("expression, message, offset", [
    ("device.attributes['gpu.nvidia.com'].memory >= 40Gi", "Syntax error", 48),
    ("device.capacity['gpu.nvidia.com'].memory >= 40", "no matching overload", 41),
    ("device.driver", "must evaluate to bool", 0),
    ("device.drivr == 'x'", "undefined field", 6),
])
def test_compile_errors_with_offsets(expression, message, offset):
    error = compile_selector(expression).error
    assert error is not None and message in error.message and error.offset == offset


def test_suggestion_for_sizes_without_quantity():
    assert suggest("device.attributes['gpu.nvidia.com'].memory >= 40Gi") == \
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    fixed = compile_selector(suggest("device.attributes['gpu.nvidia.com'].memory >= 40Gi"))
    assert fixed.error is None and fixed.matches(gpu())


def test_length_limit():
    long = "device.driver == '" + "x" * MAX_EXPRESSION_LENGTH + "'"
    assert "limit" in compile_selector(long).error.message


def test_non_bool_dyn_result_is_a_runtime_error_not_a_crash():
    compiled = compile_selector("device.attributes['gpu.nvidia.com'].productName")
    assert compiled.error is None  # dyn: only known at run time, as upstream
    with pytest.raises(CelRuntimeError, match="must evaluate to bool"):
        compiled.matches(gpu())


def test_rewrite_keeps_strings_and_lengths():
    expression = "device.driver == 'device.driver' && device . attributes['x'].y"
    rewritten = rewrite_device_fields(expression)
    assert len(rewritten) == len(expression)
    assert rewritten.startswith("device_driver == 'device.driver'") and "device_attributes" in rewritten


def test_results_are_memoized_by_the_values_read():
    compiled = compile_selector("device.attributes['gpu.nvidia.com'].type == 'gpu' && true")
    devices = [gpu(uuid=Attr("string", f"GPU-{i}")) for i in range(50)]
    assert all(compiled.matches(d) for d in devices)
    assert len(compiled._memo) == 1  # uuid is not read: one evaluation for 50 devices
