"""facts.schema_fit's one promise, attacked with generated objects: `fits` is True only where
jsonschema_rs finds the object valid. Valid objects of several bundled kinds (the examples')
are changed at a generated place into what a manifest or a YAML reader may hold: wrong types,
floats for integers (1.0, 1e400, NaN, infinities), huge integers, booleans, unknown or
non-string keys, missing required keys, nested collections where scalars belong, lone
surrogates. A wrong "fits" would drop a schema-invalid finding without a word."""

from __future__ import annotations

import copy
import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draguard.core.versions import DEFAULT_KUBE_VERSION
from draguard.facts import schemas
from draguard.facts.schema_fit import fits
from draguard.sources.discover import expand
from draguard.sources.loader import load_units
from support.paths import EXAMPLES, corpus


@functools.cache
def _kinds() -> tuple[dict, ...]:
    """One object of each bundled kind the examples and the corpus hold."""
    found: dict[tuple[str, str], dict] = {}
    for entry in load_units(expand([str(EXAMPLES), str(corpus())])).entries:
        data = entry.data
        if not (isinstance(data, dict) and isinstance(data.get("apiVersion"), str) and isinstance(data.get("kind"), str)):
            continue
        if schemas.bundled_schema(DEFAULT_KUBE_VERSION, data["apiVersion"], data["kind"]) is not None:
            found.setdefault((data["apiVersion"], data["kind"]), data)
    return tuple(found.values())


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from([0, 1, -1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -(2 ** 63) - 1, 10 ** 30]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1.0, 1e400, -1e400, float("nan"), 0.0, -0.0, 2.5, 1e20]),
    st.text(max_size=6), st.sampled_from(["\ud800", "x\udfff", "é", "", "Always", "IfNotPresent", "1", "true"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.none()),
                                            inner, max_size=3)),
    max_leaves=6)


@st.composite
def _changed(draw) -> tuple[str, str, dict, bool]:
    """(its apiVersion, its kind, an object changed at one generated place, strict or not)."""
    data = copy.deepcopy(draw(st.sampled_from(_kinds())))
    api_version, kind = data["apiVersion"], data["kind"]
    node: object = data
    for _ in range(draw(st.integers(0, 8))):  # walk down to a generated place
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node, key=repr)))
        elif isinstance(node, list) and node:
            key = draw(st.integers(0, len(node) - 1))
        else:
            break
        child = node[key]  # type: ignore[index]
        if not isinstance(child, dict | list) or not child:
            break
        node = child
    action = draw(st.sampled_from(["set", "add", "drop", "append"]))
    if isinstance(node, dict):
        if action == "drop" and node:
            del node[draw(st.sampled_from(sorted(node, key=repr)))]
        elif action == "add" or not node:
            node[draw(st.one_of(st.text(max_size=5), st.integers(), st.booleans()))] = draw(_VALUES)
        else:
            node[draw(st.sampled_from(sorted(node, key=repr)))] = draw(_VALUES)
    elif isinstance(node, list):
        if action == "append" or not node:
            node.append(draw(_VALUES))
        else:
            node[draw(st.integers(0, len(node) - 1))] = draw(_VALUES)
    return api_version, kind, data, draw(st.booleans())


def test_the_examples_hold_several_kinds():
    assert len(_kinds()) >= 5


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_changed())
def test_fits_only_what_jsonschema_rs_finds_valid(case):
    api_version, kind, data, strict = case
    schema = schemas.bundled_schema(DEFAULT_KUBE_VERSION, api_version, kind, strict)
    validator = schemas.validator_for(DEFAULT_KUBE_VERSION, api_version, kind, strict)
    assert schema is not None and validator is not None
    if fits(schema, data):
        assert validator.is_valid(data)
