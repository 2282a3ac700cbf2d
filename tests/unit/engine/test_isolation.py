"""Each rule call is isolated: a failing rule becomes one internal-error finding naming the
rule and the object, every other rule still runs, and the run exits 2."""

import pytest

from draguard.core.config import Config
from draguard.engine import lint_objects
from draguard.rules import REGISTRY

LEGACY_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "t"},
              "spec": {"hostIPC": True, "containers": [{"name": "c", "image": "x",
                                                         "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
POD_TEXT = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: t}\nspec:\n  hostIPC: true\n"
            "  containers:\n  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n")


@pytest.fixture
def broken_host_ipc(monkeypatch):
    def explode(obj, ctx):
        raise RuntimeError("boom")
        yield  # pragma: no cover - a generator, like every check

    monkeypatch.setattr(REGISTRY.get("host-ipc"), "check", explode)


def test_a_failing_rule_is_one_finding_and_the_others_still_run(broken_host_ipc):
    result = lint_objects([LEGACY_POD], Config())
    rules = sorted(f.rule for f in result.findings)
    assert "legacy-gpu-resource" in rules and "host-ipc" not in rules
    [internal] = [f for f in result.findings if f.rule == "internal-error"]
    assert "host-ipc" in internal.message and "RuntimeError: boom" in internal.message
    assert str(internal.obj) == "Pod t/p" and result.internal_errors == 1


def test_the_cli_exits_2_but_still_reports(broken_host_ipc, cli):
    result = cli("lint", "-", "--no-config", "-f", "json", stdin=POD_TEXT)
    assert result.code == 2 and "rule failure" in result.err
    assert {"internal-error", "legacy-gpu-resource"} <= {f["rule"] for f in result.json["findings"]}


def test_debug_lets_the_exception_through(broken_host_ipc, monkeypatch):
    monkeypatch.setenv("DRAGUARD_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        lint_objects([LEGACY_POD], Config())


def test_internal_errors_cannot_be_suppressed_or_downgraded(broken_host_ipc):
    pod = dict(LEGACY_POD, metadata={"name": "p", "annotations": {"ignore.draguard.io/internal-error": "no"}})
    config = Config()
    config.rules["internal-error"] = type(config.settings("x"))(severity=None)
    result = lint_objects([pod], config)
    assert [f.rule for f in result.findings if f.rule == "internal-error"] and not result.suppressed


def test_objects_without_text_have_paths_and_no_lines():
    result = lint_objects([LEGACY_POD], Config())
    [legacy] = [f for f in result.findings if f.rule == "legacy-gpu-resource"]
    assert legacy.location.line is None and legacy.location.path == (
        "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    [host_ipc] = [f for f in result.findings if f.rule == "host-ipc"]
    assert host_ipc.fix is not None and host_ipc.fix.edits[0].path == ("spec", "hostIPC")
