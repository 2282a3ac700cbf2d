"""File writes that never leave a half-written file behind."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Any, Literal, overload


#: The temporary files' names carry the writer's process id, so that a later run can tell
#: the file of a killed run (its process gone) from one being written now (fix.files.stale).
TEMPORARY_PREFIX = ".draguard-"


class WriteError(OSError):
    """A write that did not happen, said of the file asked for (the OS names the temporary
    file beside it, `.draguard-<pid>-xxxxxxxx`, which the user never asked for)."""

    def __init__(self, path: str, cause: OSError):
        super().__init__(cause.errno, cause.strerror or str(cause))
        self.path = path

    def __str__(self) -> str:
        return f"cannot write {self.path}: {self.strerror}"


@overload
def atomic_writer(path: str, binary: Literal[False] = False,
                  mode: int | None = None) -> AbstractContextManager[IO[str]]: ...


@overload
def atomic_writer(path: str, binary: Literal[True], mode: int | None = None) -> AbstractContextManager[IO[bytes]]: ...


@contextmanager
def atomic_writer(path: str, binary: bool = False, mode: int | None = None) -> Iterator[IO[Any]]:
    """A handle (text, or bytes with `binary`) onto a temporary file beside `path`, renamed
    over it (atomic on POSIX) when the block finishes, with the mode and, where allowed, the
    owner of the file it replaces; on an error the temporary file goes and `path` is
    untouched. With `mode`, the file has that mode whatever it replaces (0o600: private data,
    which the temporary file, made 0600, never exposes meanwhile). Failures are WriteErrors
    naming `path`. A `path` that is no regular file (`-o /dev/null`, `/dev/stdout`, a pipe)
    is written through: a rename put a regular file in place of the device (/dev/null itself)."""
    if os.path.exists(path) and not os.path.isfile(path):
        yield from _written_through(path, binary)
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = _created_beside(directory, f"{TEMPORARY_PREFIX}{os.getpid()}-")
    except OSError as exc:
        raise WriteError(path, exc) from None
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif os.path.exists(path):
            status = os.stat(path)
            os.chmod(tmp, status.st_mode & 0o7777)
            try:
                os.chown(tmp, status.st_uid, status.st_gid)
            except PermissionError:
                pass  # another owner: only root may keep it; the mode is kept
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise WriteError(path, exc) from None
        raise


#: how tempfile.mkstemp opens the file it makes (CPython 3.11's Lib/tempfile.py, _bin_openflags)
_CREATE = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def _created_beside(directory: str, prefix: str) -> tuple[int, str]:
    """(a descriptor, the path) of a new file only this user may read, named `prefix` and 8
    random characters in `directory`, as tempfile.mkstemp makes it: without importing tempfile,
    which brings shutil (with bz2 and lzma) and random, about 9 ms of a run that writes its
    report to a file, after everything else is done."""
    for _ in range(100):  # tempfile tries os.TMP_MAX (238,328): 100 of 2**32 names all taken is no real case
        name = os.path.join(directory, prefix + os.urandom(4).hex())
        try:
            return os.open(name, _CREATE, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "No usable temporary file name found")


def _written_through(path: str, binary: bool) -> Iterator[IO[Any]]:
    try:
        with open(path, "wb") if binary else open(path, "w", encoding="utf-8") as handle:
            yield handle
    except OSError as exc:
        raise WriteError(path, exc) from None


def write_atomic(path: str, text: str, mode: int | None = None) -> None:
    with atomic_writer(path, mode=mode) as handle:
        handle.write(text)
