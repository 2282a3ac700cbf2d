"""Every draguard command the README and the docs site show is one the CLI accepts: each
command line in a code block (fenced or indented), prompts, comments, pipes and redirections
taken off, is parsed by the real argument parsers of `draguard` and `draguard-teardown`. A
renamed flag, a removed subcommand or a wrong choice in a page fails here, naming the page
and the line. Those that need nothing but the repository (the rules, the bundled examples,
`--diff` and `--check` fixes, the policy export) are run too, from the repository's root,
and must give a verdict (0 or 1), not an error. (The README's quick start is run step by
step on a user's Deployment in test_quickstart.py.)"""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

from draguard import cli
from draguard.teardown import cli as teardown_cli
from support.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: how a shown command starts, and which parser reads the rest
_STARTS = {("draguard",): "draguard", ("kubectl", "draguard"): "draguard", ("python", "-m", "draguard"): "draguard",
           ("draguard-teardown",): "teardown"}
_FENCE = re.compile(r"^(\s*)```(\w*)")


def _code_lines(text: str):
    """(line number, line) of the code blocks of a markdown text: fenced blocks of a shell or
    no language, and blocks indented four spaces or more after a blank line."""
    fence, indented, blank = None, False, True
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and not opened.group(2):
                fence = None
            elif fence in ("", "console", "sh", "bash", "shell"):
                yield number, line
            continue
        if opened:
            fence = opened.group(2)
            continue
        if line.strip() and (line.startswith("    ") and (blank or indented)):
            indented = True
            yield number, line
        elif line.strip():
            indented = False
        blank = not line.strip()


def _commands(line: str):
    """The draguard commands in one shown line: (parser, arguments)."""
    line = re.sub(r"^\s*\$\s+", "", line.strip())
    line = re.sub(r"\[([^\]]*)\]", r"\1", line)  # `[--kube-version 1.33]`: an optional part, shown
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return
    segment: list[str] = []
    for word in [*words, "|"]:
        if word in ("|", "&&", ";", "||"):
            yield from _command(segment)
            segment = []
        else:
            segment.append(word)


def _command(words: list[str]):
    for start, parser in _STARTS.items():
        if tuple(words[:len(start)]) == start:
            rest = words[len(start):]
            cut = next((i for i, w in enumerate(rest) if w.startswith(">") or w == "<<EOF"), len(rest))
            yield parser, rest[:cut]
            return


def shown() -> list:
    found = []
    for page in PAGES:
        for number, line in _code_lines(page.read_text(encoding="utf-8")):
            for parser, argv in _commands(line):
                found.append(pytest.param(parser, argv, id=f"{page.relative_to(ROOT)}:{number}"))
    return found


def test_the_pages_show_commands():
    assert len(shown()) > 30  # the collection itself works: README and docs show dozens


@pytest.mark.parametrize(("parser", "argv"), shown())
def test_a_shown_command_is_accepted(parser, argv):
    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
            if parser == "teardown":
                teardown_cli._parser().parse_args(argv)
            else:
                if argv and argv[0] not in cli.COMMANDS:
                    argv = ["lint", *argv]  # `draguard deploy/`, as main() reads it
                cli._parsed(cli._parser(), argv)
    except SystemExit as exc:
        assert exc.code == 0, f"`{shlex.join(argv)}` is refused: {error.getvalue().strip().splitlines()[-1:]}"


#: commands that write nothing unless told to (-o, a fix without --diff/--check)
_READ_ONLY = {"lint", "rules", "explain", "policy", "simulate", "allocate", "completion", "fix"}


def _runnable(parser: str, argv: list[str]) -> bool:
    """Whether a shown command needs nothing but the repository: a read-only draguard command
    whose every path-like word names a file or folder of the repository, reading no stdin."""
    if parser != "draguard" or not argv or argv[0] not in _READ_ONLY or {"-o", "--output", "-"} & set(argv):
        return False
    if argv[0] == "fix" and not {"--diff", "--check"} & set(argv):
        return False
    paths = [w for w in argv[1:] if not w.startswith("-") and ("/" in w or w.endswith((".yaml", ".yml", ".json")))]
    return all((ROOT / p).exists() for p in paths)


def runnable() -> list:
    return [p for p in shown() if _runnable(*p.values)]


def test_some_shown_commands_run_on_the_repository_alone():
    assert len(runnable()) >= 5


@pytest.mark.parametrize(("parser", "argv"), runnable())
def test_a_shown_command_that_needs_only_the_repository_runs(cli, monkeypatch, parser, argv):
    monkeypatch.chdir(ROOT)
    done = cli(*argv)
    assert done.code in (0, 1), f"`draguard {shlex.join(argv)}` exits {done.code}: {done.err[-500:]}"
