"""`draguard allocate`: allocate claims in order on an inventory (earlier ones hold their
devices), or explain why one does not fit."""

from __future__ import annotations

import json
import sys

from ..core.errors import EXIT_FINDINGS, EXIT_OK, InputError


def arguments(name, parser) -> None:
    parser.add_argument("claims", nargs="+", help="files with ResourceClaims or ResourceClaimTemplates")
    parser.add_argument("--inventory", action="append", required=True, metavar="PATH",
                        help="ResourceSlices, Nodes, DeviceClasses and allocated claims")
    parser.add_argument("-f", "--format", choices=["text", "json"], default="text")


def run(args) -> int:
    from ..dra.devices import ModelError, claim_from
    from ..dra.explain import verdict
    from ..dra.state import ClusterState
    from ..engine.inventory import load_inventory, load_manifests

    state = ClusterState(load_inventory(args.inventory))
    try:
        claims = [claim_from(m) for m in load_manifests(args.claims, "claims")
                  if (m.group, m.kind) in (("resource.k8s.io", "ResourceClaim"),
                                           ("resource.k8s.io", "ResourceClaimTemplate"))]
    except ModelError as exc:
        raise InputError(str(exc)) from None
    report, failed = [], False
    for claim in claims:
        result = verdict(state.allocator, claim, state.inventory.nodes)
        if result.satisfiable:
            state.commit(claim.key, result.allocation)
        failed |= not result.satisfiable
        report.append(result)
    if args.format == "json":
        sys.stdout.write(json.dumps([{
            "claim": r.claim.key, "node": r.node,
            "allocation": r.allocation.as_json() if r.allocation else None,
            "error": r.error, "explanation": [e.text() for e in r.requests],
        } for r in report], indent=2) + "\n")
    else:
        for r in report:
            if r.satisfiable:
                devices = ", ".join(f"{d.request}={d.pool}/{d.device}" for d in r.allocation.results)
                sys.stdout.write(f"{r.claim.key}: allocated on {r.node or '(network-attached)'}: {devices}\n")
            else:
                sys.stdout.write(f"{r.claim.key}: cannot be allocated{': ' + r.error if r.error else ''}\n")
                for e in r.requests:
                    sys.stdout.write(f"  {e.text()}\n")
    return EXIT_FINDINGS if failed else EXIT_OK
