import difflib
import json
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from support.paths import DATA

from draguard.core.config import Config
from draguard.report.sarif import artifact_uri
from draguard.report.text import WINDOW, _window

BAD = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: ns}\nspec: {template: {}}\n"
SARIF_SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())


FINDING_KEYS = {"rule", "category", "severity", "message", "help", "file", "line", "column", "document", "path",
                "object", "fix"}


def test_json_contract_exactly(cli):
    report = cli("lint", "-", "--no-config", "-f", "json", stdin=BAD).json
    assert set(report) == {"version", "findings", "summary"} and report["version"] == 2
    [finding] = report["findings"]
    assert set(finding) == FINDING_KEYS
    assert finding["file"] == "-" and finding["line"] == 4 and finding["column"] == 1
    assert finding["document"] == 0 and finding["path"] == "spec" and finding["help"] is None and finding["fix"] is None
    assert finding["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "a"}
    assert report["summary"]["errors"] == 1 and report["summary"]["byRule"] == {"schema-invalid": 1}
    assert report["summary"]["fixable"] == 0


def test_json_fix_is_data_with_paths(cli):
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q}\n" \
           "spec:\n  hostIPC: true\n  containers:\n  - name: c\n    image: x\n" \
           "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    report = cli("lint", "-", "--no-config", "-f", "json", stdin=text).json
    [finding] = [f for f in report["findings"] if f["rule"] == "host-ipc"]
    assert (finding["document"], finding["path"], finding["line"], finding["column"]) == (1, "spec.hostIPC", 9, 3)
    assert finding["help"] and finding["fix"] == {"title": "remove hostIPC", "applicability": "unsafe",
                                                  "edits": [{"op": "remove", "path": "spec.hostIPC"}]}
    [legacy] = [f for f in report["findings"] if f["rule"] == "legacy-gpu-resource"]
    assert legacy["path"] == 'spec.containers[0].resources.limits["nvidia.com/gpu"]'
    assert legacy["fix"]["applicability"] == "unsafe" and legacy["fix"]["edits"][0]["op"] == "add-document"
    assert report["summary"]["fixable"] == 2


def test_json_report_bytes_are_json_dumps_with_indent(cli):
    """The report is written by core.jsonindent, not json.dumps: the same bytes, fixes and
    suppressed findings included (with their reason) and non-ASCII text kept as it is."""
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: q\n  namespace: équipe\n"
            "  annotations: {ignore.draguard.io/host-ipc: 'ok \"quoted\" 漢'}\n"
            "spec:\n  hostIPC: true\n  containers:\n  - name: c\n    image: x\n"
            "    resources: {limits: {nvidia.com/gpu: 1}}\n")
    out = cli("lint", "-", "--no-config", "--show-suppressed", "-f", "json", stdin=text).out
    report = json.loads(out)
    assert report["findings"] and any(f["fix"] for f in report["findings"])
    assert [s["reason"] for s in report["suppressed"]] == ['ok "quoted" 漢']
    assert out == json.dumps(report, indent=2, ensure_ascii=False) + "\n"


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


def test_artifact_uris_are_uri_references():
    """A space, '%' or '#' in a path is percent-encoded (SARIF 3.4.3): unencoded, '#c.yaml'
    reads as a fragment and GitHub places the alert on a file that does not exist."""
    assert artifact_uri("/repo/dir with space/a%b #c.yaml", "/repo") == "dir%20with%20space/a%25b%20%23c.yaml"
    assert artifact_uri("/else where/#x.yaml", "/repo") == "file:///else%20where/%23x.yaml"


def test_sarif_root_is_a_uri(cli, tmp_path, monkeypatch):
    root = tmp_path / "my repo"
    (root / ".git").mkdir(parents=True)
    (root / "a b.yaml").write_text(BAD)
    monkeypatch.chdir(root)
    doc = json.loads(cli("lint", str(root / "a b.yaml"), "--no-config", "-f", "sarif").out)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.as_uri() + "/"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b.yaml"


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


FIXABLE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: ExactCount
          count: 1
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].memory >= 40Gi
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  hostIPC: true   # shared memory with the host
  terminationGracePeriodSeconds: 90
  resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]
  containers:
  - name: c
    image: x
    resources: {claims: [{name: gpu}]}
