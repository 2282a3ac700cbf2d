"""`draguard webhook` attacked on loopback, with its default limits (issue #39): a client
sending a byte at a time, connections past the cap, large bodies held open. Each attack
must leave legitimate reviews answered quickly and the server's memory bounded: a webhook
that hangs or is OOM-killed under `failurePolicy: Fail` refuses every admission."""

from __future__ import annotations

import select
import selectors
import socket
import ssl
import textwrap
import time

import pytest
import yaml

from draguard.rules import REGISTRY
from draguard.rules.examples import COMPLIANT_POD

from support.webhook import context_for, get, post, review, running_webhook

MIB = 1024 * 1024
QUICK = 3.0  # seconds for two reviews: inside the chart's timeoutSeconds (5) on a busy 2-core machine
GOOD_POD = next(d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d and d["kind"] == "Pod")
LEGACY_POD = next(d for d in yaml.safe_load_all(textwrap.dedent(REGISTRY.get("legacy-gpu-resource").noncompliant)) if d)


@pytest.fixture
def webhook():
    with running_webhook("--kube-version", "1.34") as running:
        yield running


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("https://").split(":")
    return host, int(port)


def _tls(url: str, ca: bytes) -> ssl.SSLSocket:
    host, port = _address(url)
    return context_for(ca).wrap_socket(socket.create_connection((host, port), timeout=10), server_hostname=host)


def _closed(sock: ssl.SSLSocket) -> bool:
    """Whether the server has closed `sock` (without waiting)."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except ssl.SSLWantReadError:  # a TLS 1.3 session ticket, no data
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def _answers_quickly(url: str, ca: bytes) -> float:
    """Seconds a compliant and a GPU-limited Pod took to be judged (admitted, denied)."""
    started = time.monotonic()
    assert post(url, ca, review(GOOD_POD))[1]["response"]["allowed"] is True
    assert post(url, ca, review(LEGACY_POD))[1]["response"]["allowed"] is False
    return time.monotonic() - started


def _rss(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_client_sending_a_byte_at_a_time_is_cut_at_the_deadline(webhook):
    """The old server's timeout was per read: a byte every few seconds held a connection (and
    a thread) for ever. The deadline runs from the request's first byte to its last."""
    url, ca, _ = webhook
    drip = _tls(url, ca)
    message = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b" " * 5000
    started, cut, slowest = time.monotonic(), None, 0.0
    try:
        for i in range(32):  # 16 s at most
            try:
                drip.sendall(message[i:i + 1])
            except OSError:
                cut = time.monotonic() - started
                break
            if _closed(drip):
                cut = time.monotonic() - started
                break
            slowest = max(slowest, _answers_quickly(url, ca))
            time.sleep(0.5)
    finally:
        drip.close()
    # a new connection's deadline is spread over its second half (a flood is not cut, nor
    # reconnects, in one wave); found at the next byte after the cut
    assert cut is not None and 4.5 < cut < 10 + QUICK + 1, cut
    assert slowest < QUICK, slowest
    assert "draguard_webhook_refused_total{reason=\"deadline\"} 1.0" in get(url, ca, "/metrics")[1]


def test_connections_past_the_cap_are_closed_at_once_and_reviews_still_answer(webhook):
    """2,150 connections that say nothing: the server keeps 2,048, closes the oldest for each
    one past that (no queue, no 30 s wait), and a review still answers at once."""
    url, ca, _ = webhook
    address = _address(url)
    sockets, closed = [], 0
    watch = selectors.DefaultSelector()
    try:
        for _ in range(2150):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(address)
            sockets.append(sock)
            watch.register(sock, selectors.EVENT_READ)
        assert _answers_quickly(url, ca) < QUICK
        deadline = time.monotonic() + 5
        while closed < 101 and time.monotonic() < deadline:
            for key, _ in watch.select(timeout=0.2):
                watch.unregister(key.fileobj)
                closed += 1
    finally:
        watch.close()
        for sock in sockets:
            sock.close()
    assert closed >= 100
    assert _answers_quickly(url, ca) < QUICK
    assert "draguard_webhook_refused_total{reason=\"evicted\"}" in get(url, ca, "/metrics")[1]


def test_large_bodies_held_open_take_no_more_memory_than_the_body_budget(webhook):
    """48 clients each pushing a 4 MiB body but its last byte: the old server read them all
    (a thread and 4 MiB each: 300 of them passed the chart's 1 GiB). Bodies are reserved from a
    budget before they are read, large ones from half of its 64 MiB: 8 are read, the others
    wait unread (what their clients push stays in the kernel's socket buffers), and small
    reviews still find room."""
    url, ca, process = webhook
    _answers_quickly(url, ca)  # warm: the judge's caches are filled
    before, held = _rss(process.pid), []
    try:
        for _ in range(48):
            sock = _tls(url, ca)
            sock.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (4 * MIB))
            sock.setblocking(False)
            held.append(sock)
        unsent, chunk = {sock: 4 * MIB - 1 for sock in held}, b" " * (64 * 1024)
        end = time.monotonic() + 4
        while unsent and time.monotonic() < end:  # push what each connection takes, without blocking
            pushed = False
            for sock in list(unsent):
                try:
                    unsent[sock] -= sock.send(chunk[:unsent[sock]])
                    pushed = True
                except (ssl.SSLWantWriteError, BlockingIOError):
                    continue
                except (ssl.SSLEOFError, ConnectionError):  # its deadline (5-10 s from accept) passed on a loaded machine
                    unsent[sock] = 0
                if not unsent[sock]:
                    del unsent[sock]
            if not pushed:
                time.sleep(0.05)
        grown = _rss(process.pid) - before
        assert _answers_quickly(url, ca) < QUICK  # small reviews still have room
    finally:
        for sock in held:
            sock.close()
    assert grown < 80 * MIB, f"RSS grew {grown / MIB:.0f} MiB"
    assert _answers_quickly(url, ca) < QUICK


def test_the_open_file_limit_is_raised_for_the_connections_or_they_are_fewer(monkeypatch):
    """A container's soft limit of 1,024 files would fail accept() past it, and asyncio then
    stops accepting for a second: the limit is raised, or (hard limit too low) the cap lowered."""
    import resource

    from draguard.admission import server

    asked = []
    monkeypatch.setattr(resource, "setrlimit", lambda kind, pair: asked.append(pair))
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (1024, 1_048_576))
    assert server._within_file_limit(server.Limits()).connections == 2048 and asked == [(4160, 1_048_576)]
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (1024, 1024))
    assert server._within_file_limit(server.Limits()).connections == 480  # two files each while it says hello


def test_handshakes_are_paced_in_the_order_they_came():
    """A flood's reconnections begin their TLS handshakes at the pacer's rate after its burst,
    first come first served (a lower bound of time only: a slow machine is slower still)."""
    import asyncio

    from draguard.admission.server import _Pacer

    async def flood() -> tuple[float, list[int]]:
        pacer, order = _Pacer(rate=100.0, burst=10), []

        async def one(i: int):
            await pacer.wait()
            order.append(i)
        started = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(60)))
        return time.monotonic() - started, order

    elapsed, order = asyncio.run(flood())
    assert order == list(range(60))
    assert elapsed >= (60 - 10) / 100 * 0.95
