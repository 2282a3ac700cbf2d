"""A simulated NVML for `draguard-teardown --backend fake`: try baseline, sidecar and verify on
a laptop, with no GPU, driver or nvidia-ml-py, against a scripted device timeline.

The timeline is a JSON file (the helper reads nothing but JSON: it imports only the standard
library), or the built-in one below when none is given:

    {"devices": [
      {"uuid": "GPU-...", "baseline": [0, 0],
       "timeline": [[0, 1, 20480], [3, 0, 0]]},
      {"uuid": "GPU-...", "mig": [
        {"uuid": "MIG-...", "baseline": [0, 0], "timeline": [[0, 1, 9000], [2, 0, 0]]}]}
    ]}

`baseline` is [compute processes, used MiB] as `baseline` and `sidecar` record it (before the
workload starts); `timeline` is [[seconds, processes, used MiB], ...] as `verify` sees it, the
seconds counted from the start of verify (the pod's deletion): each entry holds from its time
until the next. A timeline whose last entry never returns to the baseline shows a `held`
verdict at the deadline. A GPU with `mig` stands for its MIG devices, as NVML shows them to a
tenant. Every JSON line the helper prints says `"backend": "fake"`.

It answers the NVML calls the helper makes (nvml.Nvml) under nvidia-ml-py's names, with NVML's
own return codes (nvml.h; a test holds them equal to the bindings')."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

# NVML's return codes and constants, as nvml.h and nvidia-ml-py number them
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_NOT_FOUND = 6
NVML_DEVICE_MIG_DISABLE = 0
NVML_DEVICE_MIG_ENABLE = 1
nvmlMemory_v2 = 0x02000028
MIB = 1 << 20
TOTAL_MIB = 80 * 1024

#: one GPU whose server holds 20 GiB when the pod is deleted and lets it go 3 s later, and one
#: MIG slice released after 2 s: `verify` says `released` after about 3 s
BUILT_IN = {"devices": [
    {"uuid": "GPU-fake-0000-0000-0000-000000000000", "baseline": [0, 0], "timeline": [[0, 1, 20480], [3, 0, 0]]},
    {"uuid": "GPU-fake-0000-0000-0000-000000000001", "mig": [
        {"uuid": "MIG-fake-0000-0000-0000-000000000002", "baseline": [0, 0],
         "timeline": [[0, 1, 9000], [2, 0, 0]]}]},
]}


class NVMLError(Exception):
    """pynvml.NVMLError's shape: the return code in `value`."""

    def __init__(self, value: int):
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return f"NVML error {self.value} (simulated)"


class TimelineError(ValueError):
    """The timeline file is not what this module reads: said with where."""


@dataclass
class FakeDevice:
    uuid: str
    baseline: tuple[int, float] = (0, 0.0)
    timeline: list[tuple[float, int, float]] = field(default_factory=list)
    mig: list["FakeDevice"] | None = None

    @classmethod
    def from_json(cls, data, where: str) -> "FakeDevice":
        if not isinstance(data, dict) or not isinstance(data.get("uuid"), str):
            raise TimelineError(f"{where}: a device is an object with a string uuid")
        mig = data.get("mig")
        if mig is not None and not isinstance(mig, list):
            raise TimelineError(f"{where}.mig: a list of devices")
        return cls(data["uuid"], _pair(data.get("baseline", [0, 0]), f"{where}.baseline"),
                   [_entry(e, f"{where}.timeline[{i}]") for i, e in enumerate(data.get("timeline", []))],
                   None if mig is None else [cls.from_json(d, f"{where}.mig[{i}]") for i, d in enumerate(mig)])

    def state(self, phase: str, elapsed: float) -> tuple[int, float]:
        """(processes, used MiB) at `elapsed` seconds of `phase` ('baseline' or 'verify')."""
        if phase == "baseline" or not self.timeline:
            return self.baseline
        current = self.timeline[0][1:]
        for at, processes, used in self.timeline:
            if at <= elapsed:
                current = (processes, used)
        return current


