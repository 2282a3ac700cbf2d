"""A forked process that answers over a pipe each way, with pickled messages: what
engine.parallel.in_parts used of multiprocessing's "fork" context (Process, Pipe), without
importing it. Importing multiprocessing (its connection module brings socket, selectors,
threading, subprocess and tempfile) cost 16 to 27 ms of a `lint --jobs` run's serial start,
before any part began. Messages are pickled whole before they are written, as
multiprocessing's Connection.send does, so a message that cannot be pickled writes nothing."""

from __future__ import annotations

import atexit
import os
import pickle
import sys
from typing import Callable

#: forked processes that have answered, their channels closed, not yet waited for (reap)
_ENDING: list[int] = []


class Channel:
    """One end of a pair of pipes to another process: `send` writes a message on one,
    `recv` reads the next from the other (EOFError once the other end is closed, or ended
    part-way through a message)."""

    def __init__(self, reading: int, writing: int) -> None:
        self._in = os.fdopen(reading, "rb")
        self._out = writing

    def send(self, message: object) -> None:
        data = memoryview(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))
        while data:
            data = data[os.write(self._out, data):]

    def recv(self) -> object:
        try:
            return pickle.load(self._in)
        except pickle.UnpicklingError:
            raise EOFError("the other process ended part-way through a message") from None

    def close(self) -> None:
        os.close(self._out)
        self._in.close()


def fork(serve: Callable[[Channel], None]) -> tuple[int, Channel]:
    """A forked process that runs `serve` with its channel to this process, then ends
    (never returning into the caller's code): (its process id, this process's channel to
    it). Standard output and error are flushed before and after, as multiprocessing
    flushes them, so that neither process writes what the other had buffered."""
    reap()  # those of an earlier run in parts ended long ago: no zombie of theirs kept longer
    _flush_standard_streams()
    down, up = os.pipe(), os.pipe()  # (reading, writing) each: this process to it, it to this one
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(down[1])
            os.close(up[0])
            serve(Channel(down[0], up[1]))
            status = 0
        finally:
            _flush_standard_streams()
            os._exit(status)
    os.close(down[0])
    os.close(up[1])
    return pid, Channel(up[0], down[1])


def let_end(pid: int) -> None:
    """`pid` (forked here) has answered and its channel is closed: it ends by itself as it
    gives its memory back, 27-31 ms of wall time for a part of a 4,158-object lint at load 3
    (measured), which its caller need not wait for before writing its report. `reap` waits for
    it: before the next fork, as the process ends (`atexit`; the CLI's `ended` calls it
    itself), or when the caller asks."""
    _ENDING.append(pid)


def reap() -> None:
    """Wait for every process handed to `let_end`: none is left a zombie past it."""
    while _ENDING:
        try:
            os.waitpid(_ENDING.pop(), 0)
        except ChildProcessError:
            pass  # waited for already (os.wait elsewhere in the process)


atexit.register(reap)


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass  # closed, or its reader gone: nothing to write twice
