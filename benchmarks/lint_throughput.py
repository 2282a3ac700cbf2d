"""Lint throughput on the corpus (tests/support/data/corpus) replicated to >= 20,000 objects.

Prints objects/s, MB/s and peak RSS of a full lint, and the ratio to a bare parse of the same
bytes with PyYAML's C loader (`yaml.load_all(..., CSafeLoader)`), each measured in a fresh
process. `--vs-checkov` also times checkov's Kubernetes framework (installed in a throwaway
venv) on a subset and prints the objects/s ratio.

    python benchmarks/lint_throughput.py [--objects 20000] [--vs-checkov] [--checkov-objects 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "support" / "data" / "corpus"  # public manifests, sources in SOURCES.tsv


def corpus_sources() -> list[Path]:
    """Corpus files that parse as YAML (the unrendered templates are left out)."""
    return sorted(p for folder in ("legacy", "dra") for p in (CORPUS / folder).glob("*.y*ml"))


def count_objects(paths) -> int:
    import yaml

    total = 0
    for path in paths:
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            total += isinstance(doc, dict) and bool(doc.get("kind"))
    return total


def replicate(target: Path, wanted: int) -> tuple[int, int]:
    """Copy the corpus into `target` until it holds >= `wanted` objects; (objects, bytes)."""
    sources = corpus_sources()
    per_copy = count_objects(sources)
    copies = -(-wanted // per_copy)
    size = 0
    for i in range(copies):
        folder = target / f"copy{i:04d}"
        folder.mkdir(parents=True)
        for path in sources:
            shutil.copyfile(path, folder / path.name)
            size += path.stat().st_size
    return per_copy * copies, size


def measure(mode: str, directory: str) -> None:
    """Child process: run one measurement and print {seconds, maxrss_kb} as JSON."""
    files = sorted(str(p) for p in Path(directory).rglob("*.y*ml"))
    if mode == "parse":
        import yaml

        start = time.perf_counter()
        for name in files:
            with open(name, "rb") as handle:
                text = handle.read().decode("utf-8-sig")
            for _ in yaml.load_all(text, Loader=yaml.CSafeLoader):
                pass
        seconds = time.perf_counter() - start
    else:
        from draguard.core.config import Config
        from draguard.engine import lint_paths

        start = time.perf_counter()
        result = lint_paths([directory], Config())
        seconds = time.perf_counter() - start
        assert result.objects > 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "maxrss_kb": peak}))


def child(mode: str, directory: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--measure", mode, directory],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def checkov_rate(directory: Path, objects: int) -> float:
    venv = Path(tempfile.mkdtemp(prefix="checkov-venv-"))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "checkov"], check=True)
        start = time.perf_counter()
        subprocess.run([str(venv / "bin" / "checkov"), "-d", str(directory), "--framework", "kubernetes",
                        "--quiet", "--compact", "-o", "json"], capture_output=True, check=False)
        return objects / (time.perf_counter() - start)
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--vs-checkov", action="store_true")
    parser.add_argument("--checkov-objects", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the best is kept")
    parser.add_argument("--measure", nargs=2, metavar=("MODE", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return 0
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="draguard-bench-") as tmp:
        objects, size = replicate(Path(tmp) / "big", args.objects)
        runs = [(child("parse", f"{tmp}/big"), child("lint", f"{tmp}/big")) for _ in range(args.repeat)]
        parse = min((p for p, _ in runs), key=lambda r: r["seconds"])  # interleaved, best of each:
        lint = min((l for _, l in runs), key=lambda r: r["seconds"])  # drift on a shared machine hits both
        mb = size / 1e6
        print(f"corpus x{objects // count_objects(corpus_sources())}: {objects} objects, {mb:.1f} MB")
        print(f"bare CSafeLoader parse: {parse['seconds']:.2f} s  {objects / parse['seconds']:,.0f} objects/s  "
              f"peak RSS {parse['maxrss_kb'] / 1024:.0f} MiB")
        print(f"draguard lint:          {lint['seconds']:.2f} s  {objects / lint['seconds']:,.0f} objects/s  "
              f"{mb / lint['seconds']:.1f} MB/s  peak RSS {lint['maxrss_kb'] / 1024:.0f} MiB")
        print(f"lint / bare parse:      {lint['seconds'] / parse['seconds']:.2f}x  (target <= 2x)")
        if args.vs_checkov:
            small, _ = replicate(Path(tmp) / "small", args.checkov_objects)
            ours = small / child("lint", f"{tmp}/small")["seconds"]
            theirs = checkov_rate(Path(tmp) / "small", small)
            print(f"checkov kubernetes on {small} objects: {theirs:,.0f} objects/s; draguard {ours:,.0f} objects/s; "
                  f"ratio {ours / theirs:.1f}x  (target >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
