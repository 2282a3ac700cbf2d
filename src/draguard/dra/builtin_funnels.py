"""A request's funnel against the built-in GPU inventory, kept in the per-user cache.

Against the built-in inventory a request's funnel (dra.explain.explain_request) depends only
on the request's shape (class, selectors, mode, count, admin access, tolerations, capacity
requests), the class's selectors as the run defines them (its own DeviceClass, else the
built-in one), the release and feature gates the devices are stored and allocated under, and
draguard's own code and data. Each of these is in the key (the code and data by the stamps of
the dra, cel and facts modules, the shipped data files and cel-expr-python), so a one-file lint
whose requests were judged before reads the funnel back as JSON, without building the
inventory's devices, the allocator or the CEL engine; anything else is a miss, computed and
stored."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

from ..cel.summary import engine_stamp
from ..core.cached import kept
from ..core.usercache import cached_json, folder_stamp, source_stamp
from ..facts.shipped import DATA
from .funnel import RequestExplanation

if TYPE_CHECKING:
    from ..model.claims import DeviceRequest

#: the shipped data a built-in funnel is computed from: the GPUs and what their driver
#: publishes, the built-in classes, the gates of each release
_DATA = ("gpus.yaml", "driver-attributes.yaml", "deviceclasses.yaml", "feature-gates.yaml")


def builtin_funnel(request: DeviceRequest, name: str, class_selectors: list[str] | None, kube_version: str,
                   gates: dict[str, bool], compute: Callable[[], RequestExplanation]) -> RequestExplanation:
    """The funnel of `request` (named `name`) against the built-in inventory: read from the
    cache, else `compute()`d and stored. `class_selectors`: those of the run's own DeviceClass
    of the request's class, None where the run defines none (the built-in one counts)."""
    shape = [request.class_name, class_selectors, list(request.selectors), request.mode, request.count,
             request.admin_access, [[t.key, t.operator, t.value, t.effect] for t in request.tolerations],
             request.capacity_requests, kube_version, sorted(gates.items())]
    try:
        text = json.dumps(shape, sort_keys=True, default=_refused)
    except (TypeError, ValueError):  # a value JSON cannot hold stands for itself only: not kept
        return _named(compute(), name)
    found = _read.get(text)
    if found is None:  # each shape once a process: replicated manifests repeat the same requests
        key = f"funnel\n{_code_stamp()}\n{text}"
        value = cached_json("funnels", key, lambda: compute().as_json(), _well_formed)
        found = kept(_read, text, RequestExplanation.from_json("", value), _READ_LIMIT)  # a server meets new shapes for ever
    return found.named(name)  # read once a shape, shared as dra.target's funnels are (5,372 a lint of 20,000)


#: the funnels read or computed in this process, by the text of their key's shape
_read: dict[str, RequestExplanation] = {}
_READ_LIMIT = 4096


def _named(explanation: RequestExplanation, name: str) -> RequestExplanation:
    explanation.request = name
    return explanation


def _refused(value: object) -> Any:
    raise TypeError(f"not JSON: {type(value).__name__}")


@lru_cache(maxsize=1)
def _code_stamp() -> str:
    """The stamps of what computes a funnel: the CEL engine (cel.summary.engine_stamp),
    draguard's dra, facts and core modules, and the shipped data it reads."""
    package = os.path.dirname(os.path.dirname(__file__))
    return "\n".join((engine_stamp(), folder_stamp(*(os.path.join(package, part) for part in ("dra", "facts", "core"))),
                      source_stamp(*(os.path.join(DATA, name) for name in _DATA))))


def _well_formed(value: object) -> bool:
    """Whether a cached entry reads as a funnel (a damaged one is computed again)."""
    try:
        RequestExplanation.from_json("", value)  # type: ignore[arg-type]  # checked by reading it
    except (TypeError, ValueError, KeyError, IndexError):
        return False
    return True
