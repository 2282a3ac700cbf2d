"""`draguard audit --from` on a generated dump of a large cluster (5,000 nodes x 8 H100s,
40,000 running pods each holding one GPU through a generated claim; `--mig` splits each GPU
into 4 static MIG devices, 160,000 devices, each pod on a 1g.10gb one), as a whole process
run in turn with a bare `json.load` of the same dump (the floor): median wall time, range and
peak RSS of 5 runs after a warm-up (benchmarks/_measure.py), and the API requests the live
mode would make for it. Generating the dump is a setup step, printed apart.

    python benchmarks/audit.py [--nodes 5000] [--gpus 8] [--pods 40000] [--mig] [--format json] [--runs 5]

Target (issue: audit): under 10 s and 1.5 GiB."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from draguard.cluster.live import PAGE  # noqa: E402
from draguard.cluster.snapshot import RESOURCES  # noqa: E402
from _measure import Command, compile_bytecode, draguard, figure, header, in_turn, ratio, setup  # noqa: E402
from support.audit_dump import write  # noqa: E402

import draguard as package  # noqa: E402

#: the floor: every file of the dump read and decoded
LOAD = "import json, pathlib, sys\nfor p in sorted(pathlib.Path(sys.argv[1]).iterdir()):\n    json.loads(p.read_bytes())"



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--pods", type=int, default=40000)
    parser.add_argument("--mig", action="store_true", help="static MIG (4 devices per GPU) instead of whole GPUs")
    parser.add_argument("--format", default="json", choices=["text", "json", "prometheus", "html", "sarif"])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command after the warm-up (median shown)")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    with tempfile.TemporaryDirectory() as tmp:
        with setup(f"generate the dump of {args.nodes:,} nodes and {args.pods:,} pods"):
            dump = write(Path(tmp) / "dump", args.nodes, args.gpus, args.pods, mig=args.mig)
        counts = {r.name: len(json.loads((dump / f"{r.name}.json").read_text())["items"]) for r in RESOURCES}
        slices = json.loads((dump / "resourceslices.resource.k8s.io.json").read_text())["items"]
        size = sum(p.stat().st_size for p in dump.iterdir()) / 2**20
        floor, audit = in_turn([
            Command("bare json.loads of the dump (floor)", [sys.executable, "-c", LOAD, str(dump)]),
            Command(f"draguard audit --from -f {args.format}",
                    draguard("audit", "--from", str(dump), "--no-config", "-f", args.format,
                             "-o", str(Path(tmp) / "report")), ok=(0, 1))], args.runs)
    pages = sum(max(1, -(-n // PAGE)) for n in counts.values())
    devices = sum(len(s["spec"]["devices"]) for s in slices)
    header(args.runs)
    print(f"dump: {args.nodes} nodes x {args.gpus} GPUs ({devices} devices), {counts['pods']} pods, "
          f"{counts['resourceclaims.resource.k8s.io']} claims, {sum(counts.values())} objects, {size:.0f} MiB of JSON")
    figure(floor.command.name, floor.describe())
    figure(audit.command.name, audit.describe(), "< 10 s, < 1536 MiB")
    figure("  / bare json.loads", ratio(audit, floor))
    print(f"live mode for this cluster: {len(RESOURCES)} paginated LISTs ({pages} pages of {PAGE}) + 2 requests "
          "(/version, resource.k8s.io discovery), whatever the number of objects")


if __name__ == "__main__":
    main()
