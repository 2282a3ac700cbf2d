"""The NVML adapter over the fake bindings: which devices a container sees (GPUs, MIG devices
with empty and closed slots), memory info v2 with the v1 fallback, the error classes; and the
fake itself held to the real nvidia-ml-py's names and signatures."""

from __future__ import annotations

import inspect

import pynvml
import pytest

from draguard.teardown.nvml import Nvml, NvmlProblem
from support.fake_nvml import CLOSED, EMPTY, MIB, FakeDevice, FakeNvml


def session(*gpus, **kwargs) -> Nvml:
    return Nvml.open(FakeNvml(list(gpus), **kwargs))


def test_the_fake_answers_with_the_real_bindings_names_and_parameters():
    for name, member in inspect.getmembers(FakeNvml, inspect.isfunction):
        if name.startswith("nvml"):
            real = getattr(pynvml, name)
            assert list(inspect.signature(member).parameters)[1:] == list(inspect.signature(real).parameters), name


def test_full_gpus_are_devices_and_a_mig_gpu_stands_for_its_mig_devices():
    mig_a, mig_b = FakeDevice("MIG-a"), FakeDevice("MIG-b")
    nvml = session(FakeDevice("GPU-0"), FakeDevice("GPU-1", mig=[EMPTY, mig_a, CLOSED, mig_b]),
                   FakeDevice("GPU-2", mig_capable=False))
    assert [(d.uuid, d.kind, d.parent) for d in nvml.devices()] == [
        ("GPU-0", "gpu", None), ("MIG-a", "mig", "GPU-1"), ("MIG-b", "mig", "GPU-1"), ("GPU-2", "gpu", None)]


def test_mig_devices_are_sampled_on_their_own_handles_never_the_parent():
    lib = FakeNvml([FakeDevice("GPU-1", mig=[FakeDevice("MIG-a", script=[(2, 5000)])])])
    nvml = Nvml.open(lib)
    sample = nvml.sample("MIG-a", "v2")
    assert (sample.processes, sample.used) == (2, 5000 * MIB)
    with pytest.raises(NvmlProblem) as parent:  # what a tenant gets on the parent
        nvml.sample("GPU-1", "v2")
    assert parent.value.kind == "no-permission"


def test_memory_v2_where_the_driver_has_it_else_v1_which_counts_reserved_memory():
    device = FakeDevice("GPU-0", script=[(0, 100)], reserved_mib=300)
    assert session(device).memory_version("GPU-0") == "v2"
    old_driver = session(FakeDevice("GPU-0", script=[(0, 100)]), v2=False)
    assert old_driver.memory_version("GPU-0") == "v1"
    assert old_driver.sample("GPU-0", "v1").used == 400 * MIB


@pytest.mark.parametrize("code,kind,transient", [
    ("NVML_ERROR_LIBRARY_NOT_FOUND", "library-missing", False),
    ("NVML_ERROR_DRIVER_NOT_LOADED", "driver-not-loaded", False),
    ("NVML_ERROR_GPU_IS_LOST", "gpu-lost", False),
    ("NVML_ERROR_NO_PERMISSION", "no-permission", False),
    ("NVML_ERROR_IN_USE", "in-use", True),
    ("NVML_ERROR_TIMEOUT", "timeout", True),
    ("NVML_ERROR_UNKNOWN", "nvml-error", False),
])
def test_every_nvml_failure_has_a_class(code, kind, transient):
    with pytest.raises(NvmlProblem) as caught:
        session(FakeDevice("GPU-0"), fail={"nvmlDeviceGetComputeRunningProcesses": [code]}).sample("GPU-0", "v2")
    assert (caught.value.kind, caught.value.transient) == (kind, transient)


def test_a_device_that_went_away_is_device_missing():
    with pytest.raises(NvmlProblem) as caught:
        session(FakeDevice("GPU-0")).sample("GPU-9", "v2")
    assert caught.value.kind == "device-missing"


def test_the_real_bindings_on_a_machine_without_a_driver_report_the_library_missing():
    try:
        nvml = Nvml.open()
    except NvmlProblem as problem:
        assert problem.kind in ("library-missing", "driver-not-loaded")
    else:  # a GPU machine: the real library answers
        nvml.close()
        pytest.skip("NVML is present here")
