"""The audit's report formats on a snapshot with faults: text leads with the summary, SARIF
validates against the 2.1.0 schema, the Prometheus exposition parses with the official
client's parser and carries the pool view, and the score follows its documented definition."""

import json
import textwrap

import jsonschema
from prometheus_client.parser import text_string_to_metric_families

from draguard.rules import REGISTRY

from support.audit_dump import write

from .test_reports import SARIF_SCHEMA


def _faulty(tmp_path):
    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(REGISTRY.get("claim-stuck-deleting").noncompliant))
    return dump


def test_text_puts_the_summary_first_then_findings_by_severity(cli, tmp_path):
    done = cli("audit", "--from", _faulty(tmp_path), "--no-config")
    assert done.code == 1
    lines = done.out.splitlines()
    assert lines[0].startswith("draguard audit of ") and "captured 2026-12-01T12:00:00Z" in lines[0]
    assert lines[1].startswith("score ") and "2 errors, 0 warnings, 0 info in 6 objects" in lines[1]
    assert lines.index("ERRORS (2)") > 2


def test_the_score_is_the_mean_of_the_per_kind_clean_shares(cli, tmp_path):
    summary = cli("audit", "--from", _faulty(tmp_path), "--no-config", "-f", "json").json["summary"]
    # 6 objects of 6 kinds; the Pod and the ResourceClaim have an error: (4 x 100 + 2 x 0) / 6
    assert summary["byKind"]["Pod"] == 0.0 and summary["byKind"]["Node"] == 100.0
    assert summary["score"] == round(400 / 6, 1) and summary["grade"] == "D"


def test_sarif_of_live_findings_is_valid(cli, tmp_path):
    sarif = cli("audit", "--from", _faulty(tmp_path), "--no-config", "-f", "sarif").json
    jsonschema.validate(sarif, SARIF_SCHEMA)
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"claim-stuck-deleting", "pod-stuck-terminating"}


def test_prometheus_exposition_parses_and_carries_the_pool_view(cli, tmp_path):
    bundle = write(tmp_path / "bundle", 3, 2, 4)
    text = cli("audit", "--from", bundle, "--no-config", "-f", "prometheus").out
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["draguard_audit_score"].samples[0].value == 100.0
    devices = {(s.labels["node"], s.labels["state"]): s.value for s in families["draguard_node_devices"].samples}
    assert sum(v for (_, state), v in devices.items() if state == "allocated") == 4
    assert {s.labels["node_pool"] for s in families["draguard_node_devices"].samples} == {"h100"}
    allocatable = families["draguard_node_allocatable_devices"].samples
    assert {s.labels["profile"] for s in allocatable} == {"1g.10gb", "2g.20gb", "3g.40gb"}
    faulty = cli("audit", "--from", _faulty(tmp_path), "--no-config", "-f", "prometheus").out
    findings = {f.name: f for f in text_string_to_metric_families(faulty)}["draguard_audit_findings"]
    assert {(s.labels["rule"], s.value) for s in findings.samples} == {("claim-stuck-deleting", 1.0),
                                                                      ("pod-stuck-terminating", 1.0)}


def test_output_is_written_atomically_to_a_file(cli, tmp_path):
    target = tmp_path / "audit.json"
    done = cli("audit", "--from", _faulty(tmp_path), "--no-config", "-f", "json", "-o", target)
    assert done.code == 1 and done.out == "" and json.loads(target.read_text())["summary"]["errors"] == 2
