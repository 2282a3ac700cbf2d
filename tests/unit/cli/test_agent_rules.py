"""`draguard agent-rules`: the five assistants' files written from the catalog, a shared file's
own content kept around draguard's marked section, re-runs idempotent, and no file written
when a rule's example does not do what the file would say."""

from __future__ import annotations

from draguard.report.agent_rules import BEGIN, END, TARGETS
from draguard.rules import REGISTRY
from draguard.rules.base import Needs

WITH_EXAMPLES = [rule for rule in REGISTRY if rule.compliant and rule.noncompliant and rule.needs is not Needs.CLUSTER]


def test_every_target_is_written_with_every_rule(cli, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("# Our project\n\nBuild with make.\n")
    done = cli("agent-rules", "--output-dir", tmp_path)
    assert done.code == 0 and f"5 of 5 rule file(s) written; {len(WITH_EXAMPLES)} rules" in done.out
    cursor = (tmp_path / ".cursor" / "rules" / "draguard.mdc").read_text()
    assert cursor.startswith("---\ndescription: ") and "globs: [" in cursor
    claude = (tmp_path / "CLAUDE.md").read_text()
    assert claude.startswith("# Our project\n\nBuild with make.\n") and BEGIN in claude and claude.endswith(END + "\n")
    for target in TARGETS.values():
        text = (tmp_path / target.path).read_text()
        assert all(f"## `{rule.id}`" in text for rule in WITH_EXAMPLES)
    # where the guideline documents are wrong, the files say what upstream does
    assert "Upstream Kubernetes, not the guideline documents" in cursor


def test_reruns_change_nothing_and_check_sees_edits(cli, tmp_path):
    cli("agent-rules", "--output-dir", tmp_path, "--target", "agents", "--target", "claude")
    assert cli("agent-rules", "--output-dir", tmp_path, "--target", "agents", "--check").code == 0
    agents = tmp_path / "AGENTS.md"
    agents.write_text(agents.read_text().replace("## `host-ipc`", "## `host-ipc-edited`") + "\nour note\n")
    check = cli("agent-rules", "--output-dir", tmp_path, "--target", "agents", "--check")
    assert check.code == 1 and "out of date" in check.out
    cli("agent-rules", "--output-dir", tmp_path, "--target", "agents")
    text = agents.read_text()
    assert "## `host-ipc`" in text and text.endswith("our note\n")  # the section rewritten, the rest kept


def test_a_wrong_example_stops_the_generation(cli, tmp_path, monkeypatch):
    rule = REGISTRY.get("host-ipc")
    monkeypatch.setattr(type(rule), "compliant", rule.noncompliant)
    done = cli("agent-rules", "--output-dir", tmp_path)
    assert done.code == 2 and "host-ipc: its good example is not clean" in done.err
    assert not list(tmp_path.iterdir())
