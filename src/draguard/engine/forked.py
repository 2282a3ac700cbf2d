"""A forked process that answers over a pipe each way, with pickled messages: what
engine.parallel.in_parts used of multiprocessing's "fork" context (Process, Pipe), without
importing it. Importing multiprocessing (its connection module brings socket, selectors,
threading, subprocess and tempfile) cost 16 to 27 ms of a `lint --jobs` run's serial start,
before any part began. A message is written as it is pickled, frame by frame (the pickler's
64 KiB frames, each a chunk with its length before it), and read back as its chunks arrive:
the other process unpickles the first frames while the last are being made, where
multiprocessing's Connection pickles a message whole before writing any of it (a part's
answer, 6.6 MB of a 4,158-object lint, took 32-50 ms of CPU to pickle and 22-34 ms to read
back, one after the other, while the other core waited; timelines at load 3). A message
that cannot be pickled is dropped: what was written of it is marked so, and the reader
skips it."""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import sys
from typing import BinaryIO, Callable

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
        """Write `message`, after what this process printed before it: the other process,
        once it holds the message, is never overtaken by that output (a part's process
        ends after its parent has gone on: let_end)."""
        _flush_standard_streams()
        chunks = _Chunks(self._out)
        try:
            pickle.Pickler(chunks, pickle.HIGHEST_PROTOCOL).dump(message)
        except OSError:
            raise  # the pipe itself: nothing more can be written on it
        except BaseException:
            _write(self._out, _HEADER.pack(_DROPPED))
            raise
        _write(self._out, _HEADER.pack(_END))

    def recv(self) -> object:
        while True:
            message = _Message(self._in)
            try:
                value = pickle.load(message)
                message.finish()
            except _Dropped:
                continue  # one the other process could not pickle: what went wrong is said next
            except pickle.UnpicklingError:
                raise EOFError(_CUT) from None
            return value

    def close(self) -> None:
        os.close(self._out)
        self._in.close()


#: a chunk's header: the length of the bytes after it; _END ends a message, _DROPPED drops it
_HEADER = struct.Struct("=Q")
_END = 0
_DROPPED = 2**64 - 1
_CUT = "the other process ended part-way through a message"


class _Dropped(Exception):
    """The message being read was dropped by its writer (it could not be pickled)."""


class _Chunks:
    """The pipe as a pickler writes into it: each write (a frame) a chunk of its own."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> int:
        _write(self._fd, _HEADER.pack(len(data)) + data)
        return len(data)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _Message:
    """One message's chunks, read from the pipe as the stream its pickle was, for the unpickler
    (which asks for a frame at a time)."""

    __slots__ = ("_stream", "_left")

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._left = 0  # bytes of the chunk being read not read yet

    def read(self, size: int) -> bytes:
        parts = []
        while size > 0:
            if not self._left:
                self._left = self._header()
                if self._left == _END:
                    break  # cut short: the unpickler says the pickle is truncated
            data = self._stream.read(min(size, self._left))
            if not data:
                raise EOFError(_CUT)
            self._left -= len(data)
            size -= len(data)
            parts.append(data)
        return b"".join(parts)

    def readline(self) -> bytes:
        """Asked for by the unpickler's interface, never called here: a pickle of protocol 4
        or more names a class by STACK_GLOBAL, and its opcodes come in frames read whole."""
        raise pickle.UnpicklingError("a line read in a message pickled at the highest protocol")

    def finish(self) -> None:
        """Read the message's end, after its pickle."""
        if self._left or self._header() != _END:
            raise EOFError(_CUT)

    def _header(self) -> int:
        header = self._stream.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise EOFError(_CUT if header else "the other process closed its channel")
        (length,) = _HEADER.unpack(header)
        if length == _DROPPED:
            raise _Dropped
        return length


def fork(serve: Callable[[Channel], None]) -> tuple[int, Channel]:
    """A forked process that runs `serve` with its channel to this process, then ends
    (never returning into the caller's code): (its process id, this process's channel to
    it). Standard output and error are flushed before and after, as multiprocessing
    flushes them, so that neither process writes what the other had buffered."""
    reap()  # those of an earlier run in parts ended long ago: no zombie of theirs kept longer
    _flush_standard_streams()
    # (reading, writing) each: this process to it, it to this one
    down, up = _widened(os.pipe()), _widened(os.pipe())
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


#: what a pipe between the processes holds (_widened): /proc/sys/fs/pipe-max-size's default
PIPE_BYTES = 1 << 20


def _widened(pipe: tuple[int, int]) -> tuple[int, int]:
    """`pipe` made to hold PIPE_BYTES (Linux; elsewhere, or past the user's limit, as it is):
    the writer gets that far ahead before it waits for the reader, where with a pipe's 64 KiB
    the two processes took turns at each frame of a message (a 6.6 MB answer: 100 turns; it
    crossed in 61-73 ms against 92-96 ms, medians of 7, load 2.8)."""
    try:
        import fcntl

        fcntl.fcntl(pipe[1], fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
    return pipe


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
