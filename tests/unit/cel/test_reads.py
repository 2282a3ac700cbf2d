"""What a device expression reads comes from its checked AST (cel.reads): no regex over the
text, which read a string literal as code and missed optional and field-style selections."""

from __future__ import annotations

import pytest

from draguard.cel.env import compile_selector

NV = "gpu.nvidia.com"


@pytest.mark.parametrize("expression, items, everything", [
    (f"device.attributes['{NV}'].type == 'gpu'", {("attributes", NV, "type")}, False),
    (f"device.capacity['{NV}'].memory.compareTo(quantity('10Gi')) >= 0", {("capacity", NV, "memory")}, False),
    (f"device.attributes['{NV}']['type'] == 'gpu'", {("attributes", NV, "type")}, False),
    ("device.attributes['gpu.example.com'].?model.orValue('') == 'a100'",
     {("attributes", "gpu.example.com", "model")}, False),  # the text's reading: the whole domain
    ("device.attributes.dra_example.foo == 'x'", {("attributes", "dra_example", "foo")}, False),
    (f"device.attributes['{NV}'].exists(k, k == 'a')", {("attributes", NV, None)}, False),
    ("device.driver == 'device.driver' && device.attributes['x'].y", {("attributes", "x", "y")},
     False),  # 'device.driver' is a string, not the device: the text's reading found it opaque
    ("device.attributes.exists(d, d == 'x')", set(), True),  # the map itself: any domain
    ("device.attributes['gpu.' + 'x'].a == 1", set(), True),  # a computed domain
    ("cel.bind(d, device, d.attributes['a.b'].c == 1)", {("attributes", "a.b", "c")}, False),
])
def test_references(expression, items, everything):
    compiled = compile_selector(expression)
    assert compiled.error is None, compiled.error
    assert set(compiled.references.items) == items and compiled.references.everything is everything


def test_guards_and_comparisons():
    compiled = compile_selector(f"device.driver == '{NV}' && has(device.attributes['{NV}'].index) && "
                                f"device.attributes['{NV}'].type == 'mig' && 'gpu' == device.attributes['{NV}'].type")
    assert compiled.guarded == {("attributes", NV, "index")}
    assert compiled.compared == {("driver",): {NV}, ("attributes", NV, "type"): {"mig", "gpu"}}


def test_a_guard_on_another_domain_does_not_guard_the_name(lint_json):
    """has() of another driver's `index` says nothing of NVIDIA's, which 25.8 dropped."""
    from draguard.rules.examples import COMPLIANT_POD

    guarded_elsewhere = COMPLIANT_POD.replace(
        "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
        "has(device.attributes['gpu.example.com'].index) && device.attributes['gpu.nvidia.com'].index == 0")
    guarded_here = guarded_elsewhere.replace("gpu.example.com", NV)
    import textwrap

    def found(text):
        report = lint_json(textwrap.dedent(text), "--kube-version", "1.34")
        return [f for f in report["findings"] if f["rule"] == "cel-unknown-attribute"]

    [finding] = found(guarded_elsewhere)
    assert "publishes no attribute 'index'" in finding["message"]
    assert not found(guarded_here)
