"""`draguard exporter`: serve the audit's view of DRA devices and claims as Prometheus metrics,
kept current from the watch streams (cluster.exporter; the metrics: docs/exporter.md).

A command of its own rather than `audit --serve`: it never ends and never writes a report,
so none of audit's report options (--format, --output, --fail-on, --from, --at,
--save-dump) would apply, and the Deployment's command line says what runs."""

from __future__ import annotations

import argparse
import sys
import threading

from ..core.errors import EXIT_OK, UsageError

DEFAULT_LISTEN = "127.0.0.1:9464"  # 9464: the port OpenTelemetry's Prometheus exporters use


def arguments(name, parser) -> None:
    parser.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                        help=f"where to serve /metrics, /healthz and /readyz (default: {DEFAULT_LISTEN}; in a pod, "
                             "0.0.0.0:9464)")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the "
                                             "in-cluster service account)")
    parser.add_argument("--context", help="kubeconfig context (default: its current context)")
    parser.add_argument("--max-namespaces", type=_positive, default=50, metavar="N",
                        help="namespaces with their own label (those with the most claims); the rest are summed as "
                             "'other' (default: 50)")
    parser.add_argument("--config", help="config file (default: .draguard.yaml in the current folder or above)")
    parser.add_argument("--no-config", action="store_true", help="ignore any .draguard.yaml")
    parser.add_argument("--kube-version", help="judge as this release (default: the server's, else the newest)")
    parser.add_argument("--feature-gates", metavar="GATE=BOOL,...",
                        help="DRA feature gates the cluster sets differently from the release defaults")


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive whole number")
    return int(value)


def address(value: str) -> tuple[str, int]:
    """(host, port) of `HOST:PORT` or `[IPv6]:PORT`."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise UsageError(f"--listen: {value!r} is not HOST:PORT (e.g. {DEFAULT_LISTEN})")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve(listen: tuple[str, int], state, alive):
    """The HTTP server (started on a thread of its own): /metrics from `state`'s registry,
    /healthz (200 while `alive()`), /readyz (200 once the initial LIST is judged)."""
    import socket
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from prometheus_client import make_wsgi_app

    metrics = make_wsgi_app(state.registry)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            return metrics(environ, start_response)
        if path in ("/healthz", "/readyz"):
            ok = alive() if path == "/healthz" else alive() and state.health.ready
            start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"ok\n" if ok else b"not ready\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"/metrics, /healthz, /readyz\n"]

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in listen[0] else socket.AF_INET

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    try:
        server = make_server(*listen, app, server_class=Server, handler_class=Quiet)
    except OSError as exc:
        raise UsageError(f"--listen: cannot serve on {listen[0]}:{listen[1]}: {exc.strerror or exc}") from None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(args) -> int:
    from ..cluster.exporter import LEAK_RULES, WATCHED, ExporterState, compact, follow
    from ..cluster.live import connect, read_snapshot
    from ..cluster.snapshot import RESOURCES
    from .audit import judging_config

    listen = address(args.listen)
    connection = connect(args.kubeconfig, args.context)
    snapshot, _ = read_snapshot(connection, [r for r in RESOURCES if r.name in WATCHED], compact)
    config = judging_config(args, snapshot)
    config = config.without(r.id for r in LEAK_RULES if set(r.reads) & set(snapshot.unreadable))
    state = ExporterState(config, max_namespaces=args.max_namespaces, unreadable=snapshot.unreadable,
                          source=snapshot.source)
    stop = threading.Event()
    follower = threading.Thread(target=follow, args=(connection, state, stop), daemon=True)
    server = serve(listen, state, lambda: not state.health.ready or follower.is_alive())
    names = {r.kind: r.name for r in RESOURCES}
    state.load(snapshot.manifests, lambda m: names[m.kind])
    del snapshot
    follower.start()
    sys.stderr.write(f"draguard exporter: serving {connection.source} on http://{args.listen}/metrics\n")
    try:
        follower.join()
    except KeyboardInterrupt:
        stop.set()
    server.shutdown()
    return EXIT_OK
