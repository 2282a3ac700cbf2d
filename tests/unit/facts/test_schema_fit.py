"""facts.schema_fit answers "fits" only where jsonschema_rs finds the object valid: on every
object of the corpus, the examples and the rules' fixtures, on those objects changed in the
ways a manifest goes wrong, and on the values it leaves to jsonschema_rs."""

from __future__ import annotations

import copy
import datetime
import math

import pytest

from draguard.core.versions import DEFAULT_KUBE_VERSION
from draguard.facts import schemas
from draguard.facts.schema_fit import fits
from draguard.sources.discover import expand
from draguard.sources.loader import load_units
from support.paths import EXAMPLES, ROOT, corpus


def objects() -> list[dict]:
    """Every built-in object of the corpus, the examples and the rules' fixtures."""
    folders = [str(corpus()), str(EXAMPLES), *sorted(str(p) for p in (ROOT / "tests" / "rules").iterdir() if p.is_dir())]
    found = [entry.data for entry in load_units(expand(folders)).entries if isinstance(entry.data, dict)]
    return [data for data in found if isinstance(data.get("apiVersion"), str) and isinstance(data.get("kind"), str)
            and schemas.bundled_schema(DEFAULT_KUBE_VERSION, data["apiVersion"], data["kind"]) is not None]


def judged(data: dict, strict: bool = True) -> tuple[bool, bool]:
    """(fits, jsonschema_rs's is_valid) of `data` against its kind's schema (False where
    jsonschema_rs refuses a value: a date)."""
    api_version, kind = data["apiVersion"], data["kind"]
    schema = schemas.bundled_schema(DEFAULT_KUBE_VERSION, api_version, kind, strict)
    validator = schemas.validator_for(DEFAULT_KUBE_VERSION, api_version, kind, strict)
    assert schema is not None and validator is not None
    try:
        valid = validator.is_valid(data)
    except ValueError:
        valid = False
    return fits(schema, data), valid


def changed(data: dict) -> list[dict]:
    """`data` changed where manifests go wrong: an unknown field, a value of the wrong type,
    a required field left out, a list where a mapping belongs, values JSON reads otherwise."""
    out = []
    for key, value in [("unknown", 1), ("metadata", []), ("metadata", {"name": 5}), ("metadata", {"labels": {"a": 1}}),
                       ("metadata", {"name": "n", "creationTimestamp": datetime.date(2024, 1, 1)}),
                       ("metadata", {"name": "n", "generation": 2.0}), ("metadata", {"name": "n", "generation": 2**70}),
                       ("metadata", {"name": "n", "generation": math.inf}), ("metadata", {"name": "\ud800"})]:
        one = copy.deepcopy(data)
        one[key] = value
        out.append(one)
    spec = data.get("spec")
    if isinstance(spec, dict):
        for key in list(spec)[:6]:
            for value in (None, "x", 3, 2.5, True, [], {}, {"unknown": 1}, [{"unknown": 1}]):
                one = copy.deepcopy(data)
                one["spec"][key] = value
                out.append(one)
        for key in list(spec)[:3]:
            one = copy.deepcopy(data)
            del one["spec"][key]
            out.append(one)
    return out


@pytest.fixture(scope="module")
def every_object() -> list[dict]:
    return objects()


@pytest.mark.parametrize("strict", [True, False])
def test_fits_as_jsonschema_rs_judges_every_object(every_object, strict):
    answers = [judged(data, strict) for data in every_object]
    assert len(answers) > 600
    assert all(valid for fit, valid in answers if fit)  # never a fit jsonschema_rs refuses
    assert sum(fit for fit, _ in answers) >= 0.95 * sum(valid for _, valid in answers)  # and answered for most


def test_fits_only_what_jsonschema_rs_finds_valid_when_objects_are_changed(every_object):
    kinds: dict[str, dict] = {}
    for data in every_object:
        kinds.setdefault(f"{data['apiVersion']}/{data['kind']}", data)
    answers = [(one, *judged(one)) for data in kinds.values() for one in changed(data)]
    assert not [one for one, fit, valid in answers if fit and not valid]
    assert any(fit for _, fit, _ in answers) and any(not valid for _, _, valid in answers)


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"a": "b"}}, "replicas": 2, "template": {
                  "metadata": {"labels": {"a": "b"}},
                  "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}}}}


def deployment(**changes) -> dict:
    data = copy.deepcopy(DEPLOYMENT)
    container = data["spec"]["template"]["spec"]["containers"][0]
    for key, value in changes.items():
        container[key] = value
    return data


@pytest.mark.parametrize("changes,fit", [
    ({}, True),
    ({"resources": {"limits": {"cpu": 1.5}}}, True),  # a Quantity is a string or a number (oneOf)
    ({"resources": {"limits": {"cpu": None}}}, False),  # null fits both of oneOf's branches: invalid
    ({"ports": [{"containerPort": "80"}]}, False),
    ({"name": None}, False),
    ({"unknownField": 1}, False),  # additionalProperties: false (strict)
])
def test_a_deployment_fits_or_not(changes, fit):
    assert judged(deployment(**changes)) == (fit, fit)


def test_a_kind_the_schema_does_not_list_does_not_fit():
    schema = schemas.bundled_schema(DEFAULT_KUBE_VERSION, "apps/v1", "Deployment")
    validator = schemas.validator_for(DEFAULT_KUBE_VERSION, "apps/v1", "Deployment")
    assert schema is not None and validator is not None
    for kind, fit in (("Deployment", True), ("StatefulSet", False), (None, False)):
        data = {**DEPLOYMENT, "kind": kind}
        assert (fits(schema, data), validator.is_valid(data)) == (fit, fit)


@pytest.mark.parametrize("value", [2.0, datetime.datetime(2024, 1, 1), 2**64, b"x", (1,), "\udc80"])
def test_values_json_reads_otherwise_are_left_to_jsonschema_rs(value):
    """A float where an integer is asked (2.0 is one to JSON Schema), what is not JSON, an
    integer past 64 bits, a lone surrogate: not answered here."""
    data = deployment()
    data["spec"]["replicas"] = value
    schema = schemas.bundled_schema(DEFAULT_KUBE_VERSION, "apps/v1", "Deployment")
    assert schema is not None and not fits(schema, data)


def test_a_keyword_not_listed_is_left_to_jsonschema_rs():
    assert fits({"type": "string"}, "a")
    assert not fits({"type": "string", "minLength": 2}, "a")
    assert not fits({"$ref": "#/$defs/a", "$defs": {}}, "a")


def test_an_object_nested_past_pythons_stack_is_left_to_the_validator():
    """The webhook's JSON reader takes nesting near Python's own limit, and a CRD's schema is
    recursive (JSONSchemaProps): 600 levels were a RecursionError out of `fits`."""
    schema = schemas.bundled_schema(DEFAULT_KUBE_VERSION, "apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert schema is not None
    inner: dict = {"type": "string"}
    for _ in range(600):
        inner = {"type": "object", "properties": {"a": inner}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "xs.example.com"},
           "spec": {"group": "example.com", "names": {"kind": "X", "plural": "xs"}, "scope": "Namespaced",
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": inner}}]}}
    assert fits(schema, crd) is False
