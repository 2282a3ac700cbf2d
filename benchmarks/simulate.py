"""`draguard simulate rollout` at scale, as a user runs it: `draguard inventory generate` of N
nodes x 8 H100s (static MIG: tests/support/audit_dump.LAYOUT per GPU), then `draguard simulate
rollout` of a release-first rollout (maxSurge 0, maxUnavailable 10%) of one Deployment holding
one 1g.10gb slice a pod, its JSON report written. Both are whole processes, run in turn; the
figure the goal is about is their sum, pair by pair (the inventory is part of what the user
waits for), and the peak is the larger of the two. `--drain`: instead of the rollout, the
Deployment running, then its first node drained (`draguard simulate drain gpu-0`: cordon,
evictions, the replacements placed on the nodes left).

    python benchmarks/simulate.py [--nodes 5000] [--pods 40000] [--runs 5] [--drain] [--inventory-format json|yaml]
                                  [--baseline-src OTHER/src]

`--baseline-src`: both commands also run from another checkout's src (before a change), in
turn with these (A B A B), and the two reports compared byte for byte: a change that makes
the simulator faster must not change a verdict, a timeline record or a sample.

The inventory is written as a JSON List (`-o inventory.json`), as docs/dra-core.md advises
for a large one: it is read back with the C JSON parser; `--inventory-format yaml` times the
YAML documents instead (read with positions: about 0.5 MB/s).

Goal (issue #44): 40,000 pods on 5,000 nodes <= 30 s as processes, inventory included, < 2 GiB."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _measure import Command, baseline, compile_bytecode, draguard, figure, header, in_turn, ratio  # noqa: E402
from support.audit_dump import LAYOUT, PROFILE  # noqa: E402
from support.simulate import claim_template  # noqa: E402

import draguard as package  # noqa: E402


def deployment(replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm", "namespace": "serving"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "llm"}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}},
                     "template": {"metadata": {"labels": {"app": "llm"}}, "spec": {
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "slice"}],
                         "containers": [{"name": "server", "image": "vllm",
                                         "resources": {"claims": [{"name": "gpu"}]}}]}}}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, help="replicas (default: every 1g.10gb slice of the nodes)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each command after the warm-up (median shown)")
    parser.add_argument("--drain", action="store_true", help="drain the first node instead of rolling out")
    parser.add_argument("--inventory-format", choices=["json", "yaml"], default="json",
                        help="how `inventory generate` writes the inventory (default: json)")
    parser.add_argument("--baseline-src", metavar="DIR", help="also time both commands from this src, in turn")
    args = parser.parse_args()
    compile_bytecode(Path(package.__file__).parent)
    if args.baseline_src:
        compile_bytecode(Path(args.baseline_src) / "draguard")
    replicas = min(args.pods or sys.maxsize, args.nodes * 8 * LAYOUT.count(PROFILE))
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        (here / "spec.yaml").write_text(yaml.safe_dump({"nodes": [{
            "namePrefix": "gpu", "count": args.nodes,
            "gpus": {"model": "H100-80GB", "count": 8, "mig": "static", "layout": LAYOUT}}]}))
        (here / "app.yaml").write_text(yaml.safe_dump_all([deployment(replicas), claim_template(PROFILE, "serving")]))
        inventory = str(here / f"inventory.{args.inventory_format}")
        what, step = (["drain", "gpu-0"], "the first node drained") if args.drain else \
            (["rollout"], "rollout maxSurge 0 / maxUnavailable 10%")

        def commands(report: str) -> list[Command]:
            return [Command("draguard inventory generate", draguard("inventory", "generate", str(here / "spec.yaml"),
                                                                    "-o", inventory)),
                    Command(f"draguard simulate {what[0]}", draguard("simulate", *what, str(here / "app.yaml"),
                                                                     "--no-config", "--inventory", inventory, "-f",
                                                                     "json", "-o", str(here / report)), ok=(0, 1))]

        after = commands("report.json")
        before = [baseline(c, args.baseline_src) for c in commands("report-baseline.json")] \
            if args.baseline_src else []
        results = in_turn(after + before, args.runs)
        same = (here / "report.json").read_bytes() == (here / "report-baseline.json").read_bytes() if before else None
    header(args.runs)
    print(f"{args.nodes:,} nodes x 8 H100 (static MIG {'+'.join(LAYOUT)}), {replicas:,} pods, {step}; "
          f"the inventory as {args.inventory_format}")
    for label, (generate, rollout) in [("", results[:2]), (" [baseline]", results[2:])][:2 if before else 1]:
        figure(generate.command.name, generate.describe())
        figure(rollout.command.name, rollout.describe())
        both = sorted(a + b for a, b in zip(generate.walls, rollout.walls))
        figure(f"both (what the user waits for){label}", f"{statistics.median(both):7.3f} s ({both[0]:.3f}-"
               f"{both[-1]:.3f})  peak {max(generate.peak, rollout.peak):6.0f} MiB", "<= 30 s, < 2048 MiB")
    if before:
        figure("  simulate after / before", ratio(results[1], results[3]))
        figure("  reports byte for byte", "identical" if same else "DIFFERENT")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
