"""The webhook judging with a large cluster in its cache, in-process (no HTTP): what a request
costs once the cache is built, and what a change costs the cache's thread to rebuild (a claim
changes, as each pod's creation makes one; a ResourceSlice changes, as a driver republishing
its pool does) and the first request after it.

    python benchmarks/webhook_cache.py [--nodes 1000] [--gpus 8] [--requests 200]

The cluster is tests/support/audit_dump's: nodes of 8 H100s with static MIG, 4 claims a node.
Targets (issue: admission): a review under 10 ms at p99, whatever the cluster's size; the cache
never LISTs per request.

A component timing, on purpose: the webhook is a long-lived server whose cache is built once;
what a request waits for is the judging against that cache (webhook.py times the same review
end to end over HTTPS), and a change's rebuild runs on the cache's thread, off the request path."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import textwrap
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from draguard.admission.cache import WATCHED, ClusterCache  # noqa: E402
from draguard.admission.judge import rules_for  # noqa: E402
from draguard.admission.server import Webhook  # noqa: E402
from draguard.core.config import Config  # noqa: E402
from draguard.dra.target import Target  # noqa: E402
from draguard.rules.examples import COMPLIANT_POD  # noqa: E402
from support.audit_dump import cluster  # noqa: E402
from support.webhook import review  # noqa: E402


def filled_cache(nodes: int, gpus: int) -> tuple[ClusterCache, list[dict]]:
    """A cache holding the cluster (as its LISTs would) and the compliant example's objects."""
    raw = cluster(nodes=nodes, gpus=gpus, pods=nodes * 4, deployments=40)
    example = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d]
    for i, d in enumerate(example):
        d["metadata"].update(namespace="team-a", uid=f"example-{i}")
    raw["resourceclaimtemplates.resource.k8s.io"] += [d for d in example if d["kind"] == "ResourceClaimTemplate"]
    raw["namespaces"].append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "uid": "ns"}})
    config = Config()
    cache = ClusterCache(None, lambda *args, **kwargs: None, devices_for=lambda inventory: Target.for_release(
        inventory, [], config.kube_version, config.feature_gates))
    for name in WATCHED:
        cache._apply((name, "RELIST", raw.get(name, [])))
    return cache, example


def timed(call) -> float:
    started = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):  # the webhook's JSON log lines
        call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    cache, example = filled_cache(args.nodes, args.gpus)
    objects = sum(len(v) for v in cache.store.values())
    print(f"cluster: {args.nodes} nodes x {args.gpus} GPUs, {objects} objects cached")
    hook = Webhook(rules_for(Config(), offline=False), {"kube-system"}, cache.view)
    bodies = {d["kind"]: json.dumps(review(d, uid=f"bench-{d['kind']}")).encode() for d in example}
    built = timed(cache._rebuild)
    first = timed(lambda: hook.review(bodies["ResourceClaimTemplate"]))
    print(f"cache and allocator built in {built * 1000:.0f} ms (at start, before ready); the first review "
          f"{first * 1000:.1f} ms")
    for kind, body in bodies.items():
        latencies = sorted(timed(lambda: hook.review(body)) for _ in range(args.requests))
        print(f"{kind:<22} p50 {latencies[len(latencies) // 2] * 1000:.2f} ms, "
              f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.2f} ms")
    claim = dict(cache.store["resourceclaims.resource.k8s.io"]).popitem()[1]
    cache._apply(("resourceclaims.resource.k8s.io", "MODIFIED", claim))
    after_claim = timed(cache._rebuild)
    slice_ = dict(cache.store["resourceslices.resource.k8s.io"]).popitem()[1]
    cache._apply(("resourceslices.resource.k8s.io", "MODIFIED", slice_))
    after_slice = timed(cache._rebuild)
    print(f"the cache's thread rebuilds after a claim changed in {after_claim * 1000:.0f} ms, after a "
          f"ResourceSlice changed in {after_slice * 1000:.0f} ms (its allocator too), off the request path")


if __name__ == "__main__":
    main()
