"""`draguard webhook`: the validating admission webhook (HTTPS, AdmissionReview v1)."""

from __future__ import annotations

import argparse
import os

from ..core.errors import EXIT_OK, UsageError
from .lint import profile_arguments, select_rules


def arguments(name, parser) -> None:
    parser.add_argument("action", nargs="?", choices=["serve", "manifests", "enforce"], default="serve",
                        help="serve (default); manifests: print the objects that install it, in apply order (as the "
                             "Helm chart deploy/helm/draguard renders them), its configuration failing open; "
                             "enforce: make it fail closed once its Service answers /readyz")
    parser.add_argument("--namespace", default="draguard", help="manifests: the namespace to install in")
    profile_arguments(parser)
    parser.add_argument("--image", default="ghcr.io/draguard/draguard:0.1.0", help="manifests: the image")
    parser.add_argument("--failure-policy", choices=["Ignore", "Fail"], default="Ignore",
                        help="manifests: the configuration's failurePolicy (default Ignore until `webhook enforce`; "
                             "Fail when applying again to a cluster where it answers)")
    parser.add_argument("--check", action="store_true",
                        help="manifests: first check the cluster (--kubeconfig, --context) has what they need "
                             "(cert-manager's CRDs unless --self-signed); print nothing if not")
    parser.add_argument("--api-server-cidr", action="append", default=[], metavar="CIDR",
                        help="manifests: the only sources the NetworkPolicy admits on the webhook's port "
                             "(repeatable; default any source: the API server's addresses are not knowable in general)")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=8443, help="HTTPS port (default 8443)")
    parser.add_argument("--tls-cert", help="serving certificate (PEM), reloaded when it changes")
    parser.add_argument("--tls-key", help="its private key (PEM)")
    parser.add_argument("--self-signed", action="store_true",
                        help="make a self-signed pair at start-up (development); its caBundle is logged. manifests: "
                             "a pair for the Service in a Secret, its certificate the caBundle (no cert-manager)")
    parser.add_argument("--san", action="append", default=[], metavar="NAME",
                        help="with --self-signed: a DNS name or IP the certificate is valid for (repeatable; "
                             "default localhost, 127.0.0.1 and the Service names of $WEBHOOK_SERVICE)")
    parser.add_argument("--mutate", action="store_true",
                        help="also serve /mutate: admit with the safe fixes applied, as a JSON Patch")
    parser.add_argument("--offline", action="store_true",
                        help="judge without a cluster: each object on its own, references taken to exist")
    parser.add_argument("--kubeconfig", help="kubeconfig for the cache's watches (default: the in-cluster service "
                                             "account, $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: its current context)")
    parser.add_argument("--exempt-namespace", action="append", metavar="NS",
                        help="namespaces never judged (repeatable; default: kube-system and $POD_NAMESPACE; "
                             "manifests: besides those two). Whoever can create or write in one is exempt: name only "
                             "namespaces that exist and tenants cannot create (gpu-operator, for the NVIDIA GPU "
                             "Operator's validator pods)")
    parser.add_argument("--controller-user", action="append", default=[], metavar="USER",
                        help="an operator's user, as the API server names it (system:serviceaccount:NS:NAME of "
                             "KubeRay's, LWS's or a training operator's controller), whose objects made from their "
                             "owner's template are not judged, as the Kubernetes workload controllers' are not: the "
                             "owner is judged when it is written (repeatable)")
    parser.add_argument("--config", help="config file (rules, severities, thresholds; default: none)")
    parser.add_argument("--kube-version", help="the cluster's release (default: the server's; with --offline, the "
                                               "newest draguard knows)")
    limits = parser.add_argument_group("limits", "what one replica holds at once; beyond them it answers 503 or "
                                                 "closes at once, and the API server applies failurePolicy")
    limits.add_argument("--max-connections", type=_positive(int), metavar="N",
                        help="connections open at once; beyond, the one longest idle or slowest to send its request "
                             "is closed for the new one (default 2048)")
    limits.add_argument("--request-deadline", type=_positive(float), metavar="SECONDS",
                        help="time from a request's first byte to its last, headers and body; a slower client is "
                             "cut (default 10; a new connection's first request gets between half of it and all of it, "
                             "at random, so that a flood is not cut in one wave)")
    limits.add_argument("--body-budget", type=_positive(int), metavar="MIB",
                        help="MiB of request bodies held at once, all requests together (default 64; a body is at "
                             "most 4 MiB)")
    limits.add_argument("--judges", type=_positive(int), metavar="N",
                        help="threads judging reviews (default 2); 64 more reviews may wait, beyond them 503")
    limits.add_argument("--handshake-rate", type=_positive(float), metavar="N",
                        help="TLS handshakes begun a second at most, 32 at once after a quiet spell (default 200): "
                             "the API server keeps its connections alive, so new ones faster are a flood's, paced")


