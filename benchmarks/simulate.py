"""`draguard simulate rollout` at scale: a release-first rollout (maxSurge 0, maxUnavailable
10%) of one Deployment holding every 1g.10gb MIG slice of N nodes x 8 H100s (static MIG:
4 x 1g.10gb + 1 x 3g.40gb per GPU, tests/support/audit_dump.LAYOUT): wall time, events/s,
peak RSS. `--drain N`: instead, the Deployment running, then its first N nodes drained one
after another (cordon, evictions, the replacements placed on the nodes left).

    python benchmarks/simulate.py [--nodes 50] [--pods N] [--drain N]

Target (issue: simulate): 40,000 pods on 5,000 nodes in under 30 s on 2 cores and 2 GiB:
`--nodes 5000 --pods 40000` (20.5 s, 1.4 GiB here, with the allocator variant a 1.37
scheduler runs, the incubating one, which checks every device's capacity: 22.8 s before its
unshared-device shortcut, 18.7 s with the stable variant every release was simulated with
before; before the placement and metrics caches, 16,000 pods on 1,000 nodes took 28.6 s). The drain of 100 nodes (`--drain 100`, same pods):
36.4 s with the start state, 1.36 GiB."""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from draguard.dra.generate import generate  # noqa: E402
from draguard.dra.inventory import Inventory  # noqa: E402
from draguard.model.manifest import Manifest  # noqa: E402
from draguard.simulate.rollout import simulate_rollout  # noqa: E402
from draguard.simulate.scenario import Step, run_scenario  # noqa: E402
from support.audit_dump import LAYOUT, PROFILE  # noqa: E402
from support.simulate import claim_template  # noqa: E402




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--pods", type=int, help="replicas (default: every 1g.10gb slice of the nodes)")
    parser.add_argument("--drain", type=int, metavar="N", help="drain the first N nodes instead of rolling out")
    args = parser.parse_args()
    spec = {"nodes": [{"namePrefix": "gpu", "count": args.nodes,
                       "gpus": {"model": "H100-80GB", "count": 8, "mig": "static", "layout": LAYOUT}}]}
    inventory = Inventory.from_manifests([Manifest.from_data(o, document=i, positions=False)
                                          for i, o in enumerate(generate(spec))])
    replicas = min(args.pods or math.inf, args.nodes * 8 * LAYOUT.count(PROFILE))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm", "namespace": "serving"},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "llm"}},
                           "strategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}},
                           "template": {"metadata": {"labels": {"app": "llm"}}, "spec": {
                               "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "slice"}],
                               "containers": [{"name": "server", "image": "vllm",
                                               "resources": {"claims": [{"name": "gpu"}]}}]}}}}
    template = Manifest.from_data(claim_template(PROFILE, "serving"))
    started = time.perf_counter()
    if args.drain:
        steps = [Step("drain", {"node": node.name}) for node in inventory.nodes[:args.drain]]
        simulation = run_scenario([template, Manifest.from_data(deployment)], inventory, steps)
        what = f"the first {args.drain} nodes drained one after another"
    else:
        simulation = simulate_rollout(Manifest.from_data(deployment), {"slice": template}, inventory, remedies=False)
        what = "rollout maxSurge 0 / maxUnavailable 10%"
    wall = time.perf_counter() - started
    events = len(simulation.world.timeline)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.nodes} nodes x 8 H100 (static MIG), {replicas} pods, {what}")
    print(f"verdict {simulation.verdict.kind} at {simulation.verdict.seconds} s simulated; wall {wall:.1f} s "
          f"(start state included), {events} timeline events, {events / wall:.0f} events/s, peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
