from support.reports import rules_of

DEPLOYMENT_NO_SELECTOR = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: three
  template:
    spec:
      containers:
      - name: web
        image: nginx
        resourcez: {}
"""


def test_deployment_without_selector_is_a_schema_error_at_its_position(lint_json):
    report = lint_json(DEPLOYMENT_NO_SELECTOR)
    found = {(f["message"], f["line"], f["column"]) for f in report["findings"]}
    assert ("spec: required field 'selector' is missing", 5, 1) in found
    assert ('spec.replicas: "three" is not of type "integer"', 6, 13) in found
    assert ("spec.template.spec.containers[0].resourcez: unknown field 'resourcez'", 12, 9) in found
    # the rules that count the pods skip it, and say so at the count (core.unread)
    [note] = [f for f in report["findings"] if f["rule"] == "rules-skipped"]
    assert (note["severity"], note["line"], note["column"]) == ("info", 6, 13)
    assert all(f["rule"] == "schema-invalid" and f["severity"] == "error" for f in report["findings"] if f is not note)
    assert report["findings"][0]["object"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                               "namespace": "", "name": "web"}


def test_validation_follows_the_target_version(lint_json):
    slice_with_v134_field = """apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  perDeviceNodeSelection: true
"""
    assert "schema-invalid" in rules_of(lint_json(slice_with_v134_field, "--kube-version", "1.32"))
    assert "schema-invalid" not in rules_of(lint_json(slice_with_v134_field, "--kube-version", "1.34"))


def test_custom_resources_and_unserved_versions_are_not_schema_checked(lint_json):
    text = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec: {anything: goes}
---
apiVersion: apps.example.com/v1
kind: Deployment
metadata: {name: not-the-builtin}
spec: {}
"""
    assert rules_of(lint_json(text)) == []


def test_int_or_string_fields(lint_json):
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxSurge: [1], maxUnavailable: 25%}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""
    [finding] = lint_json(text)["findings"]
    assert finding["message"] == "spec.strategy.rollingUpdate.maxSurge: must be string or integer"
    assert (finding["line"], finding["column"]) == (6, 40)
