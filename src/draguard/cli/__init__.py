"""The `draguard` command line: an argparse shell over one module per command. A command
module is imported only to add its arguments; what it runs with (the CEL engine, the schemas,
the allocator) is imported when it runs, so `draguard rules` starts fast.

Exit status (`core.errors`): 0 nothing at or above --fail-on, 1 findings, 2 usage, input or
configuration errors and failures of draguard itself (never 1 for those)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from importlib import import_module

from .. import __version__
from ..core.errors import EXIT_ERROR, EXIT_OK, UsageError

#: command -> (module under draguard.cli, one-line help)
COMMANDS = {
    "lint": ("lint", "lint manifests (files, folders, charts, kustomizations, '-')"),
    "fix": ("fix", "apply the rules' fixes in place, byte-minimal (--diff, --check, --unsafe-fixes)"),
    "rules": ("catalog", "list the rule catalog"),
    "explain": ("catalog", "print a rule's documentation"),
    "inventory": ("inventory", "inventory tools"),
    "allocate": ("allocate", "allocate claims on an inventory, or explain why not"),
    "audit": ("audit", "find leaked, stale and stuck DRA state in a live cluster (read-only) or a dump"),
    "exporter": ("exporter", "serve DRA device, claim and leak metrics for Prometheus, kept current by watching"),
    "webhook": ("webhook", "serve the validating admission webhook (HTTPS, AdmissionReview v1)"),
    "simulate": ("simulate", "simulate a Deployment's rollout on an inventory over time: completes, or the deadlock"),
    "policy": ("policy", "export ValidatingAdmissionPolicies for the rules that are CEL on one object"),
    "mcp": ("mcp", "serve draguard's tools to AI assistants over the Model Context Protocol (stdio, or --http)"),
    "completion": ("completion", "print the shell completion script (bash, zsh or fish)"),
    "agent-rules": ("agent_rules", "write rule files for AI coding assistants (Cursor, Claude, AGENTS.md, Copilot, "
                                   "Windsurf), every example checked"),
}


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its help as wide as argparse makes it, without `shutil`: argparse
    asks `shutil.get_terminal_size` for the width each time it makes a formatter (for every
    argument added), and importing shutil (with bz2, lzma and fnmatch) was 4 to 6 ms of a
    one-file lint's start. The subcommands' parsers are of this class too."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]


def terminal_columns() -> int:
    """`shutil.get_terminal_size().columns` (CPython 3.11's Lib/shutil.py): $COLUMNS, else
    the width of the terminal on standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. `only`: the command being run (`_needed`: one of COMMANDS,
    or `--version`, which needs none), the only one whose parser is made and whose module is
    imported to add its arguments: a parser per command was a tenth of a one-file lint's
    start, and no other is read once the command is known; None: every command's, for help,
    completion, and a mistyped command refused with the list."""
    parser = _Parser(
        prog="draguard",
        description="GPU-partitioning guardrails for Kubernetes Dynamic Resource Allocation.")
    parser.add_argument("--version", action="version", version=f"draguard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        if only is None or only == name:
            import_module(f"{__name__}.{module}").arguments(name, sub.add_parser(name, help=help_text))
    return parser


def _needed(argv: list[str]) -> str | None:
    """Which command's arguments the parser needs: the command run, none for `--version`
    (""), or every one (None) for help."""
    if argv and (argv[0] in COMMANDS or argv[0] == "--version"):
        return argv[0]
    return None


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The command's arguments with options and operands in any order, as `kubectl` and
    most tools take them: argparse alone binds a command's operands at the first run of
    them, so `simulate rollout --inventory inv.yaml deploy.yaml` or `lint a.yaml -f json
    b.yaml` were refused as "unrecognized arguments". A command with subcommands of its own
    (`inventory generate`) cannot be parsed intermixed and keeps argparse's order."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = commands.choices.get(argv[0]) if argv else None
    if command is not None:
        try:
            args = command.parse_intermixed_args(argv[1:])
        except TypeError:  # argparse: "parse_intermixed_args: ... not supported" (subcommands)
            return parser.parse_args(argv)
        args.command = argv[0]
        return args
    return parser.parse_args(argv)


#: commands whose runs hold trees that reference counting frees (manifests, findings, fixed
#: texts; a simulation's inventory, pods and timeline): they run with the cyclic collector
#: paused to their end (see program()); the others (servers, watches) keep it. A simulation
#: paused it only while it read the inventory and while its world ran: enabled again between
#: and after them, its full passes walked the millions of objects a 40,000-pod rollout holds
#: to its end, while the timeline was shifted and the report written (measured)
TREE_SHAPED = {"lint", "fix", "simulate"}


def main(argv: list[str] | None = None, *, whole_process: bool = False) -> int:
    """Run one command. `whole_process`: the command is all this process does (program()),
    so a TREE_SHAPED command runs with the cyclic collector paused to its end, and ends the
    process when it is done (ended)."""
    if "_ARGCOMPLETE" in os.environ:  # a shell asks for completions (`draguard completion`)
        import argcomplete

        argcomplete.autocomplete(_parser())  # answers and exits
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
        argv.insert(0, "lint")  # `draguard deploy/` means `draguard lint deploy/`
    try:
        args = _parsed(_parser(_needed(argv)), argv)
    except SystemExit as exc:  # argparse already printed the usage error
        return EXIT_OK if exc.code == 0 else EXIT_ERROR
    module = import_module(f"{__name__}.{COMMANDS[args.command][0]}")
    tree_shaped = whole_process and args.command in TREE_SHAPED
    if tree_shaped:
        gc.disable()
    args.ends_process = tree_shaped
    status = _run(module, args)
    if tree_shaped:
        ended(status)
    return status


def _run(module, args: argparse.Namespace) -> int:
    """The command's exit status, its errors said as such."""
    try:
        return module.run(args)
    except BrokenPipeError:  # `draguard rules | head`: the reader left; say nothing more
        sys.stdout = open(os.devnull, "w")
        return EXIT_ERROR
    except (UsageError, ValueError, OSError) as exc:
        sys.stderr.write(f"draguard: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as exc:  # a bug must still not look like "findings" (exit 1) or a traceback
        if os.environ.get("DRAGUARD_DEBUG"):
            raise
        sys.stderr.write(f"draguard: internal error: {type(exc).__name__}: {exc}\n"
                         "draguard: please report this with the input that caused it\n")
        return EXIT_ERROR


def program() -> int:
    """The `draguard` process: main(), after which the interpreter's last full garbage
    collections would walk every object the run made only to free memory the process hands
    back as it ends (1.5 s after a 5,000-object fix, 2 s after a 20,000-object lint,
    measured); the objects are frozen out of them. lint, fix and simulate run with the
    collector paused from their start: re-enabled after the run's paused sections
    (core.collector), the first collection walked every object the run still held before its
    report was written, 2 s of a 20,000-object fix (measured); and they end the process
    themselves (ended). Not for main() in a process that goes on."""
    status = main(whole_process=True)
    gc.freeze()
    return status


#: what a command that ends the process itself (ended) leaves to go with the process
#: (left_to_the_end)
_LEFT: list[object] = []


def left_to_the_end(args: argparse.Namespace, value: object) -> None:
    """Keep `value` to the end of the process, where the command ends it (main's
    `whole_process`), so that it is not freed object by object as the command returns: a
    lint's result (its findings, its report's pieces, the trees its findings point into) took
    5-6 ms of CPU after a 4,158-object report was written, while nothing else ran."""
    if args.ends_process:
        _LEFT.append(value)


def ended(status: int) -> None:
    """End the process now with `status`, its output flushed: a lint, a fix or a simulation
    has written everything (its report and files closed, its parts joined), and what the
    interpreter would do next is free, one by one, every object its modules still hold (the
    caches, the tables of lines met), 31-47 ms of a 4,158-object lint's wall time at load 4
    (measured), before the memory is handed back whole. mypy ends its runs this way
    (mypy.util.hard_exit, its `--fast-exit`). Where the output cannot be flushed (a reader
    that left), it returns, and the interpreter ends the process as it would have."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    forked = sys.modules.get("draguard.engine.forked")  # imported where the run was cut into parts
    if forked is not None:
        forked.reap()  # their processes, still giving their memory back as the report was written
    os._exit(status)
