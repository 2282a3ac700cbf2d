"""File writes that never leave a half-written file behind."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import IO, Iterator


@contextmanager
def atomic_writer(path: str, binary: bool = False) -> Iterator[IO]:
    """A handle (text, or bytes with `binary`) onto a temporary file beside `path`, renamed
    over it (atomic on POSIX) when the block finishes, with the mode and, where allowed, the
    owner of the file it replaces; on an error the temporary file goes and `path` is
    untouched."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".draguard-", dir=directory)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if os.path.exists(path):
            status = os.stat(path)
            os.chmod(tmp, status.st_mode & 0o7777)
            try:
                os.chown(tmp, status.st_uid, status.st_gid)
            except PermissionError:
                pass  # another owner: only root may keep it; the mode is kept
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path: str, text: str) -> None:
    with atomic_writer(path) as handle:
        handle.write(text)
