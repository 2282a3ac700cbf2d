"""The webhook's install (issue: admission): the Helm chart rendered by the real helm (built from
its Go module) is the same set of objects `draguard webhook manifests` prints, it lints clean
with draguard itself, and the real kube-apiserver accepts its objects (server-side dry run;
cert-manager's Issuer and Certificate need its CRDs and are left out there)."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from kubernetes import client, dynamic

from draguard.admission.install import manifests

from support.paths import ROOT
from support.renderers import renderers_dir

CHART = ROOT / "deploy" / "helm" / "draguard"


@pytest.fixture(scope="module")
def helm():
    folder = renderers_dir()
    if folder is None:
        pytest.skip("Go is not installed: helm cannot be built")
    return os.path.join(folder, "helm")


def _key(obj: dict) -> tuple:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def test_the_chart_renders_what_webhook_manifests_prints(helm):
    rendered = subprocess.run([helm, "template", "draguard", str(CHART), "--namespace", "gpu-guard"],
                              capture_output=True, text=True, check=True).stdout
    from_chart = {_key(o): o for o in yaml.safe_load_all(rendered) if o}
    from_command = {_key(o): o for o in manifests("gpu-guard")}
    assert from_chart.keys() == from_command.keys()
    for key, obj in from_command.items():
        assert from_chart[key] == obj, key


def test_the_chart_and_webhook_manifests_pass_the_operators_named(helm):
    users = ["system:serviceaccount:ray-system:kuberay-operator", "system:serviceaccount:lws-system:lws-controller"]
    rendered = subprocess.run([helm, "template", "draguard", str(CHART), "--namespace", "gpu-guard",
                               "--set", f"controllerUsers={{{','.join(users)}}}"],
                              capture_output=True, text=True, check=True).stdout
    [from_chart] = [o for o in yaml.safe_load_all(rendered) if o and o["kind"] == "Deployment"]
    [from_command] = [o for o in manifests("gpu-guard", controller_users=users) if o["kind"] == "Deployment"]
    assert from_chart == from_command
    args = from_command["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--controller-user=")] == [f"--controller-user={u}" for u in users]


def test_the_chart_lints_clean_with_draguard(cli, helm, monkeypatch):
    monkeypatch.setenv("PATH", f"{os.path.dirname(helm)}{os.pathsep}{os.environ['PATH']}")
    report = cli("lint", CHART, "--no-config", "-f", "json").json
    assert report["summary"]["objects"] == 9 and report["findings"] == []


@pytest.mark.cluster
def test_the_apiserver_accepts_the_manifests(bare_plane):
    core = client.CoreV1Api(bare_plane.api())
    core.create_namespace({"metadata": {"name": "draguard-install"}})
    try:
        dyn = dynamic.DynamicClient(bare_plane.api())
        for obj in manifests("draguard-install"):
            if obj["apiVersion"].startswith("cert-manager.io/"):
                continue
            resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            resource.create(body=obj, namespace=obj["metadata"].get("namespace"), dry_run="All")
    finally:
        core.delete_namespace("draguard-install")
