"""sources.resolver says of a plain scalar what PyYAML's safe loader says: its tag
(Resolver.resolve) and its value (SafeConstructor)."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from yaml.nodes import ScalarNode

from draguard.sources.resolver import BOOL, FLOAT, INT, NULL, tag_of, value_of

TEXTS = ["", "~", "null", "Null", "NULL", "nul", "yes", "Yes", "YES", "yEs", "no", "on", "Off", "y", "n", "true",
         "False", "0", "-0", "+0", "010", "-010", "0o7", "0b101", "-0b1_0", "0x1F", "0x", "0xg", "1_000", "1:30",
         "-1:30:00", "190:20:30", "1e3", "1.0e+3", "1.0e3", ".5", "-.5", "+1", "1.", "1._5", "6.8523015e+5",
         "685.230_15e+03", "190:20:30.15", ".inf", "-.Inf", "+.INF", ".NaN", ".nan", ".nAn", "2001-12-14",
         "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "=", "<<", "<", "!", "&", "*", "- x", "12a",
         "1 2", "image:tag", "3g.40gb", "0.1.0", "v1", "-", "+", ".", "1__2", "0_7", "09"]


def _pyyaml(text: str) -> tuple[str, object]:
    tag = yaml.resolver.Resolver().resolve(ScalarNode, text, (True, False))
    node = ScalarNode(tag, text)
    constructor = yaml.constructor.SafeConstructor()
    constructed = {INT: constructor.construct_yaml_int, FLOAT: constructor.construct_yaml_float,
                   BOOL: constructor.construct_yaml_bool, NULL: constructor.construct_yaml_null}.get(tag)
    return tag, (constructed(node) if constructed else text)


def _same(text: str) -> None:
    tag, value = _pyyaml(text)
    assert tag_of(text) == tag, text
    ours = value_of(tag, text)
    assert type(ours) is type(value), text
    assert ours == value or (math.isnan(ours) and math.isnan(value)), text


@pytest.mark.parametrize("text", TEXTS)
def test_a_plain_scalar_resolves_as_pyyaml_resolves_it(text):
    _same(text)


@given(st.text(alphabet="0123456789-+._:eEoxXbBaAfFnNyYtTlLsSiI~<= ", max_size=12))
def test_generated_scalars_resolve_as_pyyaml_resolves_them(text):
    _same(text)


def test_an_integer_past_pythons_digits_is_a_value_error():
    with pytest.raises(ValueError):
        value_of(INT, "9" * 5000)
