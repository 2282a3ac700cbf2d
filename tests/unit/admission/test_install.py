"""The webhook's install (issue #39): its routes are the judge's kinds and the policies match
within them; `webhook manifests` and `policy export` come in the order one `kubectl apply -f -`
needs on an empty cluster, the webhook failing open until `webhook enforce`; the pod passes Pod
Security "restricted" as the image runs it (the Dockerfile's user, entrypoint and tag held
here); and no namespace is exempt that an install does not make."""

from __future__ import annotations

import base64
import json
import re
import tomllib

import yaml
from cryptography import x509

from draguard.admission.install import IMAGE, PORT, UID, manifests, resource_name
from draguard.admission.kinds import JUDGED, WEBHOOK_SUBRESOURCES, WRITTEN_THROUGH
from draguard.admission.policies import PARAMS, export
from draguard.core.config import Config
from draguard.rules import REGISTRY

from support.paths import ROOT

CHART = ROOT / "deploy" / "helm" / "draguard"
ORDER = ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Issuer", "Certificate", "Deployment",
         "Service", "PodDisruptionBudget", "NetworkPolicy", "ValidatingWebhookConfiguration"]


def _by_kind(objects: list[dict]) -> dict:
    return {o["kind"]: o for o in objects}


def _routed(rules: list[dict]) -> set:
    return {(group, resource) for rule in rules for group in rule["apiGroups"] for resource in rule["resources"]}


def _resources(kinds, subresources=WRITTEN_THROUGH) -> set:
    """(group, resource) of `kinds`, with the subresources that write their content."""
    return {(group, f"{resource_name(kind)}{suffix}") for group, kind in kinds
            for suffix in ("", *(f"/{sub}" for sub in subresources.get((group, kind), ())))}


def test_the_webhook_routes_every_kind_the_judge_models_at_every_version():
    [webhook] = _by_kind(manifests())["ValidatingWebhookConfiguration"]["webhooks"]
    assert _routed(webhook["rules"]) == _resources(JUDGED, WEBHOOK_SUBRESOURCES)
    assert ("", "pods/ephemeralcontainers") in _routed(webhook["rules"])  # kubectl debug writes there
    assert ("apps", "deployments/scale") in _routed(webhook["rules"])  # kubectl scale, HPAs
    assert len({group for group, _ in JUDGED}) >= 16
    assert all(rule["apiVersions"] == ["*"] and rule["operations"] == ["CREATE", "UPDATE"] for rule in webhook["rules"])
    assert webhook["matchPolicy"] == "Equivalent"


def test_the_policies_match_what_their_rules_target_and_only_what_the_webhook_routes():
    result = export(REGISTRY, Config(kube_version="1.37"))
    policies = [o for o in result.objects if o["kind"] == "ValidatingAdmissionPolicy"]
    matched = set().union(*(_routed(p["spec"]["matchConstraints"]["resourceRules"]) for p in policies))
    rules = [REGISTRY.get(p["metadata"]["labels"]["draguard.io/rule"]) for p in policies]
    targeted = _resources({kind for rule in rules for kind in rule.admission.kinds(rule.targets)})
    assert matched == targeted
    [webhook] = _by_kind(manifests())["ValidatingWebhookConfiguration"]["webhooks"]
    routed = _routed(webhook["rules"])
    # the webhook routes every kind a policy matches, but for the ResourceSlices drivers write;
    # the policies cannot read the workload behind a Scale
    assert matched - routed == {("resource.k8s.io", "resourceslices")}
    assert not any(resource.endswith("/scale") for _, resource in matched)


