"""The shipped ClusterRole grants exactly what the audit reads, and only reading."""

from pathlib import Path

import yaml

from draguard.cluster.snapshot import RESOURCES

ROLE = Path(__file__).resolve().parents[3] / "deploy" / "audit" / "clusterrole.yaml"


def test_the_role_covers_every_resource_read_with_read_verbs_only():
    role = yaml.safe_load(ROLE.read_text())
    granted = {(group, resource) for rule in role["rules"] for group in rule.get("apiGroups", [])
               for resource in rule.get("resources", [])}
    assert granted == {(r.group, r.plural) for r in RESOURCES}
    assert [rule["nonResourceURLs"] for rule in role["rules"] if "nonResourceURLs" in rule] == [["/metrics"]]
    assert {verb for rule in role["rules"] for verb in rule["verbs"]} == {"get", "list", "watch"}
