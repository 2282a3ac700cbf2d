"""`draguard agent-rules`: each assistant's files written from the catalog, sized for its
context (a core of a few KB that every session loads, the detail per topic read on demand, each
file's size in tokens printed), a shared file's own content kept around draguard's marked
section, re-runs idempotent, and no file written when an example does not do what the file
would say."""

from __future__ import annotations

import re

from draguard.generate.agent_rules import BEGIN, CORE_MISTAKES, DETAIL_DIR, END, TARGETS, rules_for_agents

WITH_EXAMPLES = rules_for_agents()
CATEGORIES = {rule.category for rule in WITH_EXAMPLES}
#: the most a core file may take of an assistant's context (it loads into every session)
CORE_LIMIT = 8 * 1024


def test_every_target_is_written_with_every_rule_in_one_topic(cli, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("# Our project\n\nBuild with make.\n")
    done = cli("agent-rules", "--output-dir", tmp_path)
    files = 1 + len(CATEGORIES) + 1 + 4 + len(CATEGORIES)  # cursor core + scoped, .cursorrules, 4 shared, topics
    assert done.code == 0 and f"{files} of {files} rule file(s) written; {len(WITH_EXAMPLES)} rules" in done.out
    claude = (tmp_path / "CLAUDE.md").read_text()
    assert claude.startswith("# Our project\n\nBuild with make.\n") and BEGIN in claude and claude.endswith(END + "\n")
    for rule in WITH_EXAMPLES:  # the detail of each rule lives in its topic's file, for both layouts
        for topic in (tmp_path / DETAIL_DIR / f"{rule.category}.md", tmp_path / ".cursor/rules" /
                      f"draguard-{rule.category}.mdc"):
            assert f"## `{rule.id}`" in topic.read_text(), (rule.id, topic)
    scoped = (tmp_path / ".cursor/rules/draguard-teardown.mdc").read_text()
    assert re.match(r"---\ndescription: draguard's teardown rules .*\nglobs: \[.*\]\nalwaysApply: false\n---\n", scoped)
    assert "Upstream Kubernetes, not the guideline documents" in (tmp_path / DETAIL_DIR / "cel.md").read_text()


def test_the_cores_are_a_few_kilobytes_and_hold_what_every_session_needs(cli, tmp_path):
    cli("agent-rules", "--output-dir", tmp_path)
    for name, target in TARGETS.items():
        core = (tmp_path / target.path).read_text()
        assert len(core.encode()) < CORE_LIMIT, (name, len(core))
        assert "run `draguard lint <files>`" in core and "kind: ResourceClaimTemplate" in core
        assert all(f"`{rule_id}`" in core for rule_id in CORE_MISTAKES)
        assert "## `" not in core  # no rule's detail
    linked = (tmp_path / "AGENTS.md").read_text()
    assert all(f"({DETAIL_DIR}/{category}.md)" in linked for category in CATEGORIES)
    assert "draguard-rollout.mdc" in (tmp_path / ".cursor/rules/draguard.mdc").read_text()


def test_each_file_s_size_in_tokens_is_printed(cli, tmp_path):
    done = cli("agent-rules", "--output-dir", tmp_path, "--target", "claude")
    line = next(line for line in done.out.splitlines() if line.startswith(f"{tmp_path}/CLAUDE.md: written"))
    kilobytes, tokens = re.search(r"\((\d+\.\d) KB, ~([\d,]+) tokens\)", line).groups()
    text = (tmp_path / "CLAUDE.md").read_text()
    assert float(kilobytes) == round(len(text.encode()) / 1024, 1) and int(tokens.replace(",", "")) == round(len(text) / 4)
    assert done.out.count(" tokens)") == 1 + len(CATEGORIES)


def test_reruns_change_nothing_and_check_sees_edits(cli, tmp_path):
    cli("agent-rules", "--output-dir", tmp_path, "--target", "agents", "--target", "claude")
    assert cli("agent-rules", "--output-dir", tmp_path, "--target", "agents", "--check").code == 0
    agents = tmp_path / "AGENTS.md"
    agents.write_text(agents.read_text().replace("- cel: ", "- cel-edited: ") + "\nour note\n")
    check = cli("agent-rules", "--output-dir", tmp_path, "--target", "agents", "--check")
    assert check.code == 1 and "AGENTS.md: out of date" in check.out
    topic = tmp_path / DETAIL_DIR / "cel.md"
    topic.write_text(topic.read_text() + "edited\n")
    assert "cel.md: out of date" in cli("agent-rules", "--output-dir", tmp_path, "--target", "claude", "--check").out
    cli("agent-rules", "--output-dir", tmp_path, "--target", "agents")
    text = agents.read_text()
    assert "- cel: " in text and text.endswith("our note\n")  # the section rewritten, the rest kept


def test_a_wrong_example_stops_the_generation(cli, tmp_path, monkeypatch):
    from draguard.rules import REGISTRY

    rule = REGISTRY.get("host-ipc")
    monkeypatch.setattr(type(rule), "compliant", rule.noncompliant)
    done = cli("agent-rules", "--output-dir", tmp_path)
    assert done.code == 2 and "host-ipc: its good example is not clean" in done.err
    assert not list(tmp_path.iterdir())


def test_a_wrong_canonical_claim_stops_the_generation(cli, tmp_path, monkeypatch):
    from draguard.generate import agent_rules

    monkeypatch.setattr(agent_rules, "canonical_claim", lambda: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                        "spec:\n  containers:\n  - name: c\n    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n")
    done = cli("agent-rules", "--output-dir", tmp_path)
    assert done.code == 2 and "the canonical claim is not clean" in done.err
