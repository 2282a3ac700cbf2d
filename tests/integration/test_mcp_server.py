"""`draguard mcp` driven by the official MCP SDK's own client over stdio: the tools and their
JSON schemas are listed, and each tool answers as draguard does on the command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from draguard.dra.generate import generate
from draguard.rules.examples import COMPLIANT_POD
from support.paths import DATA, EXAMPLES

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, types  # noqa: E402
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


def session_run(calls, cwd=None, path_first: str | None = None, args=(), roots=None):
    """Start the server (in `cwd`, with `args`; `path_first` ahead on its PATH) for a client
    that declares `roots` (folders) when given, run `calls(session)`, return what it returns."""
    async def main():
        env = {**os.environ, "PATH": os.pathsep.join(filter(None, [path_first, os.environ["PATH"]]))}
        params = StdioServerParameters(command=sys.executable, args=["-m", "draguard", "mcp", *map(str, args)], cwd=cwd,
                                       env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, list_roots_callback=roots and _declaring(roots)) as session:
                await session.initialize()
                return await calls(session)
    return asyncio.run(main())


def _declaring(folders):
    """A client's roots/list answer: `folders` as file:// URIs."""
    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=str(f) if "://" in str(f) else Path(f).as_uri())
                                            for f in folders])
    return list_roots


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


def test_every_parameter_is_described_and_an_unknown_argument_is_refused():
    """A model sees only the schema: each parameter says what it takes. A misspelt argument
    was dropped and the call answered as if it were not given (here: judged for the default
    release); it is refused, naming it."""
    from draguard.cli.mcp_params import OWN

    async def calls(session):
        listed = await session.list_tools()
        wrong = await session.call_tool("lint", {"manifest": LEGACY, "kube_versoin": "1.32"})
        return listed, wrong

    listed, wrong = session_run(calls)
    properties = {(tool.name, name): schema for tool in listed.tools
                  for name, schema in tool.input_schema["properties"].items()}
    undescribed = [key for key, schema in properties.items() if len(schema.get("description", "")) < 20]
    assert not undescribed and set(OWN) <= set(properties)  # no description for a parameter that is gone
    assert all(tool.input_schema.get("additionalProperties") is False for tool in listed.tools)
    assert wrong.is_error and "kube_versoin" in wrong.content[0].text


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
            ("explain", {"rule_id": "nope"}), ("lint", {}), ("lint", {"paths": ["nonexistent/x.yaml"]}),
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
    text, dry, written = map(payload, session_run(calls, cwd=tmp_path))
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
    from_text, early = map(payload, session_run(calls, cwd=tmp_path))
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
    answer = payload(session_run(lambda s: s.call_tool("fix", {"paths": [str(tmp_path)], "unsafe": True}),
                                 cwd=tmp_path))
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
    linted, text, fixed, stdin, nothing, *rendered = session_run(calls, cwd=project, path_first=renderers,
                                                                 args=["--root", project, "--root", DATA / "render"])
    assert "legacy-gpu-resource" not in {f["rule"] for f in payload(linted)["findings"]}
    assert "legacy-gpu-resource" not in {f["rule"] for f in payload(text)["findings"]}  # the working folder's
    assert "legacy-gpu-resource" not in {a["rule"] for a in payload(fixed)["applied"]}
    assert stdin.is_error and "'-' (stdin) is not read here" in stdin.content[0].text
    assert nothing.is_error and "give manifest text or paths" in nothing.content[0].text
    if rendered:
        left = payload(rendered[0])["left"]
        rules = {item["rule"] for item in left}  # the recommended profile: shm-size-limit is strict's
        assert "legacy-gpu-resource" in rules and "shm-size-limit" not in rules
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
    alone, with_reference = session_run(calls, cwd=tmp_path)
    assert "claim-reference-missing" in {f["rule"] for f in payload(alone)["findings"]}
    assert payload(with_reference)["findings"] == []


def refused(result, path) -> str:
    """The tool's error: `path` is outside the workspace, and the roots are named."""
    assert result.is_error, result.content
    text = result.content[0].text
    assert "outside the workspace" in text and str(path) in text, text
    return text


@pytest.fixture
def outside(tmp_path):
    """A project folder (`root`) and a manifest beside it, outside it (`secret`); in `root`, a
    link to that manifest and a link to its folder."""
    root, away = tmp_path / "root", tmp_path / "away"
    root.mkdir(), away.mkdir()
    secret = away / "secret.yaml"
    secret.write_text(LEGACY)
    (root / "link.yaml").symlink_to(secret)
    (root / "away").symlink_to(away, target_is_directory=True)
    return root, secret


