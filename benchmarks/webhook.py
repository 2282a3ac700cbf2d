"""`draguard webhook --offline` driven directly on loopback with canned AdmissionReviews (legacy
and compliant Pods, a Deployment, a claim template), over keep-alive HTTPS connections:
latency p50/p99 at a fixed rate, and the most reviews a second one connection gets for a Pod.

    python benchmarks/webhook.py [--rate 200] [--seconds 10] [--apiserver]

With `--apiserver` (needs Go: the control-plane harness), also the latency the webhook adds
through the real kube-apiserver: server-side dry-run creates of a compliant Pod in a namespace
the webhook judges against one it does not.

Targets (issue: admission): p99 under 10 ms at 200 requests/s, at least 1,000 Pod reviews/s per
core, and under 20 ms added at p99 through the API server. Anchor: Kyverno, 42.7 ms average at
100 virtual users through the API server.

Not whole processes, on purpose: the webhook is a server that stays up; what the API server
waits for is each review's round trip over a kept-alive connection, timed from the client's
side of the socket (start-up is paid once per pod of the webhook's Deployment)."""

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


def through_apiserver(count: int = 300) -> tuple[list[float], list[float]]:
    """Sorted latencies of dry-run Pod creates (judged, not judged) through a real API server."""
    import tempfile

    from kubernetes import client

    from support.cluster import ControlPlane, build

    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from test_webhook_control_plane import LABEL, configuration  # noqa: E402

    pod = next(d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d and d["kind"] == "Pod")
    with tempfile.TemporaryDirectory() as tmp:
        plane = ControlPlane(build(), Path(tmp))
        plane.start()
        try:
            core = client.CoreV1Api(plane.api())
            core.create_namespace({"metadata": {"name": "judged", "labels": LABEL}})
            core.create_namespace({"metadata": {"name": "free"}})
            with running_webhook() as (url, ca, _):
                client.AdmissionregistrationV1Api(plane.api()).create_validating_webhook_configuration(
                    configuration(url, ca))
                time.sleep(2)  # the API server picks the configuration up
                timings = {}
                for namespace in ("judged", "free"):
                    for i in range(20):  # warm up
                        core.create_namespaced_pod(namespace, dict(pod, metadata={"name": f"w{i}"}), dry_run="All")
                    took = []
                    for i in range(count):
                        started = time.perf_counter()
                        core.create_namespaced_pod(namespace, dict(pod, metadata={"name": f"p{i}"}), dry_run="All")
                        took.append(time.perf_counter() - started)
                    timings[namespace] = sorted(took)
        finally:
            plane.stop()
    return timings["judged"], timings["free"]


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(len(values) * q))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--apiserver", action="store_true", help="also measure through the real kube-apiserver")
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
    if args.apiserver:
        judged, free = through_apiserver()
        print(f"through kube-apiserver, dry-run Pod creates: judged p50 {_pct(judged, .5):.1f} ms, p99 "
              f"{_pct(judged, .99):.1f} ms; not judged p50 {_pct(free, .5):.1f} ms, p99 {_pct(free, .99):.1f} ms; "
              f"added at p99 {_pct(judged, .99) - _pct(free, .99):.1f} ms (target < 20 ms)")


if __name__ == "__main__":
    main()
