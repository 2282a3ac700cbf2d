"""fix.block_yaml writes the plain values a fix adds as PyYAML's emitter writes them: the same
bytes as fix.splice's dumpers on generated values, in both sequence styles and every indent
the emitter takes, and None (PyYAML then) for whatever it does not write."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from draguard.fix.block_yaml import block_yaml
from draguard.fix.splice import _FastDumper, _IndentedDumper

# names that pass and names that must not be written plain (numbers, booleans, nulls,
# quoting characters), so that the generator reaches both sides of the plain-string check
_NAMES = st.one_of(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,12}", fullmatch=True),
    st.sampled_from(["1", "0x1F", "1.5", "true", "No", "on", "null", "~", "1_000", "12:30", "2024-01-01",
                     "a b", "a: b", "-x", "", "#c", "'q'", "é", "x" * 130, ".inf", "<<", "="]),
    # values with spaces, quotes, brackets and the indicators `:` and `#` (a CEL selector's
    # characters), written plain as values where the emitter writes them so
    st.from_regex(r"[A-Za-z0-9][ -~]{0,16}", fullmatch=True),
    st.sampled_from(["device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", "a:", "a: b", "a :b", "a #b",
                     "a#b", "a b ", "a  b", "yes no", "1 2", "x" * 140 + " y", "a\tb", "a [b]", "a, b"]),
)
_SCALARS = st.one_of(_NAMES, st.integers(-10**20, 10**20), st.booleans(), st.none(), st.floats(allow_nan=False))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(_NAMES, inner, max_size=4)), max_leaves=12)

# values inside the subset mostly: most of them are written here, not left to PyYAML
_PLAIN_NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,12}", fullmatch=True)
_SIMPLE = st.recursive(st.one_of(_PLAIN_NAMES, st.integers(-10**20, 10**20), st.booleans(), st.none()),
                       lambda inner: st.one_of(st.lists(inner, min_size=1, max_size=4),
                                               st.dictionaries(_PLAIN_NAMES, inner, min_size=1, max_size=4)),
                       max_leaves=16)


def _pyyaml(value, indented: bool, indent: int) -> str:
    return yaml.dump(value, Dumper=_IndentedDumper if indented else _FastDumper, default_flow_style=False,
                     sort_keys=False, allow_unicode=True, width=1 << 30, indent=indent)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.dictionaries(_NAMES, _VALUES, min_size=1, max_size=4), st.lists(_VALUES, min_size=1,
                                                                                             max_size=4),
                       st.dictionaries(_PLAIN_NAMES, _SIMPLE, min_size=1, max_size=4),
                       st.lists(_SIMPLE, min_size=1, max_size=4)),
       indented=st.booleans(), indent=st.integers(2, 9))
def test_the_bytes_pyyaml_writes(value, indented, indent):
    written = block_yaml(value, indented, indent)
    if written is not None:
        assert written == _pyyaml(value, indented, indent)


def test_a_fix_value_is_written_here():
    """The shape of legacy-gpu-resource's added claim template: written here, not by PyYAML."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "trainer-0-main-gpu", "namespace": "team-0"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}}}
    for indented in (False, True):
        for indent in (2, 4):
            assert block_yaml(template, indented, indent) == _pyyaml(template, indented, indent)


@pytest.mark.parametrize("value", [{}, [], {"a": {}}, {"a": [[1]]}, {"a": 1.5}, {"a": "1"}, {"a": "yes"},
                                   {"a": "x: y"}, {"a": "x #y"}, {"a b": 1}, {1: "a"}, {"a": "line\nbreak"}, "scalar"])
def test_left_to_pyyaml(value):
    assert block_yaml(value, False, 2) is None


@pytest.mark.parametrize("indent", [1, 10])
def test_indents_the_emitter_does_not_take(indent):
    assert block_yaml({"a": 1}, False, indent) is None


def test_a_cel_selector_is_written_here():
    """legacy-gpu-resource's claim template for a MIG profile holds a CEL selector, a string
    with spaces and quotes that the emitter writes plain: written here too."""
    template = {"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com", "selectors": [
        {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}]}}
    for indented in (False, True):
        written = block_yaml({"requests": [template]}, indented, 2)
        assert written is not None and written == _pyyaml({"requests": [template]}, indented, 2)


def test_a_value_written_again_is_remembered(monkeypatch):
    """fix.splice writes the same values in every workload a fix fixes: a value written
    here once is not written again (nor one left to PyYAML), the same text, a styles' each."""
    import draguard.fix.splice as splice

    written: list = []

    def counted(*args):
        written.append(args)
        return block_yaml(*args)
    monkeypatch.setattr(splice, "block_yaml", counted)
    monkeypatch.setattr(splice, "_DUMPED", {})
    value = {"resources": {"claims": [{"name": "gpu"}]}}
    first = splice._block_yaml(value, False, 2)
    assert splice._block_yaml({"resources": {"claims": [{"name": "gpu"}]}}, False, 2) == first
    assert splice._block_yaml(value, True, 2) == "resources:\n  claims:\n    - name: gpu\n"
    assert splice._block_yaml({"a": 1.5}, False, 2) == splice._block_yaml({"a": 1.5}, False, 2) == "a: 1.5\n"
    assert len(written) == 3


def test_a_flow_value_written_again_is_remembered(monkeypatch):
    """A value set into a flow mapping (`rayStartParams: {}`) in workload after workload is
    dumped once, and kept apart from the same value written as a block."""
    import draguard.fix.splice as splice

    dumped: list = []
    real = yaml.dump

    def counted(value, **kwargs):
        dumped.append(value)
        return real(value, **kwargs)
    monkeypatch.setattr(splice.yaml, "dump", counted)
    monkeypatch.setattr(splice, "_DUMPED", {})
    assert splice._flow("4") == splice._flow("4") == "'4'"
    assert splice._flow(4) == "4"
    assert splice._flow({"a": [1, "b"]}) == splice._flow({"a": [1, "b"]}) == "{a: [1, b]}"
    assert splice._block_yaml({"a": [1, "b"]}, False, 2) == "a:\n- 1\n- b\n"
    assert dumped == ["4", 4, {"a": [1, "b"]}]
