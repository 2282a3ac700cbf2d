"""Reading a stream that holds `{{ }}` somewhere (rendered output whose CRD descriptions quote
Go templates, as KServe's do): the stream is then read one document at a time, each padded to
its line in the stream (sources.loader._load_templated). Prints MB/s and the ratio to a bare
parse of the same text (yamlpos.parse_stream), which is the floor: the per-document reading
must stay linear in the stream's size.

    python benchmarks/templated_stream.py [--documents 40] [--kib 200]"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from draguard.sources.loader import Loaded, Source, load_text  # noqa: E402
from draguard.sources.yamlpos import parse_stream  # noqa: E402


def crd(index: int, kib: int) -> str:
    """A CustomResourceDefinition with a deeply indented schema of about `kib` KiB, one of
    whose descriptions quotes a Go template."""
    lines = [f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: c{index}.x.io\n"
             "spec:\n  group: x.io\n  names: {kind: C, plural: cs}\n  scope: Namespaced\n  versions:\n"
             "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
             "        type: object\n        description: 'set it to {{ .Values.name }} in a chart'\n"
             "        properties:\n"]
    size, field = 0, 0
    while size < kib * 1024:
        entry = (f"          field{field}:\n            type: object\n            properties:\n"
                 f"              inner:\n                type: string\n                description: a field\n")
        lines.append(entry)
        size += len(entry)
        field += 1
    return "".join(lines)


def best(run, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=40)
    parser.add_argument("--kib", type=int, default=200, help="size of each document")
    args = parser.parse_args()
    text = "---\n".join(crd(i, args.kib) for i in range(args.documents))
    megabytes = len(text) / 1e6
    bare = best(lambda: parse_stream(text))
    templated = best(lambda: load_text(Source("(benchmark)", text), Loaded()))
    print(f"{args.documents} documents, {megabytes:.1f} MB, one '{{{{' each")
    print(f"bare parse            {bare:7.2f} s {megabytes / bare:7.1f} MB/s")
    print(f"templated stream read {templated:7.2f} s {megabytes / templated:7.1f} MB/s   "
          f"x bare parse {templated / bare:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
