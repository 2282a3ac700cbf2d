"""engine.forked: a forked process's channel carries pickled messages each way, says EOFError
when the other end is gone, writes nothing of a message it cannot pickle, and the forked
process ends when its work does, with the status of how it ended."""

from __future__ import annotations

import fcntl
import os
import pickle
import select
import sys

import pytest

from draguard.engine.forked import PIPE_BYTES, fork


def _echo(parent) -> None:
    while True:
        try:
            message = parent.recv()
        except EOFError:
            return
        parent.send(("echo", message))


def test_messages_go_both_ways_until_the_channel_is_closed():
    pid, child = fork(_echo)
    big = list(range(200_000))  # past a pipe's buffer
    child.send(big)
    child.send({"a": 1})
    assert child.recv() == ("echo", big)
    assert child.recv() == ("echo", {"a": 1})
    child.close()
    assert os.waitpid(pid, 0)[1] == 0


def test_a_message_that_cannot_be_pickled_writes_nothing():
    pid, child = fork(_echo)
    with pytest.raises((pickle.PicklingError, TypeError, AttributeError)):
        child.send([1, lambda: None])
    child.send("after")
    assert child.recv() == ("echo", "after")
    child.close()
    os.waitpid(pid, 0)


def test_the_forked_process_ends_with_its_work_and_says_how():
    parent = os.getpid()

    def failing(channel) -> None:
        raise RuntimeError("in the child")

    pid, child = fork(failing)
    assert os.getpid() == parent  # only this process comes back here
    with pytest.raises(EOFError):
        child.recv()
    child.close()
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 1


def test_a_process_ended_part_way_through_a_message_is_an_eof():
    def partial(channel) -> None:
        os.write(channel._out, pickle.dumps(list(range(1000)))[:50])
        os._exit(9)

    pid, child = fork(partial)
    with pytest.raises(EOFError):
        child.recv()
    child.close()
    os.waitpid(pid, 0)


#: the parent says here that it has read the first part of a message (_read_so_far), for the
#: child, which waits for it before it pickles the rest (_Waiting)
_SO_FAR = os.pipe()


def _read_so_far() -> str:
    os.write(_SO_FAR[1], b"x")
    return "read"


class _ReadSoFar:
    def __reduce__(self):
        return _read_so_far, ()


class _Waiting:
    """Pickled as whether the other end had read what was pickled before it."""

    def __reduce__(self):
        ready, _, _ = select.select([_SO_FAR[0]], [], [], 10)
        return str, ("streamed" if ready else "waited",)


def _echo_made(parent) -> None:
    parent.send([_ReadSoFar(), "x" * 200_000, _Waiting()])


def test_a_message_is_read_while_it_is_still_being_pickled():
    """The reader unpickles the frames written so far while the writer pickles the rest: the
    part of a message before a 200 KB string is read before the item after it is pickled."""
    pid, child = fork(_echo_made)
    assert child.recv() == ["read", "x" * 200_000, "streamed"]
    child.close()
    os.waitpid(pid, 0)


def test_a_message_dropped_after_part_of_it_was_written_is_skipped():
    pid, child = fork(_echo)
    with pytest.raises((pickle.PicklingError, TypeError, AttributeError)):
        child.send(["x" * 200_000, lambda: None])  # the string written before the lambda fails
    child.send("after")
    assert child.recv() == ("echo", "after")
    child.close()
    os.waitpid(pid, 0)


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="the size of a pipe is Linux's")
def test_the_pipes_hold_a_mebibyte_each_way():
    """A message's frames are written that far ahead of the reader before the writer waits."""
    pid, child = fork(_echo)
    assert fcntl.fcntl(child._out, fcntl.F_GETPIPE_SZ) == PIPE_BYTES
    child.send("ping")
    assert child.recv() == ("echo", "ping")  # the other way: the reply's pipe
    assert fcntl.fcntl(child._in.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_BYTES
    child.close()
    os.waitpid(pid, 0)


def _print_answer_and_wait(parent) -> None:
    sys.stdout = open(_PRINTED[1], "w", closefd=False)  # block-buffered: flushed when asked
    print("printed before the answer")
    parent.send("answer")
    parent.recv()  # still running: its output is not flushed by its end


_PRINTED = os.pipe()


def test_what_a_process_printed_before_a_message_is_written_before_it():
    """A part's process ends after its parent has gone on (let_end): what it printed before
    its answer must not come after what the parent writes next."""
    pid, child = fork(_print_answer_and_wait)
    assert child.recv() == "answer"
    os.set_blocking(_PRINTED[0], False)
    assert os.read(_PRINTED[0], 1000) == b"printed before the answer\n"
    child.send("done")
    child.close()
    os.waitpid(pid, 0)
