"""Atomic writes: a failure names the file asked for, and leaves neither it nor a temporary
file behind."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from draguard.core import atomic
from draguard.core.atomic import WriteError, write_atomic


def test_a_write_that_cannot_happen_names_the_file_not_the_temporary_one(tmp_path):
    (tmp_path / "folder").mkdir()
    for target, reason in [(tmp_path / "folder", "Is a directory"),
                           (tmp_path / "missing" / "report.json", "No such file or directory")]:
        with pytest.raises(WriteError) as caught:
            write_atomic(str(target), "text")
        assert str(caught.value) == f"cannot write {target}: {reason}"
        assert isinstance(caught.value, OSError) and caught.value.strerror == reason  # as callers read OSErrors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]  # no .draguard-* left


def test_the_command_says_which_output_it_could_not_write(cli, tmp_path):
    (tmp_path / "m.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    done = cli("lint", "--no-config", tmp_path / "m.yaml", "-o", tmp_path / "nope" / "r.json")
    assert done.code == 2 and done.err == f"draguard: cannot write {tmp_path}/nope/r.json: No such file or directory\n"


def test_a_device_is_written_through_never_replaced(tmp_path):
    """`draguard lint -o /dev/null` renamed a regular file over /dev/null (a FIFO stands for the
    device here: a special file a rename would replace)."""
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    import threading

    read = []
    reader = threading.Thread(target=lambda: read.append(open(fifo).read()), daemon=True)
    reader.start()
    write_atomic(str(fifo), "report\n")
    reader.join(5)
    assert read == ["report\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_temporary_file_is_made_as_mkstemp_makes_it_without_importing_tempfile(tmp_path):
    """Private while written, named as fix.files knows a draguard's temporary file, and made
    without tempfile (which brings shutil and random)."""
    probe = ("import os, re, stat, sys\nfrom draguard.core.atomic import atomic_writer\n"
             "from draguard.fix.files import _TEMPORARY\n"
             f"with atomic_writer({str(tmp_path / 'out.txt')!r}):\n"
             f"    [name] = os.listdir({str(tmp_path)!r})\n"
             f"    mode = os.stat(os.path.join({str(tmp_path)!r}, name)).st_mode\n"
             "    print(bool(_TEMPORARY.fullmatch(name)), oct(stat.S_IMODE(mode)))\n"
             "print('tempfile' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "0o600", "False"]
    assert (tmp_path / "out.txt").exists() and os.listdir(tmp_path) == ["out.txt"]


def test_a_temporary_name_taken_is_passed_over(tmp_path, monkeypatch):
    draws = iter([b"\0\0\0\1", b"\0\0\0\1", b"\0\0\0\2"])
    monkeypatch.setattr(os, "urandom", lambda size: next(draws))
    first = atomic._created_beside(str(tmp_path), "p-")
    second = atomic._created_beside(str(tmp_path), "p-")
    for fd, _ in (first, second):
        os.close(fd)
    assert [os.path.basename(name) for _, name in (first, second)] == ["p-00000001", "p-00000002"]


def test_every_temporary_name_taken_is_a_write_error_after_a_hundred_tries(tmp_path, monkeypatch):
    (tmp_path / f"{atomic.TEMPORARY_PREFIX}{os.getpid()}-00000001").write_text("someone else's")
    tries = []
    monkeypatch.setattr(os, "urandom", lambda size: tries.append(size) or b"\0\0\0\1")
    with pytest.raises(WriteError, match="cannot write .*out.txt: No usable temporary file name found"):
        write_atomic(str(tmp_path / "out.txt"), "x")
    assert len(tries) == 100
    assert sorted(os.listdir(tmp_path)) == [f"{atomic.TEMPORARY_PREFIX}{os.getpid()}-00000001"]


def test_a_link_planted_at_the_temporary_name_is_passed_over_not_followed(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("kept")
    planted = f"{atomic.TEMPORARY_PREFIX}{os.getpid()}-00000001"
    (tmp_path / planted).symlink_to(elsewhere)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    draws = iter([b"\0\0\0\1", b"\0\0\0\2"])
    monkeypatch.setattr(os, "urandom", lambda size: next(draws))
    write_atomic(str(tmp_path / "out.txt"), "new")
    assert elsewhere.read_text() == "kept" and (tmp_path / planted).is_symlink()
    assert (tmp_path / "out.txt").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == sorted(["dangling", "elsewhere", "out.txt", planted])


def test_a_writer_killed_mid_write_leaves_the_target_whole_and_its_temporary_file_to_be_removed(tmp_path):
    from draguard.fix.files import remove_stale

    target = tmp_path / "out.txt"
    target.write_text("before")
    killed = ("import os, signal\nfrom draguard.core.atomic import atomic_writer\n"
              f"with atomic_writer({str(target)!r}) as handle:\n"
              "    handle.write('half'); handle.flush(); os.kill(os.getpid(), signal.SIGKILL)\n")
    assert subprocess.run([sys.executable, "-c", killed]).returncode == -9
    assert target.read_text() == "before"
    [temporary] = [name for name in os.listdir(tmp_path) if name != "out.txt"]
    assert remove_stale([str(tmp_path)]) == [str(tmp_path / temporary)]
    assert os.listdir(tmp_path) == ["out.txt"]
