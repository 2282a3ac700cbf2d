"""The speed-up of `draguard simulate` over running the same rollout on the real control plane
(harness/control-plane: kube-apiserver, kube-scheduler, kube-controller-manager v1.37.2, with
the fidelity table's fake kubelet and fake-driver MIG nodes; tests/support/fidelity.py).

    python benchmarks/simulate_vs_plane.py [--nodes 500] [--replicas 500]

Each node has one A100 with two 3g.20gb MIG devices; the Deployment's pods take one device
each; its rollout is release-first with maxUnavailable 10%. Prints, side by side, the wall
time of the rollout on the plane and in the simulator (and of the start state), the verdicts
and the simulated time. Needs Go (the control plane is built on first use).

Not whole processes, on purpose: the control plane is three servers already running, and the
figure is the ratio of two rollouts (of the order of 100x), which a process start of ~0.3 s
on the simulator's side does not move; `draguard simulate` as a user runs it, inventory
included, is simulate.py's figure."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.cluster import ControlPlane, build, gpu_inventory  # noqa: E402
from support.fidelity import Fidelity, Plane  # noqa: E402

MIG = {"model": "A100-40GB", "count": 1, "mig": "static", "layout": ["3g.20gb", "3g.20gb"]}


def scenario(nodes: int, replicas: int) -> Fidelity:
    pod = {"terminationGracePeriodSeconds": 30,
           "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "slice"}],
           "containers": [{"name": "main", "image": "vllm", "resources": {"claims": [{"name": "gpu"}]}}]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm"},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "llm"}},
                           "strategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}},
                           "template": {"metadata": {"labels": {"app": "llm"}}, "spec": pod}}}
    return Fidelity("scale", [deployment], [("update", {"deployment": "llm"})], MIG, nodes=nodes, key="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--replicas", type=int, default=500)
    args = parser.parse_args()
    case = scenario(args.nodes, args.replicas)
    started = time.perf_counter()
    run = case.simulated()
    simulated_wall = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as work:
        plane = ControlPlane(build(), Path(work))
        plane.start()
        try:
            plane.apply([o for o in gpu_inventory(0)[1] if o["kind"] == "DeviceClass"])
            started = time.perf_counter()
            outcome = Plane(plane, [case]).run()[case.key]
            plane_wall = time.perf_counter() - started
        finally:
            plane.stop()
    (kind, seconds), = outcome.verdicts or [(outcome.error, None)]
    step = run.results[0].verdict
    print(f"{args.nodes} nodes x 1 A100 (two 3g.20gb), {args.replicas} pods, rollout maxSurge 0 / maxUnavailable 10%")
    print(f"control plane: rollout {kind} in {seconds or 0:.1f} s wall; {plane_wall:.1f} s with the start state")
    print(f"simulator:     rollout {step.kind} at {step.seconds} s simulated; {simulated_wall:.2f} s wall with the "
          f"start state")
    print(f"speed-up: {plane_wall / simulated_wall:.0f}x (start state and rollout)")


if __name__ == "__main__":
    main()
