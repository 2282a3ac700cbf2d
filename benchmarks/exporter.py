"""`draguard exporter` under steady churn at scale: peak RSS, CPU, and the delay from a watch
event to /metrics showing it.

The watch path is fed in-process with synthetic events: a real API server holding 5,000
nodes and 40,000 pods and claims is too heavy for the 2 shared cores this runs on. The
cluster is tests/support/audit_dump's (5,000 nodes x 8 H100s split into 4 static MIG
devices, 40,000 running pods each holding a 1g.10gb device through a generated claim),
generated in a process of its own and read back object by object, compacted as the
exporter's LIST does, then loaded. Events are then queued at `--rate` per second into the
loop that consumes the watch streams (cluster.exporter.consume): pods restarted one after
another as a rollout does (pod and claim deleted, a new claim added, then allocated and
reserved, the new pod added: 5 events each). Once a second a probe claim in a namespace of
its own is added or deleted; its delay is the time until the exporter's state (what the
next scrape renders) holds it, and a /metrics render then shows it (timed too).

The synthetic pods are smaller than real ones (no managedFields, one container), and the
exporter keeps only what it reads of either (cluster.exporter.compact).

    python benchmarks/exporter.py [--nodes 5000] [--gpus 8] [--pods 40000] [--rate 100] [--seconds 60]
    python benchmarks/exporter.py --quick    # 500 nodes, 4,000 pods, 20 s

Targets (issue #45): peak RSS under 1 GiB; an event reflected within 1 s.

Not whole processes, on purpose: the exporter is a server that stays up; what a user waits
for is the delay from a cluster change to /metrics showing it, and its steady memory and CPU."""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import queue
import resource
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from prometheus_client import generate_latest  # noqa: E402

from draguard.cluster.exporter import CLAIMS, PODS, WATCHED, ExporterState, compact, consume  # noqa: E402
from draguard.cluster.snapshot import RESOURCES  # noqa: E402
from draguard.core.config import Config  # noqa: E402
from draguard.model.manifest import Manifest  # noqa: E402
from support.audit_dump import CAPTURED, cluster  # noqa: E402


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def restarts(raw: dict):
    """Endless pod restarts, one pod after another: the 5 watch events of each."""
    pods = {p["metadata"]["uid"]: p for p in raw[PODS]}
    claims = list(raw[CLAIMS])
    i = 0
    while True:
        old = claims[i % len(claims)]
        pod = pods.pop(old["status"]["reservedFor"][0]["uid"])
        yield PODS, "DELETED", pod
        yield CLAIMS, "DELETED", old
        new_pod = copy.deepcopy(pod)
        new_pod["metadata"]["uid"] = str(uuid.uuid4())
        new_claim = copy.deepcopy(old)
        new_claim["metadata"]["uid"] = str(uuid.uuid4())
        new_claim["metadata"]["ownerReferences"][0]["uid"] = new_pod["metadata"]["uid"]
        status = new_claim.pop("status")
        yield CLAIMS, "ADDED", copy.deepcopy(new_claim)
        status["reservedFor"][0]["uid"] = new_pod["metadata"]["uid"]
        new_claim["status"] = status
        yield CLAIMS, "MODIFIED", new_claim
        yield PODS, "ADDED", new_pod
        pods[new_pod["metadata"]["uid"]] = new_pod
        claims[i % len(claims)] = new_claim
        i += 1


