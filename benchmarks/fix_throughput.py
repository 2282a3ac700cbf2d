"""`draguard fix` over the corpus replicated to >= 20,000 objects, as whole processes run in
turn with `draguard lint` of the same tree: `fix --unsafe-fixes --diff` (nothing written,
the diff printed), fix in place on a fresh copy each run (the copy is made untimed), and fix
again on a tree already fixed (nothing to do); each as a ratio to lint (goal: --diff <= 2.5x).

Each copy of a corpus file puts its namespaced objects in a namespace of its own, so the
copies are distinct workloads (the same template name in one namespace would be one object).
lint_throughput builds its tree with `replicate` too.

    python benchmarks/fix_throughput.py [--objects 20000] [--runs 5] [--tree DIR]"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _measure import Command, compile_bytecode, draguard, figure, header, in_turn, ratio, setup  # noqa: E402
from support.paths import corpus_files  # noqa: E402

import draguard as package  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command after the warm-up (median shown)")
    parser.add_argument("--tree", type=Path, help="an existing replicated tree (built there when absent)")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or Path(tmp) / "tree"
        if not tree.exists():
            tree.mkdir(parents=True)
            with setup(f"replicate the corpus to >= {args.objects:,} objects under {tree}"):
                replicate(tree, args.objects)
        objects = sum(1 for p in tree.rglob("*.yaml") for d in yaml.load_all(p.read_bytes(), Loader=yaml.CSafeLoader)
                      if isinstance(d, dict) and d.get("kind"))
        copy, fixed = Path(tmp) / "copy", Path(tmp) / "fixed"
        with setup("a fixed copy of the tree for `fix again`"):
            shutil.copytree(tree, fixed)
            subprocess.run(draguard("fix", "--unsafe-fixes", "--no-config", str(fixed)), capture_output=True)

        def fresh_copy() -> None:
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(tree, copy)

        header(args.runs)
        print(f"tree: {objects:,} objects in {len(list(tree.rglob('*.yaml'))):,} files ({tree}); "
              "each in-place run gets a fresh copy, made untimed")
        out = str(Path(tmp) / "out")
        lint, diff, in_place, again = in_turn([
            Command("draguard lint", draguard("lint", "--no-config", "-o", out, str(tree)), ok=(0, 1)),
            Command("draguard fix --unsafe-fixes --diff", draguard("fix", "--unsafe-fixes", "--diff", "--no-config",
                                                                   str(tree)), ok=(0, 1)),
            Command("draguard fix --unsafe-fixes (in place)", draguard("fix", "--unsafe-fixes", "--no-config",
                                                                       str(copy)), ok=(0, 1), before=fresh_copy),
            Command("fix again (nothing to do)", draguard("fix", "--unsafe-fixes", "--no-config", str(fixed)),
                    ok=(0, 1))], args.runs)
    for runs, goal in ((lint, None), (diff, "<= 2.5x lint"), (in_place, None), (again, None)):
        figure(runs.command.name, f"{runs.describe()}  {objects / runs.wall:,.0f} objects/s")
        if runs is not lint:
            figure("  / lint", ratio(runs, lint), goal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
