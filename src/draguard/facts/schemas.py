"""The official Kubernetes OpenAPI schemas (as JSON Schema, shipped by `kubernetes-validate`),
compiled once per (version, apiVersion, kind) with the Rust validator `jsonschema-rs`.

kubernetes-validate's own `validate()` re-reads and re-compiles the 1 MB definitions file on
every call (~30 objects/s); caching the compiled validator makes validation cost microseconds.
`jsonschema_rs` is imported on first use: commands that validate nothing do not pay for it."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path


@lru_cache(maxsize=None)
def _schema_root() -> Path:
    # located, not imported: importing kubernetes_validate pulls in jsonschema (~0.1 s)
    spec = find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the kubernetes-validate package is not installed")
    return Path(spec.submodule_search_locations[0]) / "kubernetes-json-schema"


def _schema_dir(kube_version: str) -> Path:
    return _schema_root() / f"v{kube_version}.0-local-strict"


@lru_cache(maxsize=None)
def _registry(kube_version: str):
    import jsonschema_rs

    definitions = json.loads((_schema_dir(kube_version) / "_definitions.json").read_text())
    return jsonschema_rs.Registry([(definitions["$id"], definitions)])


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


@lru_cache(maxsize=None)
def validator_for(kube_version: str, api_version: str, kind: str):
    """The compiled validator for a built-in kind served by `kube_version`, or None when the
    target does not know that apiVersion/kind (CRDs, removed or not-yet-added versions)."""
    group, version = _split(api_version)
    prefix = group.split(".", 1)[0] + "-" if group else ""
    path = _schema_dir(kube_version) / f"{kind.lower()}-{prefix}{version}.json"
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if not any(g.get("group", "") == group and g.get("version") == version and g.get("kind") == kind
               for g in gvks):
        return None  # same file name, different group (e.g. a CRD in apps.example.com)
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema, registry=_registry(kube_version))
