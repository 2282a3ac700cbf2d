"""Live-cluster input: `draguard lint` of a kubectl List of running pods and their generated
claims (~20 MiB of YAML for 4,800 pods), as a fresh process: wall time and peak RSS.

    python benchmarks/live_list.py [--pods 4800] [--format yaml|json]

Anchor (before List items were split ahead of the limits, same machine): the 20 MiB List was
refused whole (input-limit) after 4.3 s at 675 MiB peak, with no object checked."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.live import live_list  # noqa: E402
from support.probe import run_draguard  # noqa: E402



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=4800)
    parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"live.{args.format}"
        path.write_text(live_list(args.pods, args.format))
        _, seconds, peak, _ = run_draguard("lint", str(path), "--no-config", "-f", "json", "-o",
                                           str(Path(tmp) / "report.json"))
        size = path.stat().st_size / 2**20
    print(f"live List, {args.pods} pods + claims, {size:.1f} MiB {args.format}: {seconds:.2f} s, peak RSS {peak:.0f} MiB "
          "(anchor: refused whole after 4.3 s at 675 MiB)")


if __name__ == "__main__":
    main()
