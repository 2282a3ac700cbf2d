"""What installs the webhook: the objects `draguard webhook manifests` prints, and that the Helm
chart `deploy/helm/draguard` renders with its default values (a test holds them equal).

In the order `kubectl apply -f -` must create them on an empty cluster: the Namespace (Pod
Security `restricted` enforced), RBAC for the cache's watches, the serving certificate (a
Secret made here, or cert-manager's Issuer and Certificate with the CA injected into the
webhook configuration), two replicas spread over nodes, their Service, a PodDisruptionBudget,
a NetworkPolicy that admits only the webhook's port, and last the webhook configuration:
one entry routed to every kind the judge models (`routes`), a short timeout, and
`matchConditions` that keep what cannot concern GPUs or DRA away from it.

The configuration is written with `failurePolicy: Ignore`: the API server calls the webhook
before its Service has a ready endpoint, and failing closed then refuses every Pod, workload
and Namespace in the cluster (`service "draguard" not found`). `draguard webhook enforce`
(`enforce`) turns on `Fail` once the Service answers `/readyz` through the API server.

Break-glass: `kubectl delete validatingwebhookconfiguration draguard` (or patching its
failurePolicy back to Ignore) lets every request through at once."""

from __future__ import annotations

import base64
import json

from ..cluster.live import ClusterError
from .cache import WATCHED
from .exemptions import BEING_DELETED, GENERATED_CLAIM
from .kinds import JUDGED, WEBHOOK_SUBRESOURCES

NAME = "draguard"
LABELS = {"app.kubernetes.io/name": "draguard", "app.kubernetes.io/component": "webhook"}
#: the image the Dockerfile at the repository's root builds, tagged with the chart's appVersion
IMAGE = "ghcr.io/draguard/draguard:0.1.0"
#: the user and group the image runs as (the Dockerfile's USER; distroless's `nonroot`)
UID = 65532
PORT = 8443
#: CEL on the request (admissionregistration matchConditions): what the webhook would not
#: judge anyway (admission.exemptions) never reaches it
MATCH_CONDITIONS = [BEING_DELETED.match_condition(), GENERATED_CLAIM.match_condition()]
_OPERATIONS = ["CREATE", "UPDATE"]


