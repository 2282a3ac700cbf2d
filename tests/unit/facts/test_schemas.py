"""A kind's schema bundled from the shared definitions (and kept in the per-user cache)
judges objects exactly as the kind's file with a registry of every definition does, and a
warm cache spares the 1.8 MB definitions file."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs
import pytest

from draguard.core.versions import DEFAULT_KUBE_VERSION
from draguard.facts import schemas

BAD = [
    ("v1", "Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": 1}},
                   "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": "80"}],
                                            "resources": {"limits": {"cpu": []}}, "unknown": True}],
                            "hostIPC": "yes"}}),
    ("apps/v1", "Deployment", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                               "spec": {"template": {"spec": {"containers": [{"image": 3}]}}}}),
    ("resource.k8s.io/v1", "ResourceClaimTemplate", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"count": "two"}}]}}}}),
]


def cleared() -> None:
    """No kind's schema nor validator kept in this process."""
    schemas.bundled_schema.cache_clear()
    schemas.validator_for.cache_clear()


def registry_validator(kube_version: str, api_version: str, kind: str, strict: bool):
    """The way draguard compiled schemas before: the kind's own file against a registry of
    the whole definitions file."""
    folder = Path(schemas._schema_dir(kube_version, strict))
    definitions = json.loads((folder / "_definitions.json").read_text())
    group, _, version = api_version.rpartition("/")
    prefix = group.split(".", 1)[0] + "-" if group else ""
    schema = json.loads((folder / f"{kind.lower()}-{prefix}{version}.json").read_text())
    return jsonschema_rs.validator_for(schema, registry=jsonschema_rs.Registry([(definitions["$id"], definitions)]))


def described(validator, data) -> list:
    return sorted((list(e.instance_path), type(e.kind).__name__, e.message) for e in validator.iter_errors(data))


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("api_version,kind,data", BAD, ids=[kind for _, kind, _ in BAD])
def test_bundled_schema_finds_what_the_registry_finds(api_version, kind, data, strict):
    cleared()
    ours = schemas.validator_for(DEFAULT_KUBE_VERSION, api_version, kind, strict)
    theirs = registry_validator(DEFAULT_KUBE_VERSION, api_version, kind, strict)
    found = described(ours, data)
    assert found and found == described(theirs, data)


def test_a_warm_cache_does_not_read_the_definitions(monkeypatch, tmp_path):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path))
    cleared()
    schemas._definitions.cache_clear()
    assert schemas.validator_for(DEFAULT_KUBE_VERSION, "v1", "Pod") is not None  # cold: bundled and stored
    assert schemas._definitions.cache_info().misses == 1
    cleared()
    schemas._definitions.cache_clear()
    validator = schemas.validator_for(DEFAULT_KUBE_VERSION, "v1", "Pod")
    assert schemas._definitions.cache_info().misses == 0
    assert not validator.is_valid(BAD[0][2])


def test_the_bundle_keeps_a_property_named_description():
    """Descriptions are left out of the bundle, but a schema property that is named
    `description` (JSONSchemaProps.description, in a CRD) is a field, and is still checked."""
    cleared()
    crd = schemas.validator_for(DEFAULT_KUBE_VERSION, "apiextensions.k8s.io/v1", "CustomResourceDefinition")
    data = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "a.b.c"},
            "spec": {"group": "b.c", "names": {"kind": "A", "plural": "as"}, "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "description": "kept"}}}]}}
    assert crd.is_valid(data)
    data["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = 5
    assert not crd.is_valid(data)


VALID_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}


def test_a_process_first_objects_are_checked_without_compiling_a_validator(monkeypatch):
    """facts.schema_fit answers for the first FIT_IN_PYTHON objects of a process: a valid one
    compiles no validator; past them, or where an object does not fit, the compiled
    validator judges and words the errors."""
    cleared()
    monkeypatch.setattr(schemas, "_fitted_in_python", 0)
    assert list(schemas.schema_errors(VALID_POD, DEFAULT_KUBE_VERSION, "v1", "Pod")) == []
    assert schemas.validator_for.cache_info().currsize == 0
    assert [e.message for e in schemas.schema_errors(BAD[0][2], DEFAULT_KUBE_VERSION, "v1", "Pod")]
    assert schemas.validator_for.cache_info().currsize == 1
    cleared()
    monkeypatch.setattr(schemas, "_fitted_in_python", schemas.FIT_IN_PYTHON - 1)
    assert list(schemas.schema_errors(VALID_POD, DEFAULT_KUBE_VERSION, "v1", "Pod")) == []
    assert schemas.validator_for.cache_info().currsize == 0  # the last of the budget
    assert list(schemas.schema_errors(VALID_POD, DEFAULT_KUBE_VERSION, "v1", "Pod")) == []
    assert schemas.validator_for.cache_info().currsize == 1
