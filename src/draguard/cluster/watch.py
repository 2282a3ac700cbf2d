"""`draguard audit --watch`: one LIST per resource, then its watch stream from the LIST's
resourceVersion (never a LIST per change); each burst of changes is applied to the objects
held, the snapshot is audited again, and the findings that appeared and resolved are
reported (report.audit.watch_lines prints them).

A stream that ends is opened again from the last resourceVersion seen; one the server has
expired (410 Gone) is listed again."""

from __future__ import annotations

import json
import queue
import threading
import time
from urllib.parse import urlencode

from .live import ClusterError, list_resource, snapshot_of
from .snapshot import RESOURCES, utc_now

QUIET = 1.0  # seconds without a change before auditing a burst of changes again
_STREAM_TIMEOUT = 300  # seconds a watch request stays open before it is renewed


def follow(connection, snapshot, raw: dict, config, seconds: float | None = None):
    """Audit `snapshot` (read through `connection`, `raw` its objects), then follow the watch
    streams: yields (capture time, findings that appeared, findings that resolved), first with
    every finding of the snapshot, then once per burst of changes; stops after `seconds`."""
    from .audit import audit

    store = {name: {uid_of(o): o for o in items} for name, items in raw.items()}
    shown = _keyed(audit(snapshot, config).findings)
    yield snapshot.header()["capturedAt"], list(shown.values()), []
    changes: queue.Queue = queue.Queue()
    stop = threading.Event()
    for resource in RESOURCES:
        if resource.name in connection.listed:
            threading.Thread(target=stream_changes, args=(connection, resource, changes, stop), daemon=True).start()
    deadline = time.monotonic() + seconds if seconds else None
    try:
        while deadline is None or time.monotonic() < deadline:
            if not _drain(changes, store, deadline):
                continue
            current = snapshot_of({n: list(o.values()) for n, o in store.items()}, utc_now(),
                                  snapshot.server_version, snapshot.source, snapshot.unreadable, snapshot.feature_gates)
            found = _keyed(audit(current, config).findings)
            yield (current.header()["capturedAt"], [found[k] for k in sorted(found.keys() - shown.keys())],
                   [shown[k] for k in sorted(shown.keys() - found.keys())])
            shown = found
    finally:
        stop.set()


def uid_of(obj: dict) -> str:
    """An object's key in a store: its uid, else namespace/name."""
    meta = obj.get("metadata") or {}
    return meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _keyed(findings) -> dict[tuple, object]:
    """Findings by identity (rule, object, path): a message that changes (an age that grows)
    is the same finding."""
    return {(f.rule, str(f.obj), f.location.dotted): f for f in findings}


def _drain(changes: queue.Queue, store: dict, deadline) -> bool:
    """Apply the next burst of changes (waiting for one, then until QUIET passes without
    another); whether anything changed."""
    timeout = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
    try:
        change = changes.get(timeout=timeout)
    except queue.Empty:
        return False
    while True:
        apply(store, change)
        try:
            change = changes.get(timeout=QUIET)
        except queue.Empty:
            return True


def apply(store: dict, change: tuple) -> None:
    """One change from `stream_changes` applied to `store` (resource name -> uid -> object)."""
    name, kind, obj = change
    if kind == "RELIST":
        store[name] = {uid_of(o): o for o in obj}
    elif kind == "DELETED":
        store.setdefault(name, {}).pop(uid_of(obj), None)
    elif kind in ("ADDED", "MODIFIED"):
        store.setdefault(name, {})[uid_of(obj)] = obj


def stream_changes(connection, resource, changes: queue.Queue, stop: threading.Event, restarted=None) -> None:
    """Stream `resource`'s watch events into `changes` from its last LIST until `stop`: (resource
    name, ADDED / MODIFIED / DELETED, object), or (name, RELIST, objects) after an expiry.
    `restarted(resource name, why)`, when given, is called each time the stream is opened
    again other than on its own timeout: 'expired' (410 Gone: listed again) or 'error'."""
    version, resource_version = connection.listed[resource.name]
    base = f"/api/{version}" if not resource.group else f"/apis/{resource.group}/{version}"
    while not stop.is_set():
        query = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(_STREAM_TIMEOUT)}
        try:
            for event in _stream(connection, f"{base}/{resource.plural}", query, stop):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    raise _Expired()
                resource_version = (obj.get("metadata") or {}).get("resourceVersion", resource_version)
                if kind != "BOOKMARK":
                    obj.setdefault("apiVersion", f"{resource.group}/{version}" if resource.group else version)
                    obj.setdefault("kind", resource.kind)
                    changes.put((resource.name, kind, obj))
        except _Expired:
            if restarted is not None:
                restarted(resource.name, "expired")
            items, why = list_resource(connection, resource, version)
            if why:
                return
            resource_version = connection.listed[resource.name][1]
            changes.put((resource.name, "RELIST", items))
        except (ClusterError, OSError, ValueError, json.JSONDecodeError):
            if restarted is not None:
                restarted(resource.name, "error")
            stop.wait(2)  # the server went away for a moment: open the stream again


class _Expired(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


def _stream(connection, path: str, query: dict, stop: threading.Event):
    """The watch's events, one JSON object per line, as the server sends them."""
    api = connection.api
    method, url, headers, body, post = api.param_serialize(
        "GET", f"{path}?{urlencode(query)}", header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
    response = api.rest_client.pool_manager.request(method, url, headers=headers, preload_content=False,
                                                    timeout=_STREAM_TIMEOUT + 30)
    try:
        if response.status == 410:
            raise _Expired()
        if response.status != 200:
            raise ClusterError(f"watch {path}: the server answered {response.status}")
        pending = b""
        for chunk in response.stream(65536):
            if stop.is_set():
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip():
                    yield json.loads(line)
    finally:
        response.release_conn()