def test_fix_writes_and_reads_nothing_outside_the_workspace(outside):
    """`..`, an absolute path, a link that points out, a folder link: each refused, and a walk
    of the workspace says the link out is not read (its text stayed out of the diff)."""
    root, secret = outside
    given = ["../away/secret.yaml", str(secret), "link.yaml", "away/secret.yaml"]

    async def calls(session):
        return [await session.call_tool("fix", {"paths": [path], "unsafe": True, "write": True})
                for path in [*given, str(root)]]
    *results, walked = session_run(calls, cwd=root)
    for result, path in zip(results, given):
        refused(result, path)
    walked = payload(walked)
    assert walked["diff"] == "" and walked["written"] == [], walked
    reasons = {os.path.basename(n["file"]): n["reason"] for n in walked["notRead"]}
    assert reasons["link.yaml"].startswith(f"a link to {secret}, outside the workspace ({root})"), reasons
    assert reasons["away"].startswith("a link to the folder")
    assert secret.read_text() == LEGACY and (root / "link.yaml").is_symlink()


def test_lint_and_audit_read_nothing_outside_the_workspace(outside):
    root, secret = outside
    (root / "kubeconfig").symlink_to(secret)

    async def calls(session):
        return [await session.call_tool(name, arguments) for name, arguments in [
            ("lint", {"paths": [str(secret)]}), ("lint", {"paths": ["../away/secret.yaml"]}),
            ("lint", {"manifest": LEGACY, "reference": [str(secret)]}), ("lint", {"paths": [str(root)]}),
            ("audit", {"dump": str(secret)}), ("audit", {"kubeconfig": "kubeconfig"})]]
    absolute, dotdot, reference, walked, dump, kubeconfig = session_run(calls, cwd=root)
    refused(absolute, secret), refused(dotdot, "../away/secret.yaml"), refused(reference, secret)
    refused(dump, secret), refused(kubeconfig, "kubeconfig")
    [skipped] = [f for f in payload(walked)["findings"] if f["file"].endswith("link.yaml")]
    assert skipped["rule"] == "input-skipped" and "outside the workspace" in skipped["message"], skipped


def test_the_config_is_looked_up_within_the_workspace_and_reads_nothing_outside(tmp_path):
    """A `.draguard.yaml` above the root is not read (it would switch a rule off), and one
    inside that names an inventory outside is refused."""
    root, project = tmp_path / "root", tmp_path / "root" / "project"
    project.mkdir(parents=True)
    (tmp_path / ".draguard.yaml").write_text("rules:\n  legacy-gpu-resource: {enabled: false}\n")
    (root / "shared-gpu.yaml").write_text(LEGACY)
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump_all(generate({"nodes": [{"namePrefix": "n", "count": 1, "gpus": {
        "model": "H100-80GB", "count": 2, "mig": "none"}}]})))
    (project / ".draguard.yaml").write_text(f"inventory: [{inventory}]\n")
    (project / "shared-gpu.yaml").write_text(LEGACY)

    async def calls(session):
        return (await session.call_tool("lint", {"paths": ["shared-gpu.yaml"]}),
                await session.call_tool("lint", {"manifest": LEGACY}),
                await session.call_tool("lint", {"paths": ["project/shared-gpu.yaml"]}))
    linted, text, configured = session_run(calls, cwd=root)
    assert "legacy-gpu-resource" in {f["rule"] for f in payload(linted)["findings"]}
    assert "legacy-gpu-resource" in {f["rule"] for f in payload(text)["findings"]}
    refused(configured, inventory)


def test_the_roots_are_the_client_s_within_the_server_s(tmp_path):
    """--root names the server's roots (the working folder is not one then); a client that
    declares roots narrows them: its roots outside the server's, and file:// URIs of another
    host, give nothing; a client whose roots all lie outside gets nothing read."""
    server, client, other = tmp_path / "server", tmp_path / "server" / "client", tmp_path / "other"
    for folder in (client, other):
        folder.mkdir(parents=True)
        (folder / "x.yaml").write_text(LEGACY)
    (server / "y.yaml").write_text(LEGACY)

    def lint(*paths):
        async def calls(session):
            return [await session.call_tool("lint", {"paths": [str(p)]}) for p in paths]
        return calls
    in_client, in_server, in_other = session_run(
        lint(client / "x.yaml", server / "y.yaml", other / "x.yaml"), cwd=other, args=["--root", str(server)],
        roots=[client, other, f"file://example.com{server}"])
    assert payload(in_client)["summary"]["total"] > 0
    refused(in_server, server / "y.yaml"), refused(in_other, other / "x.yaml")
    [nowhere] = session_run(lint(other / "x.yaml"), cwd=other, args=["--root", str(server)], roots=[other])
    assert nowhere.is_error and f"none of the client's roots ({other.as_uri()}) lies within the server's ({server})" \
        in nowhere.content[0].text
    in_root, in_cwd = session_run(lint(server / "y.yaml", other / "x.yaml"), cwd=other, args=["--root", str(server)])
    assert payload(in_root)["summary"]["total"] > 0
    refused(in_cwd, other / "x.yaml")


