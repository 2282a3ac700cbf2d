"""Dumps: read a snapshot back offline, or write one for replay.

Two forms are read. A file (or stdin) holds what `kubectl get ... -o yaml|json` prints, Lists
or documents, optionally after a `kind: Snapshot` header; it is parsed with positions, so a
finding points at its line. A bundle is the folder `draguard audit --save-dump DIR` writes:
`snapshot.yaml` (the header) and one JSON List per resource, parsed with the C JSON parser
because a large cluster's bundle runs to hundreds of megabytes.

A dump that does not parse, or is cut short, is refused whole with its position: auditing
part of it would report the missing objects as faults."""

from __future__ import annotations

import json
import os
from datetime import datetime

import yaml

from ..core import confine
from ..core.atomic import write_atomic
from ..core.errors import InputError
from ..model.manifest import Manifest
from ..sources.loader import Loaded, Source, load_text
from ..sources.yamlpos import Limits
from .snapshot import RESOURCES, Snapshot, is_header, read_header, utc_now

HEADER_FILE = "snapshot.yaml"
#: A dump is one cluster's state: far larger than a manifest file may be.
DUMP_LIMITS = Limits(max_file_bytes=2 * 1024**3, max_document_bytes=1024**3, max_nodes=200_000_000)
_REMEDY = "take the dump again (`draguard audit --save-dump DIR`, or `kubectl get ... -o yaml > FILE`)"


def read_dump(path: str, stdin=None, at: datetime | None = None) -> tuple[Snapshot, Loaded]:
    """The snapshot in `path` ('-': stdin) and what was loaded (sources, for excerpts).
    `at` overrides the capture time; a dump without a header is judged as of now. Where reads
    are confined (core.confine), the dump and each file of a bundle must lie inside the roots."""
    if path != "-":
        confine.check(path)
    if os.path.isdir(path):
        snapshot, loaded = _read_bundle(path)
    else:
        snapshot, loaded = _read_file(path, stdin)
    if at is not None:
        snapshot.captured_at, snapshot.time_known = at, True
    snapshot.from_dump = True
    return snapshot, loaded


def _read_file(path: str, stdin) -> tuple[Snapshot, Loaded]:
    try:
        text = stdin.read() if path == "-" else open(path, encoding="utf-8-sig").read()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text dump (UTF-8 YAML or JSON expected)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the dump: {exc.strerror or exc}") from None
    loaded = Loaded()
    load_text(Source(path, text), loaded, DUMP_LIMITS)
    if loaded.problems:
        problem = loaded.problems[0]
        where = problem.location
        position = f":{where.line}:{where.column}" if where.line else ""
        raise InputError(f"{where.file}{position}: the dump is corrupt or truncated ({problem.message}); {_REMEDY}")
    manifests, header = [], None
    for entry in loaded.entries:
        if is_header(entry.data):
            header = Manifest.from_entry(entry)
        else:
            manifests.append(Manifest.from_entry(entry))
    if not manifests and header is None:  # nothing says what was read: no grade can come of it
        raise InputError(f"{path}: the dump holds no Kubernetes object, so there is nothing to audit; {_REMEDY}")
    snapshot = Snapshot(manifests, utc_now(), source=path, time_known=header is not None)
    if header is not None:
        _apply_header(snapshot, header.data, f"{path}:{header.location().line or 1}")
    else:  # what kubectl was not asked for is unknown, not empty
        present = {(m.group, m.kind) for m in manifests}
        snapshot.unreadable = {r.name: "not in the dump" for r in RESOURCES if (r.group, r.kind) not in present}
    return snapshot, loaded


def _apply_header(snapshot: Snapshot, data: dict, where: str) -> None:
    try:
        snapshot.captured_at, snapshot.server_version, snapshot.unreadable, snapshot.feature_gates = read_header(data)
    except ValueError as exc:
        raise InputError(f"{where}: snapshot header: {exc}") from None


def _read_bundle(folder: str) -> tuple[Snapshot, Loaded]:
    header_path = os.path.join(folder, HEADER_FILE)
    confine.check(header_path)
    try:
        with open(header_path, encoding="utf-8") as f:
            header = yaml.safe_load(f)
    except FileNotFoundError:
        raise InputError(f"{folder}: not a dump bundle (no {HEADER_FILE}); pass a dump file, or a folder written by "
                         "`draguard audit --save-dump`") from None
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{header_path}: cannot read the snapshot header: {exc}; {_REMEDY}") from None
    if not isinstance(header, dict) or not is_header(header):
        raise InputError(f"{header_path}: not a draguard snapshot header (kind: Snapshot expected)")
    snapshot = Snapshot([], utc_now(), source=folder)
    _apply_header(snapshot, header, header_path)
    loaded = Loaded()
    for resource in RESOURCES:
        path = os.path.join(folder, f"{resource.name}.json")
        if not os.path.exists(path):
            if resource.name not in snapshot.unreadable:
                snapshot.unreadable[resource.name] = "not in the dump"
            continue
        confine.check(path)
        for i, item in enumerate(_list_items(path)):
            snapshot.manifests.append(Manifest.from_data(item, display=path, document=i, positions=False))
    return snapshot, loaded


def _list_items(path: str) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: the dump is corrupt or truncated ({exc.msg}); "
                         f"{_REMEDY}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the dump: {exc}") from None
    except RecursionError:
        raise InputError(f"{path}: the dump nests too deeply to be a List of objects; {_REMEDY}") from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise InputError(f"{path}: not a List of objects (items missing); {_REMEDY}")
    return items


def write_bundle(folder: str, snapshot: Snapshot, raw: dict[str, list[dict]]) -> None:
    """Write `raw` (resource name -> the objects read) and the header into `folder`, each file
    atomically; the header last, so a folder interrupted while written is no bundle. The files
    are 0600 and a folder made here 0700: they hold pod specs, their environment values too."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for name, items in raw.items():
        write_atomic(os.path.join(folder, f"{name}.json"),
                     json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, separators=(",", ":")), 0o600)
    write_atomic(os.path.join(folder, HEADER_FILE), yaml.safe_dump(snapshot.header(), sort_keys=False), 0o600)
