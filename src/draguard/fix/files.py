"""Reading the files to fix and writing them back safely: atomically (core.atomic: a
temporary file beside it, renamed over it, mode and ownership kept), never over a file that
changed on disk since it was read, never half-written; a symbolic link at its target, a hard
link in place; and the unified diff `--diff` prints."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from ..core.atomic import TEMPORARY_PREFIX, atomic_writer
from ..sources.loader import Loaded
from .hunks import _CONTEXT, Change, shared_ends, steps_diff, unified

BOM = "\ufeff"


@dataclass
class Read:
    display: str
    raw: bytes
    text: str | None  # None: not UTF-8 text (reported by the lint of it, never written)
    bom: bool


@dataclass
class Gathered:
    """What a fix run reads: the files it may write (display -> Read, and display -> path),
    the renders (Helm, Kustomize) whose findings it reports but never writes, and what it
    did not read, each as (display, why): what the walk skipped (a pipe, a link out of the
    folder: said, as lint warns of them) and what could not be read (an input error)."""

    reads: dict[str, Read] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    rendered: Loaded = field(default_factory=Loaded)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    units: list = field(default_factory=list)  # what the inputs expanded to (sources.discover.Unit)

    @property
    def not_read(self) -> list[tuple[str, str]]:
        return self.skipped + self.unreadable


def gather(inputs: list[str], include: tuple, exclude: tuple, render_options, stdin=None) -> Gathered:
    """The files, folders, charts and kustomizations of `inputs` ('-': `stdin`, a binary
    stream) read for fixing: a file that cannot be read or is not UTF-8 is listed as not
    read (never written), as is what the walk skipped (a pipe, a link out of the folder)."""
    from ..sources.discover import FOLDER_KINDS, expand
    from ..sources.loader import load_units

    units = expand(inputs, include, exclude)
    gathered = Gathered(rendered=load_units([u for u in units if u.kind in FOLDER_KINDS],
                                            render_options=render_options))
    gathered.units = units
    gathered.skipped = [(u.display, u.reason) for u in units if u.kind in ("skipped", "disabled")]
    for unit in units:
        if unit.kind == "file":
            try:
                gathered.reads[unit.display] = read(unit.path, unit.display)
                gathered.paths[unit.display] = unit.path
            except OSError as exc:
                gathered.unreadable.append((unit.display, f"cannot read: {exc.strerror or exc}"))
        elif unit.kind == "stdin":
            gathered.reads["-"] = decode("-", stdin.read())
    gathered.unreadable += [(r.display, "not UTF-8 text: left untouched") for r in gathered.reads.values()
                            if r.text is None]
    return gathered


def read(path: str, display: str) -> Read:
    with open(path, "rb") as handle:
        raw = handle.read()
    return decode(display, raw)


def decode(display: str, raw: bytes) -> Read:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Read(display, raw, None, False)
    return Read(display, raw, text.removeprefix(BOM), text.startswith(BOM))


def encode(text: str, bom: bool) -> bytes:
    return ((BOM if bom else "") + text).encode("utf-8")


def given_roots(inputs: list[str]) -> tuple[str, ...]:
    """Where a fix may write, from the paths given: a folder's real path (what is under it),
    a file's path with its folder resolved and its own name kept (a link given by name is
    not its target: the target must be given, or be under a folder given, to be written)."""
    roots = []
    for path in inputs:
        if path == "-":
            continue
        if os.path.isdir(path):
            roots.append(os.path.realpath(path))
        else:
            roots.append(os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path)))
    return tuple(roots)


class NotWritten(Exception):
    """Why a file is not written (said in one line beside its name)."""


def destination(path: str, roots: tuple[str, ...]) -> str:
    """The file to write for `path`; NotWritten for one that is refused. A symbolic link is
    written at its target, kept a link (replacing the link by a regular file left the target
    unfixed); a target outside the paths given is refused: a manifest in a repository may
    point anywhere (a shared file, a system one), and a fix of the repository must not write
    there."""
    if not os.path.islink(path):
        return path
    target = os.path.realpath(path)
    if any(target == root or target.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
        return target
    raise NotWritten(f"it is a symbolic link to {target}, outside the paths given: not written (give that file, "
                     "or a folder that holds it, to fix it there)")


def write(path: str, original: bytes, data: bytes, roots: tuple[str, ...] | None = None) -> str | None:
    """Replace `path` with `data` if it still holds `original`; the reason it was not
    written, or None. `roots` (given_roots) are where a link may lead; None: the folder of
    `path`. The rename is atomic: a kill at any point leaves the old or the new file. A file
    with other hard links is rewritten in place instead (a rename gives the name a new inode
    and splits it from the others), which a kill during the write can leave half-written:
    no rename keeps an inode."""
    try:
        path = destination(path, roots if roots is not None else given_roots([path]))
    except NotWritten as exc:
        return str(exc)
    try:
        with open(path, "rb") as handle:
            if handle.read() != original:
                return "it changed on disk since it was read: not overwritten"
        status = os.stat(path)
    except OSError as exc:
        return f"cannot read it again: {exc.strerror or exc}"
    if not os.access(path, os.W_OK) or not status.st_mode & 0o222:
        return "it is read-only: not written"  # the mode says so, even to root
    try:
        if status.st_nlink > 1:
            _write_in_place(path, data)
        else:
            with atomic_writer(path, binary=True) as handle:
                handle.write(data)
    except OSError as exc:
        return f"cannot write beside it: {exc.strerror or exc}"
    return None


def _write_in_place(path: str, data: bytes) -> None:
    """The new bytes over the old ones, then the rest cut: the inode (every hard link to it,
    its mode and owner) stays."""
    fd = os.open(path, os.O_WRONLY)
    try:
        view = memoryview(data)
        while view:
            view = view[os.pwrite(fd, view, len(data) - len(view)):]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


_TEMPORARY = re.compile(re.escape(TEMPORARY_PREFIX) + r"(\d+)-[A-Za-z0-9_]{8}")


def remove_stale(folders) -> list[str]:
    """Remove the temporary files (core.atomic) that runs killed before their rename left in
    `folders`: those whose process is gone (one still running is writing it). The paths
    removed, to be said."""
    removed = []
    for folder in sorted(set(folders)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            found = _TEMPORARY.fullmatch(name)
            if found is None or _running(int(found.group(1))):
                continue
            path = os.path.join(folder, name)
            try:
                if os.path.isfile(path) and not os.path.islink(path):
                    os.unlink(path)
                    removed.append(path)
            except OSError:
                continue  # not ours to remove (another owner): left, as any other file
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or past any pid
        return False
    except PermissionError:  # another user's process
        return True
    return True


def file_diff(f) -> str:
    """The `--diff` of a fixed file (fix.run.FileText): the one the process that fixed it
    made (fix.parallel: each part diffs its own files), else written here from the
    replacements its fixes made (fix.hunks.steps_diff), comparing no text."""
    return f.diff if f.diff is not None else steps_diff(f.display, f.original, f.text, f.changes.steps)


def unified_diff(display: str, before: str, after: str, first_line: int = 1) -> str:
    """`diff -u` of two texts; `first_line`: the line number `before` starts at in its file
    (a report's excerpt). The lines both share at the start and the end are left out before
    difflib compares what is between (it compared every line of a file where a fix changed a
    few); one run of lines replaced, added or taken out needs no comparison at all. The hunks
    are written by fix.hunks, as a report's diffs are."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head, tail = shared_ends(old, new)
    removed, added = old[head:len(old) - tail], new[head:len(new) - tail]
    if removed and added and not set(removed).isdisjoint(added):  # compared with its context, as diff -u did
        skip, keep = max(head - _CONTEXT, 0), max(tail - _CONTEXT, 0)
        matcher = difflib.SequenceMatcher(None, old[skip:len(old) - keep], new[skip:len(new) - keep])
        found = [Change(skip + i1, old[skip + i1:skip + i2], new[skip + j1:skip + j2])
                 for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    else:
        found = [Change(head, removed, added)] if removed or added else []
    return unified(display, before, found, first_line)
