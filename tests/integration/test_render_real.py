"""Real Helm charts and a Kustomize overlay rendered by the real helm and kustomize (issue:
precision), built from their Go modules: findings land on the template or patch line that
produced them, and values files, --set and the target release reach `helm template`.
Sources: tests/support/data/render/SOURCES.tsv."""

import os

import pytest

from support.paths import DATA
from support.renderers import renderers_dir

RENDER = DATA / "render"
CHARTS = RENDER / "charts"


@pytest.fixture(scope="module")
def renderers():
    folder = renderers_dir()
    if folder is None:
        pytest.skip("Go is not installed: helm and kustomize cannot be built")
    return folder


@pytest.fixture
def lint(cli, renderers, monkeypatch):
    monkeypatch.setenv("PATH", f"{renderers}{os.pathsep}{os.environ['PATH']}")

    def run(*args):
        return cli("lint", *map(str, args), "--no-config", "-f", "json")
    return run


def _at(report, rule):
    return [(os.path.relpath(f["file"], RENDER), f["line"], f["column"]) for f in report["findings"]
            if f["rule"] == rule]


def test_values_files_and_set_reach_helm_and_map_to_the_directive(lint):
    chart = CHARTS / "ray-cluster"
    assert _at(lint(chart).json, "legacy-gpu-resource") == []
    expected = [("charts/ray-cluster/templates/raycluster-cluster.yaml", 241, 13)]  # {{- toYaml . | nindent 12 }}
    assert _at(lint(chart, "--values", RENDER / "values" / "ray-gpu-worker.yaml").json, "legacy-gpu-resource") \
        == expected
    assert _at(lint(chart, "--set", "worker.resources.limits.nvidia\\.com/gpu=2").json, "legacy-gpu-resource") \
        == expected


def test_a_template_line_the_chart_holds_verbatim_is_exact(lint):
    report = lint(CHARTS / "ray-cluster", "--values", RENDER / "values" / "ray-gpu-worker.yaml").json
    [finding] = [f for f in report["findings"] if f["rule"] == "legacy-gpu-resource"]
    assert finding["object"]["kind"] == "RayCluster"
    # the container the finding names is written in the template as is
    lines = (CHARTS / "ray-cluster" / "templates" / "raycluster-cluster.yaml").read_text().splitlines()
    assert "{{- toYaml . | nindent 12 }}" in lines[finding["line"] - 1]
    assert lines[finding["line"] - 2].strip() == "resources:"


def test_a_chart_that_refuses_to_render_is_blamed_where_it_fails(lint):
    result = lint(CHARTS / "dra-driver-nvidia-gpu", "--allow-empty")
    [failed] = [f for f in result.json["findings"] if f["rule"] == "render-failed"]
    assert _at(result.json, "render-failed") == [("charts/dra-driver-nvidia-gpu/templates/validation.yaml", 30, 4)]
    assert "Running in the 'default' namespace is not recommended" in failed["message"]


def test_the_dra_driver_chart_renders_with_its_settings(lint):
    report = lint(CHARTS / "dra-driver-nvidia-gpu", "--set", "allowDefaultNamespace=true",
                  "--set", "gpuResourcesEnabledOverride=true").json
    assert report["summary"]["objects"] > 10
    assert not [f for f in report["findings"] if f["severity"] == "error"]  # the driver's own DaemonSet is infra
    node_agent = _at(report, "env-device-visibility")
    assert node_agent and {f for f, _, _ in node_agent} <= {"charts/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml",
                                                            "charts/dra-driver-nvidia-gpu/templates/controller.yaml"}
    lines = (CHARTS / "dra-driver-nvidia-gpu" / "templates" / "kubeletplugin.yaml").read_text().splitlines()
    for file, line, column in node_agent:
        if file.endswith("kubeletplugin.yaml"):
            assert lines[line - 1][column - 1:].startswith("- name: NVIDIA_") or \
                lines[line - 1][column - 1:].startswith("name: NVIDIA_")


@pytest.mark.parametrize("version, api_version", [("1.33", "resource.k8s.io/v1beta1"), ("1.37", None)])
def test_the_target_release_reaches_helm(lint, version, api_version):
    report = lint(CHARTS / "kube-version-branch", "--kube-version", version).json
    versions = {f["object"]["apiVersion"] for f in report["findings"] if f["rule"].startswith("api-")}
    assert versions == ({api_version} if api_version else set()), report["findings"]