def resource_name(kind: str) -> str:
    """The resource (plural) of a kind, as the API server routes it: the built-in kinds and
    every CRD in model.workloads name theirs as k8s.io/apimachinery's meta.UnsafeGuessKindToResource
    guesses: the kind in lower case plus `s`, `es` after an `s` (deviceclasses), `ies` for a
    final `y` (networkpolicies: a kind a user's own check may name)."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    return lower[:-1] + "ies" if lower.endswith("y") else lower + "s"


def routes(kinds=JUDGED, subresources=WEBHOOK_SUBRESOURCES) -> list[dict]:
    """Admission rules matching CREATE and UPDATE of `kinds` ((group, kind)) at every version
    (`apiVersions: ['*']`), and the `subresources` of each that write what the judge reads
    (the webhook's: kinds.WEBHOOK_SUBRESOURCES): one rule per group, groups and resources sorted."""
    by_group: dict[str, set] = {}
    for group, kind in kinds:
        plural = resource_name(kind)
        by_group.setdefault(group, set()).update([plural, *(f"{plural}/{sub}" for sub in subresources.get(
            (group, kind), ()))])
    return [{"apiGroups": [group], "apiVersions": ["*"], "operations": list(_OPERATIONS),
             "resources": sorted(resources)} for group, resources in sorted(by_group.items())]


def manifests(namespace: str = NAME, image: str = IMAGE, replicas: int = 2, timeout: int = 5, controller_users=(),
              exempt=(), tls: tuple[bytes, bytes] | None = None, failure_policy: str = "Ignore",
              api_server_cidrs=()) -> list[dict]:
    """The install, in apply order. `exempt`: namespaces never judged besides kube-system and
    `namespace`; `tls`: (certificate PEM, key PEM) to serve with (its certificate is the
    caBundle), None for cert-manager's; `api_server_cidrs`: the only sources the
    NetworkPolicy admits (none: any source, on the webhook's port only)."""
    meta = {"name": NAME, "namespace": namespace, "labels": dict(LABELS)}
    exempt = ["kube-system", namespace, *(name for name in exempt if name not in ("kube-system", namespace))]
    service = f"{NAME}.{namespace}.svc"
    if tls is None:
        serving = [{"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": dict(meta),
                    "spec": {"selfSigned": {}}},
                   {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": dict(meta),
                    "spec": {"secretName": f"{NAME}-tls", "dnsNames": [service, f"{service}.cluster.local"],
                             "issuerRef": {"name": NAME, "kind": "Issuer"}}}]
    else:
        serving = [{"apiVersion": "v1", "kind": "Secret", "metadata": dict(meta, name=f"{NAME}-tls"),
                    "type": "kubernetes.io/tls",
                    "data": {"tls.crt": base64.b64encode(tls[0]).decode(), "tls.key": base64.b64encode(tls[1]).decode()}}]
    return [
        namespace_object(namespace),
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": NAME, "labels": dict(LABELS)}, "rules": _rules()},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": NAME, "labels": dict(LABELS)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
         "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]},
        *serving,
        _deployment(meta, image, replicas, exempt, controller_users),
        {"apiVersion": "v1", "kind": "Service", "metadata": dict(meta),
         "spec": {"selector": dict(LABELS), "ports": [{"name": "https", "port": 443, "targetPort": PORT}]}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": dict(meta),
         "spec": {"minAvailable": 1, "selector": {"matchLabels": dict(LABELS)}}},
        _network_policy(meta, api_server_cidrs),
        _configuration(namespace, timeout, exempt, failure_policy, None if tls is None else tls[0]),
    ]


def namespace_object(namespace: str) -> dict:
    """The install's Namespace, Pod Security `restricted` enforced; `policy export` writes the
    same one (applied after the other, it keeps the first one's labels)."""
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {**LABELS, "pod-security.kubernetes.io/enforce": "restricted"}}}


def _rules() -> list[dict]:
    """get/list/watch on what the cache watches, and get on /metrics (the feature gates the
    cluster runs, cluster.release); nothing else."""
    by_group: dict[str, list[str]] = {}
    for name in WATCHED:
        plural, _, group = name.partition(".")
        by_group.setdefault(group, []).append(plural)
    return [{"apiGroups": [group], "resources": sorted(plurals), "verbs": ["get", "list", "watch"]}
            for group, plurals in sorted(by_group.items())] + [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def _deployment(meta: dict, image: str, replicas: int, exempt: list[str], controller_users=()) -> dict:
    """Pod Security `restricted` (kubernetes.io/docs/concepts/security/pod-security-standards):
    non-root as UID, RuntimeDefault seccomp, no privilege escalation, every capability dropped;
    and a read-only root filesystem."""
    get = {"path": "/readyz", "port": PORT, "scheme": "HTTPS"}
    probe = {"httpGet": get, "periodSeconds": 5}
    container = {
        "name": "webhook", "image": image,
        "args": ["webhook", "--tls-cert=/tls/tls.crt", "--tls-key=/tls/tls.key", f"--port={PORT}",
                 *(f"--exempt-namespace={name}" for name in exempt),
                 *(f"--controller-user={user}" for user in controller_users)],
        "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "ports": [{"name": "https", "containerPort": PORT}],
        "readinessProbe": probe,
        "livenessProbe": dict(probe, httpGet=dict(get, path="/healthz"), periodSeconds=10),
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "tls", "mountPath": "/tls", "readOnly": True}],
    }
    affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                           "labelSelector": {"matchLabels": dict(LABELS)}}}]}}
    security = {"runAsNonRoot": True, "runAsUser": UID, "runAsGroup": UID, "seccompProfile": {"type": "RuntimeDefault"}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": dict(meta),
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)},
                     "template": {"metadata": {"labels": dict(LABELS)},
                                  "spec": {"serviceAccountName": NAME, "securityContext": security,
                                           "affinity": affinity, "terminationGracePeriodSeconds": 30,
                                           "containers": [container],
                                           "volumes": [{"name": "tls", "secret": {"secretName": f"{NAME}-tls"}}]}}}}


