"""The webhook's HTTPS server: `/validate` and, with `--mutate`, `/mutate` (AdmissionReview
v1; the mutating path admits with the safe fixes as a JSON Patch), `/healthz`, `/readyz`,
`/metrics` (Prometheus: requests, denials by rule, latency), JSON-line logs on stderr.

It holds no state a replica would need from another (stateless: scale it out behind a
Service). Bodies over MAX_BODY are refused (413) before they are read, a client that sends
slower than READ_TIMEOUT is dropped, a malformed review gets 400 with one line saying why, and
a failure while judging is an error response (500), never a crash: with `failurePolicy: Fail`
the API server then refuses the request, which is the point of failing closed."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .certs import ReloadingContext
from .judge import WORKLOAD_CONTROLLERS, judge
from .review import ReviewError, parse, response

MAX_BODY = 4 * 1024 * 1024  # the API server sends objects of at most ~3 MiB
READ_TIMEOUT = 10.0  # seconds for a client to send its request


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

    def review(self, body: bytes, mutate: bool = False) -> tuple[int, dict]:
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


class _Handler(BaseHTTPRequestHandler):
    server_version = "draguard-webhook"
    protocol_version = "HTTP/1.1"  # keep-alive: the API server reuses its connections
    timeout = READ_TIMEOUT

    def log_message(self, *args) -> None:  # the structured log says what matters
        pass

    def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, code: int, message: str) -> None:
        self._send(code, json.dumps({"error": message}).encode())

    def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
        webhook: Webhook = self.server.webhook
        if self.path == "/healthz":
            self._send(200, b"ok\n", "text/plain")
        elif self.path == "/readyz":
            ready = webhook.ready()
            self._send(200 if ready else 503, b"ok\n" if ready else b"cache not synced\n", "text/plain")
        elif self.path == "/metrics":
            self._send(200, webhook.metrics.text(), "text/plain; version=0.0.4")
        else:
            self._error(404, f"no such path {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        webhook: Webhook = self.server.webhook
        path = self.path.split("?", 1)[0]
        if path not in ("/validate", "/mutate") or (path == "/mutate" and not webhook.mutating):
            self._error(404, f"no such path {path}: reviews go to /validate" +
                        (" or /mutate" if webhook.mutating else " (/mutate needs --mutate)"))
            return
        length = self.headers.get("Content-Length")
        if length is None or not (length.isascii() and length.isdigit()):  # '²' is a digit to str.isdigit
            self._error(411, "a Content-Length is required")
            return
        if int(length) > MAX_BODY:
            self.close_connection = True
            self._error(413, f"the review is larger than {MAX_BODY} bytes")
            webhook.metrics.requests.labels(path, "too-large").inc()
            return
        started = time.perf_counter()
        try:
            body = self.rfile.read(int(length))
        except (TimeoutError, socket.timeout):
            self.close_connection = True
            return
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
        self._send(code, json.dumps(answer, separators=(",", ":")).encode())


class Server(ThreadingHTTPServer):
    """TLS on each accepted connection with the current certificate (reloaded on change)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, webhook: Webhook, tls: ReloadingContext):
        self.webhook, self.tls = webhook, tls
        super().__init__(address, _Handler)

    def get_request(self):
        sock, address = self.socket.accept()
        sock.settimeout(READ_TIMEOUT)
        # headers and body go out as two writes: without this, Nagle's algorithm holds the
        # body until the client's delayed ACK, 40 ms a review (measured)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:  # the handshake runs in the request's thread, on its first read: a slow client holds only that
            return self.tls.current().wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address
        except (OSError, ValueError):
            sock.close()
            raise OSError("TLS setup failed") from None

    def handle_error(self, request, client_address) -> None:  # a client gone mid-request is no server error
        pass


def serve(server: Server, stop: threading.Event | None = None) -> None:
    """Serve until SIGTERM/SIGINT (or `stop`), then finish the requests in flight."""
    import signal

    done = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: done.set())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    log("serving", address=f"{server.server_address[0]}:{server.server_address[1]}")
    done.wait()
    server.shutdown()
    server.server_close()
    log("stopped")