@pytest.mark.parametrize("version, api_version", [("1.33", "resource.k8s.io/v1beta1"), ("1.37", None)])
def test_the_target_release_reaches_helm_inside_kustomize(lint, tmp_path, version, api_version):
    """A kustomization's helmCharts are inflated for the target release too
    (--helm-kube-version), not for the version helm assumes by default."""
    import shutil

    shutil.copytree(CHARTS / "kube-version-branch", tmp_path / "charts" / "kube-version-branch")
    (tmp_path / "charts" / "kube-version-branch" / "values.yaml").write_text("{}\n")  # kustomize reads it
    (tmp_path / "kustomization.yaml").write_text("helmCharts:\n- name: kube-version-branch\n  releaseName: kv\n")
    report = lint(tmp_path, "--kube-version", version).json
    versions = {f["object"]["apiVersion"] for f in report["findings"] if f["rule"].startswith("api-")}
    assert versions == ({api_version} if api_version else set()), report["findings"]


def test_a_version_the_chart_chose_by_capabilities_is_not_blamed_on_the_chart(lint):
    """The NVIDIA DRA driver's chart picks resource.k8s.io/v1 when .Capabilities.APIVersions
    has it, which `helm template` says of every version helm knows, whatever the target: for
    1.33 the render holds v1 classes that `helm install` on a 1.33 cluster would not make.
    They are info, saying why; pinning the chart's value judges what the cluster would get."""
    settings = ("--set", "allowDefaultNamespace=true", "--set", "gpuResourcesEnabledOverride=true")
    report = lint(CHARTS / "dra-driver-nvidia-gpu", "--kube-version", "1.33", *settings).json
    unavailable = [f for f in report["findings"] if f["rule"] == "api-version-unavailable"]
    assert unavailable and all(f["severity"] == "info" and ".Capabilities.APIVersions.Has" in f["message"]
                               for f in unavailable)
    pinned = lint(CHARTS / "dra-driver-nvidia-gpu", "--kube-version", "1.33", *settings,
                  "--set", "resourceApiVersion=resource.k8s.io/v1beta2").json
    assert not [f for f in pinned["findings"] if f["rule"] == "api-version-unavailable"], pinned["findings"]


def test_kustomize_findings_point_into_the_base_and_the_patch(lint):
    report = lint(RENDER / "overlays" / "diffusers" / "h100", "--profile", "strict").json
    assert _at(report, "legacy-gpu-resource") == [("overlays/diffusers/h100/patch-resources.yaml", 29, 15)]
    assert _at(report, "shm-size-limit") == [("overlays/diffusers/base/deployment.yaml", 101, 11)]
    [finding] = [f for f in report["findings"] if f["rule"] == "legacy-gpu-resource"]
    assert finding["object"]["name"] == "diffusers-h100-flux-1-schnell"  # the object as built


def test_a_kustomization_that_does_not_build_names_the_users_file(lint, tmp_path):
    (tmp_path / "kustomization.yaml").write_text("resources: [missing.yaml]\n")
    [failed] = lint(tmp_path, "--allow-empty").json["findings"]
    assert failed["rule"] == "render-failed" and failed["file"] == f"{tmp_path}/kustomization.yaml"
    assert f" {tmp_path} failed: accumulating resources from 'missing.yaml'" in failed["message"]
    assert "draguard-kustomize-" not in failed["message"] and "'../" not in failed["message"]


def test_a_kustomize_error_over_several_lines_is_said_whole(lint, tmp_path):
    """kustomize quotes a patch's config between backticks, on lines of their own; the cause
    comes after them (KServe's dev overlays name a patch its Makefile generates)."""
    (tmp_path / "kustomization.yaml").write_text("resources: []\npatches:\n- path: generated_patch.yaml\n")
    [failed] = lint(tmp_path, "--allow-empty").json["findings"]
    assert failed["rule"] == "render-failed"
    assert "failed to get the patch file from path(generated_patch.yaml)" in failed["message"]
    assert "no such file or directory" in failed["message"]