"""


def _apply_sarif_fix(text: str, fix: dict) -> str:
    lines = text.splitlines(keepends=True)

    def offset(line, column):
        return sum(len(x) for x in lines[:line - 1]) + column - 1

    [change] = fix["artifactChanges"]
    for replacement in sorted(change["replacements"], key=lambda r: (r["deletedRegion"]["startLine"],
                                                                       r["deletedRegion"]["startColumn"]), reverse=True):
        region = replacement["deletedRegion"]
        start, end = offset(region["startLine"], region["startColumn"]), offset(region["endLine"], region["endColumn"])
        text = text[:start] + replacement["insertedContent"]["text"] + text[end:]
    return text


def test_sarif_fixes_are_text_replacements_that_remove_the_finding(cli, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(FIXABLE)
    sarif = cli("lint", path, "--no-config", "--kube-version", "1.34", "-f", "sarif").json
    jsonschema.validate(sarif, SARIF_SCHEMA)
    assert sarif["runs"][0]["columnKind"] == "unicodeCodePoints"
    with_fixes = {r["ruleId"]: r for r in sarif["runs"][0]["results"] if r.get("fixes")}
    assert {"cel-invalid", "host-ipc"} <= set(with_fixes)
    for rule_id in ("cel-invalid", "host-ipc"):
        fixed = _apply_sarif_fix(FIXABLE, with_fixes[rule_id]["fixes"][0])
        diff = [line for line in difflib.ndiff(FIXABLE.splitlines(), fixed.splitlines()) if line[:2] in ("- ", "+ ")]
        assert len([d for d in diff if d.startswith("- ")]) == 1 and len(diff) <= 2  # every other line as it was
        path.write_text(fixed)
        after = cli("lint", path, "--no-config", "--kube-version", "1.34", "-f", "json").json
        assert rule_id not in {f["rule"] for f in after["findings"]}
    result = with_fixes["host-ipc"]
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "spec.hostIPC"


@pytest.mark.parametrize("caret", [0, 5, 2500, 4999])
def test_a_long_source_line_shows_a_window_with_the_caret_on_its_character(caret):
    line = "".join(chr(ord("a") + i % 26) for i in range(5000))
    shown, place = _window(line, caret)
    assert len(shown.strip("…")) == WINDOW and shown[place] == line[caret]
    assert shown.startswith("…") == (caret > WINDOW // 2) and shown.endswith("…") == (caret < 5000 - WINDOW // 2)


HOSTILE = ('apiVersion: v1\nkind: Pod\nmetadata: {name: "p\\e[2J\\u202e", namespace: n}\nspec:\n  containers:\n'
           '  - name: "c\\e[31mRED\\x07\\nx"\n    image: i\n    resources: {limits: {nvidia.com/gpu: 1}}\n')


@pytest.mark.parametrize("form", ["text", "github", "junit"])
def test_control_characters_from_a_manifest_are_shown_escaped(cli, form):
    """A container named "c\\x1b[31m..." reached the terminal raw (colours, a bell, a cleared
    screen); a U+202E reorders what the reader sees."""
    out = cli("lint", "-", "--no-config", "-f", form, "--color", "never", stdin=HOSTILE).out
    assert not any(c in out for c in "\x1b\x07\u202e"), out
    assert "c\\x1b[31mRED\\x07" in out
    if form == "text":
        assert "= in Pod n/p\\x1b[2J\\u202e" in out


def test_every_character_escaped_is_one_the_shortcut_does_not_pass():
    """printable() returns a text that str.isprintable() accepts as it is: every character
    of Unicode that the escaping pattern matches must be one isprintable() refuses, else a
    control character or a bidi override would reach the terminal unescaped."""
    from draguard.report.prose import _UNSAFE, printable

    unsafe = [chr(c) for c in range(0x110000) if _UNSAFE.match(chr(c))]
    assert len(unsafe) == 32 + 33 + 5 + 4
    assert all(printable(f"a{c}b") == f"a{repr(c)[1:-1]}b" != f"a{c}b" for c in unsafe)
    assert printable("tolerable: ü, 漢, \u00a0 and é") == "tolerable: ü, 漢, \u00a0 and é"


@pytest.mark.parametrize("suppressed", [False, True])
def test_the_json_report_written_piece_by_piece_is_the_indented_document(suppressed):
    """`-f json` is written finding by finding (report.json_report.chunks), never held whole:
    byte for byte what json.dumps(indent=2) makes of the whole document, empty lists too."""
    from draguard.engine import lint_text
    from draguard.report import json_report

    for text in (BAD, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"):
        result = lint_text("m.yaml", text, Config())
        whole = json.dumps(json_report.document(result, show_suppressed=suppressed), indent=2, ensure_ascii=False)
        assert json_report.render(result, show_suppressed=suppressed) == whole + "\n"


def test_json_parts_shared_by_findings_are_encoded_once_and_only_for_the_same_part(monkeypatch):
    """report.json_report encodes a fix or an object once for every finding that has the
    same one: fixes alike but for an edit's value (1 and True, 1 and 1.0), objects alike but
    for their namespace, each read as its own; more parts than the cache holds still read right."""
    from draguard.core.finding import Finding, ObjectRef, Severity
    from draguard.core.fixes import Applicability, Fix, set_value
    from draguard.core.location import Location
    from draguard.engine.result import LintResult
    from draguard.report import json_report

    monkeypatch.setattr(json_report, "_SHARED_HELD", 3)
    values = [1, True, 1.0, 1, "1", [1], {"a": 1}, 1]
    findings = [Finding("r", "rollout", Severity.ERROR, "m", Location("f.yaml", n + 1, 1, ("spec",), 0),
                        ObjectRef("v1", "Pod", f"ns{n % 3}", "p"),
                        fix=Fix("same title", Applicability.SAFE, [set_value(("spec", "x"), value)]))
                for n, value in enumerate(values)]
    result = LintResult(findings, [], Config(), objects=len(findings))
    written = json.loads(json_report.render(result))
    assert [f["fix"]["edits"][0]["value"] for f in written["findings"]] == values
    assert [type(f["fix"]["edits"][0]["value"]) for f in written["findings"]] == [type(v) for v in values]
    assert [f["object"]["namespace"] for f in written["findings"]] == [f"ns{n % 3}" for n in range(len(values))]
    whole = json.dumps(json_report.document(result), indent=2, ensure_ascii=False)
    assert json_report.render(result) == whole + "\n"



def test_pieces_are_joined_in_runs_of_a_bounded_size(monkeypatch):
    """report.pieces.in_runs ends a run with the piece that brings it to RUN_CHARS: many small
    pieces share a run, a large one is a run of its own, nothing is lost or reordered."""
    from draguard.report import pieces

    monkeypatch.setattr(pieces, "RUN_CHARS", 10)
    texts = ["abc", "de", "fgh", "ij", "k" * 25, "l", "mn", "o" * 9, "p"]
    runs = list(pieces.in_runs(texts))
    assert runs == [["abc", "de", "fgh", "ij"], ["k" * 25], ["l", "mn", "o" * 9], ["p"]]
    assert list(pieces.in_runs([])) == [] and list(pieces.in_runs(iter(["x"]))) == [["x"]]


@pytest.mark.parametrize("count", range(8))
def test_the_json_report_s_findings_written_in_batches_are_json_dumps_list(monkeypatch, count):
    """report.json_report writes its findings in runs of items (report.pieces.in_runs):
    none, part of one, one whole and more, as json.dumps(indent=2) writes the list; the summary counts each
    severity and rule."""
    from draguard.core.finding import Finding, ObjectRef, Severity
    from draguard.core.fixes import Applicability, Fix, set_value
    from draguard.core.location import Location
    from draguard.engine.result import LintResult
    from draguard.report import json_report, pieces

    monkeypatch.setattr(pieces, "RUN_CHARS", 700)  # an item is 200-300 characters: runs of 3 or so
    severities = [Severity.ERROR, Severity.INFO, Severity.WARNING, Severity.ERROR]
    findings = [Finding(f"rule-{n % 3}", "rollout", severities[n % 4], f"m{n}",
                        Location("f.yaml", n + 1, 1, ("spec",), 0), ObjectRef("v1", "Pod", "ns", f"p{n}"),
                        fix=Fix("t", Applicability.SAFE, [set_value(("spec", "x"), n)]) if n % 2 else None)
                for n in range(count)]
    result = LintResult(findings, findings[:count // 2], Config(), objects=count)
    for suppressed in (False, True):
        whole = json.dumps(json_report.document(result, show_suppressed=suppressed), indent=2, ensure_ascii=False)
        assert json_report.render(result, show_suppressed=suppressed) == whole + "\n"
    summary = result.summary()
    assert (summary["errors"], summary["warnings"], summary["info"]) == \
        tuple(sum(1 for f in findings if f.severity is s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    assert summary["byRule"] == {f"rule-{r}": len(range(r, count, 3)) for r in range(3) if r < count}
    assert list(summary["byRule"]) == sorted(summary["byRule"])
    assert summary["fixable"] == count // 2 and summary["total"] == count and summary["suppressed"] == count // 2

GRACE_POD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: mig-1g}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: mig.nvidia.com}
---
apiVersion: v1
kind: Pod
metadata: {name: inference}
spec:
GRACE
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: mig-1g}
  containers:
  - name: server
    image: vllm/vllm-openai
    args: [--shutdown-timeout, '30']
    resources: {claims: [{name: gpu}]}
    lifecycle: {preStop: {exec: {command: [sh, -c, sleep 10]}}}
"""


