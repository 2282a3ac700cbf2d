"""`draguard allocate`: allocate claims in order on an inventory (earlier ones hold their
devices), or explain why one does not fit."""

from __future__ import annotations

import json
import sys

from ..core.errors import EXIT_FINDINGS, EXIT_OK, InputError, UsageError
from ..core.versions import DEFAULT_KUBE_VERSION


def arguments(name, parser) -> None:
    from .lint import target_arguments

    parser.add_argument("claims", nargs="+", help="files with ResourceClaims or ResourceClaimTemplates")
    target_arguments(parser, "ResourceSlices, Nodes, DeviceClasses and allocated claims")
    parser.add_argument("-f", "--format", choices=["text", "json"], default="text")


def run(args) -> int:
    from .lint import project_config

    config = project_config(args, args.claims)
    if not config.inventory:
        raise UsageError("draguard allocate needs an inventory: --inventory PATH, or `inventory` in .draguard.yaml")
    report, notes, variant = allocate(args.claims, config.inventory, config.kube_version, config.feature_gates)
    for note in notes:
        sys.stderr.write(f"draguard: note: {note}\n")
    if args.format == "json":
        sys.stdout.write(json.dumps(as_json(report, variant), indent=2) + "\n")
    else:
        for r in report:
            if r.satisfiable:
                devices = ", ".join(_device_text(d) for d in r.allocation.results)
                sys.stdout.write(f"{r.claim.key}: allocated on {r.node or '(network-attached)'}: {devices}\n")
            else:
                sys.stdout.write(f"{r.claim.key}: cannot be allocated{': ' + r.error if r.error else ''}\n")
                for e in r.requests:
                    sys.stdout.write(f"  {e.text()}\n")
    return EXIT_FINDINGS if any(not r.satisfiable for r in report) else EXIT_OK


def allocate(claim_paths: list[str], inventory_paths: list[str], kube_version: str | None, gates: dict):
    """(one verdict per claim, in order, earlier ones holding their devices; notes on what the
    target cluster drops or does differently; the upstream allocator variant it selects)."""
    from ..core.versions import check_kube_version
    from ..dra.devices import ModelError, claim_from
    from ..dra.explain import verdict
    from ..dra.state import ClusterState
    from ..dra.storage import as_stored, dropped
    from ..dra.variants import disabled_gates, variant_for
    from ..dra.inventory_reader import load_inventory, load_manifests

    kube_version = check_kube_version(kube_version) if kube_version else DEFAULT_KUBE_VERSION
    variant = variant_for(kube_version, gates)
    # slices as that cluster stores them: the fields of its disabled gates are dropped
    loaded, disabled = load_inventory(inventory_paths, kube_version), disabled_gates(kube_version, gates)
    notes = [f"Kubernetes {kube_version}: {line}" for line in dropped(loaded, disabled)]
    state = ClusterState(as_stored(loaded, disabled), variant.features())
    try:
        claims = [claim_from(m) for m in load_manifests(claim_paths, "claims", kube_version)
                  if (m.group, m.kind) in (("resource.k8s.io", "ResourceClaim"),
                                           ("resource.k8s.io", "ResourceClaimTemplate"))]
    except ModelError as exc:
        raise InputError(str(exc)) from None
    report = []
    for claim in claims:
        result = verdict(state.allocator, claim, state.inventory.nodes)
        if result.allocation is not None:  # satisfiable
            state.commit(claim.key, result.allocation)
        report.append(result)
    return report, notes, variant


def as_json(report, variant) -> list[dict]:
    return [{"claim": r.claim.key, "node": r.node, "allocation": r.allocation.as_json() if r.allocation else None,
             "error": r.error, "explanation": [e.text() for e in r.requests], "upstreamVariant": variant.name}
            for r in report]


def _device_text(result) -> str:
    """`request=pool/device`, with a share's consumed capacity: `(share: memory 12Gi)`."""
    text = f"{result.request}={result.pool}/{result.device}"
    if result.share_id is not None:
        consumed = ", ".join(f"{name} {q}" for name, q in (result.consumed_capacity or {}).items())
        text += f" (share{': ' + consumed if consumed else ''})"
    return text
