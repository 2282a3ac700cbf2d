"""What installs the webhook: the objects `draguard webhook manifests` prints, and that the Helm
chart `deploy/helm/draguard` renders with its default values (a test holds them equal).

Two replicas spread over nodes with a PodDisruptionBudget (the API server cannot admit
anything while no replica answers: `failurePolicy: Fail`), a Service, RBAC for the cache's
watches, the serving certificate from cert-manager (its CA injected into the webhook
configuration) and one webhook entry for every kind judged, with a short timeout and
`matchConditions` that keep what cannot concern GPUs or DRA away from it.

Break-glass: `kubectl delete validatingwebhookconfiguration draguard` lets every request
through at once; re-apply the manifests to enforce again."""

from __future__ import annotations

from . import INFRA_NAMESPACES
from .cache import WATCHED
from .exemptions import BEING_DELETED, GENERATED_CLAIM

NAME = "draguard"
LABELS = {"app.kubernetes.io/name": "draguard", "app.kubernetes.io/component": "webhook"}
#: Judged kinds, as the webhook rules name their resources (group -> resources).
RESOURCES = {"": ["pods", "namespaces"], "apps": ["deployments", "statefulsets", "daemonsets", "replicasets"],
             "batch": ["jobs", "cronjobs"], "policy": ["poddisruptionbudgets"],
             "resource.k8s.io": ["resourceclaims", "resourceclaimtemplates", "deviceclasses"]}
#: CEL on the request (admissionregistration matchConditions): what the webhook would not
#: judge anyway (admission.exemptions) never reaches it
MATCH_CONDITIONS = [BEING_DELETED.match_condition(), GENERATED_CLAIM.match_condition()]


def manifests(namespace: str = NAME, image: str = "ghcr.io/draguard/draguard:0.1.0", replicas: int = 2,
              timeout: int = 5, controller_users=()) -> list[dict]:
    meta = {"name": NAME, "namespace": namespace, "labels": dict(LABELS)}
    service = f"{NAME}.{namespace}.svc"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": NAME, "labels": dict(LABELS)}, "rules": _rules()},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": NAME, "labels": dict(LABELS)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
         "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]},
        {"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": dict(meta), "spec": {"selfSigned": {}}},
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": dict(meta),
         "spec": {"secretName": f"{NAME}-tls", "dnsNames": [service, f"{NAME}.{namespace}.svc.cluster.local"],
                  "issuerRef": {"name": NAME, "kind": "Issuer"}}},
        _deployment(meta, image, replicas, controller_users),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": dict(meta),
         "spec": {"minAvailable": 1, "selector": {"matchLabels": dict(LABELS)}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": dict(meta),
         "spec": {"selector": dict(LABELS), "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}},
        _configuration(namespace, timeout),
    ]


def _rules() -> list[dict]:
    """get/list/watch on what the cache watches, and get on /metrics (the feature gates the
    cluster runs, cluster.release); nothing else."""
    by_group: dict[str, list[str]] = {}
    for name in WATCHED:
        plural, _, group = name.partition(".")
        by_group.setdefault(group, []).append(plural)
    return [{"apiGroups": [group], "resources": sorted(plurals), "verbs": ["get", "list", "watch"]}
            for group, plurals in sorted(by_group.items())] + [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def _deployment(meta: dict, image: str, replicas: int, controller_users=()) -> dict:
    probe = {"httpGet": {"path": "/readyz", "port": 8443, "scheme": "HTTPS"}, "periodSeconds": 5}
    container = {
        "name": "webhook", "image": image,
        "args": ["webhook", "--tls-cert=/tls/tls.crt", "--tls-key=/tls/tls.key", "--port=8443",
                 *(f"--exempt-namespace={name}" for name in INFRA_NAMESPACES),
                 *(f"--controller-user={user}" for user in controller_users)],
        "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "ports": [{"name": "https", "containerPort": 8443}],
        "readinessProbe": probe,
        "livenessProbe": dict(probe, httpGet=dict(probe["httpGet"], path="/healthz"), periodSeconds=10),
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "tls", "mountPath": "/tls", "readOnly": True}],
    }
    affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                           "labelSelector": {"matchLabels": dict(LABELS)}}}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": dict(meta),
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)},
                     "template": {"metadata": {"labels": dict(LABELS)},
                                  "spec": {"serviceAccountName": NAME, "affinity": affinity,
                                           "terminationGracePeriodSeconds": 30, "containers": [container],
                                           "volumes": [{"name": "tls", "secret": {"secretName": f"{NAME}-tls"}}]}}}}


def _configuration(namespace: str, timeout: int) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": NAME, "labels": dict(LABELS),
                     "annotations": {"cert-manager.io/inject-ca-from": f"{namespace}/{NAME}"}},
        "webhooks": [{
            "name": "validate.draguard.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "failurePolicy": "Fail", "timeoutSeconds": timeout, "matchPolicy": "Equivalent",
            "clientConfig": {"service": {"name": NAME, "namespace": namespace, "path": "/validate", "port": 443}},
            "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                        "values": ["kube-system", namespace, *INFRA_NAMESPACES]}]},
            "rules": [{"apiGroups": [group], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                       "resources": resources} for group, resources in RESOURCES.items()],
            "matchConditions": MATCH_CONDITIONS,
        }],
    }
