"""verify: poll the baseline's devices until no compute process runs on them and used memory
is back within a tolerance of the baseline, or a deadline passes. One verdict, as data:

- `released` (exit 0): every device is back to its baseline;
- `held` (exit 1): at the deadline something is still there: which device, how many
  processes, how much memory above the baseline;
- `cannot-verify` (exit 3): NVML failed in a way that does not clear (library missing, GPU
  lost, no permission, a device gone), or a transient failure outlasted the deadline;
- `ambiguous` (exit 4): the device is shared (processes before the workload started, MPS),
  so counts cannot be attributed to this pod: said, not guessed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .baseline import Baseline
from .nvml import Nvml, NvmlProblem

EXIT = {"released": 0, "held": 1, "cannot-verify": 3, "ambiguous": 4}
MIB = 1 << 20


@dataclass
class Verdict:
    verdict: str
    elapsed: float
    devices: list[dict] = field(default_factory=list)
    reason: str = ""
    problem: str | None = None  # the NVML problem class, for cannot-verify

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]

    def to_json(self) -> dict:
        out = {"step": "verify", "verdict": self.verdict, "elapsedSeconds": round(self.elapsed, 3),
               "devices": self.devices}
        if self.reason:
            out["reason"] = self.reason
        if self.problem:
            out["problem"] = self.problem
        return out


def verify(nvml: Nvml, baseline: Baseline, timeout: float, interval: float = 0.5, tolerance_mib: float = 64,
           clock=time.monotonic, sleep=time.sleep) -> Verdict:
    start = clock()
    if baseline.shared:
        try:
            rows = _rows(nvml, baseline)
        except NvmlProblem:
            rows = []  # the verdict stands without the counts
        return Verdict("ambiguous", clock() - start, rows, reason=baseline.shared)
    while True:
        reading: list[dict] | NvmlProblem  # the devices' rows, or the transient problem that stopped the count
        try:
            reading = _rows(nvml, baseline)
        except NvmlProblem as problem:
            if not problem.transient:
                return Verdict("cannot-verify", clock() - start, reason=str(problem), problem=problem.kind)
            reading = problem
        late = clock() - start >= timeout
        if isinstance(reading, NvmlProblem):
            if late:
                return Verdict("cannot-verify", clock() - start, reason=f"still failing at the deadline: {reading}",
                               problem=reading.kind)
        else:
            held = [row for row in reading if row["processes"] or row["usedAboveBaselineMiB"] > tolerance_mib]
            if not held:
                return Verdict("released", clock() - start, reading)
            if late:
                return Verdict("held", clock() - start, reading, reason=_held_reason(held, tolerance_mib, timeout))
        sleep(interval)


def _rows(nvml: Nvml, baseline: Baseline) -> list[dict]:
    rows = []
    for device in baseline.devices:
        sample = nvml.sample(device.uuid, baseline.memory)
        rows.append({"uuid": device.uuid, "kind": device.kind, "processes": sample.processes,
                     "baselineProcesses": device.processes,
                     "usedAboveBaselineMiB": round((sample.used - device.used) / MIB, 1)})
    return rows


def _held_reason(held: list[dict], tolerance_mib: float, timeout: float) -> str:
    parts = []
    for row in held:
        what = []
        if row["processes"]:
            what.append(f"{row['processes']} compute process(es)")
        if row["usedAboveBaselineMiB"] > tolerance_mib:
            what.append(f"{row['usedAboveBaselineMiB']:g} MiB above the baseline (tolerance {tolerance_mib:g})")
        parts.append(f"{row['uuid']}: {' and '.join(what)}")
    return f"still held after {timeout:g} s: " + "; ".join(parts)