def test_audit_uses_no_kubeconfig_that_runs_a_command_or_reads_outside(outside):
    """A kubeconfig in the workspace is a file a client may have written: an `exec` plugin
    would run its command in the server (it ran as the kubeconfig was loaded), and a
    certificate outside would be read."""
    root, secret = outside
    ran = root / "ran"
    cluster = {"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}
    context = {"name": "c", "context": {"cluster": "c", "user": "u"}}
    users = {"exec.yaml": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "touch",
                                    "args": [str(ran)], "interactiveMode": "Never"}},
             "certificate.yaml": {"client-certificate": "../away/secret.yaml", "client-key": "../away/secret.yaml"}}
    for name, user in users.items():
        (root / name).write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                                                 "clusters": [cluster], "contexts": [context],
                                                 "users": [{"name": "u", "user": user}]}))

    async def calls(session):
        return [await session.call_tool("audit", {"kubeconfig": name}) for name in users]
    runs, reads = session_run(calls, cwd=root)
    assert runs.is_error and "exec.yaml: its user u has `exec`" in runs.content[0].text, runs.content
    assert not ran.exists()
    refused(reads, "../away/secret.yaml")


def test_no_chart_or_kustomization_is_rendered_that_would_read_outside(outside):
    """helm and kustomize follow links, and kustomize reads the bases a kustomization names
    or fetches them: a render that would read outside is said, not run."""
    root, secret = outside
    (secret.parent / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    folders = {name: root / name for name in ("overlay", "remote", "chart")}
    for folder in folders.values():
        folder.mkdir()
    (folders["overlay"] / "kustomization.yaml").write_text("resources: [../../away]\n")
    (folders["remote"] / "kustomization.yaml").write_text("resources:\n- github.com/example/repo//base?ref=v1\n")
    (folders["chart"] / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (folders["chart"] / "templates").mkdir()
    (folders["chart"] / "templates" / "pod.yaml").symlink_to(secret)

    async def calls(session):
        return [await session.call_tool("lint", {"paths": [name]}) for name in folders]
    said = [[f["message"] for f in payload(result)["findings"]] for result in session_run(calls, cwd=root)]
    assert said == [[f"it names ../../away, outside the workspace ({root}): not rendered"],
                    [f"it names github.com/example/repo//base?ref=v1, not on this machine, outside the workspace "
                     f"({root}): not rendered"],
                    [f"chart/templates/pod.yaml is a link to {secret}, outside the workspace "
                     f"({root}): not rendered"]], said


def test_a_root_must_be_a_folder(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-m", "draguard", "mcp", "--root", str(tmp_path / "nope")],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"--root {tmp_path / 'nope'}: not a folder" in done.stderr, done.stderr


def test_a_client_root_may_be_one_file(tmp_path):
    """The file is read; the folder it is in, and its `.draguard.yaml`, are outside."""
    (tmp_path / "x.yaml").write_text(LEGACY)
    (tmp_path / "y.yaml").write_text(LEGACY)
    (tmp_path / ".draguard.yaml").write_text("rules:\n  legacy-gpu-resource: {enabled: false}\n")

    async def calls(session):
        return [await session.call_tool("lint", {"paths": [str(tmp_path / name)]}) for name in ("x.yaml", "y.yaml")]
    inside, beside = session_run(calls, cwd=tmp_path, roots=[tmp_path / "x.yaml"])
    assert "legacy-gpu-resource" in {f["rule"] for f in payload(inside)["findings"]}
    refused(beside, tmp_path / "y.yaml")


def test_audit_reads_no_file_of_a_bundle_that_links_out(outside):
    root, secret = outside
    pods = secret.parent / "pods.json"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
    bundle = root / "bundle"
    bundle.mkdir()
    (bundle / "snapshot.yaml").write_text("apiVersion: draguard.dev/v1alpha1\nkind: Snapshot\n"
                                          "capturedAt: '2026-12-01T00:00:00Z'\n")
    (bundle / "pods.json").symlink_to(pods)
    refused(session_run(lambda s: s.call_tool("audit", {"dump": "bundle"}), cwd=root), "bundle/pods.json")


def test_a_line_that_is_no_message_is_answered_and_the_session_goes_on():
    """JSON-RPC 2.0 section 5.1: text that is not JSON gets -32700, JSON that is not a message
    -32600, with its id where one can be read (null otherwise); the SDK's own transport
    answers neither, and its client would wait for ever."""
    import subprocess

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "1"}}}
    lines = [json.dumps(initialize), '{"jsonrpc":"2.0","method":"notifications/initialized"}',
             "not json",
             '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"\\ud800"}}',
             '{"jsonrpc":"2.0","id":5,"method":7}',
             '{"jsonrpc":"2.0","id":"a","params":{"id":9}}',
             '{"jsonrpc":"2.0","id":true}',
             "[1]",
             '{"jsonrpc":"2.0","id":3,"method":"ping"}']
    server = subprocess.Popen([sys.executable, "-m", "draguard", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers = []
    try:
        for line in lines:
            server.stdin.write(line + "\n")
        server.stdin.flush()
        while not answers or answers[-1].get("id") != 3:
            answers.append(json.loads(server.stdout.readline()))
    finally:
        server.stdin.close()
        assert server.wait(timeout=30) == 0, server.stderr.read()
    errors = [(answer["id"], answer["error"]["code"]) for answer in answers if "error" in answer]
    assert errors == [(None, -32700), (None, -32700), (5, -32600), ("a", -32600), (None, -32600), (None, -32600)]
    assert answers[0]["id"] == 1 and answers[-1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
