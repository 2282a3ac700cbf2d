"""Atomic writes: a failure names the file asked for, and leaves neither it nor a temporary
file behind."""

from __future__ import annotations

import os
import stat

import pytest

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
