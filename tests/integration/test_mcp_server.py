"""`draguard mcp` driven by the official MCP SDK's own client over stdio: the tools and their
JSON schemas are listed, and each tool answers as draguard does on the command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap

import pytest
import yaml

from draguard.dra.generate import generate
from draguard.rules.examples import COMPLIANT_POD
from support.paths import DATA, EXAMPLES

mcp = pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

LEGACY = (EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml").read_text()
CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: t}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 3}
"""


def session_run(calls, cwd=None, path_first: str | None = None):
    """Start the server (in `cwd`; `path_first` ahead on its PATH), run `calls(session)`,
    return what it returns."""
    async def main():
        env = {**os.environ, "PATH": os.pathsep.join(filter(None, [path_first, os.environ["PATH"]]))}
        params = StdioServerParameters(command=sys.executable, args=["-m", "draguard", "mcp"], cwd=cwd, env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await calls(session)
    return asyncio.run(main())


def payload(result):
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if isinstance(content, dict) and set(content) == {"result"} else content
    return json.loads(result.content[0].text)


def test_tools_and_their_schemas_are_listed():
    tools = session_run(lambda s: s.list_tools())
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"lint", "rules", "explain", "allocate", "simulate", "fix", "audit"}
    assert set(by_name["lint"].input_schema["properties"]) == {"manifest", "paths", "kube_version", "feature_gates",
                                                               "reference"}
    for name in ("fix", "audit", "allocate", "simulate"):
        assert {"kube_version", "feature_gates"} <= set(by_name[name].input_schema["properties"]), name


def test_lint_judges_with_the_cluster_s_feature_gates():
    """A StatefulSet's maxUnavailable 0: 1.36 drops the field unread, unless the cluster sets
    MaxUnavailableStatefulSet on; then the API server refuses it."""
    statefulset = yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}},
                 "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})

    async def calls(session):
        return [await session.call_tool("lint", {"manifest": statefulset, "kube_version": "1.36", **gates})
                for gates in ({}, {"feature_gates": "MaxUnavailableStatefulSet=true"}, {"feature_gates": "Nope=true"})]
    default, gated, unknown = session_run(calls)
    rules = [{f["rule"] for f in payload(r)["findings"]} for r in (default, gated)]
    assert "rollout-fields-invalid" not in rules[0] and "rollout-fields-invalid" in rules[1]
    assert unknown.is_error and "unknown feature gate 'Nope'" in unknown.content[0].text


def test_lint_rules_and_explain():
    async def calls(session):
        return (await session.call_tool("lint", {"manifest": LEGACY}),
                await session.call_tool("lint", {"paths": [str(EXAMPLES / "dra-inference")]}),
                await session.call_tool("rules", {}),
                await session.call_tool("explain", {"rule_id": "host-ipc"}))
    legacy, clean, rules, explained = session_run(calls)
    assert "legacy-gpu-resource" in {f["rule"] for f in payload(legacy)["findings"]}
    assert payload(clean)["summary"]["total"] == 0
    assert "host-ipc" in {r["id"] for r in payload(rules)}
    assert explained.content[0].text.startswith("# `host-ipc`")


def test_a_mistake_reaches_the_model_with_what_to_do():
    """An unknown rule, no input, a path that is not there, an unsupported release: the tool
    fails with draguard's message (the SDK shows other exceptions as a bare crash)."""
    async def calls(session):
        return [await session.call_tool(name, arguments) for name, arguments in [
            ("explain", {"rule_id": "nope"}), ("lint", {}), ("lint", {"paths": ["/nonexistent/x.yaml"]}),
            ("lint", {"manifest": LEGACY, "kube_version": "1.9"})]]
    results = session_run(calls)
    assert all(r.is_error for r in results)
    said = [r.content[0].text for r in results]
    for text, expected in zip(said, ["unknown rule 'nope'", "give manifest text or paths", "no such file",
                                     "unsupported Kubernetes version '1.9'"]):
        assert expected in text, said


