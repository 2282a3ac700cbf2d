"""The webhook's install (issue: admission): the Helm chart rendered by the real helm (built from
its Go module) is the same set of objects `draguard webhook manifests` prints, with the same
choices, and it lints clean with draguard itself. The real kube-apiserver takes them in one
pass: test_install_control_plane."""

from __future__ import annotations

import os
import subprocess

import yaml

from draguard.admission.install import manifests

from support.paths import ROOT

CHART = ROOT / "deploy" / "helm" / "draguard"


def _key(obj: dict) -> tuple:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _rendered(helm, *values: str) -> list[dict]:
    args = [a for value in values for a in ("--set", value)]
    rendered = subprocess.run([helm, "template", "draguard", str(CHART), "--namespace", "gpu-guard", *args],
                              capture_output=True, text=True, check=True).stdout
    return [o for o in yaml.safe_load_all(rendered) if o]


def _same(from_chart: list[dict], from_command: list[dict]) -> None:
    by_key = {_key(o): o for o in from_chart}
    assert by_key.keys() == {_key(o) for o in from_command}
    for obj in from_command:
        assert by_key[_key(obj)] == obj, _key(obj)


def test_the_chart_renders_what_webhook_manifests_prints(helm):
    """With createNamespace (for `helm template | kubectl apply`), the same objects; without it
    (`helm install --create-namespace` makes the namespace), the same but the Namespace."""
    _same(_rendered(helm, "createNamespace=true"), manifests("gpu-guard"))
    _same(_rendered(helm), manifests("gpu-guard")[1:])


def test_the_chart_and_webhook_manifests_take_the_same_choices(helm):
    users = ["system:serviceaccount:ray-system:kuberay-operator", "system:serviceaccount:lws-system:lws-controller"]
    from_chart = _rendered(helm, "createNamespace=true", f"controllerUsers={{{','.join(users)}}}",
                           "exemptNamespaces={gpu-operator}", "apiServerCIDRs={10.0.0.0/28,192.0.2.0/24}",
                           "failurePolicy=Fail")
    from_command = manifests("gpu-guard", controller_users=users, exempt=["gpu-operator"], failure_policy="Fail",
                             api_server_cidrs=["10.0.0.0/28", "192.0.2.0/24"])
    _same(from_chart, from_command)
    [deployment] = [o for o in from_command if o["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--controller-user=")] == [f"--controller-user={u}" for u in users]


def test_the_chart_without_cert_manager_takes_the_ca_of_the_secret_given(helm):
    [configuration] = [o for o in _rendered(helm, "tls.certManager=false", "tls.caBundle=Q0E=")
                       if o["kind"] == "ValidatingWebhookConfiguration"]
    assert configuration["webhooks"][0]["clientConfig"]["caBundle"] == "Q0E=" and "annotations" not in configuration["metadata"]
    refused = subprocess.run([helm, "template", "draguard", str(CHART), "--set", "tls.certManager=false"],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "tls.caBundle" in refused.stderr


def test_the_chart_lints_clean_with_draguard(cli, helm, monkeypatch):
    monkeypatch.setenv("PATH", f"{os.path.dirname(helm)}{os.pathsep}{os.environ['PATH']}")
    report = cli("lint", CHART, "--no-config", "-f", "json").json
    assert report["summary"]["objects"] == 10 and report["findings"] == []
