"""The kinds admission judges: one list, from which the webhook's routing, the policies'
bindings and the judge all read, so that no kind the judge understands goes unrouted."""

from __future__ import annotations

from ..model.claims import RESOURCE_GROUP
from ..model.workloads import POD_TARGETS

BUDGET = ("policy", "PodDisruptionBudget")
#: (group, kind): pods and every workload draguard models, the DRA objects users write,
#: Namespaces (the admin-access label), PodDisruptionBudgets (what they select) and ConfigMaps
#: (a device variable a container would import whole by envFrom; Secrets are not routed: the
#: webhook never sees their contents, and a Secret write must not fail with it).
JUDGED = POD_TARGETS | {(RESOURCE_GROUP, "ResourceClaim"), (RESOURCE_GROUP, "ResourceClaimTemplate"),
                        (RESOURCE_GROUP, "DeviceClass"), ("", "Namespace"), BUDGET, ("", "ConfigMap")}
#: subresources through which what the judge reads is written besides the resource itself: a
#: pod's ephemeral containers (`kubectl debug`) are added through pods/ephemeralcontainers
#: alone (k8s.io/kubernetes pkg/registry/core/pod/storage EphemeralContainersREST), an UPDATE
#: of the whole Pod, which the judge reads as any other
WRITTEN_THROUGH = {("", "Pod"): ("ephemeralcontainers",)}
#: kinds whose replicas the `scale` subresource writes (autoscaling/v1 Scale: `kubectl scale`,
#: HPAs), which the webhook's cache watches: a Scale carries no template, so the webhook
#: judges a scale as the UPDATE of the workload it reads from its cache (judge.scaled). The
#: policies cannot read the workload behind a Scale and do not match it; the scale of
#: ReplicationControllers and of custom resources is not routed (docs/admission.md).
SCALED = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet")})
SCALE = "scale"
#: what the webhook routes besides the resources themselves: WRITTEN_THROUGH, and the scale
#: subresource of SCALED (the policies route WRITTEN_THROUGH only)
WEBHOOK_SUBRESOURCES = {kind: WRITTEN_THROUGH.get(kind, ()) + ((SCALE,) if kind in SCALED else ())
                        for kind in WRITTEN_THROUGH.keys() | SCALED}
#: the owners whose judgement vouches for what a controller makes from them (exemptions'
#: made_from_judged_owner): what admission judges, but a ConfigMap, judged for the variables it
#: holds and never the template of anything
OWNER_KINDS = JUDGED - {("", "ConfigMap")}
