"""Every draguard command the README and the docs site show is one the CLI accepts: each
command line in a code block (fenced or indented), prompts, comments, pipes and redirections
taken off, is parsed by the real argument parsers of `draguard` and `draguard-teardown`. A
renamed flag, a removed subcommand or a wrong choice in a page fails here, naming the page
and the line. (The README's quick start is also run, step by step: test_quickstart.py.)"""

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
