"""`draguard inventory generate`: Nodes and ResourceSlices from a short spec."""

from __future__ import annotations

import sys

from ..core.errors import EXIT_OK, InputError


def arguments(name, parser) -> None:
    sub = parser.add_subparsers(dest="inventory_command", required=True)
    generate = sub.add_parser("generate", help="Nodes and ResourceSlices from a short spec")
    generate.add_argument("spec", help="the spec file (see docs: nodes, gpus.model, mig layout)")
    generate.add_argument("-o", "--output", help="write to this file (atomically) instead of stdout")
    generate.add_argument("-f", "--format", choices=["yaml", "json"],
                          help="YAML documents, or one JSON List (read back many times faster: for large "
                               "inventories); default: json when the output file ends in .json, else yaml")


def run(args) -> int:
    from contextlib import nullcontext

    from ..core.atomic import atomic_writer
    from ..dra.generate import generate_json, generate_yaml
    from ..dra.inventory import InventoryError
    from ..sources.yamlpos import DocumentError, mark_of, read_document

    try:
        spec = read_document(args.spec)
    except DocumentError as exc:
        raise InputError(str(exc)) from None
    as_json = args.format == "json" or args.format is None and (args.output or "").endswith(".json")
    try:
        with atomic_writer(args.output) if args.output else nullcontext(sys.stdout) as out:
            for text in (generate_json if as_json else generate_yaml)(spec):
                out.write(text)
    except InventoryError as exc:
        mark = mark_of(exc.container, exc.key, value=True) if exc.container is not None else None
        where = f"{args.spec}:{mark[0]}:{mark[1]}" if mark else args.spec
        raise InputError(f"{where}: {exc}") from None
    return EXIT_OK
