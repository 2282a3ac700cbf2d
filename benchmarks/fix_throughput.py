"""draguard fix over the corpus replicated to >= 20,000 objects: objects/s for `fix --diff`
(nothing written) and for fix in place on a copy, and the ratio to `lint` on the same tree
(target: at most 2x lint).

Each copy of a corpus file puts its namespaced objects in a namespace of its own, so the
copies are distinct workloads (the same template name in one namespace would be one object).

    python benchmarks/fix_throughput.py [--objects 20000] [--runs 1]"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.paths import corpus_files  # noqa: E402

CLUSTER_SCOPED = {"Namespace", "DeviceClass", "ResourceSlice", "Node", "ClusterRole", "ClusterRoleBinding",
                  "CustomResourceDefinition", "PriorityClass", "RuntimeClass", "StorageClass", "DeviceTaintRule"}


def replicate(target: Path, wanted: int) -> int:
    sources = []
    for path in corpus_files():
        if "helm-templates" in path.parts:
            continue
        try:
            documents = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        except yaml.YAMLError:
            continue
        if documents:
            sources.append((path.stem, documents))
    count, copy = 0, 0
    while count < wanted:
        folder = target / f"copy-{copy:03}"
        folder.mkdir()
        for stem, documents in sources:
            out = []
            for d in documents:
                d = yaml.safe_load(yaml.safe_dump(d))  # a fresh copy
                if d.get("kind") not in CLUSTER_SCOPED and isinstance(d.get("metadata"), dict):
                    d["metadata"]["namespace"] = f"copy-{copy:03}"
                out.append(d)
            (folder / f"{stem}.yaml").write_text(yaml.safe_dump_all(out, sort_keys=False))
            count += len(out)
        copy += 1
    return count


def timed(argv: list[str], runs: int) -> float:
    """The median wall time of `runs` runs (this machine's speed drifts between runs)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=1, help="runs of each command; the median is shown")
    args = parser.parse_args()
    draguard = [sys.executable, "-m", "draguard"]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        objects = replicate(tree, args.objects)
        lint = timed(draguard + ["lint", "--no-config", str(tree)], args.runs)
        diff = timed(draguard + ["fix", "--unsafe-fixes", "--diff", "--no-config", str(tree)], args.runs)
        copy = Path(tmp) / "copy"
        shutil.copytree(tree, copy)
        in_place = timed(draguard + ["fix", "--unsafe-fixes", "--no-config", str(copy)], 1)  # then nothing is left
        again = timed(draguard + ["fix", "--unsafe-fixes", "--no-config", str(copy)], args.runs)
        files = len(list(tree.glob("*/*.yaml")))
    print(f"{objects} objects in {files} files of the replicated corpus")
    print(f"{'run':<28} {'seconds':>8} {'objects/s':>10} {'x lint':>7}")
    for name, seconds in [("lint", lint), ("fix --diff", diff), ("fix in place", in_place),
                          ("fix again (nothing to do)", again)]:
        print(f"{name:<28} {seconds:>8.1f} {objects / seconds:>10.0f} {seconds / lint:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