def _pair(value, where: str) -> tuple[int, float]:
    if not (isinstance(value, list) and len(value) == 2 and all(_number(v) for v in value)):
        raise TimelineError(f"{where}: [processes, used MiB]")
    return int(value[0]), float(value[1])


def _entry(value, where: str) -> tuple[float, int, float]:
    if not (isinstance(value, list) and len(value) == 3 and all(_number(v) for v in value)):
        raise TimelineError(f"{where}: [seconds, processes, used MiB]")
    return float(value[0]), int(value[1]), float(value[2])


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


class _Memory:
    def __init__(self, used_mib: float):
        self.used, self.total = int(used_mib * MIB), TOTAL_MIB * MIB
        self.free = self.total - self.used


class _Process:
    def __init__(self, pid: int):
        self.pid, self.usedGpuMemory = pid, None


class FakeNvml:
    """Module-like, as nvml.Nvml takes `lib`: the devices of a timeline in one phase."""

    NVMLError = NVMLError

    def __init__(self, devices: list[FakeDevice], phase: str, clock=time.monotonic):
        self.devices, self.phase, self.clock = devices, phase, clock
        self.start = clock()
        self.initialised = False

    def __getattr__(self, name):  # the constants, as pynvml exposes them
        value = globals().get(name)
        if name.startswith(("NVML_", "nvmlMemory_")) and value is not None:
            return value
        raise AttributeError(name)

    def _ready(self) -> None:
        if not self.initialised:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)

    def _device(self, handle) -> FakeDevice:
        self._ready()
        if not isinstance(handle, FakeDevice):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return handle

    def _state(self, handle) -> tuple[int, float]:
        device = self._device(handle)
        if device.mig is not None:  # a MIG parent, as a tenant sees it
            raise NVMLError(NVML_ERROR_NO_PERMISSION)
        return device.state(self.phase, self.clock() - self.start)

    def nvmlInit(self):
        self.initialised = True

    def nvmlShutdown(self):
        self.initialised = False

    def nvmlDeviceGetCount(self):
        self._ready()
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index):
        self._ready()
        return self.devices[index]

    def nvmlDeviceGetHandleByUUID(self, uuid):
        self._ready()
        for gpu in self.devices:
            for device in [gpu, *(gpu.mig or ())]:
                if device.uuid == uuid:
                    return device
        raise NVMLError(NVML_ERROR_NOT_FOUND)

    def nvmlDeviceGetUUID(self, handle):
        return self._device(handle).uuid

    def nvmlDeviceGetMigMode(self, device):
        mode = NVML_DEVICE_MIG_ENABLE if self._device(device).mig is not None else NVML_DEVICE_MIG_DISABLE
        return [mode, mode]

    def nvmlDeviceGetMaxMigDeviceCount(self, device):
        return len(self._device(device).mig or ())

    def nvmlDeviceGetMigDeviceHandleByIndex(self, device, index):
        mig = self._device(device).mig
        if mig is None:  # MIG is off on the GPU
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        if not 0 <= index < len(mig):  # no MIG device at the index
            raise NVMLError(NVML_ERROR_NOT_FOUND)
        return mig[index]

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        return _Memory(self._state(handle)[1])

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        return [_Process(4000 + i) for i in range(self._state(handle)[0])]


def load(path: str | None, phase: str, clock=time.monotonic) -> FakeNvml:
    """The fake NVML of the timeline at `path` (None: BUILT_IN) for `phase`; TimelineError,
    naming the file and the place, when it is not a timeline."""
    where = path or "the built-in timeline"
    if path is None:
        data = BUILT_IN
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, UnicodeDecodeError) as exc:
            raise TimelineError(f"{path}: cannot read it ({exc})") from None
        except json.JSONDecodeError as exc:
            raise TimelineError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, list) or not devices:
        raise TimelineError(f"{where}: an object with a non-empty `devices` list")
    return FakeNvml([FakeDevice.from_json(d, f"{where}: devices[{i}]") for i, d in enumerate(devices)], phase, clock)
