"""A snapshot: the objects of the resources an audit reads, with when and from what server
they were read, and which resources could not be read (partial permissions).

The header is a small object of its own (`kind: Snapshot`, `apiVersion:
draguard.dev/v1alpha1`) so that a one-file dump can carry it as its first document and a
dump bundle as `snapshot.yaml`: a replay then judges ages at capture time, deterministically."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..model.live import timestamp
from ..model.manifest import Manifest

HEADER_API_VERSION = "draguard.dev/v1alpha1"
HEADER_KIND = "Snapshot"


@dataclass(frozen=True)
class Resource:
    """One resource the audit LISTs: its group, the versions it may be served at (preferred
    first) and its plural name."""

    group: str
    versions: tuple[str, ...]
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def name(self) -> str:
        """`pods`, `resourceclaims.resource.k8s.io`: how kubectl and RBAC name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_DRA = ("v1", "v1beta2", "v1beta1")  # every served resource.k8s.io version shape decodes

#: What an audit reads: a constant number of paginated LISTs, whatever the cluster's size.
RESOURCES = (
    Resource("", ("v1",), "nodes", "Node", namespaced=False),
    Resource("", ("v1",), "namespaces", "Namespace", namespaced=False),
    Resource("", ("v1",), "pods", "Pod"),
    Resource("", ("v1",), "resourcequotas", "ResourceQuota"),
    Resource("resource.k8s.io", _DRA, "resourceclaims", "ResourceClaim"),
    Resource("resource.k8s.io", _DRA, "resourceclaimtemplates", "ResourceClaimTemplate"),
    Resource("resource.k8s.io", _DRA, "resourceslices", "ResourceSlice", namespaced=False),
    Resource("resource.k8s.io", _DRA, "deviceclasses", "DeviceClass", namespaced=False),
    Resource("resource.k8s.io", ("v1alpha3",), "devicetaintrules", "DeviceTaintRule", namespaced=False),
    Resource("apps", ("v1",), "deployments", "Deployment"),
    Resource("apps", ("v1",), "replicasets", "ReplicaSet"),
    Resource("apps", ("v1",), "statefulsets", "StatefulSet"),
    Resource("apps", ("v1",), "daemonsets", "DaemonSet"),
    Resource("batch", ("v1",), "jobs", "Job"),
    Resource("policy", ("v1",), "poddisruptionbudgets", "PodDisruptionBudget"),
)
#: Resources an audit cannot do without: a snapshot lacking one is refused.
REQUIRED = ("pods", "resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io")


@dataclass
class Snapshot:
    manifests: list[Manifest]
    captured_at: datetime
    server_version: str = ""
    source: str = ""  # the context, or the dump it was read from
    unreadable: dict[str, str] = field(default_factory=dict)  # resource name -> why (forbidden, not served)
    time_known: bool = True  # False: a plain kubectl dump, judged as of the audit's own clock
    #: the feature gates draguard knows, as the API server reported them (cluster.release); {}: unknown
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: read from a file, which anyone may have edited, not from the API server, which
    #: stores no object its schema refuses
    from_dump: bool = False

    def header(self) -> dict:
        return {"apiVersion": HEADER_API_VERSION, "kind": HEADER_KIND,
                "capturedAt": self.captured_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "serverVersion": self.server_version, "source": self.source,
                "unreadable": dict(sorted(self.unreadable.items())),
                "featureGates": dict(sorted(self.feature_gates.items()))}


def is_header(data: dict) -> bool:
    return data.get("kind") == HEADER_KIND and str(data.get("apiVersion", "")).startswith("draguard.dev/")


def read_header(data: dict) -> tuple[datetime, str, dict, dict]:
    """(capture time, server version, unreadable resources, feature gates) of a header;
    ValueError if wrong (a header written before featureGates was kept has none)."""
    captured = timestamp(data.get("capturedAt"))
    if captured is None:
        raise ValueError(f"capturedAt {data.get('capturedAt')!r} is not an RFC 3339 time")
    unreadable = data.get("unreadable") or {}
    if not isinstance(unreadable, dict):
        raise ValueError("unreadable must map resource names to reasons")
    gates = data.get("featureGates") or {}
    if not isinstance(gates, dict) or not all(isinstance(v, bool) for v in gates.values()):
        raise ValueError("featureGates must map gate names to true or false")
    return (captured, str(data.get("serverVersion") or ""), {str(k): str(v) for k, v in unreadable.items()},
            {str(k): v for k, v in gates.items()})


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)
