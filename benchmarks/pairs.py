"""Two whole commands timed in turn (A B A B ...), with the ratio A/B taken pair by pair: the
before/after figure for a command no other script here times, from public parts only.

    python benchmarks/pairs.py --runs 30 --vs "env PYTHONPATH=B python -m draguard lint F" \\
        -- python -m draguard lint F

Any exit status counts as a run (lint exits 1 when it finds something); a command's own error
shows in its exit status only, so check it once by hand."""

from __future__ import annotations

import argparse
import shlex

from _measure import Command, figure, header, in_turn, load, ratio

ANY_EXIT = tuple(range(256))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--settle", type=float, default=0.0, metavar="SECONDS",
                        help="idle before each run, either command (after a long command, a short one runs slower)")
    parser.add_argument("--vs", required=True, metavar="COMMAND_B", help="the baseline, one string split as a shell would")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND_A ...")
    args = parser.parse_args(argv)
    a_argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not a_argv:
        parser.error("give COMMAND_A after --")
    a = Command("A", a_argv, ANY_EXIT)
    b = Command("B", shlex.split(args.vs), ANY_EXIT)
    header(args.runs)
    ran_a, ran_b = in_turn([a, b], args.runs, args.warmup, args.settle)
    figure("A " + shlex.join(a_argv)[:60], ran_a.describe())
    figure("B " + args.vs[:60], ran_b.describe())
    figure("A/B wall, pair by pair", ratio(ran_a, ran_b))
    figure("A/B cpu, pair by pair", ratio(ran_a, ran_b, cpu=True))
    figure("1-minute load as each run began", load([ran_a, ran_b]))


if __name__ == "__main__":
    main()