def _positive(kind):
    """An argparse type: a number of `kind` over 0 (a zero limit would refuse everything)."""
    def number(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
        return value
    return number


def run(args) -> int:
    if args.action == "manifests":
        return _manifests(args)
    if args.action == "enforce":
        return _enforce(args)
    return _serve(args)


#: what the cert-manager path applies, as served resources (group/version, plural)
CERT_MANAGER = (("cert-manager.io/v1", "issuers"), ("cert-manager.io/v1", "certificates"))


def _manifests(args) -> int:
    import sys
    import tempfile
    from pathlib import Path

    import yaml

    from ..admission.certs import self_signed
    from ..admission.install import NAME, manifests

    if args.check and not args.self_signed:
        _check_cert_manager(args)
    tls = None
    if args.self_signed:
        service = f"{NAME}.{args.namespace}.svc"
        with tempfile.TemporaryDirectory() as folder:
            certificate, key = self_signed(folder, [service, f"{service}.cluster.local"])
            tls = (Path(certificate).read_bytes(), Path(key).read_bytes())
    objects = manifests(args.namespace, args.image, controller_users=args.controller_user,
                        exempt=args.exempt_namespace or (), tls=tls, failure_policy=args.failure_policy,
                        api_server_cidrs=args.api_server_cidr)
    sys.stdout.write(yaml.safe_dump_all(objects, sort_keys=False, explicit_start=True))
    return EXIT_OK


def _check_cert_manager(args) -> None:
    """Refuse (ClusterError) unless the cluster serves cert-manager's Issuer and Certificate."""
    from ..cluster.live import ClusterError, connect

    connection = connect(args.kubeconfig, args.context)
    missing = [f"{plural}.{api.split('/')[0]}" for api, plural in CERT_MANAGER
               if connection.get(f"/apis/{api}/{plural}", {"limit": "1"})[0] == 404]
    if missing:
        raise ClusterError(f"the cluster does not serve {', '.join(missing)}: install cert-manager first "
                           "(cert-manager.io/docs/installation), or pass --self-signed for a Secret made here")


def _enforce(args) -> int:
    import sys

    from ..admission.install import enforce
    from ..cluster.live import connect

    sys.stdout.write(enforce(connect(args.kubeconfig, args.context)) + "\n")
    return EXIT_OK


def _judge_as_served(config, connection, given_version: str | None, log) -> None:
    """Judge as the cluster served: its release (unless --kube-version says) and the gates its
    API server reports; said in the log, with what could not be read (a server not reachable
    yet leaves the config's release, and the cache waits for it)."""
    from ..cluster.live import ClusterError, read_gates, read_version
    from ..cluster.release import judge_as_cluster

    unreadable: dict = {}
    try:
        server, gates = read_version(connection), read_gates(connection, unreadable)
    except (ClusterError, ValueError) as exc:
        server, gates, unreadable["server"] = "", {}, f"not read ({exc}): judging as the config's release"
    note = judge_as_cluster(config, server, gates, given_version)
    log("judging as", kubeVersion=config.kube_version, serverVersion=server,
        featureGates=dict(sorted(config.feature_gates.items())), notes=[n for n in [note, *unreadable.values()] if n])


def _serve(args) -> int:
    import base64
    import contextlib

    from ..admission.certs import ReloadingContext, self_signed, temporary_folder
    from ..admission.server import Limits, log
    from ..core.versions import check_kube_version
    from ..engine.config_file import load_config

    if args.self_signed == bool(args.tls_cert or args.tls_key):
        raise UsageError("give either --tls-cert and --tls-key, or --self-signed")
    if not args.self_signed and not (args.tls_cert and args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together")
    config = load_config(args.config)
    select_rules(config, args, selectors=False)
    if args.kube_version:
        config.kube_version = check_kube_version(args.kube_version)
    with contextlib.ExitStack() as stack:
        if args.self_signed:
            service = os.environ.get("WEBHOOK_SERVICE", "")
            names = args.san or ["localhost", "127.0.0.1"] + ([service, f"{service}.svc"] if service else [])
            cert, key = self_signed(stack.enter_context(temporary_folder()), names)
            with open(cert, "rb") as f:
                log("self-signed", caBundle=base64.b64encode(f.read()).decode(), names=names)
        else:
            cert, key = args.tls_cert, args.tls_key
        given = {"connections": args.max_connections, "deadline": args.request_deadline, "judges": args.judges,
                 "handshake_rate": args.handshake_rate,
                 "body_budget": args.body_budget and args.body_budget * 1024 * 1024}
        limits = Limits(**{name: value for name, value in given.items() if value is not None})
        _run(args, config, ReloadingContext(cert, key, log), limits)
    return EXIT_OK


def _run(args, config, tls, limits) -> None:
    from ..admission.exemptions import controllers_with
    from ..admission.judge import rules_for
    from ..admission.server import Server, Webhook, log, serve

    exempt = set(args.exempt_namespace or ["kube-system", os.environ.get("POD_NAMESPACE", "")])
    exempt -= {""}
    controllers = controllers_with(args.controller_user)
    cache = None
    if args.offline:
        webhook = Webhook(rules_for(config, offline=True), exempt, mutating=args.mutate, controllers=controllers)
    else:
        from ..admission.cache import ClusterCache
        from ..cluster.live import connect

        from ..dra.target import Target

        connection = connect(args.kubeconfig, args.context, instead="judge without a cluster with --offline")
        _judge_as_served(config, connection, args.kube_version, log)

        def devices_for(inventory):
            return Target.for_release(inventory, [], config.kube_version, config.feature_gates)

        cache = ClusterCache(connection, log, devices_for)
        cache.start()
        webhook = Webhook(rules_for(config, offline=False), exempt, cache.view, cache.ready, mutating=args.mutate,
                          controllers=controllers)
    server = Server((args.host, args.port), webhook, tls, limits)
    try:
        serve(server)
    finally:
        if cache is not None:
            cache.stop()
