"""Compiling and evaluating device selectors: draguard against upstream's DRA CEL compiler.

The generated selectors of the CEL differential test (tests/support/celgen.py), each compiled
(the cost estimate included, on both sides) once and evaluated on each of celgen.DEVICES, cold
(no compile cache, no evaluation memo) in a fresh process per side. Upstream is timed inside
the oracle (compiling and evaluating only); draguard on the same work. draguard estimates the
cost only when asked (cel-invalid asks, evaluation does not), so that estimate is timed apart
and added for the like-for-like ratio.

    python benchmarks/cel_selectors.py [--selectors 2000]
Needs Go (the oracle is built by harness/allocator-oracle/build.sh, cached).

Not whole processes, on purpose: upstream compiles selectors inside the API server and the
scheduler, with no command of its own, so the like-for-like figure is the same selectors
compiled and evaluated on each side; lint's start-up with them is startup.py's figure."""

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
    estimating = _estimate_time(expressions)
    per = 1e6 / args.selectors
    print(f"{args.selectors} selectors x {len(celgen.DEVICES)} devices, compile + evaluate:")
    print(f"  upstream {upstream:7.3f} s  ({upstream * per:6.1f} us/selector)")
    print(f"  draguard {ours:7.3f} s  ({ours * per:6.1f} us/selector)  ratio {ours / upstream:.2f}x")
    print(f"  draguard's cost estimate {estimating:7.3f} s  ({estimating * per:6.1f} us/selector); with it, "
          f"ratio {(ours + estimating) / upstream:.2f}x")
    return 0


def _estimate_time(expressions: list[str]) -> float:
    """Seconds cel.cost takes over the checked ASTs of the selectors that compile."""
    from draguard.cel.checked import checked_ast
    from draguard.cel.cost import estimate
    from draguard.cel.env import MAX_COST, _env, rewrite_device_fields

    asts = []
    for expression in expressions:
        try:
            asts.append(checked_ast(_env().compile(rewrite_device_fields(expression)).serialize()))
        except RuntimeError:
            continue  # does not compile
    start = time.perf_counter()
    for ast in asts:
        estimate(ast, MAX_COST)
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
