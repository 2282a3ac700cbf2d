"""The exporter's install (issue #45): the Helm chart rendered by the real helm (built from its
Go module) holds no exporter object unless `exporter.enabled`; enabled, one read-only,
non-root replica of the chart's image that may read just what it watches (a part of what
deploy/audit/clusterrole.yaml grants), its Service, and a ServiceMonitor only when asked;
they lint clean with draguard and the real kube-apiserver accepts them (dry run)."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from draguard.cluster.exporter import WATCHED

from support.paths import ROOT

CHART = ROOT / "deploy" / "helm" / "draguard"


def rendered(helm, *sets: str) -> dict:
    args = [a for s in sets for a in ("--set", s)]
    done = subprocess.run([helm, "template", "draguard", str(CHART), "--namespace", "gpu-guard", *args],
                          capture_output=True, text=True, check=True)
    return {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(done.stdout) if o}


def _grants(rules: list[dict]) -> set:
    return {(group, resource, verb) for r in rules for group in r.get("apiGroups", [])
            for resource in r.get("resources", []) for verb in r["verbs"]} | \
        {("url", url, verb) for r in rules for url in r.get("nonResourceURLs", []) for verb in r["verbs"]}


def test_the_exporter_is_off_by_default(helm):
    objects = rendered(helm)
    assert not [key for key in objects if "exporter" in key[1]]
    assert not [key for key in rendered(helm, "exporter.serviceMonitor.enabled=true") if "exporter" in key[1]]


def test_enabled_the_exporter_is_one_read_only_non_root_replica(helm):
    objects = rendered(helm, "exporter.enabled=true")
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    deployment = objects[("Deployment", "draguard-exporter")]
    assert deployment["spec"]["replicas"] == 1
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == values["image"]
    assert container["args"][:2] == ["exporter", "--listen=0.0.0.0:9464"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert {p["path"] for p in (container["readinessProbe"]["httpGet"], container["livenessProbe"]["httpGet"])} == {
        "/readyz", "/healthz"}
    assert pod["serviceAccountName"] == "draguard-exporter"
    binding = objects[("ClusterRoleBinding", "draguard-exporter")]
    assert binding["roleRef"]["name"] == "draguard-exporter"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "draguard-exporter", "namespace": "gpu-guard"}]

    granted = _grants(objects[("ClusterRole", "draguard-exporter")]["rules"])
    audit_role = yaml.safe_load((ROOT / "deploy" / "audit" / "clusterrole.yaml").read_text())
    assert granted <= _grants(audit_role["rules"])
    assert {verb for _, _, verb in granted} == {"get", "list", "watch"}
    watched = {(name.partition(".")[2], name.partition(".")[0]) for name in WATCHED}
    assert {(g, r) for g, r, _ in granted if g != "url"} == watched
    service = objects[("Service", "draguard-exporter")]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert ("ServiceMonitor", "draguard-exporter") not in objects


def test_the_service_monitor_is_rendered_when_asked(helm):
    objects = rendered(helm, "exporter.enabled=true", "exporter.serviceMonitor.enabled=true",
                       "exporter.serviceMonitor.labels.release=prometheus")
    monitor = objects[("ServiceMonitor", "draguard-exporter")]
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s"}]
    assert monitor["spec"]["selector"]["matchLabels"] == objects[("Service", "draguard-exporter")]["metadata"]["labels"]


def test_the_rendered_exporter_lints_clean_with_draguard(cli, helm, tmp_path):
    done = subprocess.run([helm, "template", "draguard", str(CHART), "--namespace", "gpu-guard", "--set",
                           "exporter.enabled=true", "--show-only", "templates/exporter.yaml"],
                          capture_output=True, text=True, check=True)
    (tmp_path / "exporter.yaml").write_text(done.stdout)
    report = cli("lint", tmp_path / "exporter.yaml", "--no-config", "-f", "json").json
    assert report["summary"]["objects"] == 5 and report["findings"] == []


@pytest.mark.cluster
def test_the_apiserver_accepts_the_exporter(helm, bare_plane):
    """Server-side dry run of every exporter object (the ServiceMonitor needs the Prometheus
    Operator's CRD and is left out)."""
    from kubernetes import client, dynamic

    core = client.CoreV1Api(bare_plane.api())
    core.create_namespace({"metadata": {"name": "gpu-guard"}})
    try:
        dyn = dynamic.DynamicClient(bare_plane.api())
        objects = rendered(helm, "exporter.enabled=true")
        for (kind, name), obj in objects.items():
            if "exporter" in name:
                resource = dyn.resources.get(api_version=obj["apiVersion"], kind=kind)
                resource.create(body=obj, namespace=obj["metadata"].get("namespace"), dry_run="All")
    finally:
        core.delete_namespace("gpu-guard")
