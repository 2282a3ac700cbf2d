"""Every verdict of verify, on the fake NVML with a fake clock: released (at once, and after
processes exit and memory returns over several polls), held (a process that never exits,
memory that never returns), cannot-verify (GPU lost, a device gone, a transient failure that
outlasts the deadline), and ambiguous (a shared device)."""

from __future__ import annotations

import pytest

from draguard.teardown.baseline import record
from draguard.teardown.nvml import Nvml
from draguard.teardown.verify import verify
from support.fake_nvml import MIB, FakeDevice, FakeNvml


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def run(devices, scripts, timeout=10.0, fail=None, tolerance=64, **record_args):
    """Record the baseline on `devices` (their first step), then play `scripts` from the next
    call on and verify."""
    lib = FakeNvml(devices)
    nvml = Nvml.open(lib)
    baseline = record(nvml, **record_args)
    for device, script in zip(devices, scripts):
        device.script, device.step = script, 0
    lib.fail = {name: list(codes) for name, codes in (fail or {}).items()}
    clock = Clock()
    verdict = verify(nvml, baseline, timeout, interval=1.0, tolerance_mib=tolerance, clock=clock, sleep=clock.sleep)
    return verdict, clock.now, lib


def test_released_at_once_when_nothing_runs_and_memory_is_back():
    verdict, elapsed, _ = run([FakeDevice("GPU-0", script=[(0, 500)])], [[(0, 520)]])
    assert (verdict.verdict, verdict.exit_code, elapsed) == ("released", 0, 0)
    assert verdict.to_json()["devices"][0]["usedAboveBaselineMiB"] == 20


def test_released_once_the_process_list_empties_and_memory_returns_over_several_polls():
    scripts = [[(2, 70000), (1, 40000), (0, 9000), (0, 540)]]
    verdict, elapsed, _ = run([FakeDevice("GPU-0", script=[(0, 500)])], scripts)
    assert verdict.verdict == "released" and elapsed == 3.0


def test_held_when_a_process_never_exits():
    verdict, elapsed, _ = run([FakeDevice("GPU-0", script=[(0, 500)])], [[(1, 70000)]], timeout=5)
    assert (verdict.verdict, verdict.exit_code) == ("held", 1)
    assert elapsed == 5.0
    assert "GPU-0: 1 compute process(es)" in verdict.reason


def test_held_when_memory_never_returns_although_no_process_runs():
    verdict, _, _ = run([FakeDevice("GPU-0", script=[(0, 500)])], [[(0, 2548)]], timeout=3)
    assert verdict.verdict == "held"
    assert "2048 MiB above the baseline (tolerance 64)" in verdict.reason


def test_only_the_mig_device_that_still_holds_is_named():
    a, b = FakeDevice("MIG-a", script=[(0, 10)]), FakeDevice("MIG-b", script=[(0, 10)])
    verdict, _, lib = run([a, b], [[(0, 12)], [(1, 9000)]], timeout=2)
    assert verdict.verdict == "held" and "MIG-b" in verdict.reason and "MIG-a" not in verdict.reason


def test_a_mig_gpu_is_verified_without_touching_the_parent_handle():
    mig = FakeDevice("MIG-a", script=[(0, 10)])
    lib = FakeNvml([FakeDevice("GPU-1", mig=[mig])])
    nvml = Nvml.open(lib)
    baseline = record(nvml)
    mig.script, mig.step = [(1, 4000), (0, 11)], 0
    clock = Clock()
    verdict = verify(nvml, baseline, 10, interval=1, clock=clock, sleep=clock.sleep)
    assert verdict.verdict == "released" and [d.uuid for d in baseline.devices] == ["MIG-a"]


def test_a_transient_failure_is_retried_until_it_clears():
    fail = {"nvmlDeviceGetComputeRunningProcesses": ["NVML_ERROR_TIMEOUT", "NVML_ERROR_IN_USE", None]}
    verdict, elapsed, _ = run([FakeDevice("GPU-0")], [[(0, 0)]], fail=fail)
    assert verdict.verdict == "released" and elapsed == 2.0


def test_a_transient_failure_that_outlasts_the_deadline_cannot_verify():
    fail = {"nvmlDeviceGetComputeRunningProcesses": ["NVML_ERROR_IN_USE"]}
    verdict, _, _ = run([FakeDevice("GPU-0")], [[(0, 0)]], timeout=3, fail=fail)
    assert (verdict.verdict, verdict.problem, verdict.exit_code) == ("cannot-verify", "in-use", 3)


@pytest.mark.parametrize("call,code,kind", [
    ("nvmlDeviceGetMemoryInfo", "NVML_ERROR_GPU_IS_LOST", "gpu-lost"),
    ("nvmlDeviceGetHandleByUUID", "NVML_ERROR_NOT_FOUND", "device-missing"),
    ("nvmlDeviceGetComputeRunningProcesses", "NVML_ERROR_NO_PERMISSION", "no-permission"),
])
def test_a_lasting_failure_cannot_verify_at_once(call, code, kind):
    verdict, elapsed, _ = run([FakeDevice("GPU-0")], [[(1, 0)]], fail={call: [code]})
    assert (verdict.verdict, verdict.problem, elapsed) == ("cannot-verify", kind, 0)


def test_processes_before_the_workload_make_the_device_shared_and_the_verdict_ambiguous():
    verdict, _, _ = run([FakeDevice("GPU-0", script=[(1, 3000)])], [[(1, 3000)]])
    assert (verdict.verdict, verdict.exit_code) == ("ambiguous", 4)
    assert "already running on GPU-0" in verdict.reason


def test_mps_makes_the_verdict_ambiguous(monkeypatch):
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
    verdict, _, _ = run([FakeDevice("GPU-0")], [[(0, 0)]])
    assert verdict.verdict == "ambiguous" and "MPS" in verdict.reason


def test_baseline_refuses_a_container_that_sees_no_device_or_not_the_one_named():
    with pytest.raises(ValueError, match="resources.claims"):
        record(Nvml.open(FakeNvml([])))
    with pytest.raises(ValueError, match="GPU-7"):
        record(Nvml.open(FakeNvml([FakeDevice("GPU-0")])), only=["GPU-7"])


def test_memory_v1_baselines_are_compared_in_v1():
    devices = [FakeDevice("GPU-0", script=[(0, 100)], reserved_mib=300)]
    lib = FakeNvml(devices, v2=False)
    baseline = record(Nvml.open(lib))
    assert baseline.memory == "v1" and baseline.devices[0].used == 400 * MIB