def test_the_manifests_come_in_apply_order_in_their_namespace_failing_open():
    objects = manifests("gpu-guard")
    assert [o["kind"] for o in objects] == ORDER
    assert objects[0]["metadata"]["name"] == "gpu-guard"
    assert objects[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert {o["metadata"].get("namespace") for o in objects[1:]} == {"gpu-guard", None}
    [webhook] = objects[-1]["webhooks"]
    assert webhook["failurePolicy"] == "Ignore"
    assert webhook["clientConfig"]["service"] == {"name": "draguard", "namespace": "gpu-guard", "path": "/validate",
                                                  "port": 443}
    [enforced] = manifests("gpu-guard", failure_policy="Fail")[-1]["webhooks"]
    assert enforced["failurePolicy"] == "Fail"


def test_a_serving_pair_given_is_a_secret_and_the_ca_bundle_without_cert_manager(cli):
    text = cli("webhook", "manifests", "--self-signed", "--namespace", "gpu-guard").out
    objects = [o for o in yaml.safe_load_all(text) if o]
    assert [o["kind"] for o in objects] == [k if k != "Issuer" else "Secret" for k in ORDER if k != "Certificate"]
    secret, configuration = _by_kind(objects)["Secret"], objects[-1]
    assert secret["metadata"] == {"name": "draguard-tls", "namespace": "gpu-guard",
                                  "labels": objects[1]["metadata"]["labels"]}
    certificate = base64.b64decode(secret["data"]["tls.crt"])
    assert configuration["webhooks"][0]["clientConfig"]["caBundle"] == base64.b64encode(certificate).decode()
    names = x509.load_pem_x509_certificate(certificate).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert names == ["draguard.gpu-guard.svc", "draguard.gpu-guard.svc.cluster.local"]
    assert "annotations" not in configuration["metadata"]
    assert _by_kind(objects)["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE  # --image


def test_the_pod_passes_pod_security_restricted_as_the_image_runs_it():
    """kubernetes.io/docs/concepts/security/pod-security-standards, "restricted": non-root,
    seccomp RuntimeDefault (or Localhost), no privilege escalation, capabilities drop ALL."""
    pod = _by_kind(manifests())["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": UID, "runAsGroup": UID,
                                      "seccompProfile": {"type": "RuntimeDefault"}}
    [container] = pod["containers"]
    assert container["securityContext"] == {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                                             "capabilities": {"drop": ["ALL"]}}
    assert container["image"] == IMAGE and container["ports"] == [{"name": "https", "containerPort": PORT}]


def test_the_network_policy_admits_only_the_webhook_port_from_the_sources_named():
    policy = _by_kind(manifests())["NetworkPolicy"]["spec"]
    assert policy["policyTypes"] == ["Ingress"] and policy["podSelector"]["matchLabels"]["app.kubernetes.io/name"]
    assert policy["ingress"] == [{"ports": [{"protocol": "TCP", "port": PORT}]}]
    narrowed = _by_kind(manifests(api_server_cidrs=["10.0.0.0/28"]))["NetworkPolicy"]["spec"]["ingress"]
    assert narrowed == [{"ports": [{"protocol": "TCP", "port": PORT}], "from": [{"ipBlock": {"cidr": "10.0.0.0/28"}}]}]


def test_the_dockerfile_builds_the_image_the_chart_names_running_as_its_user():
    text = (ROOT / "Dockerfile").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    stages = [line for line in lines if line.startswith("FROM ")]
    assert len(stages) == 2 and stages[0].endswith(" AS build")
    final = lines[lines.index(stages[-1]):]
    assert "USER 65532:65532" in final and UID == 65532
    assert f"EXPOSE {PORT}" in final
    [entrypoint] = [line for line in final if line.startswith("ENTRYPOINT ")]
    assert json.loads(entrypoint.removeprefix("ENTRYPOINT ")) == ["draguard"]  # exec form: no shell
    for line in lines:
        if line.startswith("COPY ") and "--from" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert values["image"] == IMAGE == f"ghcr.io/draguard/draguard:{chart['appVersion']}" and chart["appVersion"] == version
    template = (CHART / "templates" / "deployment.yaml").read_text()
    assert re.findall(r"runAs(?:User|Group): (\d+)", template) == [str(UID), str(UID)]


def test_no_namespace_is_exempt_that_the_install_does_not_make():
    [webhook] = manifests("gpu-guard")[-1]["webhooks"]
    assert webhook["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "gpu-guard"]
    args = _by_kind(manifests("gpu-guard"))["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.startswith("--exempt")] == ["--exempt-namespace=kube-system",
                                                             "--exempt-namespace=gpu-guard"]
    chosen = manifests("gpu-guard", exempt=["gpu-operator"])[-1]["webhooks"][0]["namespaceSelector"]
    assert chosen["matchExpressions"][0]["values"] == ["kube-system", "gpu-guard", "gpu-operator"]
    bindings = [o for o in export(REGISTRY, Config(kube_version="1.37")).objects
                if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert {tuple(b["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"])
            for b in bindings} == {("draguard", "kube-system")}


def test_the_policy_export_makes_its_parameters_first_and_its_bindings_never_exempt_them_away():
    objects = export(REGISTRY, Config(kube_version="1.37"), "guard-params", exempt=["ops"]).objects
    assert [o["kind"] for o in objects[:2]] == ["Namespace", "ConfigMap"]
    assert objects[0]["metadata"]["name"] == "guard-params" == objects[1]["metadata"]["namespace"]
    assert objects[1]["metadata"]["name"] == PARAMS
    assert objects[0] == manifests("guard-params")[0]  # applied after the webhook's, the same object
    bindings = [o for o in objects if o["kind"].endswith("PolicyBinding")]
    assert {b["spec"]["paramRef"]["namespace"] for b in bindings if "paramRef" in b["spec"]} == {"guard-params"}
    assert {tuple(b["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"])
            for b in bindings} == {("guard-params", "ops")}


def test_missing_parameters_refuse_only_what_the_rule_concerns():
    """k8s.io/apiserver CollectParams: `Deny` refuses whatever the binding matches while its
    parameters are missing, before any condition; only a binding narrowed to what its rule
    concerns may deny then."""
    objects = export(REGISTRY, Config(kube_version="1.37"), unsafe_fixes=True).objects
    reading = [o for o in objects if o["kind"].endswith("PolicyBinding") and "paramRef" in o["spec"]]
    denying = {o["spec"]["policyName"]: o["spec"]["matchResources"].get("objectSelector") for o in reading
               if o["spec"]["paramRef"]["parameterNotFoundAction"] == "Deny"}
    assert denying == {"draguard-admin-access-label": {"matchExpressions": [
        {"key": "resource.kubernetes.io/admin-access", "operator": "Exists"}]}}
    assert {o["spec"]["policyName"] for o in reading} >= {"draguard-request-all-devices", "draguard-admin-access-label"}