def probe(n: int) -> tuple:
    """The n-th probe change: a pending claim in namespace `probe` added (even n) or deleted."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "probe", "namespace": "probe", "uid": "probe-claim",
                          "creationTimestamp": "2026-12-01T12:00:00Z"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}}}
    return CLAIMS, "ADDED" if n % 2 == 0 else "DELETED", claim


def _write(folder: str, nodes: int, gpus: int, pods: int) -> None:
    """The cluster as JSON Lines, one file per resource (run in a process of its own: the
    generator's objects never count in the exporter's memory)."""
    raw = cluster(nodes, gpus, pods, mig=True)
    for name in WATCHED:
        with open(Path(folder) / f"{name}.jsonl", "w") as out:
            out.writelines(json.dumps(o) + "\n" for o in raw.get(name, []))


def _read(folder: str, name: str, limit: int | None = None):
    """The objects of a resource, parsed one at a time as LIST pages are."""
    with open(Path(folder) / f"{name}.jsonl") as lines:
        for i, line in enumerate(lines):
            if limit is not None and i >= limit:
                return
            yield json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--pods", type=int, default=40000)
    parser.add_argument("--rate", type=float, default=100.0, help="watch events per second")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the churn lasts")
    parser.add_argument("--quick", action="store_true", help="500 nodes, 4,000 pods, 20 s")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.pods, args.seconds = 500, 4000, 20.0

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        child = multiprocessing.get_context("spawn").Process(target=_write, args=(folder, args.nodes, args.gpus,
                                                                                  args.pods))
        child.start()
        child.join()
        generated = time.perf_counter() - started
        state = ExporterState(Config(), clock=lambda: CAPTURED.timestamp())
        started, cpu = time.perf_counter(), time.process_time()
        manifests = [Manifest.from_data(compact(name, o), display=f"benchmark:{name}", positions=False)
                     for name in WATCHED for o in _read(folder, name)]
        names = {r.kind: r.name for r in RESOURCES}
        state.load(manifests, lambda m: names[m.kind])
        loaded, load_cpu = time.perf_counter() - started, time.process_time() - cpu
        del manifests
        churn_source = {name: list(_read(folder, name, 2000)) for name in (PODS, CLAIMS)}
    judged = dict(state.health.judged)
    print(f"cluster: {args.nodes} nodes x {args.gpus} GPUs (static MIG: {len(state.node_rows)} nodes viewed), "
          f"{args.pods} pods and claims (generated in {generated:.1f} s, in a process of its own)")
    print(f"initial LIST (parsed object by object, compacted) judged in {loaded:.1f} s ({load_cpu:.1f} s CPU); "
          f"peak RSS so far {rss_mib():.0f} MiB")

    changes: queue.Queue = queue.Queue()
    stop = threading.Event()
    consumer = threading.Thread(target=consume, args=(changes, state, stop), daemon=True)
    consumer.start()
    events, delays, renders = restarts(churn_source), [], []
    sent, n_probe, next_probe = 0, 0, time.monotonic() + 1.0
    pending: tuple | None = None  # (when the probe was queued, whether it adds the claim)
    cpu, begun = time.process_time(), time.monotonic()
    while time.monotonic() - begun < args.seconds:
        due = int((time.monotonic() - begun) * args.rate)
        while sent < due:
            changes.put(next(events))
            sent += 1
        now = time.monotonic()
        if pending is None and now >= next_probe:
            changes.put(probe(n_probe))
            pending, n_probe, sent = (now, n_probe % 2 == 0), n_probe + 1, sent + 1
        if pending is not None:
            with state.lock:
                shown = "probe-claim" in state.claim_rows
            if shown == pending[1]:  # the next scrape serves it: render one, as Prometheus would scrape
                delays.append(time.monotonic() - pending[0])
                t0 = time.monotonic()
                text = generate_latest(state.registry).decode()
                renders.append(time.monotonic() - t0)
                assert ('draguard_claims{namespace="probe",phase="pending"} 1.0' in text) == pending[1]
                pending, next_probe = None, pending[0] + 1.0
        time.sleep(0.002)
    wall, used = time.monotonic() - begun, time.process_time() - cpu
    stop.set()
    consumer.join()
    per_change = {k: state.health.judged[k] - judged[k] for k in judged}
    print(f"churn: {sent} events in {wall:.0f} s ({sent / wall:.0f}/s), backlog left {changes.qsize()}; "
          f"CPU {used / wall:.2f} cores (one /metrics render a second included)")
    print(f"judged again during the churn: {per_change['claim']} claims, {per_change['node']} nodes "
          f"({per_change['claim'] / max(sent, 1):.2f} claims and {per_change['node'] / max(sent, 1):.2f} nodes per "
          f"event; the cluster has {len(state.claim_rows)} claims, {len(state.node_rows)} nodes)")
    if delays:
        ordered = sorted(delays)
        print(f"event to served state (the next scrape shows it): {len(delays)} probes, median "
              f"{statistics.median(delays) * 1000:.0f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1000:.0f} ms, max "
              f"{ordered[-1] * 1000:.0f} ms (target: < 1000 ms); a /metrics render: median "
              f"{statistics.median(renders) * 1000:.0f} ms, max {max(renders) * 1000:.0f} ms")
    print(f"peak RSS {rss_mib():.0f} MiB (target: < 1024 MiB)")


if __name__ == "__main__":
    main()
