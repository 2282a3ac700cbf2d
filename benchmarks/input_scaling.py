"""Time and peak memory of `draguard lint` as one input grows, in the four shapes a cluster
hands out: a multi-document YAML stream, a pretty-printed JSON List, the same List minified
to one line (`kubectl get -o json | jq -c`), and a kubectl YAML List whose objects carry
large annotations.

Every figure is a whole process (`python -m draguard lint`, start-up included, its report
written), run in turn with its anchor (benchmarks/_measure.py): the median and range of
`--runs` runs after one warm-up run, with its peak RSS read from the kernel's accounting of
the finished child (`os.wait4`). The anchor is a bare C parse of the same bytes
(PyYAML's CSafeLoader for YAML, the json module's C scanner for JSON): the ratio says what
draguard costs over reading the text at all. A run past `--timeout` seconds or `--memory`
MiB is stopped and shown as such (the quadratic case this was written for took 23 GB).

    python benchmarks/input_scaling.py [--sizes 1,3,10,30] [--shapes ...] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from _measure import Command, Runs, Stopped, baseline, compile_bytecode, draguard, figure, header, in_turn, ratio, setup

ROOT = Path(__file__).resolve().parents[1]
#: docs/input-limits.md: the cost of an input grows with its size, never faster
GOAL = "linear in the input's size"
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


def _row(shape: str, size: int, lint: Runs, bare: Runs) -> None:
    figure(f"{shape} {size / 1e6:.1f} MB: lint", f"{lint.describe()} ({lint.peak * 2**20 / size:5.1f}x input)  "
           f"{ratio(lint, bare)} the bare parse; memory {lint.peak / bare.peak:4.1f}x", GOAL)
    figure(f"{shape} {size / 1e6:.1f} MB: bare C parse", bare.describe())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,3,10,30", help="input sizes in MB, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--runs", type=int, default=5, help="measured runs of each command (after one warm-up)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    parser.add_argument("--memory", type=int, default=16_384, help="MiB of address space a run may take")
    parser.add_argument("--baseline-src", metavar="DIR", help="also time the lint from this src, in turn")
    parser.add_argument("--bare-parse", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_parse:
        _bare_parse(args.bare_parse)
        return 0
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        parser.error(f"unknown shape(s): {', '.join(unknown)}")
    compile_bytecode(ROOT / "src" / "draguard")
    header(args.runs)
    env = {"PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="draguard-scaling-") as tmp:
        for shape in shapes:
            for megabytes in (float(s) for s in args.sizes.split(",")):
                path = Path(tmp) / f"{shape}-{megabytes:g}.{'json' if shape.startswith('json') else 'yaml'}"
                with setup(f"generate {shape} of {megabytes:g} MB"):
                    path.write_text(generate(shape, megabytes))
                size = path.stat().st_size
                bounds = {"timeout": args.timeout, "memory_mib": args.memory}
                bare = Command("bare C parse", [sys.executable, __file__, "--bare-parse", str(path)], **bounds)
                lint = Command("lint", draguard("lint", "--no-config", "-f", "json", str(path)), (0, 1), env,
                               **bounds)
                commands = [lint, bare] + ([baseline(lint, args.baseline_src)] if args.baseline_src else [])
                try:
                    lint_runs, bare_runs, *before = in_turn(commands, args.runs)
                except Stopped as stopped:
                    figure(f"{shape} {size / 1e6:.1f} MB", f"{stopped.how} (peak {stopped.peak:,.0f} MiB)", GOAL)
                else:
                    _row(shape, size, lint_runs, bare_runs)
                    for runs in before:
                        _row(f"{shape} [baseline]", size, runs, bare_runs)
                sys.stdout.flush()
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
