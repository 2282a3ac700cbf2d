"""A `pynvml` module for draguard-teardown run as a command in tests: put this folder first on
PYTHONPATH and name a scenario file in FAKE_NVML_SCENARIO ({"gpus": [...], "fail": {...},
"v2": true}, see fake_nvml.FakeDevice.from_json). Error class and constants stay the real
bindings'."""

import importlib.machinery
import importlib.util
import json
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec("pynvml", [p for p in sys.path if os.path.abspath(p or ".") != _here])
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
sys.modules["_real_pynvml"] = _real

from support.fake_nvml import FakeDevice, FakeNvml  # noqa: E402  (needs _real_pynvml first)

with open(os.environ["FAKE_NVML_SCENARIO"]) as _handle:
    _scenario = json.load(_handle)
_fake = FakeNvml([FakeDevice.from_json(g) for g in _scenario["gpus"]], _scenario.get("fail"), _scenario.get("v2", True))
NVMLError = _real.NVMLError


def __getattr__(name):
    if name.startswith("nvml") and not name.startswith("nvmlMemory"):
        return getattr(_fake, name)
    return getattr(_real, name)
