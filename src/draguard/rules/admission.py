"""Admission expressions evaluated in-process with the same CEL engine as selectors, and the
variables a policy export binds for them, computed here from the model. A wrong expression
then fails the unit tests on the rule's own examples, before any apiserver sees it."""

from __future__ import annotations

from functools import lru_cache

from ..core.fixes import plain
from ..model.claims import device_requests
from ..model.manifest import Manifest
from ..model.pods import pod_sites


def as_admitted(node):
    """The object as the apiserver sends it to admission: typed objects are serialized
    without null fields."""
    if isinstance(node, dict):
        return {key: as_admitted(value) for key, value in node.items() if value is not None}
    if isinstance(node, list):
        return [as_admitted(value) for value in node]
    return node


def variables_for(obj: Manifest) -> dict:
    """podSpecs, containers and requests of `obj`, as the policy export defines them; a
    container-like object whose resources sit under another key (TrainJob's
    `resourcesPerNode`) is presented with them as `resources`."""
    sites = pod_sites(obj)
    containers = []
    for site in sites:
        for c in site.containers:
            container = plain(c.container)
            if c.resources_key != "resources" and c.resources_key in container:
                container["resources"] = container.pop(c.resources_key)
            containers.append(container)
    return as_admitted({
        "podSpecs": [plain(site.spec) for site in sites],
        "containers": containers,
        "requests": [plain(r.fields) for r in device_requests(obj) if r.shape != "empty"],
    })


@lru_cache(maxsize=256)
def _program(expression: str):
    from ..dra.cellib import runtime

    rt = runtime()
    env = rt.cel.NewEnv(variables={"object": rt.T.DYN, "variables": rt.T.DYN},
                        extensions=[rt.extensions[0].ExtStrings(version=2)])
    return env.compile(expression)


def passes(expression: str, obj: Manifest) -> bool:
    """Evaluate `expression` on `obj`; ValueError when it does not yield a bool."""
    result = _program(expression).eval(data={"object": as_admitted(plain(obj.data)), "variables": variables_for(obj)})
    if result.type() != _program_types().BOOL:
        raise ValueError(f"admission expression did not return a bool: {result.type().name()} "
                         f"({result.value() if result.type() == _program_types().ERROR else ''})")
    return bool(result.value())


def _program_types():
    from ..dra.cellib import runtime

    return runtime().T


#: CEL for the containers and init containers of one pod spec `s` (inside a podSpecs macro).
SPEC_CONTAINERS = "((has(s.containers) ? s.containers : []) + (has(s.initContainers) ? s.initContainers : []))"
