"""The webhook's HTTPS server: `/validate` and, with `--mutate`, `/mutate` (AdmissionReview
v1; the mutating path admits with the safe fixes as a JSON Patch), `/healthz`, `/readyz`,
`/metrics` (Prometheus: requests, denials by rule, latency, refusals), JSON-line logs on stderr.

It holds no state a replica would need from another (stateless: scale it out behind a
Service). A malformed review gets 400 with one line saying why, and a failure while judging is
an error response (500), never a crash: with `failurePolicy: Fail` the API server then refuses
the request, which is the point of failing closed. So the server must never die of its
clients, nor make the API server wait: what one process holds at once is bounded (`Limits`),
and beyond a bound it answers at once (503, or the connection closed), so the API server
applies failurePolicy in milliseconds instead of at its timeout.

Why its own asyncio loop and not the ThreadingHTTPServer it replaced, nor uvicorn (measured
on 2 cores, issue #39). The threaded server had no connection cap, a listen backlog of 5 and a
timeout per read, not per request: 1,000 simultaneous connections left 271 timing out at 30 s,
clients sending a byte a second held 500 connections (and threads) for 60 s, and 300 held
4 MiB bodies took its RSS to 1.39 GB, over the chart's 1 GiB limit (an OOM kill refuses every
admission). uvicorn 0.55 (`--limit-concurrency 20 --timeout-keep-alive 5`, probed on loopback):
with 20 idle connections open it answered the next request 503, a client sending its headers a
byte a second was still connected after 20 s (its keep-alive timer starts after a response;
there is no request deadline), and a 100 MB Content-Length was accepted (no body limit); it
would also need its private protocol class patched for certificate reloading. Wrapping all
that is more code than this module, which keeps every bound in one place: one event loop holds
the connections (an idle one costs about 50 KiB, no thread), a fixed pool of threads judges,
and the HTTP/1.1 it speaks is the little the API server sends (a request line, headers, a body
of Content-Length bytes), parsed strictly. Under benchmarks/webhook_abuse.py (1,000 idle
connections, 500 clients at a byte a second, 300 held 4 MiB bodies) it peaked at 250 to 310 MiB
where the threaded server reached 1.2 to 1.8 GB."""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import dataclasses
import json
import os
import random
import re
import resource
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

from .certs import ReloadingContext
from .judge import WORKLOAD_CONTROLLERS, judge
from .review import Request, ReviewError, parse, response

