"""Compiling and evaluating device selectors: draguard against upstream's DRA CEL compiler.

The generated selectors of the CEL differential test (tests/support/celgen.py), each compiled
once and evaluated on each of celgen.DEVICES, cold (no compile cache, no evaluation memo) in a
fresh process per side. Upstream is timed inside the oracle (compiling and evaluating only);
draguard on the same work.

    python benchmarks/cel_selectors.py [--selectors 2000]
Needs Go (the oracle is built by harness/allocator-oracle/build.sh, cached)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import celgen  # noqa: E402
from support.oracle import oracle_binary, run_oracle  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--selectors", type=int, default=2000)
    args = parser.parse_args()
    binary = oracle_binary()
    if binary is None:
        print("Go is not installed: the upstream CEL compiler cannot be built", file=sys.stderr)
        return 2
    expressions = celgen.expressions(0, args.selectors)
    upstream = run_oracle(binary, [celgen.selector_run(expressions)])[0]["nanos"] / 1e9
    celgen.draguard_verdict("true")  # load the engine outside the timing, as the oracle's process start is
    start = time.perf_counter()
    for expression in expressions:
        celgen.draguard_verdict(expression)
    ours = time.perf_counter() - start
    per = 1e6 / args.selectors
    print(f"{args.selectors} selectors x {len(celgen.DEVICES)} devices, compile + evaluate:")
    print(f"  upstream {upstream:7.3f} s  ({upstream * per:6.1f} us/selector)")
    print(f"  draguard {ours:7.3f} s  ({ours * per:6.1f} us/selector)  ratio {ours / upstream:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
