"""Helm output mapping. `helm` itself is not on the CI image; the mapping is tested on the
exact text `helm template` prints (`---` + `# Source:` per document)."""

from draguard.sources.render import SourceMap

RENDERED = """---
# Source: demo/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: draguard-demo
---
# Source: demo/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          limits:
            nvidia.com/gpu: 1
"""

TEMPLATE = """apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
      - name: {{ .Chart.Name }}
        resources:
          limits:
              nvidia.com/gpu: {{ .Values.gpus }}
"""


def test_positions_map_to_the_template_named_by_source_comments(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "deployment.yaml").write_text(TEMPLATE)
    (tmp_path / "templates" / "service.yaml").write_text("apiVersion: v1\nkind: Service\n")
    mapping = SourceMap(str(tmp_path), RENDERED)
    assert mapping.template_for(4) == f"{tmp_path}/templates/service.yaml"
    # the limits key: same text in the template, different indentation
    assert mapping.locate(17, 11) == (f"{tmp_path}/templates/deployment.yaml", 9, 11)
    # the gpu key: value interpolated, so matched by its token
    assert mapping.locate(18, 13) == (f"{tmp_path}/templates/deployment.yaml", 10, 15)
    assert mapping.locate(4, 1) == (f"{tmp_path}/templates/service.yaml", 2, 1)


def test_the_api_versions_a_chart_tests_with_capabilities_are_read_from_its_templates(tmp_path):
    """Its own templates and its subcharts', as `group/version` (a `/Kind` suffix dropped);
    values and other files are not templates."""
    from draguard.sources.render import capability_checks

    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "_helpers.tpl").write_text(
        '{{- if .Capabilities.APIVersions.Has "resource.k8s.io/v1" -}}v1{{- else if '
        '$.Capabilities.APIVersions.Has  "resource.k8s.io/v1beta2/DeviceClass" }}b2{{ end }}')
    sub = tmp_path / "charts" / "sub" / "templates"
    sub.mkdir(parents=True)
    (sub / "pdb.yaml").write_text('{{ if .Capabilities.APIVersions.Has "policy/v1" }}x{{ end }}')
    (tmp_path / "values.yaml").write_text('note: .Capabilities.APIVersions.Has "apps/v9"\n')
    assert capability_checks(str(tmp_path)) == {"resource.k8s.io/v1", "resource.k8s.io/v1beta2", "policy/v1"}


def test_a_kustomize_failure_says_its_cause_without_the_wrapper_build_step(tmp_path):
    """kustomize names the wrapper kustomization's step into the user's folder before the
    cause (nothing of the user's nests below it here): that step is dropped, a base of the
    user's is kept."""
    from draguard.sources.render import _failure

    folder = str(tmp_path / "overlay")
    output = (f"# Warning: 'commonLabels' is deprecated.\nError: accumulating resources: accumulation err='accumulating "
              f"resources from '../overlay': '{folder}' must resolve to a file': recursed accumulation of path "
              f"'{folder}': nothing selected by Certificate.v1.cert-manager.io/serving-cert\n")
    message, _ = _failure(["kustomize", "build", folder], output, folder)
    assert message == f"kustomize build {folder} failed: nothing selected by Certificate.v1.cert-manager.io/serving-cert"
    nested = output.replace("nothing selected", "accumulating resources from '../base': '/b' must resolve to a file': "
                                                "recursed accumulation of path '/b': nothing selected")
    assert _failure(["kustomize", "build", folder], nested, folder)[0].endswith(
        "failed: accumulating resources from '../base': '/b' must resolve to a file': recursed accumulation of path "
        "'/b': nothing selected by Certificate.v1.cert-manager.io/serving-cert")
