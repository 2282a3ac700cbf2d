"""The progress bar: on a terminal, beside the text report, it shows the stages of a long run;
with a machine format or a piped stderr there is none."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import termios
import shutil
import subprocess
import sys

from support.paths import EXAMPLES


def run_lint(folder, *extra, tty: bool, delay: str = "0") -> str:
    """stderr of `draguard lint folder`, through a pseudo-terminal when `tty`. A bar shows once
    a stage has run for `delay` seconds: 0 here, so that the test never depends on how long
    the run takes on this machine."""
    command = [sys.executable, "-m", "draguard", "lint", "--no-config", str(folder), *extra]
    env = dict(os.environ, DRAGUARD_PROGRESS_DELAY=delay)
    if not tty:
        return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env).stderr
    leader, follower = pty.openpty()
    # a terminal of 100 x 30 (a fresh pseudo-terminal has no size, and tqdm draws nothing then)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=300)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def many_files(tmp_path, count=200):
    for i in range(count):
        shutil.copy(EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml", tmp_path / f"f{i:03}.yaml")
    return tmp_path


def test_a_long_run_on_a_terminal_shows_its_stages(tmp_path):
    shown = run_lint(many_files(tmp_path), tty=True)
    assert "reading" in shown and "checking" in shown, shown[-500:]


def test_a_short_run_shows_no_bar(tmp_path):
    assert "checking" not in run_lint(many_files(tmp_path, 1), tty=True, delay="30")


def test_no_bar_with_a_machine_format_or_a_pipe(tmp_path):
    folder = many_files(tmp_path)
    assert "checking" not in run_lint(folder, "-f", "json", tty=True)
    assert "checking" not in run_lint(folder, tty=False) and "reading" not in run_lint(folder, tty=False)
