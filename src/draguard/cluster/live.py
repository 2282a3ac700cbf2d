"""Reading a live cluster, read-only: the official client's configuration (kubeconfig, context,
in-cluster service account) and its transport, with raw JSON pages so that 40,000 pods are
not turned into model objects first.

Requests made for a snapshot, whatever the cluster's size: GET /version, GET /metrics (the
API server's feature gates, cluster.release), one discovery GET of resource.k8s.io, and one
paginated LIST per resource of `snapshot.RESOURCES` (pages of `PAGE` objects, following
`continue`). Nothing is ever written: the ClusterRole this needs is
`deploy/audit/clusterrole.yaml` (get, list, watch; get on /metrics)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from ..core.errors import UsageError
from .snapshot import REQUIRED, RESOURCES, Resource, Snapshot, utc_now

PAGE = 500
TIMEOUT = 30  # seconds per request
_IN_CLUSTER = "/var/run/secrets/kubernetes.io/serviceaccount/token"


class ClusterError(UsageError):
    """The cluster cannot be read at all (exit status 2, one line that says what to do)."""


@dataclass
class Connection:
    api: Any  # kubernetes.client.ApiClient (the kubernetes package has no type information)
    source: str  # the context's name, or 'in-cluster'
    requests: int = 0
    served: dict = field(default_factory=dict)  # group -> served versions (discovery)
    listed: dict = field(default_factory=dict)  # resource name -> (version, resourceVersion) of its last LIST

    def get(self, path: str, query: dict | None = None) -> tuple[int, bytes]:
        url_path = path + (f"?{urlencode(query)}" if query else "")
        method, url, headers, body, post = self.api.param_serialize(
            "GET", url_path, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
        self.requests += 1
        try:
            response = self.api.call_api(method, url, headers, body, post, _request_timeout=TIMEOUT)
            response.read()
        except Exception as exc:  # noqa: BLE001 - urllib3 and ssl raise many kinds; each means "unreachable"
            host = self.api.configuration.host
            raise ClusterError(f"cannot reach the cluster at {host} ({type(exc).__name__}: {_first_line(exc)}); "
                               "check the context (--context, --kubeconfig) and the network") from None
        return response.status, response.data or b""


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]


def connect(kubeconfig: str | None = None, context: str | None = None, instead: str | None = None) -> Connection:
    """The client for `context` of `kubeconfig` (default: $KUBECONFIG or ~/.kube/config, its
    current context), or the pod's service account when no kubeconfig exists in a cluster.
    `instead` is the command's way to work without a cluster, which the errors offer (audit:
    a dump with --from; webhook: --offline)."""
    alternative = f", or {instead}" if instead else ""
    try:
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException
    except ImportError:
        raise ClusterError("reading a live cluster needs the Kubernetes client: pip install "
                           f"'draguard[cluster]'{alternative}") from None

    default = os.path.expanduser(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0])
    if kubeconfig is None and context is None and not os.path.exists(default) and os.path.exists(_IN_CLUSTER):
        configuration = client.Configuration()
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise ClusterError(f"in-cluster configuration: {exc}") from None
        return Connection(client.ApiClient(configuration), "in-cluster")
    path = kubeconfig or default
    if not os.path.exists(path):
        raise ClusterError(f"no kubeconfig at {path}: pass --kubeconfig or set KUBECONFIG{alternative}")
    try:
        api = config.new_client_from_config(config_file=path, context=context)
        contexts, active = config.list_kube_config_contexts(config_file=path)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise ClusterError(f"{path}: cannot use the kubeconfig ({_first_line(exc)}); "
                           "check --context and the file") from None
    return Connection(api, context or active.get("name", ""))


def _check_auth(status: int, what: str) -> None:
    if status == 401:
        raise ClusterError(f"the cluster rejected the credentials reading {what} (401: expired or invalid); log in "
                           "again (e.g. refresh the token of the kubeconfig's user) and retry")


def read_snapshot(connection: Connection, resources=RESOURCES, transform=None) -> tuple[Snapshot, dict[str, list[dict]]]:
    """One snapshot of every resource the audit reads (or of `resources`), and the raw objects
    (for --save-dump). A resource that is forbidden or not served is listed as unreadable; a
    snapshot without pods, claims or slices is refused (nothing could be judged).
    `transform(resource name, object)`, when given, is what is kept of each object, applied
    page by page (as an informer's transform: the exporter's compact)."""
    version = read_version(connection)
    captured = utc_now()
    unreadable: dict[str, str] = {}
    gates = read_gates(connection, unreadable)
    raw: dict[str, list[dict]] = {}
    for resource in resources:
        version_ = served_version(connection, resource)
        if version_ is None:
            unreadable[resource.name] = (f"not served (the server serves {resource.group} "
                                         f"{', '.join(connection.served.get(resource.group, [])) or 'no version'})")
            continue
        items, why = list_resource(connection, resource, version_, transform)
        if why:
            unreadable[resource.name] = why
        else:
            raw[resource.name] = items
    missing = [name for name in REQUIRED if name in unreadable]
    if missing:
        raise ClusterError(f"cannot read {', '.join(missing)} ({unreadable[missing[0]]}): the audit needs them; grant "
                           "the ClusterRole in deploy/audit/clusterrole.yaml to this user")

    return snapshot_of(raw, captured, version, connection.source, unreadable, gates), raw


def read_version(connection: Connection) -> str:
    """The server's gitVersion ('' when /version does not answer 200); ClusterError for
    credentials it rejects."""
    status, body = connection.get("/version")
    _check_auth(status, "/version")
    return json.loads(body).get("gitVersion", "") if status == 200 else ""


def read_gates(connection: Connection, unreadable: dict) -> dict[str, bool]:
    """The feature gates draguard knows, as the API server's /metrics reports them; {} (and
    a line in `unreadable`) when it cannot be read."""
    from .release import METRICS_PATH, gates_from_metrics

    status, body = connection.get(METRICS_PATH)
    if status != 200:
        unreadable["feature gates"] = (f"GET {METRICS_PATH}: {status}: judged with the release's defaults (pass "
                                       "--feature-gates, or grant get on /metrics)")
        return {}
    return gates_from_metrics(body.decode("utf-8", "replace"))


def snapshot_of(raw: dict[str, list[dict]], captured, version: str, source: str, unreadable: dict,
                gates: dict | None = None) -> Snapshot:
    """A snapshot of the objects read (`raw`: resource name -> objects), kept as plain data."""
    from ..model.manifest import Manifest

    manifests = [Manifest.from_data(item, display=f"{source}:{name}", document=i, positions=False)
                 for name, items in raw.items() for i, item in enumerate(items)]
    return Snapshot(manifests, captured, version, source, unreadable, feature_gates=dict(gates or {}))


def served_version(connection: Connection, resource: Resource) -> str | None:
    """The first of the resource's versions the server serves. Only resource.k8s.io varies
    between releases (one discovery request); the others have one version, and a LIST of it
    that answers 404 says it is not served."""
    if resource.group != "resource.k8s.io":
        return resource.versions[0]
    if resource.group not in connection.served:
        status, body = connection.get(f"/apis/{resource.group}")
        _check_auth(status, f"/apis/{resource.group}")
        served = [v.get("version") for v in json.loads(body).get("versions", [])] if status == 200 else []
        connection.served[resource.group] = served
    return next((v for v in resource.versions if v in connection.served[resource.group]), None)


def list_resource(connection: Connection, resource: Resource, version: str,
                  transform=None) -> tuple[list[dict], str]:
    """Every object of `resource` (kind and apiVersion set on each item, as `kubectl get -o
    yaml` prints them; `transform(resource name, item)` of it when given), or ([], why) when
    it cannot be read."""
    base = f"/api/{version}" if not resource.group else f"/apis/{resource.group}/{version}"
    path, token, restarted = f"{base}/{resource.plural}", "", False
    items: list[dict] = []
    while True:
        status, body = connection.get(path, {"limit": PAGE, **({"continue": token} if token else {})})
        _check_auth(status, resource.name)
        if status == 403:
            return [], "forbidden (RBAC): grant list on it, see deploy/audit/clusterrole.yaml"
        if status == 404:
            return [], f"not served at {base}"
        if status == 410 and not restarted:  # the continue token expired mid-list: start over once
            items, token, restarted = [], "", True
            continue
        if status != 200:
            return [], f"the server answered {status}"
        page = json.loads(body)
        connection.listed[resource.name] = (version, (page.get("metadata") or {}).get("resourceVersion", ""))
        for item in page.get("items") or []:
            item["apiVersion"] = f"{resource.group}/{version}" if resource.group else version
            item["kind"] = resource.kind
            items.append(item if transform is None else transform(resource.name, item))
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return items, ""
