import pytest

from draguard.core.errors import ConfigError
from draguard.engine.config_file import find_config, load_config
from draguard.core.finding import Severity

from support.reports import rules_of

LEGACY_NO_SELECTOR = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {}}\n"


def test_config_is_found_upward_from_the_first_input(tmp_path):
    (tmp_path / ".draguard.yaml").write_text("kubeVersion: '1.35'\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config([str(deep)]) == str(tmp_path / ".draguard.yaml")
    assert load_config(find_config([str(deep)])).kube_version == "1.35"


def test_rule_switches_severities_and_options(tmp_path):
    path = tmp_path / ".draguard.yaml"
    path.write_text("failOn: warning\nrules:\n  not-an-object: off\n  schema-invalid:\n"
                    "    severity: warning\n    maxErrorsPerObject: 1\n"
                    "external:\n  resourceClaims: [ns/claim]\nadminNamespaces: [ops]\n")
    config = load_config(str(path))
    assert config.fail_on == Severity.WARNING
    assert config.settings("not-an-object").enabled is False
    assert config.settings("schema-invalid").severity == Severity.WARNING
    assert config.settings("schema-invalid").options == {"maxErrorsPerObject": 1}
    assert config.is_external("resourceClaims", "claim", "ns") and not config.is_external("resourceClaims", "claim", "x")
    assert config.admin_namespaces == {"ops"}


@pytest.mark.parametrize("text, where, message", [
    ("kubeVersion: '1.31'\n", "1:14", "unsupported Kubernetes version"),
    ("colour: red\n", "1:1", "unknown setting 'colour'"),
    ("rules:\n  schema-invalid: {maxErrorsPerObject: many}\n", "2:40", "expected int"),
    ("rules:\n  schema-invalid: {threshold: 3}\n", "2:20", "has no setting 'threshold'"),
    ("failOn: fatal\n", "1:9", "unknown severity"),
    ("a: [\n", "2:1", "YAML syntax error"),
    ("daemonSets: tenant\n", "1:13", "'daemonSets' must be one of nodeAgents, tenants"),
])
def test_bad_config_is_an_error_with_position(tmp_path, text, where, message):
    path = tmp_path / ".draguard.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as excinfo:
        load_config(str(path))
    assert str(excinfo.value).startswith(f"{path}:{where}: ") and message in str(excinfo.value)


@pytest.mark.parametrize("text, node_agents", [("", True), ("daemonSets: nodeAgents\n", True),
                                               ("daemonSets: tenants\n", False)])
def test_daemonsets_are_node_agents_unless_the_config_says_they_are_tenants(tmp_path, cli, text, node_agents):
    (tmp_path / ".draguard.yaml").write_text(text)
    (tmp_path / "ds.yaml").write_text(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, namespace: t}\nspec:\n"
        "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      containers: [{name: c, image: x}]\n      volumes: [{name: dev, hostPath: {path: /dev}}]\n")
    result = cli("lint", str(tmp_path / "ds.yaml"), "--format", "json")
    assert result.code == (0 if node_agents else 1), result.err
    assert ("daemonset-host-access" in rules_of(result.json)) is node_agents
    assert ("host-device-mount" in rules_of(result.json)) is not node_agents


def test_bad_config_exits_2_and_unknown_rule_in_config_is_a_finding(tmp_path, cli):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(LEGACY_NO_SELECTOR)
    (tmp_path / ".draguard.yaml").write_text("rules: {schema-invalid: {severity: loud}}\n")
    result = cli("lint", manifest)
    assert result.code == 2 and "unknown severity" in result.err and ".draguard.yaml:1:" in result.err
    (tmp_path / ".draguard.yaml").write_text("rules:\n  no-such-rule: off\n")
    report = cli("lint", manifest, "-f", "json").json
    unknown = [f for f in report["findings"] if f["rule"] == "unknown-rule"]
    assert unknown and unknown[0]["file"].endswith(".draguard.yaml") and unknown[0]["line"] == 2


def test_severity_override_and_disable_take_effect(tmp_path, cli):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(LEGACY_NO_SELECTOR)
    assert cli("lint", manifest).code == 1
    (tmp_path / ".draguard.yaml").write_text("rules: {schema-invalid: warning}\n")
    result = cli("lint", manifest, "-f", "json")
    assert result.code == 0 and {f["severity"] for f in result.json["findings"]} == {"warning"}
    assert cli("lint", manifest, "--fail-on", "warning").code == 1
    (tmp_path / ".draguard.yaml").write_text("rules: {schema-invalid: off}\n")
    assert rules_of(cli("lint", manifest, "-f", "json").json) == []
    assert cli("lint", manifest, "--no-config").code == 1


@pytest.mark.parametrize("written, read", [("1.35", "1.35"), ("'1.36'", "1.36"), ("v1.34.2", "1.34"),
                                            ("{kubeVersion: 1.33}", "1.33")])
def test_kube_version_is_read_as_written(tmp_path, written, read):
    path = tmp_path / ".draguard.yaml"
    path.write_text(written if written.startswith("{") else f"kubeVersion: {written}\n")
    assert load_config(str(path)).kube_version == read


def test_an_unquoted_version_that_looks_like_a_float_keeps_its_zero(tmp_path):
    path = tmp_path / ".draguard.yaml"
    path.write_text("kubeVersion: 1.30\n")
    with pytest.raises(ConfigError, match="unsupported Kubernetes version '1.30'"):
        load_config(str(path))