def _grace_fixes(cli, tmp_path, grace: str) -> list:
    path = tmp_path / "pod.yaml"
    path.write_text(GRACE_POD.replace("GRACE\n", grace))
    sarif = cli("lint", path, "--no-config", "-f", "sarif").json
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "teardown-grace-period"]
    return [x["insertedContent"]["text"] for fix in result.get("fixes", []) for change in fix["artifactChanges"]
            for x in change["replacements"]]


def test_a_fix_that_sets_a_key_the_document_does_not_write_is_not_composed_for(cli, tmp_path, monkeypatch):
    """A set of a key that is not there has no scalar to replace (no SARIF fix): told from
    the text, without composing the document (most of the SARIF report's cost beyond text)."""
    from draguard.sources import spans

    def refuse(*_):
        raise AssertionError("composed")

    monkeypatch.setattr(spans, "document_node", refuse)
    assert _grace_fixes(cli, tmp_path, "") == []


def test_a_key_spelled_with_an_escape_still_gets_its_fix(cli, tmp_path):
    """The text test says 'not there' only where the key can be spelled one way: written with
    an escape in double quotes, the key is there, and the fix maps onto its value."""
    assert _grace_fixes(cli, tmp_path, '  "\\x74erminationGracePeriodSeconds": 45\n') == ["60"]
    assert _grace_fixes(cli, tmp_path, "  terminationGracePeriodSeconds: 45\n") == ["60"]