def _network_policy(meta: dict, api_server_cidrs) -> dict:
    """Ingress to the pods on the webhook's port only. The API server's source addresses are
    not knowable in general (a managed control plane, a konnectivity proxy, a node's address):
    any source unless `api_server_cidrs` name them. Egress is left open (the API server's watches)."""
    ingress = {"ports": [{"protocol": "TCP", "port": PORT}]}
    if api_server_cidrs:
        ingress["from"] = [{"ipBlock": {"cidr": cidr}} for cidr in api_server_cidrs]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": dict(meta),
            "spec": {"podSelector": {"matchLabels": dict(LABELS)}, "policyTypes": ["Ingress"], "ingress": [ingress]}}


def _configuration(namespace: str, timeout: int, exempt: list[str], failure_policy: str, ca: bytes | None) -> dict:
    client: dict[str, object] = {"service": {"name": NAME, "namespace": namespace, "path": "/validate", "port": 443}}
    metadata = {"name": NAME, "labels": dict(LABELS)}
    if ca is None:
        metadata["annotations"] = {"cert-manager.io/inject-ca-from": f"{namespace}/{NAME}"}
    else:
        client["caBundle"] = base64.b64encode(ca).decode()
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": metadata,
        "webhooks": [{
            "name": "validate.draguard.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "failurePolicy": failure_policy, "timeoutSeconds": timeout, "matchPolicy": "Equivalent",
            "clientConfig": client,
            "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                        "values": exempt}]},
            "rules": routes(),
            "matchConditions": MATCH_CONDITIONS,
        }],
    }


def enforce(connection, name: str = NAME) -> str:
    """Turn `failurePolicy: Fail` on in the webhook configuration `name` (a cluster.live
    Connection), once the Service each entry calls has a ready endpoint (its EndpointSlices,
    discovery.k8s.io/v1, `conditions.ready`) and answers `/readyz` through the API server's
    service proxy: before that, failing closed refuses everything it routes. Raises
    ClusterError saying what is not ready and changes nothing; returns what it did."""
    from kubernetes import client

    status, body = connection.get(f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}")
    if status != 200:
        raise ClusterError(f"validatingwebhookconfiguration {name}: {status} reading it (apply the manifests first)")
    webhooks = json.loads(body)["webhooks"]
    for webhook in webhooks:
        service = webhook["clientConfig"].get("service")
        if service is None:
            raise ClusterError(f"webhook {webhook['name']} calls a URL, not a Service: enforce checks Services only")
        _check_answers(connection, service)
    patch = [{"op": "replace", "path": f"/webhooks/{i}/failurePolicy", "value": "Fail"} for i in range(len(webhooks))]
    try:
        client.AdmissionregistrationV1Api(connection.api).patch_validating_webhook_configuration(name, patch)
    except client.exceptions.ApiException as exc:
        raise ClusterError(f"validatingwebhookconfiguration {name}: {exc.status} {exc.reason} patching it") from None
    return f"validatingwebhookconfiguration {name}: failurePolicy Fail ({len(webhooks)} webhooks)"


def _check_answers(connection, service: dict) -> None:
    namespace, name, port = service["namespace"], service["name"], service.get("port", 443)
    where = f"service {namespace}/{name}"
    status, body = connection.get(f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
                                  {"labelSelector": f"kubernetes.io/service-name={name}"})
    slices = json.loads(body).get("items", []) if status == 200 else []
    if not any(e.get("conditions", {}).get("ready") is not False for s in slices for e in s.get("endpoints") or []):
        raise ClusterError(f"{where} has no ready endpoint: the webhook's pods are not Ready "
                           f"(kubectl -n {namespace} get pods); failurePolicy left as it is")
    status, body = connection.get(f"/api/v1/namespaces/{namespace}/services/https:{name}:{port}/proxy/readyz")
    if status != 200:
        raise ClusterError(f"{where} answers /readyz with {status} through the API server "
                           f"({body[:200].decode(errors='replace').strip()}); failurePolicy left as it is")
