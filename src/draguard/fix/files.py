"""Reading the files to fix and writing them back safely: atomically (core.atomic: a
temporary file beside it, renamed over it, mode and ownership kept), never over a file that
changed on disk since it was read, never half-written; and the unified diff `--diff` prints."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from ..core.atomic import atomic_writer
from ..sources.loader import Loaded

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


def write(path: str, original: bytes, data: bytes) -> str | None:
    """Replace `path` with `data` if it still holds `original`; the reason it was not
    written, or None. The rename is atomic: a kill at any point leaves the old or the new file."""
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
        with atomic_writer(path, binary=True) as handle:
            handle.write(data)
    except OSError as exc:
        return f"cannot write beside it: {exc.strerror or exc}"
    return None


def unified_diff(display: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"a/{display.lstrip('/')}", f"b/{display.lstrip('/')}")
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return out
