"""`draguard inventory generate` at cluster scale: wall time, peak RSS and output size of
N nodes x 8 H200 with dynamic MIG (every profile at every placement), as a whole process:
median wall time, range and peak RSS of 5 runs after a warm-up (benchmarks/_measure.py).

    python benchmarks/inventory_generate.py [--nodes 2000] [--runs 5]

Anchor (before streaming and per-group templates, same machine): 100 nodes took 32.8 s and
217 MiB peak; 2,000 nodes did not finish in 15 minutes."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _measure import Command, compile_bytecode, draguard, figure, header, in_turn

import draguard as package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5, help="runs after the warm-up (median shown)")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.yaml")
        out = os.path.join(tmp, "inventory.yaml")
        with open(spec, "w") as f:
            f.write(f"nodes:\n- namePrefix: h200\n  count: {args.nodes}\n"
                    "  gpus: {model: H200-141GB, count: 8, mig: dynamic}\n")
        [generate] = in_turn([Command("draguard inventory generate", draguard("inventory", "generate", spec,
                                                                               "-o", out))], args.runs)
        size = os.path.getsize(out) / 2**20
    header(args.runs)
    print(f"{args.nodes:,} nodes x 8 H200 dynamic MIG: {size:.0f} MiB of YAML")
    figure(generate.command.name, generate.describe(),
           "anchor: 100 nodes 32.8 s / 217 MiB; 2,000 did not finish in 15 min")


if __name__ == "__main__":
    sys.exit(main())
