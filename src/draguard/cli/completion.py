"""`draguard completion bash|zsh|fish`: the shell code that completes draguard's commands and
options (argcomplete; `eval "$(draguard completion bash)"` in ~/.bashrc, `draguard completion
fish | source` in fish's config)."""

from __future__ import annotations

import sys


def arguments(name, parser) -> None:
    parser.add_argument("shell", choices=["bash", "zsh", "fish"])


def run(args) -> int:
    import argcomplete

    sys.stdout.write(argcomplete.shellcode(["draguard", "kubectl-draguard"], shell=args.shell))
    return 0
