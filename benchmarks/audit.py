"""`draguard audit --from` on a generated dump of a large cluster (5,000 nodes x 8 H100s,
40,000 running pods each holding one GPU through a generated claim; `--mig` splits each GPU
into 4 static MIG devices, 160,000 devices, each pod on a 1g.10gb one), as a fresh process:
wall time and peak RSS, and the API requests the live mode would make for it.

    python benchmarks/audit.py [--nodes 5000] [--gpus 8] [--pods 40000] [--mig] [--format json]

Target (issue: audit): under 10 s and 1.5 GiB."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from draguard.cluster.live import PAGE  # noqa: E402
from draguard.cluster.snapshot import RESOURCES  # noqa: E402
from support.audit_dump import write  # noqa: E402
from support.probe import run_draguard  # noqa: E402



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--pods", type=int, default=40000)
    parser.add_argument("--mig", action="store_true", help="static MIG (4 devices per GPU) instead of whole GPUs")
    parser.add_argument("--format", default="json", choices=["text", "json", "prometheus", "html", "sarif"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        dump = write(Path(tmp) / "dump", args.nodes, args.gpus, args.pods, mig=args.mig)
        generated = time.perf_counter() - started
        counts = {r.name: len(json.loads((dump / f"{r.name}.json").read_text())["items"]) for r in RESOURCES}
        slices = json.loads((dump / "resourceslices.resource.k8s.io.json").read_text())["items"]
        size = sum(p.stat().st_size for p in dump.iterdir()) / 2**20
        code, seconds, peak, errors = run_draguard("audit", "--from", str(dump), "--no-config", "-f", args.format,
                                                   "-o", str(Path(tmp) / "report"))
    if code not in (0, 1):
        sys.exit(f"audit failed ({code}): {errors}")
    pages = sum(max(1, -(-n // PAGE)) for n in counts.values())
    devices = sum(len(s["spec"]["devices"]) for s in slices)
    print(f"dump: {args.nodes} nodes x {args.gpus} GPUs ({devices} devices), {counts['pods']} pods, {counts['resourceclaims.resource.k8s.io']} "
          f"claims, {sum(counts.values())} objects, {size:.0f} MiB of JSON (generated in {generated:.1f} s)")
    print(f"audit --from ({args.format}): {seconds:.2f} s, peak RSS {peak:.0f} MiB (target: < 10 s, < 1536 MiB)")
    print(f"live mode for this cluster: {len(RESOURCES)} paginated LISTs ({pages} pages of {PAGE}) + 2 requests "
          "(/version, resource.k8s.io discovery), whatever the number of objects")


if __name__ == "__main__":
    main()
