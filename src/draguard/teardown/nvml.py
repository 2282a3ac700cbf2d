"""NVML as a teardown check reads it: the devices this container sees, and for each one how
many compute processes run on it and how much memory is used.

Through nvidia-ml-py (`pynvml`), imported only when a command needs NVML. In MIG mode the
counts come from the MIG device handles: on the parent GPU's handle the process list needs
privileges a tenant container does not have. NVML reports host PIDs, which mean nothing in the
container's PID namespace, so only counts are compared, never PIDs."""

from __future__ import annotations

from dataclasses import dataclass

#: NVML return codes (their pynvml names) -> the problem class the helper reports
PROBLEM_KINDS = {
    "NVML_ERROR_LIBRARY_NOT_FOUND": "library-missing",
    "NVML_ERROR_DRIVER_NOT_LOADED": "driver-not-loaded",
    "NVML_ERROR_NO_PERMISSION": "no-permission",
    "NVML_ERROR_GPU_IS_LOST": "gpu-lost",
    "NVML_ERROR_IN_USE": "in-use",
    "NVML_ERROR_TIMEOUT": "timeout",
    "NVML_ERROR_NOT_READY": "not-ready",
    "NVML_ERROR_NOT_FOUND": "not-found",
    "NVML_ERROR_NOT_SUPPORTED": "not-supported",
    "NVML_ERROR_FUNCTION_NOT_FOUND": "not-supported",
    "NVML_ERROR_ARGUMENT_VERSION_MISMATCH": "not-supported",
}
#: problems that may clear by themselves: a check retries them until its deadline
TRANSIENT = frozenset({"in-use", "timeout", "not-ready"})


class NvmlProblem(Exception):
    """An NVML call failed; `kind` is one of PROBLEM_KINDS' values, 'nvml-error', or
    'bindings-missing' when nvidia-ml-py itself is not installed."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


@dataclass(frozen=True)
class Device:
    uuid: str
    kind: str  # "gpu" or "mig"
    parent: str | None  # the GPU of a MIG device


@dataclass(frozen=True)
class Sample:
    processes: int
    used: int  # bytes


class Nvml:
    """One initialised NVML session over `lib` (pynvml, or a stand-in with its names)."""

    def __init__(self, lib):
        self.lib = lib

    @classmethod
    def open(cls, lib=None) -> "Nvml":
        if lib is None:
            try:
                import pynvml
            except ImportError as exc:
                raise NvmlProblem("bindings-missing", "the nvidia-ml-py package is not installed "
                                  "(pip install 'draguard[teardown]')") from exc
            lib = pynvml
        session = cls(lib)
        session.call(lib.nvmlInit)
        return session

    def close(self) -> None:
        try:
            self.lib.nvmlShutdown()
        except self.lib.NVMLError:
            pass  # nothing left to release

    def call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self.lib.NVMLError as exc:
            raise self.problem(exc, fn.__name__) from exc

    def problem(self, exc, what: str) -> NvmlProblem:
        code = getattr(exc, "value", None)
        for name, kind in PROBLEM_KINDS.items():
            if getattr(self.lib, name, object()) == code:
                return NvmlProblem(kind, f"{what}: {exc}")
        return NvmlProblem("nvml-error", f"{what}: {exc}")

    def devices(self) -> list[Device]:
        """Every device NVML shows this container: the claim's devices, as the driver
        injected them. A GPU in MIG mode stands for its MIG devices (empty slots skipped)."""
        lib, found = self.lib, []
        for index in range(self.call(lib.nvmlDeviceGetCount)):
            handle = self.call(lib.nvmlDeviceGetHandleByIndex, index)
            uuid = _text(self.call(lib.nvmlDeviceGetUUID, handle))
            if not self._mig_enabled(handle):
                found.append(Device(uuid, "gpu", None))
                continue
            for slot in range(self.call(lib.nvmlDeviceGetMaxMigDeviceCount, handle)):
                try:
                    mig = self.call(lib.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
                except NvmlProblem as problem:
                    if problem.kind in ("not-found", "no-permission"):
                        continue  # an empty slot, or a MIG device this container was not given
                    raise
                found.append(Device(_text(self.call(lib.nvmlDeviceGetUUID, mig)), "mig", uuid))
        return found

    def _mig_enabled(self, handle) -> bool:
        try:
            current, _pending = self.call(self.lib.nvmlDeviceGetMigMode, handle)
        except NvmlProblem as problem:
            if problem.kind == "not-supported":
                return False  # a GPU without MIG
            raise
        return current == self.lib.NVML_DEVICE_MIG_ENABLE

    def memory_version(self, uuid: str) -> str:
        """'v2' where the driver has memory info v2 (`used` without the driver's reserved
        memory), else 'v1'; baseline and verify must read the same one."""
        handle = self.handle(uuid)
        try:
            self.call(self.lib.nvmlDeviceGetMemoryInfo, handle, version=self.lib.nvmlMemory_v2)
        except NvmlProblem as problem:
            if problem.kind == "not-supported":
                return "v1"
            raise
        return "v2"

    def handle(self, uuid: str):
        try:
            return self.call(self.lib.nvmlDeviceGetHandleByUUID, uuid)
        except NvmlProblem as problem:
            if problem.kind == "not-found":
                raise NvmlProblem("device-missing", f"{uuid} is no longer visible to NVML") from problem
            raise

    def sample(self, uuid: str, memory: str) -> Sample:
        handle = self.handle(uuid)
        version = {"version": self.lib.nvmlMemory_v2} if memory == "v2" else {}
        info = self.call(self.lib.nvmlDeviceGetMemoryInfo, handle, **version)
        processes = self.call(self.lib.nvmlDeviceGetComputeRunningProcesses, handle)
        return Sample(len(processes), int(info.used))


def _text(value) -> str:
    """UUIDs come as str from current nvidia-ml-py and as bytes from old releases."""
    return value.decode() if isinstance(value, bytes) else str(value)
