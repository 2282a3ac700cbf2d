"""Every rule's documented examples are its fixtures: the failing one must trigger the rule,
the passing one must trigger no rule at all."""

import textwrap

import pytest

from draguard.rules import REGISTRY
from draguard.rules.base import Needs
from draguard.rules.examples import example_inventory_file

from support.reports import rules_of

#: the cluster rules' examples are snapshots: they are audited (test_audit_examples), not linted
WITH_EXAMPLES = [rule for rule in REGISTRY if (rule.noncompliant or rule.compliant) and rule.needs is not Needs.CLUSTER]


def test_every_check_rule_has_both_examples():
    missing = [r.id for r in REGISTRY if r.has_check and not (r.noncompliant and r.compliant)]
    assert not missing


def _inventory(rule, folder) -> list[str]:
    path = example_inventory_file(rule, str(folder))
    return ["--inventory", path] if path else []


@pytest.mark.parametrize("rule", [r for r in WITH_EXAMPLES if r.noncompliant], ids=lambda r: r.id)
def test_failing_example_triggers_the_rule(rule, lint_json, tmp_path):
    report = lint_json(textwrap.dedent(rule.noncompliant), "--kube-version", rule.examples_target, "--allow-empty",
                       "--profile", "strict", *_inventory(rule, tmp_path))
    assert rule.id in rules_of(report), report["findings"]


@pytest.mark.parametrize("rule", [r for r in WITH_EXAMPLES if r.compliant], ids=lambda r: r.id)
def test_passing_example_is_clean(rule, lint_json, tmp_path):
    report = lint_json(textwrap.dedent(rule.compliant), "--kube-version", rule.examples_target, "--profile", "strict",
                       *_inventory(rule, tmp_path))
    assert report["findings"] == []


@pytest.mark.parametrize("text", ["a\n", "a\n\n  \nb\n", "x", "", "  deep:\n    - y\n\tz\n", "a\r\nb\n"])
def test_the_examples_are_indented_as_textwrap_indents(text):
    import textwrap

    from draguard.rules import examples

    assert examples._at(text, 4) == textwrap.indent(text, "    ")