def test_fix_reports_findings_in_rendered_output_and_writes_no_template(cli, renderers, monkeypatch, tmp_path):
    """A chart's objects exist only once rendered: their fixes are reported, never written
    into the templates."""
    import shutil

    monkeypatch.setenv("PATH", f"{renderers}{os.pathsep}{os.environ['PATH']}")
    chart = tmp_path / "ray-cluster"
    shutil.copytree(CHARTS / "ray-cluster", chart)
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    done = cli("fix", "--unsafe-fixes", "--no-config", chart, "--values", RENDER / "values" / "ray-gpu-worker.yaml")
    assert "[legacy-gpu-resource] left: " in done.out
    assert "is a Helm template (Go template text, not YAML until rendered): not rewritten" in done.out
    assert "fixes that file" not in done.out  # a template is no manifest to fix
    assert {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before


def test_fix_points_a_kustomize_finding_at_the_resource_file_it_can_fix(cli, renderers, monkeypatch, tmp_path):
    """A Kustomize build is not written either, but its objects come from plain files: the
    reason names the file, and fixing that file fixes the object."""
    monkeypatch.setenv("PATH", f"{renderers}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "base").mkdir()
    deploy = tmp_path / "base" / "deploy.yaml"
    deploy.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
                      "    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n")
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    done = cli("fix", "--unsafe-fixes", "--no-config", "--select", "legacy-gpu-resource", tmp_path / "base")
    assert f"reported, never written; it comes from {deploy}: `draguard fix {deploy}` fixes that file" in done.out
    assert "nvidia.com/gpu" in deploy.read_text()
    cli("fix", "--unsafe-fixes", "--no-config", "--select", "legacy-gpu-resource", deploy)
    assert "nvidia.com/gpu" not in deploy.read_text() and "kind: ResourceClaimTemplate" in deploy.read_text()


def test_a_patch_named_alone_is_judged_in_its_build_and_never_written(cli, renderers, monkeypatch, tmp_path):
    """As pre-commit names it: no schema errors of a patch judged alone, the finding the
    patch wrote at its line, and `fix` leaves the patch as it is (a template written into
    it made `kustomize build` fail: no resource matches it)."""
    import shutil

    monkeypatch.setenv("PATH", f"{renderers}{os.pathsep}{os.environ['PATH']}")
    shutil.copytree(RENDER / "overlays" / "diffusers", tmp_path / "diffusers")
    monkeypatch.chdir(tmp_path / "diffusers")
    patch = "h100/patch-resources.yaml"
    before = open(patch).read()
    report = cli("lint", patch, "--no-config", "-f", "json").json
    rules = {(f["rule"], f["file"], f["line"]) for f in report["findings"]}
    assert ("judged-in-build", patch, None) in rules, rules
    assert ("legacy-gpu-resource", patch, 29) in rules and not [r for r in rules if r[0] == "schema-invalid"]
    fixed = cli("fix", patch, "--unsafe-fixes", "--no-config")
    assert open(patch).read() == before
    assert f"it comes from the Kustomize patch {patch}: edit the patch by hand" in fixed.out


def test_a_template_renamed_by_name_suffix_is_named_and_the_documented_file_mends_it(lint, tmp_path):
    """kustomize 5.8 renames a ResourceClaimTemplate with nameSuffix but leaves the pods'
    resourceClaimTemplateName as it was. The finding names the renamed template, and the
    file the rule documents (its remedy_file), named under `configurations`, makes the real
    kustomize rewrite the reference."""
    import textwrap

    from draguard.rules import REGISTRY

    (tmp_path / "base").mkdir()
    (tmp_path / "prod").mkdir()
    (tmp_path / "base" / "app.yaml").write_text(textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: gpu}
        spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec:
              resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
              containers: [{name: c, image: i, resources: {claims: [{name: gpu}]}}]
        """))
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [app.yaml]\n")
    kustomization = "resources: [../base]\nnameSuffix: -prod\nnamespace: prod\n"
    (tmp_path / "prod" / "kustomization.yaml").write_text(kustomization)
    [missing] = [f for f in lint(tmp_path / "prod").json["findings"] if f["rule"] == "claim-reference-missing"]
    assert missing["message"].startswith("ResourceClaimTemplate 'gpu' was renamed 'gpu-prod' by the kustomization's "
                                         "namePrefix/nameSuffix")
    assert missing["file"].endswith("base/app.yaml")
    what, text = REGISTRY.get("claim-reference-missing").remedy_file
    (tmp_path / "prod" / "dra-names.yaml").write_text(textwrap.dedent(text))
    (tmp_path / "prod" / "kustomization.yaml").write_text(kustomization + "configurations: [dra-names.yaml]\n")
    assert "claim-reference-missing" not in {f["rule"] for f in lint(tmp_path / "prod").json["findings"]}


def test_a_chart_template_named_alone_renders_the_chart(lint):
    """pre-commit names the template it changed: the chart is rendered, as a folder is."""
    template = CHARTS / "ray-cluster" / "templates" / "raycluster-cluster.yaml"
    alone = lint(template, "--values", RENDER / "values" / "ray-gpu-worker.yaml").json
    whole = lint(CHARTS / "ray-cluster", "--values", RENDER / "values" / "ray-gpu-worker.yaml").json
    assert [f for f in alone["findings"] if f["rule"] != "judged-in-build"] == whole["findings"] != []
    [said] = [f for f in alone["findings"] if f["rule"] == "judged-in-build"]
    assert said["file"] == str(template) and said["severity"] == "info"


def test_a_kustomization_that_inflates_a_helm_chart_is_built(lint, tmp_path):
    """`helmCharts` (kustomize's HelmChartInflationGenerator, as Argo CD builds it) needs
    `kustomize build --enable-helm`: without it the build failed (render-failed). The chart
    home and values file are the build's inputs, not manifests of their own."""
    import shutil

    shutil.copytree(CHARTS / "ray-cluster", tmp_path / "charts" / "ray-cluster")
    shutil.copy(RENDER / "values" / "ray-gpu-worker.yaml", tmp_path / "gpu-values.yaml")
    (tmp_path / "kustomization.yaml").write_text(
        "helmCharts:\n- name: ray-cluster\n  releaseName: rc\n  valuesFile: gpu-values.yaml\n")
    report = lint(tmp_path).json
    rules = [f["rule"] for f in report["findings"]]
    assert "render-failed" not in rules and "legacy-gpu-resource" in rules, report["findings"]
    assert not [f for f in report["findings"] if f["file"].endswith("gpu-values.yaml")]  # not linted alone


def test_charts_and_kustomizations_rendered_side_by_side_judge_as_each_alone(lint):
    """Renders run at once (one process each): together they find what each finds alone."""
    inputs = [CHARTS / "ray-cluster", CHARTS / "kube-version-branch", RENDER / "overlays" / "diffusers" / "h100"]
    values = ("--values", RENDER / "values" / "ray-gpu-worker.yaml", "--kube-version", "1.33")
    together = lint(*inputs, *values).json["findings"]
    alone = [f for path in inputs for f in lint(path, *values).json["findings"]]
    key = lambda f: (f["file"], f["line"] or 0, f["column"] or 0, f["rule"], f["message"])  # noqa: E731
    assert together and sorted(together, key=key) == sorted(alone, key=key)


def test_a_chart_without_its_disabled_dependencies_renders_and_says_so(lint):
    """vLLM production-stack keeps charts/ out of git; its two dependencies (monitoring) are
    off by default, so helm would render nothing of them, though `helm template` refuses the
    chart until `helm dependency build`."""
    chart = CHARTS / "vllm-stack"
    report = lint(chart, "--values", RENDER / "values" / "vllm-stack-example.yaml").json
    rules = [f["rule"] for f in report["findings"]]
    assert "render-failed" not in rules and "not-an-object" not in rules, report["findings"]
    assert _at(report, "chart-dependency-missing") == [("charts/vllm-stack/Chart.yaml", 24, 5),
                                                       ("charts/vllm-stack/Chart.yaml", 28, 5)]
    # the GPU Deployment rendered; its resources come from an include on the `resources:` line
    [(file, line, column)] = _at(report, "legacy-gpu-resource")
    text = (RENDER / file).read_text().splitlines()[line - 1]
    assert file == "charts/vllm-stack/templates/deployment-vllm-multi.yaml"
    assert text.strip().startswith("resources: {{") and text[column - 1:].startswith("{{")


def test_a_missing_dependency_the_values_enable_fails_the_render_by_name(lint):
    report = lint(CHARTS / "vllm-stack", "--set", "prometheus-adapter.enabled=true", "--allow-empty").json
    [failed] = [f for f in report["findings"] if f["rule"] == "render-failed"]
    assert _at(report, "render-failed") == [("charts/vllm-stack/Chart.yaml", 28, 5)]
    assert "prometheus-adapter" in failed["message"] and "kube-prometheus-stack" not in failed["message"]
    assert "helm dependency build" in failed["message"]
    assert "chart-dependency-missing" not in [f["rule"] for f in report["findings"]]


def test_a_template_that_fails_to_execute_is_blamed_where_and_why(lint, tmp_path):
    """helm 4 writes such an error on several lines (pkg/engine TraceableError): the
    template's position first, then what failed."""
    chart = tmp_path / "ui"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: ui\nversion: 0.1.0\n")
    (chart / "templates" / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.ui.name }}\n")
    [failed] = lint(chart, "--allow-empty").json["findings"]
    assert (failed["rule"], os.path.relpath(failed["file"], chart), failed["line"], failed["column"]) == \
        ("render-failed", "templates/service.yaml", 4, 18)
    assert "at <.Values.ui.name>: nil pointer evaluating interface {}.name" in failed["message"]


def test_fix_says_why_a_template_is_not_rewritten_and_offers_the_values_change(cli, renderers, monkeypatch, tmp_path):
    """Per finding in a chart: a fix inside a block the template takes whole from values.yaml
    (`securityContext: {{- toYaml .Values.securityContext ...}}`) or a scalar it takes from
    there is offered as a byte-minimal diff of values.yaml (not written); a fix of what the
    template writes itself names the template line; a fix that adds objects says so. --check
    fails on all of them."""
    monkeypatch.setenv("PATH", f"{renderers}{os.pathsep}{os.environ['PATH']}")
    chart = tmp_path / "gpu"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu\nversion: 0.1.0\n")
    values = "# the server\nsecurityContext:\n  privileged: true  # for the driver\ngrace: 0\nreplicas: 1\n"
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Release.Name }}}\nspec:\n"
        "  replicas: {{ .Values.replicas }}\n  selector: {matchLabels: {app: x}}\n  template:\n"
        "    metadata: {labels: {app: x}}\n    spec:\n"
        "      terminationGracePeriodSeconds: {{ .Values.grace }}\n"
        "      hostIPC: true\n"
        "      resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]\n"
        "      containers:\n      - name: server\n        image: vllm/vllm-openai\n"
        "        securityContext:\n          {{- toYaml .Values.securityContext | nindent 10 }}\n"
        "        resources: {claims: [{name: gpu}], limits: {nvidia.com/gpu: 1}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu}\n"
        "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}\n")
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    done = cli("fix", "--unsafe-fixes", "--check", "--no-config", "--kube-version", "1.34", chart)
    assert done.code == 1 and {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before
    lines = {line.split("] left: ")[0].split("[")[-1]: line for line in done.out.splitlines() if "] left: " in line}
    template = f"{chart}/templates/deployment.yaml"
    assert "its fix is a change of .Values.securityContext" in lines["privileged-gpu-container"]
    assert "its fix is a change of .Values.grace" in lines["teardown-grace-zero"]
    assert f"edit {template}:11 by hand" in lines["host-ipc"]
    assert "its fix also adds objects" in lines["legacy-gpu-resource"]
    diff = done.out.split("offered, not written: the chart's values change these fixes map to\n", 1)[1]
    assert diff.count("--- a/") == 1 and "-  privileged: true  # for the driver\n" in diff
    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert sorted(changed) == sorted(["-securityContext:", "-  privileged: true  # for the driver", "-grace: 0",
                                      "+securityContext: {}", "+grace: 60"])
    safe_only = cli("fix", "--check", "--no-config", "--kube-version", "1.34", chart)
    assert "offered, not written" not in safe_only.out and "pass --unsafe-fixes" in safe_only.out


def test_a_duplicate_key_cites_the_template_line_that_wrote_it_first(lint):
    # NVIDIA/k8s-dra-driver-gpu's chart with nameOverride=nvidia-dra-driver-gpu: the selectorLabels
    # helper and a literal line both write the component label (kubernetes-sigs/dra-driver-nvidia-gpu#1184)
    report = lint(CHARTS / "dra-driver-nvidia-gpu", "--set", "allowDefaultNamespace=true", "--set",
                  "gpuResourcesEnabledOverride=true", "--set", "nameOverride=nvidia-dra-driver-gpu").json
    found = [(os.path.relpath(f["file"], RENDER), f["line"], f["message"]) for f in report["findings"]
             if f["rule"] == "duplicate-key"]
    key = "'nvidia-dra-driver-gpu-component'"
    assert found == [("charts/dra-driver-nvidia-gpu/templates/controller.yaml", 38,
                      f"mapping key {key} already defined at line 37"),
                     ("charts/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml", 41,
                      f"mapping key {key} already defined at line 40")]
