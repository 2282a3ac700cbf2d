"""`draguard-teardown --backend fake`: the helper tried without a GPU, a driver or
nvidia-ml-py, against a scripted device timeline. Run as a user would, in a fresh interpreter
with site-packages off (nothing but the standard library and draguard's src): baseline, then
verify sees the devices held and then released (or held to the deadline); every line says it
was simulated; a broken timeline is a usage error naming where, never a traceback. The fake's
NVML codes are the real bindings'."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from draguard.teardown import fake
from draguard.teardown.nvml import Nvml
from support.paths import ROOT


def helper(*argv):
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-S", "-m", "draguard.teardown.cli", *map(str, argv)], capture_output=True,
                          text=True, env=env, timeout=60)


def last(done) -> dict:
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_baseline_then_verify_released_once_the_timeline_lets_go(tmp_path):
    timeline = tmp_path / "timeline.json"
    timeline.write_text(json.dumps({"devices": [{"uuid": "GPU-a", "baseline": [0, 0],
                                                 "timeline": [[0, 1, 8192], [0.6, 0, 10]]}]}))
    state = tmp_path / "baseline.json"
    recorded = helper("baseline", "--backend", "fake", "--timeline", timeline, "--state", state)
    assert recorded.returncode == 0 and last(recorded)["backend"] == "fake", recorded.stderr
    verified = helper("verify", "--backend", "fake", "--timeline", timeline, "--state", state, "--timeout", "10",
                      "--interval", "0.1")
    verdict = last(verified)
    assert verified.returncode == 0 and verdict["verdict"] == "released" and verdict["backend"] == "fake"
    assert 0.5 <= verdict["elapsedSeconds"] < 5  # it waited for the release, not longer


def test_a_device_that_is_never_released_is_held_at_the_deadline(tmp_path):
    timeline = tmp_path / "timeline.json"
    timeline.write_text(json.dumps({"devices": [{"uuid": "GPU-a", "timeline": [[0, 1, 4096]]}]}))
    state = tmp_path / "baseline.json"
    assert helper("baseline", "--backend", "fake", "--timeline", timeline, "--state", state).returncode == 0
    held = helper("verify", "--backend", "fake", "--timeline", timeline, "--state", state, "--timeout", "0.5")
    assert held.returncode == 1 and last(held)["verdict"] == "held" and "GPU-a: 1 compute process" in last(held)["reason"]


def test_the_documented_timeline_shows_mig_devices_and_a_staged_release(tmp_path):
    """deploy/teardown/fake-timeline.json, as the docs run it: the MIG parent stands for its
    slices, and the GPU's two processes leave in two steps."""
    clock = [0.0]
    lib = fake.load(str(ROOT / "deploy" / "teardown" / "fake-timeline.json"), "verify", clock=lambda: clock[0])
    nvml = Nvml.open(lib)
    assert [(d.kind, d.uuid[-1]) for d in nvml.devices()] == [("gpu", "0"), ("mig", "2"), ("mig", "3")]
    gpu = "GPU-fake-0000-0000-0000-000000000000"
    seen = []
    for clock[0] in (0, 5, 7):
        sample = nvml.sample(gpu, "v2")
        seen.append((sample.processes, sample.used >> 20))
    assert seen == [(2, 30720), (1, 12000), (0, 0)]


def test_the_built_in_timeline_is_released_in_three_seconds():
    clock = [0.0]
    nvml = Nvml.open(fake.load(None, "verify", clock=lambda: clock[0]))
    uuids = [d.uuid for d in nvml.devices()]
    assert [nvml.sample(u, "v2").processes for u in uuids] == [1, 1]
    clock[0] = 3.0
    assert [nvml.sample(u, "v2").processes for u in uuids] == [0, 0]


@pytest.mark.parametrize("text, where", [
    ('{"devices": [{"uuid": "GPU-a", "timeline": [[0, 1]]}]}', "devices[0].timeline[0]: [seconds, processes, used MiB]"),
    ('{"devices": []}', "an object with a non-empty `devices` list"),
    ('{"devices": [\n  {"uuid": }]}', ":2:12: not JSON"),
    ('{"devices": [{"uuid": "G", "baseline": [-1, 0]}]}', "devices[0].baseline: [processes, used MiB]"),
])
def test_a_broken_timeline_is_refused_saying_where(tmp_path, text, where):
    timeline = tmp_path / "timeline.json"
    timeline.write_text(text)
    done = helper("baseline", "--backend", "fake", "--timeline", timeline, "--state", tmp_path / "b.json")
    assert done.returncode == 2 and f"{timeline}" in done.stderr and where in done.stderr
    assert "Traceback" not in done.stderr


def test_a_timeline_without_the_fake_backend_is_refused(tmp_path):
    done = helper("verify", "--timeline", tmp_path / "t.json", "--timeout", "1")
    assert done.returncode == 2 and "give it with --backend fake" in done.stderr


def test_the_fake_s_nvml_codes_are_the_bindings():
    pynvml = pytest.importorskip("pynvml")
    names = [n for n in vars(fake) if n.startswith(("NVML_", "nvmlMemory_"))]
    assert len(names) >= 8 and all(getattr(fake, n) == getattr(pynvml, n) for n in names)


def test_a_mig_handle_the_gpu_does_not_have_is_an_nvml_error_as_the_bindings_raise():
    nvml = fake.FakeNvml([fake.FakeDevice("GPU-a"), fake.FakeDevice("GPU-b", mig=[fake.FakeDevice("MIG-b0")])], "verify")
    nvml.nvmlInit()
    plain, parted = nvml.nvmlDeviceGetHandleByIndex(0), nvml.nvmlDeviceGetHandleByIndex(1)
    assert nvml.nvmlDeviceGetMigDeviceHandleByIndex(parted, 0).uuid == "MIG-b0"
    for handle, index, code in [(plain, 0, fake.NVML_ERROR_NOT_SUPPORTED), (parted, 1, fake.NVML_ERROR_NOT_FOUND),
                                (parted, -1, fake.NVML_ERROR_NOT_FOUND)]:
        with pytest.raises(fake.NVMLError) as raised:
            nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, index)
        assert raised.value.value == code
