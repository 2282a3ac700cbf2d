"""engine.forked: a forked process's channel carries pickled messages each way, says EOFError
when the other end is gone, writes nothing of a message it cannot pickle, and the forked
process ends when its work does, with the status of how it ended."""

from __future__ import annotations

import os
import pickle

import pytest

from draguard.engine.forked import fork


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
