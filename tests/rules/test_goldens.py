"""Each rule's golden folder matches its examples and current behaviour; the fixed result
lints clean of the rule; and the rule's declared fixability holds on its failing example."""

from __future__ import annotations

import pytest

from draguard.core.fixes import FixAvailability
from draguard.rules import REGISTRY

from support.goldens import GOLDENS, config_for, expected_files, findings_snapshot

RULES = [rule for rule in REGISTRY if rule.noncompliant or rule.compliant]
#: fixable rules whose example shows no fix: their fix needs another situation than the
#: documented one (request-device-class: its example names an unknown class; test_fix_semantics)
#: legacy-gpu-sharing: its example is HAMi's resources, which have no DRA form; its fix (KAI's
#: gpu-fraction pod) is shown by tests/unit/rules/test_shared_gpu_migration.py
SHOWN_ELSEWHERE = frozenset({"request-device-class", "legacy-gpu-sharing"})


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_golden_folder_is_current(rule, request):
    expected = expected_files(rule)
    folder = GOLDENS / rule.id
    if request.config.getoption("--update-goldens"):
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.iterdir():
            if stale.name not in expected:
                stale.unlink()
        for name, content in expected.items():
            (folder / name).write_text(content)
    found = {p.name: p.read_text() for p in folder.iterdir()} if folder.is_dir() else {}
    assert found == expected, f"stale goldens for {rule.id}: run `pytest tests/rules --update-goldens`"


@pytest.mark.parametrize("rule", [r for r in RULES if r.noncompliant], ids=lambda r: r.id)
def test_failing_example_is_found(rule):
    assert findings_snapshot(rule, GOLDENS / rule.id / "fail.yaml")


@pytest.mark.parametrize("rule", [r for r in RULES if (GOLDENS / r.id / "fixed.yaml").is_file()], ids=lambda r: r.id)
def test_fixed_result_is_clean_of_the_rule(rule):
    from draguard.engine import lint_paths

    result = lint_paths([str(GOLDENS / rule.id / "fixed.yaml")], config_for(rule))
    assert not [f for f in result.findings if f.rule == rule.id]


@pytest.mark.parametrize("rule", [r for r in RULES if r.noncompliant and r.has_check], ids=lambda r: r.id)
def test_declared_fixability_holds(rule):
    findings = findings_snapshot(rule, GOLDENS / rule.id / "fail.yaml")
    with_fix = [f for f in findings if f["fix"] is not None]
    if rule.fixable is FixAvailability.NEVER:
        assert not with_fix
    elif rule.fixable is FixAvailability.ALWAYS:
        assert len(with_fix) == len(findings)
    else:  # SOMETIMES: some finding of the rule has a fix, here or where its situation is shown
        assert with_fix or rule.id in SHOWN_ELSEWHERE, f"{rule.id} declares fixes and its example shows none"


def test_every_fixable_rule_shows_a_fix_on_its_example():
    """A rule that can fix demonstrates it: its golden folder has fixed.yaml (except rules
    whose fix needs another situation than the documented one; those are listed here)."""
    missing = [r.id for r in REGISTRY if r.fixable is not FixAvailability.NEVER and r.id not in SHOWN_ELSEWHERE
               and not (GOLDENS / r.id / "fixed.yaml").is_file()]
    assert not missing
