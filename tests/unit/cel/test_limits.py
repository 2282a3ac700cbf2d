"""CEL judged within the API server's limits, not the embedded engine's: nesting as cel-go's
parser counts it (250), length in bytes (10 KiB), and an evaluation draguard's engine cannot
finish (cel-cpp's 10,000 comprehension iterations) said as not judged, never as a verdict.
The differential tests against upstream are tests/integration/test_cel_oracle.py and
test_apiserver_judge.py (near_the_limits)."""

from __future__ import annotations

import pytest

from draguard.core.config import Config
from draguard.cel.depth import LISTENER, VISITOR, recursion_error
from draguard.cel.env import compile_selector
from draguard.engine.lint import lint_text


@pytest.mark.parametrize("expression, expected", [
    ("(" * 249 + "true" + ")" * 249, None),
    ("(" * 250 + "true" + ")" * 250, LISTENER),
    ("true ? true : " * 250 + "true", LISTENER),
    (" + ".join(["1"] * 250) + " > 0", None),
    (" + ".join(["1"] * 251) + " > 0", VISITOR),
    ("'a'" + ".lowerAscii()" * 250 + " == 'a'", VISITOR),
    (" && ".join(["true"] * 4000), None),  # balanced by cel-go: no depth
    ("!" * 2000 + "true", None),
    ("(" * 249 + "true" + ")" * 250, None),  # does not parse: a syntax error, for the compiler to say
])
def test_nesting_is_counted_as_cel_go_counts_it(expression, expected):
    assert recursion_error(expression) == expected


def test_an_expression_nested_4000_deep_is_invalid_not_unjudged():
    """It passed with an info finding (cel-cpp's own limit of 32 said as "not checked")."""
    compiled = compile_selector("(" * 4000 + "true" + ")" * 4000)
    assert compiled.error is not None and not compiled.error.unsupported
    assert compiled.error.message == "expression recursion limit exceeded: 250"


def test_nested_within_upstreams_limit_is_not_judged_and_says_why():
    compiled = compile_selector("(" * 100 + "true" + ")" * 100)
    assert compiled.error.unsupported and "not judged" in compiled.error.message


def test_the_length_limit_is_in_bytes_as_gos_len():
    prefix = "device.driver == '"
    text = prefix + "é" * 5115 + "'"  # 5,134 characters, 10,249 bytes
    assert len(text) < 10 * 1024 < len(text.encode())
    compiled = compile_selector(text)
    assert compiled.error is not None and "bytes long; the limit is 10240" in compiled.error.message


CLAIM = ("{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: c, namespace: ns}, spec: {devices: "
         "{requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 1, "
         'selectors: [{cel: {expression: "%s"}}]}}]}}}')


def test_a_selector_past_the_engines_iterations_is_not_judged_rather_than_unsatisfiable():
    """Estimated at 120,012 (under the API server's 1,000,000) and true on every device; the
    engine stops after 10,000 iterations, which made it `request-unsatisfiable` (an error)."""
    expression = "lists.range(20000).all(i, i >= 0)"
    assert not compile_selector(expression).too_complex
    result = lint_text("claim.yaml", CLAIM % expression, Config())
    [finding] = [f for f in result.findings if f.rule == "request-unsatisfiable"]
    assert str(finding.severity) == "info" and finding.message.startswith("not judged")
    assert "10,000 comprehension iterations" in finding.message


def test_a_selector_that_fails_at_runtime_is_still_unsatisfiable():
    result = lint_text("claim.yaml", CLAIM % "device.attributes['gpu.nvidia.com'].nosuch == 1", Config())
    [finding] = [f for f in result.findings if f.rule == "request-unsatisfiable"]
    assert str(finding.severity) == "error"
