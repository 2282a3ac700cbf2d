import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema

from draguard.report.sarif import artifact_uri

BAD = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: ns}\nspec: {template: {}}\n"
SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def test_json_contract_exactly(cli):
    report = cli("lint", "-", "--no-config", "-f", "json", stdin=BAD).json
    assert set(report) == {"version", "findings", "summary"} and report["version"] == 1
    [finding] = report["findings"]
    assert set(finding) == {"rule", "category", "severity", "message", "file", "line", "column", "object", "fix"}
    assert finding["file"] == "-" and finding["line"] == 4 and finding["column"] == 1
    assert finding["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "a"}
    assert report["summary"]["errors"] == 1 and report["summary"]["byRule"] == {"schema-invalid": 1}


def test_sarif_is_valid_and_has_what_github_needs(cli, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "app.yaml").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    sarif = cli("lint", "deploy", "--no-config", "-f", "sarif").json
    jsonschema.validate(sarif, SARIF_SCHEMA)
    run = sarif["runs"][0]
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "schema-invalid")
    for key in ("id", "name", "shortDescription", "fullDescription", "help", "helpUri"):
        assert rule[key]
    [result] = run["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "deploy/app.yaml"
    assert location["region"] == {"startLine": 4, "startColumn": 1}
    assert result["level"] == "error" and result["partialFingerprints"]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "schema-invalid"


def test_fingerprints_survive_lines_moving(cli):
    first = cli("lint", "-", "--no-config", "-f", "sarif", stdin=BAD).json
    moved = cli("lint", "-", "--no-config", "-f", "sarif", stdin="# a new comment\n" + BAD).json
    fp = lambda doc: doc["runs"][0]["results"][0]["partialFingerprints"]  # noqa: E731
    assert fp(first) == fp(moved)


def test_artifact_uris():
    assert artifact_uri("/repo/a/b.yaml", "/repo") == "a/b.yaml"
    assert artifact_uri("-", "/repo") == "stdin"
    assert artifact_uri("/elsewhere/x.yaml", "/repo") == "file:///elsewhere/x.yaml"


def test_junit_has_a_failure_per_finding(cli):
    xml = cli("lint", "-", "--no-config", "-f", "junit", stdin=BAD).out
    root = ET.fromstring(xml.split("\n", 1)[1])
    assert root.get("failures") == "1"
    failure = root.find("./testsuite/testcase/failure")
    assert failure.get("type") == "schema-invalid" and "-:4:1" in failure.text


def test_github_annotations_escape_their_fields(cli):
    out = cli("lint", "-", "--no-config", "-f", "github", stdin=BAD).out
    assert out.startswith("::error file=-,line=4,col=1,title=schema-invalid::spec: required field")
    from draguard.report.github import _escape_data, _escape_property

    assert _escape_data("a%b\nc") == "a%25b%0Ac" and _escape_property("a:b,c") == "a%3Ab%2Cc"
