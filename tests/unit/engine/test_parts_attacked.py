"""engine.parallel.in_parts over engine.forked, attacked: a part that raises (in this process
or a forked one), a forked part killed, an answer that cannot be pickled, an answer far larger
than a pipe holds, a part that prints. Each run is a process of its own, with a time limit: it
must end, say what went wrong with a non-zero status, write nothing twice and leave no process
behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import draguard

_SCRIPT = '''
import os, signal, sys
from draguard.engine.parallel import in_parts
case = sys.argv[1]

class Read:
    def __init__(self, shared):
        self.shared = shared

class Part:
    def __init__(self, index):
        self.index = index
    def read(self):
        if case == "part zero raises" and self.index == 0:
            raise ValueError("part zero broke")
        if case == "part one raises" and self.index == 1:
            raise ValueError("part one broke")
        if case == "part one killed" and self.index == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        if case == "cannot be pickled" and self.index == 1:
            return Read([lambda: 1])
        return Read(["x" * 8_000_000] if case == "huge" else [self.index])
    def judge(self, shared):
        print("judged", self.index)
        return self.index, [len(str(objects[0])) if objects else 0 for objects in shared]

print("done", in_parts(3, Part)[1])
'''


def _run(tmp_path: Path, case: str) -> subprocess.CompletedProcess:
    script = tmp_path / "parts.py"
    script.write_text(_SCRIPT)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(draguard.__file__).parents[1]), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, str(script), case], env=env, capture_output=True, text=True, timeout=20)
    assert not _left(str(script)), "a part's process outlived the run"
    return done


def _left(marker: str) -> list[int]:
    """The processes still running `marker` (a forked part orphaned, or a zombie)."""
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in command:
            left.append(int(pid))
    return left


@pytest.mark.parametrize("case, said", [
    ("part zero raises", "ValueError: part zero broke"),  # the forked parts wait to be sent objects
    ("part one raises", "ValueError: part one broke"),
    ("part one killed", "ended without answering"),
    ("cannot be pickled", "Can't pickle local object"),
])
def test_a_part_that_fails_ends_the_run_with_its_error(tmp_path, case, said):
    done = _run(tmp_path, case)
    assert done.returncode == 1
    assert said in done.stderr
    assert "done" not in done.stdout


def test_an_answer_larger_than_a_pipe_holds_arrives(tmp_path):
    done = _run(tmp_path, "huge")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "done [(0, [0, 8000000, 8000000]), (1, [8000000, 0, 8000000]), " \
                                           "(2, [8000000, 8000000, 0])]"


def test_what_each_part_prints_is_written_once(tmp_path):
    done = _run(tmp_path, "print")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()[:-1]) == ["judged 0", "judged 1", "judged 2"]
