"""The cluster rules' documented examples are snapshots, audited as a support case would be
(`draguard audit --from FILE`): the failing one triggers the rule, the passing one is clean of
every rule, and each failing example differs from a clean snapshot by the one fault."""

import textwrap

import pytest

from draguard.rules import REGISTRY
from draguard.rules.base import Needs

CLUSTER_RULES = [rule for rule in REGISTRY if rule.needs is Needs.CLUSTER]


def _audit(cli, tmp_path, text, *args):
    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(text))
    return cli("audit", "--from", dump, "--no-config", "-f", "json", *args)


def test_the_catalog_has_the_cluster_checks():
    assert len(CLUSTER_RULES) >= 15
    assert all(rule.category == "cluster" and rule.reads for rule in CLUSTER_RULES)


@pytest.mark.parametrize("rule", CLUSTER_RULES, ids=lambda r: r.id)
def test_failing_snapshot_triggers_the_rule(rule, cli, tmp_path):
    done = _audit(cli, tmp_path, rule.noncompliant)
    assert done.code in (0, 1), done.err
    assert rule.id in {f["rule"] for f in done.json["findings"]}


@pytest.mark.parametrize("rule", CLUSTER_RULES, ids=lambda r: r.id)
def test_passing_snapshot_is_clean(rule, cli, tmp_path):
    done = _audit(cli, tmp_path, rule.compliant)
    assert done.code == 0 and done.json["findings"] == [], done.json["findings"]
