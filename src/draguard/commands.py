"""`draguard inventory generate` and `draguard allocate`: the DRA core on the command line."""

from __future__ import annotations

import json
import sys

import yaml

from .dra.allocator import Allocator
from .dra.explain import verdict
from .dra.inventory import Inventory, InventoryError, generate
from .dra.model import ModelError, claim_from
from .fsutil import write_atomic
from .load.loader import load_units
from .load.sources import InputError, expand
from .load.yamlpos import DocumentError, read_document

EXIT_OK, EXIT_UNSATISFIED, EXIT_ERROR = 0, 1, 2


def _load(paths: list[str]):
    loaded = load_units(expand(paths))
    if loaded.problems:
        p = loaded.problems[0]
        raise InputError(f"{p.file}:{p.line}:{p.column}: {p.message}")
    return loaded.manifests


def inventory_command(args) -> int:
    try:
        objects = generate(read_document(args.spec))
    except DocumentError as exc:
        raise InputError(str(exc)) from None
    except InventoryError as exc:
        raise InputError(f"{args.spec}: {exc}") from None
    text = yaml.safe_dump_all(objects, sort_keys=False, explicit_start=True)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def allocate_command(args) -> int:
    """Allocate each claim in turn (earlier ones hold their devices) and explain failures."""
    try:
        inventory = Inventory.from_manifests(_load(args.inventory))
        manifests = [m for m in _load(args.claims) if m.kind in ("ResourceClaim", "ResourceClaimTemplate")]
        claims = [claim_from(m) for m in manifests]
    except ModelError as exc:
        raise InputError(str(exc)) from None
    allocator = Allocator(inventory.slices, inventory.classes, inventory.allocated)
    report, failed = [], False
    for claim in claims:
        result = verdict(allocator, claim, inventory.nodes)
        if result.satisfiable:
            allocator.allocated.update((r.driver, r.pool, r.device) for r in result.allocation.results)
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
    return EXIT_UNSATISFIED if failed else EXIT_OK
