"""Shell completion: the scripts for each shell, and a completion asked the way a shell asks it
(argcomplete's protocol: COMP_LINE and COMP_POINT in the environment)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("shell, marker", [("bash", "complete "), ("zsh", "compdef"), ("fish", "complete --command")])
def test_each_shell_gets_its_script(cli, shell, marker):
    done = cli("completion", shell)
    assert done.code == 0 and marker in done.out and "draguard" in done.out


def completions(tmp_path, line: str) -> list[str]:
    out = tmp_path / "completions"
    env = {**os.environ, "_ARGCOMPLETE": "1", "_ARGCOMPLETE_IFS": "\n", "COMP_LINE": line,
           "COMP_POINT": str(len(line)), "_ARGCOMPLETE_STDOUT_FILENAME": str(out)}
    subprocess.run([sys.executable, "-m", "draguard"], env=env, capture_output=True, timeout=60)
    return [word.strip() for word in out.read_text().split("\n")]


def test_commands_and_options_complete(tmp_path):
    assert "fix" in completions(tmp_path, "draguard fi")
    assert "--unsafe-fixes" in completions(tmp_path, "draguard fix --uns")
    assert "fish" in completions(tmp_path, "draguard completion f")
