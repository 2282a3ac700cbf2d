"""The dashboard and the alerts under deploy/observability (issue #45) query only metrics the
exporter serves (its registry's families, with the sample names their types add), and each
alert has the runbook its runbook_url points at in docs/exporter.md."""

from __future__ import annotations

import json
import re

import yaml

from draguard.cluster.exporter import ExporterState
from draguard.core.config import Config

from support.paths import ROOT

OBSERVABILITY = ROOT / "deploy" / "observability"
DOC = ROOT / "docs" / "exporter.md"
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
             "inf", "nan"}
_SUFFIXES = {"gauge": ("",), "counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"),
             "gaugehistogram": ("_bucket", "_gcount", "_gsum")}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers left once strings, label
    matchers, ranges and grouping clauses are taken out, that are neither a function or an
    aggregation (followed by '(') nor a keyword."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    found = set()
    for match in re.finditer(r"(?<![\w:.$])[A-Za-z_:][\w:]*", expr):
        if not expr[match.end():].lstrip().startswith("(") and match.group().lower() not in _KEYWORDS:
            found.add(match.group())
    return found


def served_names() -> set[str]:
    state = ExporterState(Config())
    return {family.name + suffix for family in state.registry.collect() for suffix in _SUFFIXES[family.type]}


def test_the_name_reader_finds_what_an_expression_selects():
    assert metric_names('histogram_quantile(0.9, sum by (le, phase) (rate(a_bucket{x="y(z)"}[5m]))) > 1e3') == \
        {"a_bucket"}
    assert metric_names("b == 0 or sum without (node) (c_total offset 5m) > bool 2") == {"b", "c_total"}


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads((OBSERVABILITY / "dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":  # label_values(metric, label): the metric
            exprs.append(re.fullmatch(r"label_values\((\w+), *\w+\)", variable["query"]["query"]).group(1))
    return exprs


def _alerts() -> list[dict]:
    rule = yaml.safe_load((OBSERVABILITY / "prometheusrule.yaml").read_text())
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def test_the_dashboard_queries_only_served_metrics():
    served = served_names()
    exprs = _dashboard_exprs()
    assert len(exprs) > 10
    for expr in exprs:
        names = metric_names(expr)
        assert names and names <= served, (expr, names - served)


def test_the_alerts_query_only_served_metrics_and_have_runbooks():
    served = served_names()
    headings = {re.sub(r"[^\w-]", "", line.lstrip("#").strip().lower().replace(" ", "-"))
                for line in DOC.read_text().splitlines() if line.startswith("#")}
    alerts = _alerts()
    assert {a["alert"] for a in alerts} >= {"DraguardClaimStuckDeleting", "DraguardReservationForGonePod",
                                            "DraguardPoolCannotPlaceLargestProfile"}
    for alert in alerts:
        names = metric_names(alert["expr"])
        assert names and names <= served, (alert["alert"], names - served)
        anchor = alert["annotations"]["runbook_url"].rpartition("#")[2]
        assert anchor == alert["alert"].lower() and anchor in headings, alert["alert"]


def test_the_documented_metrics_are_the_served_ones():
    documented = set(re.findall(r"^\| `(draguard_\w+)`", DOC.read_text(), re.M))
    state = ExporterState(Config())
    assert documented == {family.name + ("_total" if family.type == "counter" else "")
                          for family in state.registry.collect()}