def test_a_fix_shared_by_many_objects_findings_is_encoded_once(monkeypatch):
    """A fix's text (report.json_report._shared) is kept apart from the objects' texts: the
    findings of more objects than the table holds, between two findings of one fix, do not
    have it encoded again (a fix costs 7 to 10 times an object to encode)."""
    from draguard.core.finding import Finding, ObjectRef, Severity
    from draguard.core.fixes import Applicability, Fix, set_value
    from draguard.core.location import Location
    from draguard.engine.result import LintResult
    from draguard.report import json_report

    monkeypatch.setattr(json_report, "_SHARED_HELD", 3)
    monkeypatch.setattr(json_report, "_OBJECTS", {})
    monkeypatch.setattr(json_report, "_FIXES", {})
    findings = [Finding("r", "rollout", Severity.ERROR, "m", Location("f.yaml", n + 1, 1, ("spec",), 0),
                        ObjectRef("v1", "Pod", "ns", f"p{n}"),
                        fix=Fix("same title", Applicability.SAFE, [set_value(("spec", "x"), 1)]))
                for n in range(8)]
    encoded = []
    real = Fix.as_json
    monkeypatch.setattr(Fix, "as_json", lambda self: encoded.append(self) or real(self))
    text = json_report.render(LintResult(findings, [], Config(), objects=len(findings)))
    assert len(encoded) == 1
    monkeypatch.undo()
    assert text == json.dumps(json_report.document(LintResult(findings, [], Config(), objects=8)), indent=2,
                              ensure_ascii=False) + "\n"