def test_fix_returns_a_diff_and_writes_only_when_asked(tmp_path):
    target = tmp_path / "shared-gpu.yaml"
    target.write_text(LEGACY)

    async def calls(session):
        return (await session.call_tool("fix", {"manifest": LEGACY, "unsafe": True}),
                await session.call_tool("fix", {"paths": [str(target)], "unsafe": True}),
                await session.call_tool("fix", {"paths": [str(target)], "unsafe": True, "write": True}))
    text, dry, written = map(payload, session_run(calls))
    assert "+kind: ResourceClaimTemplate" in text["diff"] and "kind: ResourceClaimTemplate" in text["fixed"]
    assert dry["written"] == [] and "+kind: ResourceClaimTemplate" in dry["diff"] and dry["notRead"] == []
    assert written["written"] == [{"file": str(target), "written": True, "reason": None}]
    assert "kind: ResourceClaimTemplate" in target.read_text()


def test_allocate_says_why_a_claim_does_not_fit():
    """Three GPUs asked of a node with two: no allocation, and the reason per request."""
    objects = generate({"nodes": [{"namePrefix": "n", "count": 1, "gpus": {"model": "H100-80GB", "count": 2,
                                                                            "mig": "none"}}]})
    result = session_run(lambda s: s.call_tool("allocate", {"claims": CLAIM, "inventory": yaml.safe_dump_all(objects)}))
    [verdict] = [v for v in payload(result) if "claim" in v]
    assert verdict["allocation"] is None and verdict["explanation"]


def test_audit_judges_a_dump_given_as_text_or_path(tmp_path):
    import textwrap

    from draguard.rules import REGISTRY

    text = textwrap.dedent(REGISTRY.get("claim-stuck-deleting").noncompliant)
    (tmp_path / "dump.yaml").write_text(text)

    async def calls(session):
        return (await session.call_tool("audit", {"snapshot": text}),
                await session.call_tool("audit", {"dump": str(tmp_path / "dump.yaml"), "at": "2026-12-01T11:30:30Z"}))
    from_text, early = map(payload, session_run(calls))
    assert {f["rule"] for f in from_text["findings"]} == {"claim-stuck-deleting", "pod-stuck-terminating"}
    assert from_text["summary"]["grade"] == "D" and from_text["pools"]["cluster"]["devices"]["total"] == 2
    assert early["findings"] == []  # a minute after the deletion nothing is stuck yet


def test_simulate_proves_the_surge_first_deadlock_and_its_remedy():
    """The rollout-deadlock rule's own failing example on its own inventory."""
    import textwrap

    from draguard.rules import REGISTRY

    rule = REGISTRY.get("rollout-deadlock")
    inventory = yaml.safe_dump_all(generate(rule.example_inventory))

    async def calls(session):
        return (await session.call_tool("simulate", {"manifests": textwrap.dedent(rule.noncompliant),
                                                     "inventory": inventory}),
                await session.call_tool("simulate", {"manifests": textwrap.dedent(rule.compliant),
                                                     "inventory": inventory, "kube_version": "1.34"}),
                await session.call_tool("simulate", {"manifests": textwrap.dedent(rule.compliant),
                                                     "inventory": inventory, "horizon": 0}),
                await session.call_tool("simulate", {"manifests": textwrap.dedent(rule.compliant),
                                                     "inventory": inventory, "feature_gates": "NoSuchGate=true"}))
    stuck, fine, no_time, bad_gate = session_run(calls)
    stuck, fine = payload(stuck), payload(fine)
    assert no_time.is_error and "horizon: seconds, a finite number above 0" in no_time.content[0].text
    assert bad_gate.is_error and "unknown feature gate 'NoSuchGate'" in bad_gate.content[0].text
    assert stuck["verdict"]["kind"] == "deadlock" and stuck["verdict"]["remedy"].startswith("strategy maxSurge: 0")
    assert stuck["verdict"]["chain"][1].startswith("2 old pod(s) cannot be removed")
    assert fine["verdict"] == {"kind": "completes", "seconds": 37.0, "chain": [], "remedy": "",
                               "progressDeadlineExceeded": None}


