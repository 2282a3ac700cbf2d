"""The baseline: what the claim's devices looked like before the workload started (their
UUIDs, compute-process counts and used memory), kept in a small JSON file that `verify`
compares against at teardown."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass

from .nvml import Nvml

FORMAT = 1
DEFAULT_PATH = os.environ.get("DRAGUARD_TEARDOWN_STATE", "/tmp/draguard-teardown/baseline.json")


@dataclass(frozen=True)
class DeviceBaseline:
    uuid: str
    kind: str
    parent: str | None
    processes: int
    used: int


@dataclass(frozen=True)
class Baseline:
    devices: tuple[DeviceBaseline, ...]
    memory: str  # the NVML memory-info version both sides read
    shared: str | None  # why process counts cannot be attributed to this pod, or None
    recorded_at: float

    def to_json(self) -> dict:
        return {"format": FORMAT, "recordedAt": self.recorded_at, "memory": self.memory, "shared": self.shared,
                "devices": [asdict(d) for d in self.devices]}

    @classmethod
    def from_json(cls, data: dict) -> "Baseline":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a draguard-teardown baseline (format {FORMAT})")
        devices = tuple(DeviceBaseline(**d) for d in data["devices"])
        return cls(devices, data["memory"], data.get("shared"), float(data["recordedAt"]))


def record(nvml: Nvml, only: list[str] | None = None, shared: str | None = None) -> Baseline:
    """Read every device this container sees (or only the UUIDs given). Processes already
    running at this point belong to someone else (the baseline is taken before the workload
    starts), so the device is shared and counts at teardown cannot be attributed."""
    devices = [d for d in nvml.devices() if not only or d.uuid in only]
    missing = sorted(set(only or ()) - {d.uuid for d in devices})
    if missing:
        raise ValueError(f"NVML does not show {', '.join(missing)} in this container")
    if not devices:
        raise ValueError("NVML shows no device in this container: does it list the claim in "
                         "resources.claims?")
    memory = nvml.memory_version(devices[0].uuid)
    rows = []
    for device in devices:
        sample = nvml.sample(device.uuid, memory)
        rows.append(DeviceBaseline(device.uuid, device.kind, device.parent, sample.processes, sample.used))
    busy = [row.uuid for row in rows if row.processes]
    if busy and shared is None:
        shared = (f"compute processes were already running on {', '.join(busy)} when the baseline was "
                  "recorded: another container or tenant uses the device (time-slicing, MPS)")
    if shared is None and os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        shared = "CUDA_MPS_PIPE_DIRECTORY is set: the device is shared through MPS"
    return Baseline(tuple(rows), memory, shared, time.time())


def save(baseline: Baseline, path: str) -> None:
    """Write atomically (temp file + rename beside it), creating the folder."""
    import tempfile  # only here: it costs the other commands 5 ms of start-up

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".baseline-", dir=folder)
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(baseline.to_json(), handle)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def load(path: str) -> Baseline:
    with open(path) as handle:
        return Baseline.from_json(json.load(handle))