MAX_BODY = 4 * 1024 * 1024  # the API server sends objects of at most ~3 MiB
LARGE_BODY = 1024 * 1024  # bodies over this may hold only half the body budget: reviews are mostly a few KiB
CHUNK = 16 * 1024  # bytes read at once (a TLS record); a connection buffers at most twice this beyond its body
TLS_RECORD = 5 + 16 * 1024 + 256  # a TLS record's header and its longest payload (RFC 8446 5.1)
HANDSHAKE_RECORD = 22  # ContentType handshake: a ClientHello's record
TURN = 0.02  # seconds a handshake holds its turn (the server's part takes about a millisecond)
HELLO_POLL = 0.2  # seconds between looks at a ClientHello that came in part


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one process holds at once. The defaults keep a replica well inside the chart's
    1 GiB under the abuse of benchmarks/webhook_abuse.py (README: the webhook's limits)."""

    connections: int = 2048  # open at once; beyond, the one longest in its phase goes (see Server._admit)
    deadline: float = 10.0  # seconds from a request's first byte (a new connection's accept) to its last
    idle: float = 30.0  # seconds a kept-alive connection may wait for its next request
    body_budget: int = 64 * 1024 * 1024  # bytes of bodies in flight, all requests together
    judges: int = 2  # threads judging (CPU-bound Python: more buys contention, not speed)
    queue: int = 64  # reviews read and waiting for a judge; beyond, 503
    head: int = 16 * 1024  # bytes of request line and headers
    backlog: int = 4096  # the listen queue (the kernel caps it at net.core.somaxconn)
    accepts: int = 32  # connections accepted in one turn of the loop
    handshakes: int = 32  # TLS handshakes in their first TURN at once; the others wait, unread
    handshake_rate: float = 200.0  # TLS handshakes begun a second at most (the API server keeps its connections)


class Metrics:
    """Prometheus series, in a registry of their own (the official client)."""

    def __init__(self):
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        self.requests = Counter("draguard_webhook_requests", "admission reviews answered",
                                ["path", "result"], registry=self.registry)
        self.denials = Counter("draguard_webhook_denials", "denials by rule", ["rule"], registry=self.registry)
        self.latency = Histogram("draguard_webhook_latency_seconds", "time to judge a review", ["path"],
                                 buckets=(.001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5),
                                 registry=self.registry)
        self.refused = Counter("draguard_webhook_refused", "connections and requests refused or cut by a limit",
                               ["reason"], registry=self.registry)

    def text(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


def log(event: str, **fields) -> None:
    """One JSON line on stderr: the structured log."""
    record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": event, **fields}
    sys.stderr.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stderr.flush()


class Webhook:
    """What a request needs: the configuration the judge runs with, the namespaces exempt,
    the cluster's view (the cache's objects, and its devices with their allocator; none
    offline), readiness, metrics."""

    def __init__(self, config, exempt: set[str], view=lambda namespace: ((), None), ready=lambda: True,
                 mutating: bool = False, controllers: frozenset = WORKLOAD_CONTROLLERS):
        self.config, self.exempt, self.view, self.ready = config, exempt, view, ready
        self.mutating, self.controllers = mutating, controllers
        self.metrics = Metrics()

    def review(self, body: bytes | bytearray, mutate: bool = False) -> tuple[int, dict]:
        request = parse(body)
        if mutate:
            return 200, self._mutate(request)
        if request.namespace in self.exempt:
            return 200, response(request.uid, True)
        context, devices = self.view(request.namespace)
        verdict = judge(request, self.config, context, devices, self.controllers)
        for finding in verdict.denials:
            self.metrics.denials.labels(finding.rule).inc()
        log("review", uid=request.uid, operation=request.operation, kind=request.group_kind[1],
            namespace=request.namespace, name=request.name, dryRun=request.dry_run, allowed=verdict.allowed,
            denied=[f.rule for f in verdict.denials], warned=[f.rule for f in verdict.warnings])
        return 200, response(request.uid, verdict.allowed, verdict.message() if not verdict.allowed else "",
                             verdict.warning_lines())


    def _mutate(self, request) -> dict:
        """Admit with the safe fixes as a patch (denying is the validating path's job)."""
        from .mutate import safe_patch

        if request.namespace in self.exempt:
            return response(request.uid, True)
        context, devices = self.view(request.namespace)
        patch, applied = safe_patch(request, self.config, context, devices, self.controllers)
        log("mutate", uid=request.uid, kind=request.group_kind[1], namespace=request.namespace, name=request.name,
            applied=applied)
        return response(request.uid, True, warnings=[f"draguard fixed {title}" for title in applied], patch=patch)


class _Refusal(Exception):
    """An answer instead of the request's (code, one line why); `close` when what the client
    sent next cannot be found (its body unread), or the reason is that the server holds too much."""

    def __init__(self, code: int, message: str, close: bool = True, reason: str = ""):
        super().__init__(message)
        self.code, self.close, self.reason = code, close, reason


class _Gone(Exception):
    """The client closed, or broke off inside a request: nothing to answer."""


class _Budget:
    """Bytes of request bodies held at once. A body is reserved whole, from its Content-Length,
    before a byte of it is read, and given back once judged: what bodies hold can never pass the
    budget however slowly they arrive. Large bodies share only half of it, so clients holding
    4 MiB bodies open leave room for the small reviews the API server sends; a large body that
    finds its share taken waits for it unread (its connection holds no more than its buffers)
    within its deadline, rather than being refused: refused, it is sent again at once, a TLS
    handshake each time (under benchmarks/webhook_abuse.py, 170 handshakes a second from 300
    such clients, and p99 of legitimate reviews in seconds)."""

    def __init__(self, total: int):
        self.total, self.held, self.large_held = total, 0, 0
        self._room = asyncio.Event()  # set, and replaced, when a large body's bytes come back

    def _take(self, size: int) -> bool:
        large = size > LARGE_BODY
        if self.held + size > self.total or (large and self.large_held + size > self.total // 2):
            return False
        self.held += size
        self.large_held += size if large else 0
        return True

    async def take(self, size: int) -> bool:
        """Reserve `size` bytes: at once, or for a large body when its share has room (the
        caller's deadline bounds the wait); False for a small body that does not fit."""
        while not self._take(size):
            if size <= LARGE_BODY:
                return False
            await self._room.wait()
        return True

    def give(self, size: int) -> None:
        self.held -= size
        if size > LARGE_BODY:
            self.large_held -= size
            self._room.set()
            self._room = asyncio.Event()


_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TARGET = re.compile(rb"/[\x21-\x7e]*")
IDLE, READING, BUSY = "idle", "reading", "busy"  # a connection's phase: waiting, receiving, being answered


def _head(head: bytes) -> tuple[str, str, dict[str, bytes], bool]:
    """(method, path, headers by lower-case name, whether to close after answering) of a
    request's head, strictly: what does not parse is a 400."""
    line, *fields = head.split(b"\r\n")
    parts = line.split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not _TARGET.fullmatch(parts[1]) \
            or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise _Refusal(400, "the request line is not an HTTP/1.1 request")
    headers: dict[str, bytes] = {}
    for field in fields:
        name, colon, value = field.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise _Refusal(400, "a header line is malformed")
        key, value = name.lower().decode(), value.strip(b" \t")
        if key == "content-length" and headers.get(key, value) != value:
            raise _Refusal(400, "the request has two different Content-Lengths")
        headers[key] = headers[key] + b", " + value if key in headers and key != "content-length" else value
    close = parts[2] == b"HTTP/1.0" or b"close" in headers.get("connection", b"").lower()
    return parts[0].decode(), parts[1].decode().split("?", 1)[0], headers, close


def _answer(code: int, body: bytes, content_type: str, close: bool) -> bytes:
    """The response, as one write (no Nagle wait between head and body)."""
    close_line = "Connection: close\r\n" if close else ""
    return (f"HTTP/1.1 {code} {HTTPStatus(code).phrase}\r\nServer: draguard-webhook\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n{close_line}\r\n").encode() + body


def _error(message: str) -> tuple[bytes, str]:
    return json.dumps({"error": message}).encode(), "application/json"


def _within_file_limit(limits: Limits) -> Limits:
    """`limits`, with the process's open-file limit raised to hold its connections (a soft limit
    of 1,024 is common in containers: past it accept() fails, and asyncio stops accepting for a
    second); where the hard limit is lower, fewer connections, said in the log."""
    spare = 64  # the listener, the cache's watches, the log
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * limits.connections + spare  # a connection waiting for its ClientHello holds two

    if soft != resource.RLIM_INFINITY and soft < wanted:
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if soft != resource.RLIM_INFINITY and soft < wanted:
        log("connections limited by the open-file limit", connections=(soft - spare) // 2, asked=limits.connections)
        return dataclasses.replace(limits, connections=max(1, (soft - spare) // 2))
    return limits


class _Paused(asyncio.StreamReaderProtocol):
    """A connection that reads nothing until its TLS handshake begins: its ClientHello waits in
    the kernel (read before start_tls, it would go to the plain stream and be lost), so that it
    can be seen whole (_client_hello) and wait for its turn (Server._handshake) at no cost."""

    def connection_made(self, transport):
        transport.pause_reading()
        super().connection_made(transport)
        # Before CPython 3.11.4 (gh-103607; Debian bookworm's python3 is 3.11.2) the transport
        # adds its reader after connection_made whatever it was told, and would read the
        # ClientHello into the plain stream: pause again once that has run.
        asyncio.get_running_loop().call_soon(self._pause_again, transport)

    @staticmethod
    def _pause_again(transport) -> None:
        if not transport.is_closing():
            transport.resume_reading()
            transport.pause_reading()


def _wake(future: asyncio.Future[None]) -> None:
    """Resolve `future` once (a reader's callback may run again before the waiter resumes)."""
    if not future.done():
        future.set_result(None)


def _this_task() -> asyncio.Task:
    """The task running the caller: a connection's coroutines always run in one."""
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("a connection's coroutine runs outside a task")
    return task


async def _client_hello(sock) -> None:
    """Until the kernel holds the connection's first TLS record whole (its ClientHello), or a
    first byte that begins no handshake record (start_tls then fails at once). Read through a
    duplicate of the socket, peeking: the transport owns the socket itself and reads it once
    the handshake begins. A client that connects and never speaks waits here, within its
    deadline, taking no turn; one that sends its ClientHello a byte at a time is looked at
    again every HELLO_POLL seconds."""
    loop = asyncio.get_running_loop()
    peer = socket.socket(fileno=os.dup(sock.fileno()))
    try:
        while True:
            readable: asyncio.Future[None] = loop.create_future()
            loop.add_reader(peer.fileno(), _wake, readable)
            try:
                await readable
            finally:
                loop.remove_reader(peer.fileno())
            try:
                head = peer.recv(TLS_RECORD, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue
            if not head:  # closed before it spoke: it takes no turn of the pacer's
                raise _Gone()
            if head[0] != HANDSHAKE_RECORD or (len(head) >= 5 and len(head) >= 5 + int.from_bytes(head[3:5], "big")):
                return
            await asyncio.sleep(HELLO_POLL)
    finally:
        peer.close()


class _Pacer:
    """At most `rate` TLS handshakes begun a second, in the order their ClientHellos came,
    `burst` at once after a quiet spell. A handshake costs the server about a millisecond of
    CPU (key exchange and signature) and the API server keeps its connections alive, so new
    connections at a higher rate are a flood's: paced, its reconnections cost a bounded share
    of the loop, and the ones still waiting at their deadline are closed unread (under
    benchmarks/webhook_abuse.py, 1,800 attackers reconnect in waves of hundreds a second)."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, burst
        self.tokens, self.stamp = float(burst), time.monotonic()
        self._turn = asyncio.Lock()  # FIFO: the waiting handshakes go in the order they came

    async def wait(self) -> None:
        async with self._turn:
            while True:
                now = time.monotonic()
                self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
                self.stamp = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) / self.rate)


class Server:
    """TLS on each accepted connection with the current certificate (reloaded on change), the
    requests of all connections on one event loop, their judging on a fixed pool of threads.
    The listening socket is bound here, so a port in use fails before anything starts."""

    def __init__(self, address: tuple[str, int], webhook: Webhook, tls: ReloadingContext, limits: Limits = Limits()):
        self.webhook, self.tls, self.limits = webhook, tls, _within_file_limit(limits)
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.create_server(address, family=family, backlog=limits.backlog)
        self.server_address = self.socket.getsockname()
        self.budget = _Budget(limits.body_budget)
        self.pool = ThreadPoolExecutor(limits.judges, thread_name_prefix="judge")
        self.open: dict[asyncio.Task, str] = {}  # connection -> phase, in the order their phases began
        self.judging = 0  # reviews read and not yet answered
        self.draining = False
        self.turns = asyncio.Semaphore(self.limits.handshakes)
        self.pacer = _Pacer(self.limits.handshake_rate, self.limits.handshakes)

    async def _handshake(self, writer) -> None:
        """The TLS handshake of a connection whose ClientHello is whole in the kernel, in its
        turn: at most `handshakes` are in their first TURN at once, which is when the server
        does its part (key exchange, signature) on reading the ClientHello. A flood of new
        connections otherwise begins thousands of handshakes in one turn of the loop, and every
        established connection waits behind them (stalls of 30 to 185 ms, p99 of 180 to 270 ms
        under benchmarks/webhook_abuse.py). A turn ends after TURN even if the client has not
        finished its part, so a client that stalls holds no one up for longer."""
        await self.pacer.wait()
        handshake = asyncio.ensure_future(writer.start_tls(self.tls.current()))
        try:
            async with self.turns:
                await asyncio.wait([handshake], timeout=TURN)
            await handshake
        finally:
            handshake.cancel()

    def _phase(self, task: asyncio.Task, phase: str) -> None:
        if phase != BUSY:  # being answered keeps its place: the phase it began still counts for its age
            self.open.pop(task, None)
        self.open[task] = phase

    def _admit(self, task: asyncio.Task) -> bool:
        """Room for a new connection: beyond the cap, the connection longest in its phase (never
        one being answered) is closed for it. A review reaches the server in milliseconds, so the
        oldest is the slowest client, or an idle one; a queue of connections waiting for a slot
        would make the API server wait for its timeout instead."""
        if self.draining:
            return False
        if len(self.open) >= self.limits.connections:
            oldest = next((t for t, phase in self.open.items() if phase != BUSY), None)
            if oldest is None:
                self.webhook.metrics.refused.labels("connections").inc()
                return False
            del self.open[oldest]
            oldest.cancel()
            self.webhook.metrics.refused.labels("evicted").inc()
        self.open[task] = READING
        return True

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = _this_task()
        if not self._admit(task):
            writer.transport.abort()
            return
        graceful = False
        try:
            graceful = await self._converse(reader, writer, task)
        except TimeoutError:
            self.webhook.metrics.refused.labels("deadline").inc()
        except (_Gone, OSError, asyncio.CancelledError):  # ssl.SSLError is an OSError
            pass
        finally:
            self.open.pop(task, None)
            if graceful:  # the answer flushed and TLS closed in order, briefly; then it goes anyway
                writer.close()
                try:
                    async with asyncio.timeout(1):
                        await writer.wait_closed()
                except (TimeoutError, OSError, asyncio.CancelledError):
                    pass
            writer.transport.abort()

    async def _converse(self, reader, writer, task) -> bool:
        """Answer the connection's requests until it closes, breaks a limit, or says close.
        True when the connection is to be closed in order (TLS close_notify, briefly); a refused
        client's connection is dropped at once instead, its unread bytes with it."""
        loop = asyncio.get_running_loop()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # what the kernel holds of a body that waits unread for the budget: 128 KiB, not the
        # megabytes receive-buffer autotuning grows to (a 3 MiB review still arrives in ms)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        # a new connection's first request: from accept, less up to half at random, so that a
        # flood accepted in one burst is not cut in one burst, nor reconnects in one (each cut
        # costs the loop its teardown, each reconnection a handshake); a review takes milliseconds
        deadline = loop.time() + self.limits.deadline * random.uniform(0.5, 1.0)
        async with asyncio.timeout_at(deadline):
            await _client_hello(sock)
            await self._handshake(writer)
        writer.transport.set_read_buffer_limits(CHUNK)  # decrypted or not, a connection buffers little
        buffered = bytearray()
        while True:
            orderly = True
            try:
                code, payload, content_type, close = await self._request(reader, writer, buffered, deadline)
            except _Refusal as refusal:
                if refusal.reason:
                    self.webhook.metrics.refused.labels(refusal.reason).inc()
                orderly, code, close = False, refusal.code, refusal.close
                payload, content_type = _error(str(refusal))
            close = close or self.draining
            writer.write(_answer(code, payload, content_type, close))
            async with asyncio.timeout(self.limits.deadline):
                await writer.drain()
            if close:
                return orderly
            self._phase(task, IDLE)
            if not buffered:
                try:
                    async with asyncio.timeout(self.limits.idle):
                        chunk = await reader.read(CHUNK)
                except TimeoutError:
                    return True  # idle too long: reaped
                if not chunk:
                    return False
                buffered += chunk
            self._phase(task, READING)
            deadline = loop.time() + self.limits.deadline

    async def _request(self, reader, writer, buffered: bytearray, deadline: float) -> tuple[int, bytes, str, bool]:
        """(status, body, its content type, whether to close after it) of the answer to the next
        request, read within `deadline`."""
        async with asyncio.timeout_at(deadline):
            while (end := buffered.find(b"\r\n\r\n")) < 0:
                if len(buffered) > self.limits.head:
                    raise _Refusal(431, f"the request's headers are over {self.limits.head} bytes")
                chunk = await reader.read(CHUNK)
                if not chunk:
                    raise _Gone
                buffered += chunk
        if end > self.limits.head:
            raise _Refusal(431, f"the request's headers are over {self.limits.head} bytes")
        head = bytes(buffered[:end])
        del buffered[:end + 4]
        method, path, headers, close = _head(head)
        has_body = "transfer-encoding" in headers or headers.get("content-length", b"0") != b"0"
        if method == "GET":
            return *self._get(path), close or has_body
        if method != "POST":
            raise _Refusal(405, f"{method} is not served: reviews are POSTed to /validate")
        webhook = self.webhook
        if path not in ("/validate", "/mutate") or (path == "/mutate" and not webhook.mutating):
            raise _Refusal(404, f"no such path {path}: reviews go to /validate" +
                           (" or /mutate" if webhook.mutating else " (/mutate needs --mutate)"))
        length = headers.get("content-length")
        if length is None or "transfer-encoding" in headers or not length.isdigit():  # bytes: ASCII digits only
            raise _Refusal(411, "a Content-Length is required")
        size = int(length)
        if size > MAX_BODY:
            webhook.metrics.requests.labels(path, "too-large").inc()
            raise _Refusal(413, f"the review is larger than {MAX_BODY} bytes")
        async with asyncio.timeout_at(deadline):
            reserved = await self.budget.take(size)
        if not reserved:
            raise _Refusal(503, "the webhook holds as many request bodies as it may: overloaded", reason="body-budget")
        try:
            if headers.get("expect", b"").lower() == b"100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = await self._body(reader, buffered, size, deadline)
            if self.judging >= self.limits.judges + self.limits.queue:
                raise _Refusal(503, "the webhook has as many reviews waiting as it may: overloaded", close=False,
                               reason="busy")
            self._phase(_this_task(), BUSY)
            self.judging += 1
            try:
                code, payload = await asyncio.get_running_loop().run_in_executor(self.pool, self._judge, body, path)
            finally:
                self.judging -= 1
        finally:
            self.budget.give(size)
        return code, payload, "application/json", close

    async def _body(self, reader, buffered: bytearray, size: int, deadline: float) -> bytearray:
        body = buffered[:size]
        del buffered[:size]
        async with asyncio.timeout_at(deadline):
            while len(body) < size:
                chunk = await reader.read(min(CHUNK, size - len(body)))
                if not chunk:
                    raise _Gone
                body += chunk
        return body

    def _get(self, path: str) -> tuple[int, bytes, str]:
        webhook = self.webhook
        if path == "/healthz":
            return 200, b"ok\n", "text/plain"
        if path == "/readyz":
            ready = webhook.ready()
            return (200, b"ok\n", "text/plain") if ready else (503, b"cache not synced\n", "text/plain")
        if path == "/metrics":
            return 200, webhook.metrics.text(), "text/plain; version=0.0.4"
        return 404, *_error(f"no such path {path}")

    def _judge(self, body: bytes | bytearray, path: str) -> tuple[int, bytes]:
        """(status, body) of the answer to a review (on a judging thread)."""
        webhook = self.webhook
        started = time.perf_counter()
        try:
            code, answer = webhook.review(body, mutate=path == "/mutate")
            result = "allowed" if answer["response"]["allowed"] else "denied"
        except ReviewError as exc:
            code, answer, result = 400, {"error": str(exc)}, "malformed"
        except Exception as exc:  # noqa: BLE001 - answered as an error: failurePolicy decides, fail-closed
            code, answer, result = 500, {"error": f"internal error: {type(exc).__name__}: {exc}"}, "error"
            log("error", error=answer["error"])
        webhook.metrics.latency.labels(path).observe(time.perf_counter() - started)
        webhook.metrics.requests.labels(path, result).inc()
        return code, json.dumps(answer, separators=(",", ":")).encode()

    def _settle_memory(self) -> None:
        """Judge one compliant Pod before serving, so that the schemas, CEL programs and
        catalog are loaded, then move everything alive into the collector's permanent
        generation (gc.freeze): a full collection then walks only what requests make. Under
        benchmarks/webhook_abuse.py full collections that walked the loaded catalog paused the
        loop for 77 to 165 ms each (gc.callbacks, measured)."""
        import gc

        from ..rules.examples import COMPLIANT_POD
        from .judge import rules_for

        pod = next(d for d in _documents(COMPLIANT_POD) if d.get("kind") == "Pod")
        judge(Request("warm-up", {"group": "", "version": "v1", "kind": "Pod"}, "CREATE", "default", "warm-up",
                      pod, None, True), rules_for(self.webhook.config, offline=True))
        gc.collect()
        gc.freeze()

    async def run(self) -> None:
        """Serve until SIGTERM/SIGINT, then drain: stop accepting, close idle connections, let
        requests in progress finish within a deadline, then close the rest."""
        import signal

        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: log("error", error=context.get("message", ""),
                                                          exception=repr(context.get("exception"))))
        # asyncio (3.11 to 3.13) gives each TLS connection a zero-filled read buffer of
        # SSLProtocol.max_size, 256 KiB: 1,000 connections held 256 MiB resident (measured).
        # A TLS record is at most 16 KiB; reading one at a time costs nothing measurable.
        asyncio.sslproto.SSLProtocol.max_size = CHUNK
        # The loop and the judging threads share the GIL. At its default 5 ms switch interval,
        # each of the loop's system calls may wait 5 ms for a judging thread to let go (the convoy
        # effect): under abuse the loop fell behind with the server at a third of a core. At
        # 0.5 ms, alternating runs of benchmarks/webhook_abuse.py (a loaded 2-core machine) gave
        # p99 228 and 1,389 ms under abuse, against 329 and 3,940 ms at 5 ms.
        sys.setswitchinterval(0.0005)
        await loop.run_in_executor(self.pool, self._settle_memory)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        # asyncio accepts up to `backlog` connections in one turn of the loop and begins all their
        # handshakes at once: a reconnecting flood stalls every established connection behind
        # them. It is given `accepts`, and the listen queue set back to `backlog` after it.
        listener = await loop.create_server(lambda: _Paused(asyncio.StreamReader(CHUNK), self._connection),
                                            sock=self.socket, backlog=self.limits.accepts)
        self.socket.listen(self.limits.backlog)
        log("serving", address=f"{self.server_address[0]}:{self.server_address[1]}")
        await stop.wait()
        self.draining = True
        listener.close()
        for task, phase in list(self.open.items()):
            if phase == IDLE:
                task.cancel()
        end = loop.time() + self.limits.deadline
        while self.open and loop.time() < end:
            await asyncio.sleep(0.05)
        for task in list(self.open):
            task.cancel()
        await asyncio.sleep(0)
        self.pool.shutdown(wait=False, cancel_futures=True)
        log("stopped")


def _documents(text: str) -> list[dict]:
    import textwrap

    import yaml

    return [d for d in yaml.safe_load_all(textwrap.dedent(text)) if isinstance(d, dict)]


def serve(server: Server) -> None:
    """Serve until SIGTERM/SIGINT, then finish the requests in flight."""
    asyncio.run(server.run())
