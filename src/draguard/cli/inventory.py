"""`draguard inventory generate`: Nodes and ResourceSlices from a short spec."""

from __future__ import annotations

import sys

from ..core.errors import EXIT_OK, InputError


def arguments(name, parser) -> None:
    sub = parser.add_subparsers(dest="inventory_command", required=True)
    generate = sub.add_parser("generate", help="Nodes and ResourceSlices from a short spec")
    generate.add_argument("spec", help="the spec file (see docs: nodes, gpus.model, mig layout)")
    generate.add_argument("-o", "--output", help="write to this file (atomically) instead of stdout")


def run(args) -> int:
    import yaml

    from ..core.atomic import write_atomic
    from ..dra.inventory import InventoryError, generate
    from ..sources.yamlpos import DocumentError, read_document

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
