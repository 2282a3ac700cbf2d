"""A per-user cache of data draguard derives from what it ships, so a run on one file does
not rebuild it: a pre-commit hook or an editor starts draguard once per file, and building a
kind's schema out of the 1.8 MB OpenAPI definitions, or the built-in inventory's generated GPU nodes,
cost more than linting the file.

Entries are JSON (read back with `json.loads`, which runs nothing, whatever the file holds),
under `$DRAGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/draguard`, else `~/.cache/draguard`, in a
folder per draguard version; each entry's key also names the files it was derived from, by
size and modification time, so an upgraded dependency or an edited data file is a miss, not
a stale answer. Writes are atomic. Paths are strings (`os.path`): `pathlib` (with
`urllib.parse` and `ipaddress`, which it imports) was about 3% of a one-file lint's start. The cache only saves time: an entry that cannot be read
or written (a read-only home, a damaged file) is rebuilt in memory, and the run's answer is
the same either way; `DRAGUARD_CACHE_DIR=` (empty) turns it off."""

from __future__ import annotations

import binascii
import json
import os
from typing import Callable, TypeVar

from .. import __version__
from .atomic import write_atomic

T = TypeVar("T")


def cache_root() -> str | None:
    """This version's cache folder, or None when the cache is turned off."""
    chosen = os.environ.get("DRAGUARD_CACHE_DIR")
    if chosen is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        chosen = os.path.join(base, "draguard")
    return os.path.join(chosen, f"v{__version__}") if chosen else None


def source_stamp(*paths: str | os.PathLike[str]) -> str:
    """What a key says of the files an entry is derived from: their path, size and mtime."""
    stamps = []
    for path in paths:
        status = os.stat(path)
        stamps.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
    return "\n".join(stamps)


def folder_stamp(*folders: str | os.PathLike[str]) -> str:
    """`source_stamp` of every module in `folders` (not their subfolders), in name order: the
    key of an entry derived by the code there, so an edited or upgraded module is a miss even
    where the version string stays the same (a checkout under development)."""
    paths = [entry.path for folder in folders for entry in sorted(os.scandir(folder), key=lambda e: e.name)
             if entry.name.endswith((".py", ".so", ".pyd")) and entry.is_file()]
    return source_stamp(*paths)


def cached_json(area: str, key: str, build: Callable[[], T], valid: Callable[[object], bool] | None = None) -> T:
    """The JSON-able value `build()` makes, read from the cache entry for `key` in `area`
    when there is one (and `valid` says the value read is still current: for an entry whose
    sources are known only once it is built), else built and stored."""
    root = cache_root()
    if root is None:
        return build()
    # the key is kept in the entry and compared: a checksum names the file (binascii is loaded
    # already; hashlib or zlib cost the start-up), and two keys sharing one take turns in it
    # (surrogatepass: a key may hold what a tenant wrote, a lone surrogate from a JSON escape too)
    folder = os.path.join(root, area)
    path = os.path.join(folder, f"{binascii.crc32(key.encode('utf-8', 'surrogatepass')):08x}.json")
    try:
        with open(path, encoding="utf-8") as handle:
            entry = json.load(handle)
        if isinstance(entry, dict) and entry.get("key") == key and (valid is None or valid(entry["value"])):
            cached: T = entry["value"]  # JSON that `build` made for this key, read back
            return cached
    except (OSError, ValueError, KeyError):
        pass  # absent or damaged: rebuilt below
    value = build()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        write_atomic(path, json.dumps({"key": key, "value": value}, separators=(",", ":")))
    except OSError:
        pass  # a read-only or full cache costs time, not correctness
    return value
