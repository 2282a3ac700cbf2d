"""`draguard webhook --offline` driven directly on loopback with canned AdmissionReviews (legacy
and compliant Pods, a Deployment, a claim template), over keep-alive HTTPS connections:
latency p50/p99 at a fixed rate, and the most reviews a second one connection gets for a Pod.

    python benchmarks/webhook.py [--rate 200] [--seconds 10]

Targets (issue: admission): p99 under 10 ms at 200 requests/s, and at least 1,000 Pod reviews/s
per core. Anchor: Kyverno, 42.7 ms average at 100 virtual users through the API server."""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import textwrap
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from draguard.rules import REGISTRY  # noqa: E402
from draguard.rules.examples import COMPLIANT_DEPLOYMENT, COMPLIANT_POD  # noqa: E402
from support.webhook import context_for, review, running_webhook  # noqa: E402


def canned() -> list[bytes]:
    docs = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD + COMPLIANT_DEPLOYMENT)) if d]
    legacy = [d for d in yaml.safe_load_all(textwrap.dedent(REGISTRY.get("legacy-gpu-resource").noncompliant)) if d]
    objects = [d for d in docs if d["kind"] in ("Pod", "Deployment", "ResourceClaimTemplate")] + legacy
    return [json.dumps(review(o, uid=f"bench-{i}")).encode() for i, o in enumerate(objects)]


def connection(url: str, ca: bytes) -> http.client.HTTPSConnection:
    host, port = url.removeprefix("https://").split(":")
    return http.client.HTTPSConnection(host, int(port), context=context_for(ca), timeout=10)


def send(conn, body: bytes) -> float:
    started = time.perf_counter()
    conn.request("POST", "/validate", body, {"Content-Type": "application/json"})
    answer = conn.getresponse()
    answer.read()
    assert answer.status == 200, answer.status
    return time.perf_counter() - started


def at_rate(url, ca, bodies, rate: float, seconds: float) -> list[float]:
    """Open-loop: a request every 1/rate s, spread over 4 connections."""
    latencies, lock, workers = [], threading.Lock(), 4
    interval = workers / rate

    def worker(k: int):
        conn = connection(url, ca)
        start = time.perf_counter() + k * interval / workers
        i = 0
        while True:
            due = start + i * interval
            if due > deadline:
                return
            time.sleep(max(0.0, due - time.perf_counter()))
            took = send(conn, bodies[(i * workers + k) % len(bodies)])
            with lock:
                latencies.append(took)
            i += 1

    deadline = time.perf_counter() + seconds
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    bodies = canned()
    with running_webhook() as (url, ca, _):
        conn = connection(url, ca)
        for body in bodies * 20:  # warm up: CEL programs, schemas
            send(conn, body)
        latencies = at_rate(url, ca, bodies, args.rate, args.seconds)
        p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
        pod = next(b for b in bodies if b'"kind": "Pod"' in b)
        conn = connection(url, ca)  # the idle one was closed by the server's read timeout
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < 3:
            send(conn, pod)
            count += 1
        throughput = count / (time.perf_counter() - started)
    print(f"direct, mixed reviews at {args.rate:.0f}/s for {args.seconds:.0f} s ({len(latencies)} reviews): "
          f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms (target p99 < 10 ms)")
    print(f"direct, one connection, compliant Pod: {throughput:.0f} reviews/s (target >= 1,000 per core; "
          "anchor: Kyverno 42.7 ms average at 100 virtual users through the API server)")


if __name__ == "__main__":
    main()