def test_fix_says_which_files_it_did_not_read(tmp_path):
    (tmp_path / "shared-gpu.yaml").write_text(LEGACY)
    (tmp_path / "latin1.yaml").write_bytes("metadata: {name: caf\xe9}\n".encode("latin-1"))
    os.mkfifo(tmp_path / "pipe.yaml")
    answer = payload(session_run(lambda s: s.call_tool("fix", {"paths": [str(tmp_path)], "unsafe": True})))
    assert sorted((os.path.basename(n["file"]), n["reason"]) for n in answer["notRead"]) == [
        ("latin1.yaml", "not UTF-8 text: left untouched"),
        ("pipe.yaml", "not a regular file (a pipe, socket or device): not read")]
    assert "+kind: ResourceClaimTemplate" in answer["diff"]


def test_lint_and_fix_read_the_project_config_and_report_what_renders_hold(tmp_path):
    """As the command line: the nearest `.draguard.yaml` applies (it was ignored: every
    rule ran, on the default release), a kustomization's findings are left with the reason
    (they were dropped unsaid), and '-' is refused (the server's stdin is the MCP channel)."""
    from support.renderers import renderers_dir

    project = tmp_path / "project"
    project.mkdir()
    (project / "shared-gpu.yaml").write_text(LEGACY)
    (project / ".draguard.yaml").write_text("rules:\n  legacy-gpu-resource: {enabled: false}\n")
    overlay = str(DATA / "render" / "overlays" / "diffusers" / "h100")
    renderers = renderers_dir()

    async def calls(session):
        return [await session.call_tool(name, arguments) for name, arguments in [
            ("lint", {"paths": [str(project)]}), ("lint", {"manifest": LEGACY}),
            ("fix", {"paths": [str(project)], "unsafe": True}), ("fix", {"paths": ["-"]}), ("fix", {}),
            *([("fix", {"paths": [overlay], "unsafe": True})] if renderers else [])]]
    linted, text, fixed, stdin, nothing, *rendered = session_run(calls, cwd=project, path_first=renderers)
    assert "legacy-gpu-resource" not in {f["rule"] for f in payload(linted)["findings"]}
    assert "legacy-gpu-resource" not in {f["rule"] for f in payload(text)["findings"]}  # the working folder's
    assert "legacy-gpu-resource" not in {a["rule"] for a in payload(fixed)["applied"]}
    assert stdin.is_error and "'-' (stdin) is not read here" in stdin.content[0].text
    assert nothing.is_error and "give manifest text or paths" in nothing.content[0].text
    if rendered:
        left = payload(rendered[0])["left"]
        assert {item["rule"] for item in left} >= {"legacy-gpu-resource", "shm-size-limit"}
        assert all(item["reason"].startswith("it is in rendered output") for item in left)


def test_allocate_judges_for_the_release_the_project_config_names(tmp_path):
    """As `draguard allocate`: the working folder's `.draguard.yaml` names the release (1.33:
    the stable allocator), and the call's kube_version wins over it."""
    (tmp_path / ".draguard.yaml").write_text('kubeVersion: "1.33"\n')
    objects = generate({"nodes": [{"namePrefix": "n", "count": 1, "gpus": {"model": "H100-80GB", "count": 4,
                                                                            "mig": "none"}}]})
    inventory = yaml.safe_dump_all(objects)

    async def calls(session):
        return [await session.call_tool("allocate", {"claims": CLAIM, "inventory": inventory, **extra})
                for extra in ({}, {"kube_version": "1.37"})]
    configured, given = session_run(calls, cwd=tmp_path)
    variants = [{v["upstreamVariant"] for v in payload(result) if "claim" in v} for result in (configured, given)]
    assert variants == [{"stable"}, {"incubating"}]


def test_lint_reads_its_reference_files_for_what_rules_read_across_files(tmp_path):
    """The pod names a template of another file: given as `reference`, it is found, and the
    reference files' own faults are not reported."""
    template, pod = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d]
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod))
    (tmp_path / "template.yaml").write_text(yaml.safe_dump(template))
    (tmp_path / "legacy.yaml").write_text(LEGACY)

    async def calls(session):
        return [await session.call_tool("lint", {"paths": [str(tmp_path / "pod.yaml")], **extra})
                for extra in ({}, {"reference": [str(tmp_path)]})]
    alone, with_reference = session_run(calls)
    assert "claim-reference-missing" in {f["rule"] for f in payload(alone)["findings"]}
    assert payload(with_reference)["findings"] == []
