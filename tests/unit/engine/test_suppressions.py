from support.reports import rules_of

SUPPRESSED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: partial
  annotations:
    ignore.draguard.io/schema-invalid: "kustomize patch: selector comes from the base"
    ignore.draguard.io/no-such-rule: "typo"
spec:
  template: {}
"""


def test_annotation_suppresses_its_rule_and_unknown_ids_are_findings(cli):
    result = cli("lint", "-", "-f", "json", "--no-config", "--show-suppressed", stdin=SUPPRESSED)
    report = result.json
    assert rules_of(report) == ["unknown-rule"]
    assert report["findings"][0]["line"] == 7 and report["findings"][0]["column"] == 5
    assert report["summary"]["suppressed"] == 1
    [suppressed] = report["suppressed"]
    assert suppressed["rule"] == "schema-invalid" and suppressed["reason"].startswith("kustomize patch")


def test_suppressed_findings_are_hidden_unless_asked(cli):
    text = SUPPRESSED.replace('    ignore.draguard.io/no-such-rule: "typo"\n', "")
    quiet = cli("lint", "-", "--no-config", "--color", "never", stdin=text)
    assert quiet.code == 0 and "schema-invalid" not in quiet.out and "1 suppressed" in quiet.out
    shown = cli("lint", "-", "--no-config", "--color", "never", "--show-suppressed", stdin=text)
    assert "(suppressed: kustomize patch" in shown.out and shown.code == 0
