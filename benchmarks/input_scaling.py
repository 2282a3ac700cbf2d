"""Time and peak memory of `draguard lint` as one input grows, in the four shapes a cluster
hands out: a multi-document YAML stream, a pretty-printed JSON List, the same List minified
to one line (`kubectl get -o json | jq -c`), and a kubectl YAML List whose objects carry
large annotations.

Every figure is a whole process (`python -m draguard lint`, start-up included), the median of
`--runs` runs after one warm-up run, with its peak RSS read from the kernel's accounting of
the finished child (`os.wait4`). Beside it, the same for a bare C parse of the same bytes
(PyYAML's CSafeLoader for YAML, the json module's C scanner for JSON): the ratio says what
draguard costs over reading the text at all. A run past `--timeout` seconds or `--memory`
MiB is stopped and shown as such (the quadratic case this was written for took 23 GB).

    python benchmarks/input_scaling.py [--sizes 1,3,10,30] [--shapes ...] [--runs 5] [--baseline-src OTHER/src]

`--baseline-src`: the same lint also run from another checkout's src (before a change), on
the same file, its row marked [baseline].
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ("yaml-stream", "json-pretty", "json-minified", "yaml-list-annotated")
_ANNOTATION = 3_000  # bytes of the large annotation in the annotated shape (a last-applied-configuration)


def pod(index: int, annotation: int = 0) -> dict:
    """A legacy GPU pod (legacy-gpu-resource finds it): every rule of a pod runs on it."""
    meta = {"name": f"trainer-{index}", "namespace": f"team-{index % 50}", "labels": {"app": f"a{index % 97}"}}
    if annotation:
        meta["annotations"] = {"example.com/config": ("x" * 63 + " ") * (annotation // 64)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "registry.example.com/train:1.0",
                                     "args": ["--epochs", "10"],
                                     "resources": {"limits": {"nvidia.com/gpu": 1, "memory": "8Gi"}}}]}}


def generate(shape: str, megabytes: float) -> str:
    """A text of `shape` about `megabytes` MB (1e6 bytes) long."""
    annotation = _ANNOTATION if shape == "yaml-list-annotated" else 0
    per_pod = len(_text(shape, [pod(i, annotation) for i in range(20)])) / 20
    return _text(shape, [pod(i, annotation) for i in range(max(1, round(megabytes * 1e6 / per_pod)))])


def _text(shape: str, pods: list[dict]) -> str:
    import yaml

    if shape == "yaml-stream":
        return "---\n".join(yaml.safe_dump(p, sort_keys=False) for p in pods)
    listed = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": pods}
    if shape == "json-pretty":
        return json.dumps(listed, indent=4)
    if shape == "json-minified":
        return json.dumps(listed, separators=(",", ":"))
    return yaml.safe_dump(listed, sort_keys=False, width=1 << 20)


def _bare_parse(path: str) -> None:
    """Child: read and parse `path` with the C parser only."""
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    if text.lstrip().startswith("{"):
        json.loads(text)
    else:
        import yaml

        for _ in yaml.load_all(text, Loader=yaml.CSafeLoader):
            pass


def run_once(argv: list[str], timeout: float, memory_mib: int,
             src: Path = ROOT / "src") -> tuple[float | None, int, str]:
    """(seconds or None when stopped, peak RSS in KiB, how it ended) of one whole process
    running draguard from `src`."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mib << 20, memory_mib << 20))

    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                             preexec_fn=limit)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            return None, usage.ru_maxrss, f"stopped after {timeout:.0f} s"
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code < 0 or code > 1:  # lint exits 1 on findings; 2 and signals are failures
        return None, usage.ru_maxrss, f"exit {code} (over {memory_mib} MiB?)"
    return seconds, usage.ru_maxrss, "ok"


def measure(argv: list[str], runs: int, timeout: float, memory_mib: int, src: Path = ROOT / "src") -> dict:
    """Median seconds and peak RSS over `runs` runs after one warm-up; the first failure ends it."""
    seconds, peaks = [], []
    for attempt in range(runs + 1):
        took, peak, how = run_once(argv, timeout, memory_mib, src)
        if took is None:
            return {"failed": how, "peak_kib": peak}
        if attempt:
            seconds.append(took)
            peaks.append(peak)
    return {"seconds": statistics.median(seconds), "peak_kib": statistics.median(peaks), "runs": runs}


def _row(shape: str, size: int, lint: dict, bare: dict) -> str:
    if "failed" in lint:
        return f"{shape:20} {size / 1e6:6.1f} MB  lint {lint['failed']} (peak {lint['peak_kib'] / 1024:,.0f} MiB)"
    return (f"{shape:20} {size / 1e6:6.1f} MB  lint {lint['seconds']:7.2f} s {lint['peak_kib'] / 1024:7,.0f} MiB "
            f"({lint['peak_kib'] * 1024 / size:5.1f}x input)   bare parse {bare['seconds']:6.2f} s "
            f"{bare['peak_kib'] / 1024:6,.0f} MiB   lint/bare: time {lint['seconds'] / bare['seconds']:5.1f}x "
            f"memory {lint['peak_kib'] / bare['peak_kib']:4.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,3,10,30", help="input sizes in MB, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--runs", type=int, default=5, help="measured runs of each command (after one warm-up)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    parser.add_argument("--memory", type=int, default=16_384, help="MiB of address space a run may take")
    parser.add_argument("--baseline-src", type=Path, help="also run the lint from this src, on the same file")
    parser.add_argument("--bare-parse", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_parse:
        _bare_parse(args.bare_parse)
        return 0
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        parser.error(f"unknown shape(s): {', '.join(unknown)}")
    print(f"python {sys.version.split()[0]}; medians of {args.runs} runs after a warm-up; whole processes")
    with tempfile.TemporaryDirectory(prefix="draguard-scaling-") as tmp:
        for shape in shapes:
            for megabytes in (float(s) for s in args.sizes.split(",")):
                path = Path(tmp) / f"{shape}-{megabytes:g}.{'json' if shape.startswith('json') else 'yaml'}"
                path.write_text(generate(shape, megabytes))
                size = path.stat().st_size
                bare = measure([sys.executable, __file__, "--bare-parse", str(path)], args.runs, args.timeout,
                               args.memory)
                argv = [sys.executable, "-m", "draguard", "lint", "--no-config", "-f", "json", str(path)]
                lint = measure(argv, args.runs, args.timeout, args.memory)
                print(_row(shape, size, lint, bare), flush=True)
                if args.baseline_src:
                    before = measure(argv, args.runs, args.timeout, args.memory, args.baseline_src)
                    print(_row(f"{shape} [baseline]", size, before, bare), flush=True)
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
