"""Allocator throughput on 1,000 nodes x 8 H100 GPUs with a static MIG layout per GPU
(3g.40gb + 2g.20gb + 2 x 1g.10gb: 32,000 MIG devices).

Prints the time to build the inventory, the rate of single-node allocation calls (what the
scheduler's Filter does per node) and claims/s for placing claims first-fit across the
cluster until every slice is taken.

    python benchmarks/allocate.py [--nodes 1000] [--gpus 8]

Not whole processes, on purpose: the allocator runs inside long-lived processes (the webhook
judging a claim against its cache, simulate placing pods one at a time, audit explaining a
pending pod), where what is waited for is each call, not a process start. The commands a user
types that use it are timed as whole processes by simulate.py and audit.py.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from draguard.dra.allocator import Allocator
from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.dra.devices import claim_from
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source

LAYOUT = ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
SOURCE = Source("(benchmark)", "")


def claim(name: str, profile: str):
    return claim_from(Manifest(SOURCE, 0, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "mig.nvidia.com", "allocationMode": "ExactCount", "count": 1,
            "selectors": [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"}}]}}]}}}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()

    start = time.perf_counter()
    spec = {"nodes": [{"namePrefix": "gpu-node", "count": args.nodes,
                       "gpus": {"model": "H100-80GB", "count": args.gpus, "mig": "static", "layout": LAYOUT}}]}
    objects = generate(spec)
    inventory = Inventory.from_manifests([Manifest(SOURCE, i, o) for i, o in enumerate(objects)])
    devices = sum(len(s.devices) for s in inventory.slices)
    print(f"inventory: {args.nodes} nodes, {devices} MIG devices, built in {time.perf_counter() - start:.2f} s")

    allocator = Allocator(inventory.slices, inventory.classes)
    probe = claim("probe", "1g.10gb")
    start = time.perf_counter()
    for node in inventory.nodes:
        allocator.allocate([probe], node)
    elapsed = time.perf_counter() - start
    print(f"single-node allocation calls: {len(inventory.nodes) / elapsed:,.0f} calls/s "
          f"({elapsed * 1e3 / len(inventory.nodes):.2f} ms each, cold CEL memo)")
    start = time.perf_counter()
    for node in inventory.nodes:
        allocator.allocate([probe], node)
    elapsed = time.perf_counter() - start
    print(f"single-node allocation calls: {len(inventory.nodes) / elapsed:,.0f} calls/s (warm)")

    # first-fit placement until the cluster is full; each profile keeps a cursor over nodes
    profiles = itertools.cycle(["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"])
    cursors = {p: 0 for p in set(LAYOUT)}
    placed = failed = calls = 0
    start = time.perf_counter()
    for i, profile in zip(itertools.count(), profiles):
        c = claim(f"c{i}", profile)
        while cursors[profile] < len(inventory.nodes):
            calls += 1
            result = allocator.allocate([c], inventory.nodes[cursors[profile]])
            if result is not None:
                allocator.allocated.update((r.driver, r.pool, r.device) for r in result[0].results)
                placed += 1
                break
            cursors[profile] += 1
        else:
            failed += 1
            if all(cursor >= len(inventory.nodes) for cursor in cursors.values()):
                break
    elapsed = time.perf_counter() - start
    print(f"placed {placed} claims ({calls} allocation calls) in {elapsed:.2f} s: {placed / elapsed:,.0f} claims/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
