"""harness/gpu/check.sh, the real-GPU check, skips cleanly where there is no GPU (the suite
never needs one); on a GPU machine run it by hand (docs/teardown.md)."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys

import pytest

from draguard.teardown.nvml import Nvml, NvmlProblem
from support.paths import ROOT


def test_the_gpu_check_skips_cleanly_without_a_gpu():
    try:
        Nvml.open().close()
    except NvmlProblem:
        pass
    else:
        pytest.skip("NVML works here: run harness/gpu/check.sh itself")
    done = subprocess.run([str(ROOT / "harness" / "gpu" / "check.sh")], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable})
    assert done.returncode == 0 and done.stdout.startswith("SKIP: "), done.stdout + done.stderr


def test_the_holder_says_why_without_libcuda():
    if ctypes.util.find_library("cuda"):
        pytest.skip("libcuda is present here: the holder would hold")
    done = subprocess.run([sys.executable, str(ROOT / "harness" / "gpu" / "cuda_hold.py")], capture_output=True,
                          text=True, timeout=60)
    assert "cuda_hold: no libcuda" in done.stderr and "Traceback" not in done.stderr
