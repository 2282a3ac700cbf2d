"""Running a harness build script (harness/*/build.sh) from the tests: its answer, the last
line of its stdout (the folder or binary it built), and its progress lines (which component,
how long so far: harness/progress.sh) shown on the terminal as they come, past pytest's
output capture, so that a cold build of several minutes does not look like a hang."""

from __future__ import annotations

import contextlib
import subprocess
import sys

#: pytest's config, set by tests/conftest.py: its capture manager lets progress through
CONFIG = None


def built(script) -> str:
    """Run `script`; what it prints last on stdout. CalledProcessError (with its stderr) if it fails."""
    process = subprocess.Popen([str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = []
    with _uncaptured():
        for line in process.stderr:  # a warm cache builds nothing and says nothing
            said.append(line)
            sys.stderr.write(line)
            sys.stderr.flush()
    out = process.stdout.read()
    if process.wait():
        raise subprocess.CalledProcessError(process.returncode, str(script), out, "".join(said))
    return out.strip().splitlines()[-1]


def _uncaptured():
    manager = CONFIG.pluginmanager.getplugin("capturemanager") if CONFIG is not None else None
    return manager.global_and_fixture_disabled() if manager is not None else contextlib.nullcontext()
