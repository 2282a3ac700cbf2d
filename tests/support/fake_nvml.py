"""A fake NVML with pynvml's names, for testing draguard-teardown without a GPU.

It raises the real `pynvml.NVMLError` with the real return codes and answers the calls the
helper makes, with the signatures nvidia-ml-py has (a test compares them). What it covers:
GPUs with and without MIG, MIG slots that are empty or closed to this container, a parent GPU
whose process list needs privileges in MIG mode, process lists and memory that change from one
call to the next, memory info v1 (used includes reserved) and v2, and any call failing with
any code, once, several times or for good."""

from __future__ import annotations

from dataclasses import dataclass, field

try:  # the real bindings, registered under this name when a fake `pynvml` shadows them
    import _real_pynvml as pynvml
except ImportError:
    import pynvml

MIB = 1 << 20
EMPTY = "empty"  # a MIG slot with no device
CLOSED = "closed"  # a MIG slot this container may not open


@dataclass
class FakeDevice:
    uuid: str
    #: (compute processes, used MiB) per sample: each process-list call moves one step on;
    #: the last step stays
    script: list[tuple[int, float]] = field(default_factory=lambda: [(0, 0)])
    reserved_mib: float = 300  # memory v1 counts it as used, v2 does not
    mig: list | None = None  # None: no MIG; a list of FakeDevice / EMPTY / CLOSED slots: MIG enabled
    mig_capable: bool = True  # False: nvmlDeviceGetMigMode is NOT_SUPPORTED
    step: int = 0

    @classmethod
    def from_json(cls, data: dict) -> "FakeDevice":
        """{"uuid", "script": [[processes, usedMiB], ...], "mig": [slot, ...] | null, ...}"""
        mig = data.get("mig")
        slots = None if mig is None else [s if isinstance(s, str) else cls.from_json(s) for s in mig]
        return cls(data["uuid"], [tuple(step) for step in data.get("script", [[0, 0]])],
                   data.get("reservedMiB", 300), slots, data.get("migCapable", True))

    def state(self) -> tuple[int, float]:
        return self.script[min(self.step, len(self.script) - 1)]


class _Memory:
    def __init__(self, used: int, total: int):
        self.used, self.total, self.free = used, total, total - used


class _Process:
    def __init__(self, pid: int):
        self.pid, self.usedGpuMemory = pid, None


class FakeNvml:
    """Module-like: pass it where the helper takes `lib` (nvml.Nvml(lib))."""

    NVMLError = pynvml.NVMLError

    def __init__(self, gpus: list[FakeDevice], fail: dict[str, list] | None = None, v2: bool = True):
        self.gpus, self.v2 = gpus, v2
        #: call name -> codes for its successive calls (None: succeed); the last one stays
        self.fail = {name: list(codes) for name, codes in (fail or {}).items()}
        self.calls: list[str] = []
        self.initialised = False

    def __getattr__(self, name):  # constants (NVML_ERROR_*, nvmlMemory_v2, ...) are pynvml's own
        if name.startswith(("NVML_", "nvmlMemory_")):
            return getattr(pynvml, name)
        raise AttributeError(name)

    def _enter(self, name: str) -> None:
        self.calls.append(name)
        codes = self.fail.get(name)
        if codes:
            code = codes.pop(0) if len(codes) > 1 else codes[0]
            if code is not None:
                raise pynvml.NVMLError(getattr(pynvml, code) if isinstance(code, str) else code)
        if name not in ("nvmlInit", "nvmlShutdown") and not self.initialised:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNINITIALIZED)

    def _all(self):
        for gpu in self.gpus:
            yield gpu
            for slot in gpu.mig or ():
                if isinstance(slot, FakeDevice):
                    yield slot

    def _device(self, handle) -> FakeDevice:
        if not isinstance(handle, FakeDevice):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return handle

    # the calls, with nvidia-ml-py's parameter names
    def nvmlInit(self):
        self._enter("nvmlInit")
        self.initialised = True

    def nvmlShutdown(self):
        self._enter("nvmlShutdown")
        self.initialised = False

    def nvmlDeviceGetCount(self):
        self._enter("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        self._enter("nvmlDeviceGetHandleByIndex")
        return self.gpus[index]

    def nvmlDeviceGetHandleByUUID(self, uuid):
        self._enter("nvmlDeviceGetHandleByUUID")
        for device in self._all():
            if device.uuid == uuid:
                return device
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)

    def nvmlDeviceGetUUID(self, handle):
        self._enter("nvmlDeviceGetUUID")
        return self._device(handle).uuid

    def nvmlDeviceGetMigMode(self, device):
        self._enter("nvmlDeviceGetMigMode")
        gpu = self._device(device)
        if not gpu.mig_capable:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        mode = pynvml.NVML_DEVICE_MIG_ENABLE if gpu.mig is not None else pynvml.NVML_DEVICE_MIG_DISABLE
        return [mode, mode]

    def nvmlDeviceGetMaxMigDeviceCount(self, device):
        self._enter("nvmlDeviceGetMaxMigDeviceCount")
        return len(self._device(device).mig or ())

    def nvmlDeviceGetMigDeviceHandleByIndex(self, device, index):
        self._enter("nvmlDeviceGetMigDeviceHandleByIndex")
        slot = self._device(device).mig[index]
        if slot == EMPTY:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        if slot == CLOSED:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION)
        return slot

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        self._enter("nvmlDeviceGetMemoryInfo")
        device = self._device(handle)
        if device.mig is not None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION)  # a MIG parent, as a tenant sees it
        if version is not None and not self.v2:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        _, used = device.state()
        reserved = 0 if version is not None else device.reserved_mib
        return _Memory(int((used + reserved) * MIB), 80 * 1024 * MIB)

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        self._enter("nvmlDeviceGetComputeRunningProcesses")
        device = self._device(handle)
        if device.mig is not None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION)
        count, _ = device.state()
        device.step += 1
        return [_Process(4000 + i) for i in range(count)]
