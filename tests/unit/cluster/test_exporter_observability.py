"""What the real Prometheus cannot check about deploy/observability (issue #45): each alert
has the runbook its runbook_url points at in docs/exporter.md, and that page lists exactly the
metrics the exporter serves. The queries themselves are parsed and answered by the real
Prometheus in tests/integration/test_prometheus_observability.py."""

from __future__ import annotations

import re

import yaml

from draguard.cluster.exporter import ExporterState
from draguard.core.config import Config

from support.paths import ROOT

OBSERVABILITY = ROOT / "deploy" / "observability"
DOC = ROOT / "docs" / "exporter.md"


def test_each_alert_has_its_runbook():
    headings = {re.sub(r"[^\w-]", "", line.lstrip("#").strip().lower().replace(" ", "-"))
                for line in DOC.read_text().splitlines() if line.startswith("#")}
    rule = yaml.safe_load((OBSERVABILITY / "prometheusrule.yaml").read_text())
    alerts = [r for group in rule["spec"]["groups"] for r in group["rules"]]
    assert {a["alert"] for a in alerts} >= {"DraguardClaimStuckDeleting", "DraguardReservationForGonePod",
                                            "DraguardPoolCannotPlaceLargestProfile"}
    for alert in alerts:
        anchor = alert["annotations"]["runbook_url"].rpartition("#")[2]
        assert anchor == alert["alert"].lower() and anchor in headings, alert["alert"]


def test_the_documented_metrics_are_the_served_ones():
    documented = set(re.findall(r"^\| `(draguard_\w+)`", DOC.read_text(), re.M))
    state = ExporterState(Config())
    assert documented == {family.name + ("_total" if family.type == "counter" else "")
                          for family in state.registry.collect()}
