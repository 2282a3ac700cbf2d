"""Reading a stream that holds `{{ }}` somewhere (rendered output whose CRD descriptions quote
Go templates, as KServe's do): the stream is then read one document at a time, each padded to
its line in the stream (sources.loader._load_templated), which must stay linear in the
stream's size. Timed as a user meets it (benchmarks/_measure.py): `draguard lint` of the
stream, a whole process with its report written, run in turn with `draguard lint` of the same
stream without the `{{` (read whole) and with a bare C parse of it (the floor); median, range
and peak of each, and the ratios pair by pair.

    python benchmarks/templated_stream.py [--documents 40] [--kib 200] [--runs 5]

Goal: the templated stream costs what the same stream read whole costs (<= 1.2x); a comment-line
match across lines once made it 15x a bare parse at 1 MB."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _measure import Command, compile_bytecode, draguard, figure, header, in_turn, ratio, setup

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = "{{ .Values.name }}"
BARE_PARSE = ("import sys, yaml\n"
              "for _ in yaml.load_all(open(sys.argv[1], encoding='utf-8').read(), Loader=yaml.CSafeLoader): pass")


def crd(index: int, kib: int) -> str:
    """A CustomResourceDefinition with a deeply indented schema of about `kib` KiB, one of
    whose descriptions quotes a Go template."""
    lines = [f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: c{index}.x.io\n"
             "spec:\n  group: x.io\n  names: {kind: C, plural: cs}\n  scope: Namespaced\n  versions:\n"
             "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
             f"        type: object\n        description: 'set it to {TEMPLATE} in a chart'\n"
             "        properties:\n"]
    size, field = 0, 0
    while size < kib * 1024:
        entry = (f"          field{field}:\n            type: object\n            properties:\n"
                 f"              inner:\n                type: string\n                description: a field\n")
        lines.append(entry)
        size += len(entry)
        field += 1
    return "".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=40)
    parser.add_argument("--kib", type=int, default=200, help="size of each document")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    compile_bytecode(ROOT / "src" / "draguard")
    env = {"PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="draguard-templated-") as tmp:
        templated, whole = Path(tmp) / "templated.yaml", Path(tmp) / "whole.yaml"
        with setup(f"write {args.documents} CRDs of {args.kib} KiB"):
            text = "---\n".join(crd(i, args.kib) for i in range(args.documents))
            templated.write_text(text)
            whole.write_text(text.replace(TEMPLATE, "the release name"))  # the same length: no `{{`
        lint = Command("lint, the templated stream", draguard("lint", "--no-config", "-f", "json", str(templated)),
                       (0, 1), env)
        plain = Command("lint, the stream without {{", draguard("lint", "--no-config", "-f", "json", str(whole)),
                        (0, 1), env)
        bare = Command("bare C parse (floor)", [sys.executable, "-c", BARE_PARSE, str(templated)])
        results = in_turn([lint, plain, bare], args.runs)
        header(args.runs)
        print(f"{args.documents} documents, {len(text) / 1e6:.1f} MB, one '{{{{' each")
        figure(lint.name, f"{results[0].describe()}  {ratio(results[0], results[1])} the stream without {{{{",
               "<= 1.2x")
        figure(plain.name, f"{results[1].describe()}  {ratio(results[1], results[2])} the bare parse")
        figure(bare.name, results[2].describe())
        figure("  templated / bare parse", ratio(results[0], results[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
