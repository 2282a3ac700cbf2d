"""`draguard webhook --offline --self-signed` on loopback, attacked while it judges (issue #39):
idle connections that never speak, slow clients sending their request a byte a second, and
clients holding 4 MiB bodies open (each attacker reconnects a second after the server drops it,
to keep the pressure on), while Pod AdmissionReviews arrive at a fixed rate over keep-alive
connections, as the API server sends them.

    python benchmarks/webhook_abuse.py [--idle 1000] [--slow 500] [--bodies 300] [--rate 200]
                                       [--seconds 20] [--quick]

Prints the latency of the legitimate reviews (p50/p99, from when each was due: a review that
waits for a connection counts its wait) with and without the attack, errors (a review not
answered 200 within the API server's 5 s is one), wrong allows (half the reviews are of a Pod
with an nvidia.com/gpu limit, which must be denied), the server's peak RSS, what the attack
saw, and whether the server still serves afterwards. Targets: p99 under 50 ms under abuse, RSS
well under the chart's 1 GiB, no wrong allow. It stops by itself (each phase is bounded).
Against another tree's server: PYTHONPATH=/that/tree/src python benchmarks/webhook_abuse.py.

Not whole processes, on purpose: the webhook is a server that stays up; what the API server
waits for is each review's round trip while it is attacked, timed from the client's side of
the socket."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import re
import resource
import ssl
import sys
import textwrap
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from draguard.rules import REGISTRY  # noqa: E402
from draguard.rules.examples import COMPLIANT_POD  # noqa: E402
from support.webhook import context_for, get, review, running_webhook  # noqa: E402

MIB = 1024 * 1024
BACKOFF = 1.0  # seconds an attacker waits before it reconnects
TIMEOUT = 5.0  # the API server's timeoutSeconds in the chart


def pods() -> tuple[bytes, bytes]:
    """(a compliant Pod's review, the review of a Pod with an nvidia.com/gpu limit)."""
    good = next(d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d and d["kind"] == "Pod")
    gpu = next(d for d in yaml.safe_load_all(textwrap.dedent(REGISTRY.get("legacy-gpu-resource").noncompliant)) if d)
    assert gpu["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
    return json.dumps(review(good)).encode(), json.dumps(review(gpu)).encode()


def post(body: bytes) -> bytes:
    return (b"POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


async def exchange(reader, writer, request: bytes) -> tuple[int, bytes]:
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    return int(head.split(b" ", 2)[1]), await reader.readexactly(int(length.group(1)) if length else 0)


# -- the attack, in a process of its own ---------------------------------------------------

async def _attacker(kind: str, address, tls: ssl.SSLContext, stats: dict) -> None:
    """One attacker: connect, misbehave until the server drops it, wait BACKOFF, again."""
    head = b"POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: "
    while True:
        try:
            async with asyncio.timeout(10):
                reader, writer = await asyncio.open_connection(*address, **(
                    {} if kind == "idle" else {"ssl": tls, "server_hostname": address[0]}))
        except (OSError, TimeoutError):
            stats["connects failed"] += 1
        else:
            stats["opened"] += 1
            answer = asyncio.ensure_future(reader.read(64))  # done when the server answers or drops us
            try:
                if kind == "slow":
                    for byte in head + b"4000\r\n\r\n" + b" " * 4000:
                        if answer.done():
                            break
                        writer.write(bytes([byte]))
                        await asyncio.sleep(1)
                elif kind == "body":  # the head, and the body unless it is refused at once (no CPU spent on
                    writer.write(head + b"%d\r\n\r\n" % (4 * MIB))  # encrypting what is thrown away: the
                    await asyncio.wait([answer], timeout=0.1)  # attack shares the machine's cores)
                    chunk = b" " * (64 * 1024)
                    for sent in range(0, 4 * MIB - 1, len(chunk)):
                        if answer.done():
                            break
                        writer.write(chunk[:4 * MIB - 1 - sent])
                        await writer.drain()
                await answer  # held open until the server acts
            except (OSError, asyncio.IncompleteReadError):
                pass
            said = answer.result() if answer.done() and answer.exception() is None else b""
            stats["answered 503" if said.startswith(b"HTTP/1.1 503") else "dropped by the server"] += 1
            writer.transport.abort()
        await asyncio.sleep(BACKOFF)


def attack(address, ca: bytes, counts: dict[str, int], seconds: float, results, niceness: int) -> None:
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # writes to dropped connections are the point
    os.nice(niceness)

    async def run():
        stats = {"opened": 0, "answered 503": 0, "dropped by the server": 0, "connects failed": 0}
        tls = context_for(ca)
        attackers = [asyncio.ensure_future(_attacker(kind, address, tls, stats))
                     for kind, count in counts.items() for _ in range(count)]
        await asyncio.sleep(seconds)
        for task in attackers:
            task.cancel()
        await asyncio.gather(*attackers, return_exceptions=True)
        return stats

    results.put(asyncio.run(run()))


# -- the legitimate reviews, and the server's memory, in this process ----------------------

async def legitimate(address, tls, bodies, rate: float, seconds: float, pool: list, rss_of=None) -> dict:
    """Open-loop: a review due every 1/rate s, alternately compliant and GPU-limited, over a
    `pool` of keep-alive connections that lives from one phase to the next, as the API
    server's does (a connection the server closed while idle is noticed before use, or its
    review retried once on a new one, as the API server's Go client does)."""
    loop = asyncio.get_running_loop()
    latencies, errors = [], {}
    result = {"wrong allows": 0, "gpu pods": 0, "retried": 0, "peak rss": 0}

    async def connect():
        return await asyncio.open_connection(*address, ssl=tls, server_hostname=address[0])

    async def one(i: int, due: float) -> None:
        gpu, connection = i % 2 == 1, None
        try:
            async with asyncio.timeout(TIMEOUT):
                for attempt in (0, 1):
                    while pool and (pool[-1][0].at_eof() or pool[-1][1].is_closing()):
                        pool.pop()[1].transport.abort()
                    reused = bool(pool)
                    connection = pool.pop() if reused else await connect()
                    try:
                        status, payload = await exchange(*connection, post(bodies[gpu]))
                        break
                    except (OSError, asyncio.IncompleteReadError):
                        connection[1].transport.abort()
                        if not reused or attempt:
                            raise
                        result["retried"] += 1
            latencies.append(loop.time() - due)
            pool.append(connection)
            if status != 200:
                errors[f"HTTP {status}"] = errors.get(f"HTTP {status}", 0) + 1
                return
            allowed = json.loads(payload)["response"]["allowed"]
            result["gpu pods"] += gpu
            if gpu and allowed:
                result["wrong allows"] += 1
            elif not gpu and not allowed:
                errors["compliant pod denied"] = errors.get("compliant pod denied", 0) + 1
        except TimeoutError:
            errors["no answer in 5 s"] = errors.get("no answer in 5 s", 0) + 1
            if connection is not None:
                connection[1].transport.abort()
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1

    async def watch_rss():
        while True:
            result["peak rss"] = max(result["peak rss"], rss_of())
            await asyncio.sleep(0.25)

    watcher = asyncio.ensure_future(watch_rss()) if rss_of else None
    pool.extend([await connect() for _ in range(4 - len(pool))])
    start, tasks = loop.time() + 0.05, []
    for i in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
        tasks.append(asyncio.ensure_future(one(i, start + i / rate)))
    await asyncio.gather(*tasks)
    if watcher:
        watcher.cancel()
    latencies.sort()
    return {**result, "count": len(latencies), "errors": errors,
            "p50": latencies[len(latencies) // 2] * 1000 if latencies else float("nan"),
            "p99": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan"),
            "max": latencies[-1] * 1000 if latencies else float("nan")}


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def memory(pid: int, field: str) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


async def still_serves(address, tls, bodies) -> str:
    right = 0
    for i in range(20):
        try:
            async with asyncio.timeout(TIMEOUT):
                reader, writer = await asyncio.open_connection(*address, ssl=tls, server_hostname=address[0])
                status, payload = await exchange(reader, writer, post(bodies[i % 2]))
                writer.transport.abort()
            right += status == 200 and json.loads(payload)["response"]["allowed"] is (i % 2 == 0)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
            pass
    return f"{right}/20 reviews answered right on new connections"


RAMP = 3.0  # seconds for the attack's connections to open before the reviews are measured


async def phases(address, tls, bodies, args, server: int, attacker) -> tuple[dict, dict, list[float]]:
    """(the baseline, the reviews under abuse, CPU of the server and the attack under it): one
    pool of kept-alive connections throughout, opened before the attack, as the API server's."""
    pool: list = []
    await legitimate(address, tls, bodies, args.rate, 2, pool)  # warm up: schemas, CEL programs
    idle_cpu = cpu_seconds(server), time.monotonic()
    baseline = await legitimate(address, tls, bodies, args.rate, 5, pool)
    baseline["cpu"] = (cpu_seconds(server) - idle_cpu[0]) / (time.monotonic() - idle_cpu[1])
    attacker.start()
    await asyncio.sleep(RAMP)
    cpu = cpu_seconds(server), cpu_seconds(attacker.pid), time.monotonic()
    abused = await legitimate(address, tls, bodies, args.rate, args.seconds, pool,
                              rss_of=lambda: memory(server, "VmRSS"))
    cpu = [(cpu_seconds(pid) - used) / (time.monotonic() - cpu[2]) for pid, used in zip((server, attacker.pid), cpu)]
    for _, writer in pool:
        writer.transport.abort()
    return baseline, abused, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1000, help="connections that never speak (default 1000)")
    parser.add_argument("--slow", type=int, default=500, help="clients sending a byte a second (default 500)")
    parser.add_argument("--bodies", type=int, default=300, help="clients holding a 4 MiB body open (default 300)")
    parser.add_argument("--rate", type=float, default=200, help="legitimate reviews a second (default 200)")
    parser.add_argument("--seconds", type=float, default=20, help="seconds measured under abuse (default 20)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the attackers, 5 s under abuse")
    parser.add_argument("--attacker-nice", type=int, default=10, metavar="N",
                        help="the attack's process runs at this niceness (default 10): in a cluster its clients "
                             "run on other machines, and here their own TLS work would otherwise take the "
                             "server's CPU; 0 measures both on equal terms")
    args = parser.parse_args()
    if args.quick:
        args.idle, args.slow, args.bodies, args.seconds = args.idle // 10, args.slow // 10, args.bodies // 10, 5
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = args.idle + args.slow + args.bodies + 1000
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(needed, soft)), hard))
    bodies = pods()
    with running_webhook("--kube-version", "1.34") as (url, ca, process):
        host, port = url.removeprefix("https://").split(":")
        address, tls = (host, int(port)), context_for(ca)
        counts = {"idle": args.idle, "slow": args.slow, "body": args.bodies}
        results = multiprocessing.get_context("fork").Queue()
        attacker = multiprocessing.get_context("fork").Process(
            target=attack, args=(address, ca, counts, RAMP + args.seconds + 1, results, args.attacker_nice),
            daemon=True)
        baseline, abused, cpu = asyncio.run(phases(address, tls, bodies, args, process.pid, attacker))
        seen = results.get(timeout=30)
        attacker.join(timeout=10)
        time.sleep(1)
        after = asyncio.run(still_serves(address, tls, bodies))
        peak = memory(process.pid, "VmHWM")
        metrics = get(url, ca, "/metrics")[1]
        refused = {reason: int(float(n)) for reason, n in
                   re.findall(r'draguard_webhook_refused_total\{reason="([^"]+)"\} (\S+)', metrics)}
        refused = refused or ("none" if "draguard_webhook_refused" in metrics else "not counted (an older server)")
    print(f"baseline, no abuse: {baseline['count']} reviews at {args.rate:.0f}/s: p50 {baseline['p50']:.1f} ms, "
          f"p99 {baseline['p99']:.1f} ms; errors {baseline['errors'] or 0}; server CPU {baseline['cpu']:.2f} cores")
    print(f"under abuse ({args.idle} idle connections, {args.slow} slow clients at a byte a second, {args.bodies} "
          f"held 4 MiB bodies), {args.seconds:.0f} s: {abused['count']} reviews answered of "
          f"{int(args.rate * args.seconds)}: p50 {abused['p50']:.1f} ms, p99 {abused['p99']:.1f} ms, "
          f"max {abused['max']:.1f} ms (target p99 < 50 ms)")
    print(f"  errors: {abused['errors'] or 0}; retried once after the server closed an idle connection: "
          f"{abused['retried']}")
    print(f"  wrong allows: {abused['wrong allows']} of {abused['gpu pods']} Pods with an nvidia.com/gpu limit "
          "(target 0)")
    print(f"  attack: {seen['opened']} connections opened, {seen['answered 503']} answered 503, "
          f"{seen['dropped by the server']} dropped by the server, {seen['connects failed']} connects failed or "
          "timed out (10 s)")
    print(f"  the server refused or cut (draguard_webhook_refused_total): "
          f"{refused}; "
          f"CPU under abuse: server {cpu[0]:.2f} cores, attack {cpu[1]:.2f} cores (at nice {args.attacker_nice})")
    print(f"server RSS: peak {abused['peak rss'] / MIB:.0f} MiB under abuse (sampled every 0.25 s), "
          f"VmHWM {peak / MIB:.0f} MiB (target: well under 1 GiB)")
    print(f"afterwards: {after}")


if __name__ == "__main__":
    main()
