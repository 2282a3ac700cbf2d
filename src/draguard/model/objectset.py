"""Every object of one run, with the typed indexes cross-object rules look things up in.

Each index is built on first use and kept for the run: the objects never change after loading.
A caller that judges again only what a change can reach (draguard fix between its rounds)
has each lookup recorded as a read key of the object being judged (`judging`): what kind of
object, in which namespace, of which name (None: all of them there); a Namespace by its
name. The cluster-wide ones (DeviceClasses, slices, nodes: CLUSTER_WIDE) are not recorded: a
change to one reaches every object."""

from __future__ import annotations

from functools import cached_property
from typing import Callable, Iterator, TypeVar, cast

from ..core.intstr import problem as intstr_problem
from ..core.selectors import malformed
from ..core.unread import Unread, shown, told, unreadable
from ..core.value import Viewed
from .claims import RESOURCE_GROUP, ClaimIndex, compute_domain_template
from .extended_resources import ClassRef, resolver
from .manifest import Manifest
from .pods import PodSite, mapping, pod_sites, text
from .values import Yaml, YamlMap


_TEMPLATE = (RESOURCE_GROUP, "ResourceClaimTemplate")
EVERY_KIND = "*"  # a read of the whole set: every change reaches it
PODS = "pods"  # what holds pod templates (any workload kind)

#: one recorded lookup: (kind, namespace, name; None: every one of that kind there)
ReadKey = tuple[str, str, str | None]

_Subject = TypeVar("_Subject")
_Answer = TypeVar("_Answer")
_Key = TypeVar("_Key")
_Item = TypeVar("_Item")


class ObjectSet(Viewed):
    """The objects of a run with their typed indexes, built once and shared by the rules."""

    __slots__ = ("manifests", "_memo", "_reading", "_lasting")
    _unshown = ("_memo", "_reading", "_lasting")

    def __init__(self, manifests: list[Manifest]) -> None:
        self.manifests = manifests
        self._memo: dict[tuple[Callable[..., object], int], tuple[object, object]] = {}
        self._reading: set[ReadKey] | None = None  # the read keys of the object being judged
        self._lasting: dict[tuple[Callable[..., object], object], object] = {}

    def judging(self, reads: set[ReadKey] | None) -> None:
        """Record the lookups from now on into `reads` (None: record nothing)."""
        self._reading = reads

    def read(self, kind: str, namespace: str, name: str | None = None) -> None:
        if self._reading is not None:
            self._reading.add((kind, namespace, name))

    def __iter__(self) -> Iterator[Manifest]:
        self.read(EVERY_KIND, "")
        return iter(self.manifests)

    def __len__(self) -> int:
        return len(self.manifests)

    def remembered(self, compute: Callable[[_Subject, ObjectSet], _Answer], subject: _Subject) -> _Answer:
        """compute(subject, self), computed once per subject for this set: a view of one
        object that depends on others (six teardown rules ask each pod which of its claims
        hold GPUs). Only that object's own judging may ask for it: the lookups are recorded
        for the judging that computed it. The subject is kept with the answer, so that its id
        is not reused."""
        key = (compute, id(subject))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = (subject, compute(subject, self))
        return cast(_Answer, hit[1])  # keyed by `compute`: what it returned

    def lasting(self, compute: Callable[[ObjectSet, _Key], _Answer], key: _Key) -> _Answer:
        """compute(self, key), once for the set: an answer read from its cluster-wide objects
        alone (DeviceClasses: CLUSTER_WIDE, whose lookups are not recorded), the same whichever
        object is being judged. Whether a class is a GPU class was asked 9,000 times in a lint
        of 20,000 objects, of a handful of classes."""
        memo = (compute, key)
        try:
            return cast(_Answer, self._lasting[memo])  # keyed by `compute`: what it returned
        except KeyError:
            answer = compute(self, key)
            self._lasting[memo] = answer
            return answer

    def done(self, manifest: Manifest) -> None:
        """`manifest`'s own rules are done with it: its derived views are dropped
        (Manifest.forget_views), and what was remembered for its judging, which only that
        judging may ask for (remembered). Kept, they held every pod's sites to the end of the
        run: 1.4 KiB a pod, 15 MiB of a 3 MB stream of pods (tracemalloc). An object of a
        large text lets its tree go too (Manifest.release): it is parsed again if read. A
        ResourceClaimTemplate keeps its views: the pods that use it read its requests (which
        devices they hold), and derived them again, a third of all the requests parsed in a
        lint of 20,000 objects; templates are few beside the pods they serve."""
        if (manifest.group, manifest.kind) != _TEMPLATE:
            manifest.forget_views()
        manifest.release()
        self._memo.clear()

    def finished(self) -> None:
        """The run's judging is over: the views its objects still hold are dropped (the
        templates' that `done` kept for the pods, the claims' and others' that a later
        object's rules derived after their own judging). What comes after (the report, the
        fixes) holds the findings only; a view read again is derived again. Not called for a
        set whose objects serve the runs after it (a cluster's, a webhook's context, a fix's
        re-lint). In a lint of 20,000 objects they were 4,200 objects' views, 2.9 MiB, held
        while the report was written, when the run's memory peaks."""
        for manifest in self.manifests:
            if manifest.derived:
                manifest.forget_views()

    def _of(self, group: str, kind: str) -> list[Manifest]:
        return self._by_kind.get((group, kind), [])

    @cached_property
    def _by_kind(self) -> dict[tuple[str, str], list[Manifest]]:
        """The objects of each (group, kind), in the set's order: one pass for every index."""
        grouped: dict[tuple[str, str], list[Manifest]] = {}
        for m in self.manifests:
            grouped.setdefault((m.group, m.kind), []).append(m)
        return grouped

    def of_kind(self, group: str, kind: str, namespace: str) -> list[Manifest]:
        """The objects of that kind in `namespace`, in the set's order."""
        self.read(kind, namespace)
        return [m for m in self._of(group, kind) if m.namespace == namespace]

    @property
    def plugin_gpu_shares(self) -> set[tuple[str, str]]:
        """How the NVIDIA device plugin's configs in the set's ConfigMaps (in any namespace: a
        device plugin's config is cluster-wide) share nvidia.com/gpu
        (model.plugin_config.gpu_shares), found once a run: each pod on shared GPUs asked it
        of every ConfigMap (68 pods of 476 ConfigMaps, a tenth of a second)."""
        self.read("ConfigMap", "")
        return self._plugin_gpu_shares

    @cached_property
    def _plugin_gpu_shares(self) -> set[tuple[str, str]]:
        from .plugin_config import gpu_shares  # only where a pod selects shared GPUs: it brings PyYAML's loader

        return gpu_shares(self._of("", "ConfigMap"))

    @cached_property
    def claims(self) -> ClaimIndex:
        return ClaimIndex.build(self.manifests, self.read)

    @cached_property
    def device_classes(self) -> dict[str, Manifest]:
        """resource.k8s.io DeviceClasses by name (the first one wins)."""
        found: dict[str, Manifest] = {}
        for m in self._of(RESOURCE_GROUP, "DeviceClass"):
            found.setdefault(m.name, m)
        return found

    @cached_property
    def extended_resource_classes(self) -> dict[str, str]:
        """Extended resource name -> the DeviceClass that serves it through DRA (KEP-5004),
        explicit and implicit names (model.extended_resources)."""
        return resolver([ClassRef(name, resource if isinstance(resource := m.spec.get("extendedResourceName"), str)
                                  else None, str(m.metadata.get("creationTimestamp") or ""))
                         for name, m in self.device_classes.items()])

    def namespace(self, name: str) -> Manifest | None:
        """The Namespace of that name (the last one wins)."""
        self.read("Namespace", "", name)
        return self._namespaces.get(name)

    @cached_property
    def _namespaces(self) -> dict[str, Manifest]:
        return {m.name: m for m in self._of("", "Namespace")}

    def config_map(self, namespace: str, name: str) -> Manifest | None:
        self.read("ConfigMap", namespace, name)
        return self._config_maps.get((namespace, name))

    @cached_property
    def _config_maps(self) -> dict[tuple[str, str], Manifest]:
        return {(m.namespace, m.name): m for m in self._of("", "ConfigMap")}

    @cached_property
    def pdbs(self) -> list[Manifest]:
        return self._of("policy", "PodDisruptionBudget")

    def autoscales(self, namespace: str, kind: str, name: str) -> bool:
        """Whether a HorizontalPodAutoscaler of the set scales that workload."""
        self.read("HorizontalPodAutoscaler", namespace)
        if (namespace, kind, name) in self._autoscaled:
            return True
        for hpa, container, key, value in self._targets_unread.get(namespace, ()):  # it may be scaled by one of them
            unreadable(container, key, f"is {shown(value)}, not what a scale target takes there", hpa)
        return False

    @cached_property
    def _autoscaled(self) -> set[tuple[str, str, str]]:
        return {(m.namespace, text(mapping(m.spec.get("scaleTargetRef")).get("kind")),
                 text(mapping(m.spec.get("scaleTargetRef")).get("name")))
                for m in self.manifests if m.kind == "HorizontalPodAutoscaler" and m.group == "autoscaling"}

    @cached_property
    def _targets_unread(self) -> dict[str, list[tuple[Manifest, YamlMap, str, Yaml]]]:
        """namespace -> (the HorizontalPodAutoscaler, the mapping, the key, the value) of each
        scaleTargetRef (or its kind or name) of another type than it takes: which workload
        such an autoscaler scales is not known."""
        found: dict[str, list[tuple[Manifest, YamlMap, str, Yaml]]] = {}
        for m in self.manifests:
            if m.kind != "HorizontalPodAutoscaler" or m.group != "autoscaling":
                continue
            ref = m.spec.get("scaleTargetRef")
            bad = [(m.spec, "scaleTargetRef", ref)] if ref is not None and not isinstance(ref, dict) else \
                [(ref, key, ref[key]) for key in ("kind", "name") if isinstance(ref, dict)
                 and ref.get(key) is not None and not isinstance(ref[key], str)]
            found.setdefault(m.namespace, []).extend((m, *entry) for entry in bad)
        return found

    @cached_property
    def pod_templates(self) -> list[PodSite]:
        """Pod specs that carry template metadata (the labels a PDB or Service selects). A
        pod whose controller is in the set stands for nothing its controller's template does
        not (a snapshot's 40,000 pods come from a few templates): only the template counts."""
        uids = {text(m.metadata.get("uid")) for m in self.manifests} - {""}  # a uid of another type is none
        return [site for m in self.manifests
                if not (m.kind == "Pod" and text((m.controller or {}).get("uid")) in uids)
                for site in pod_sites(m) if site.metadata]

    @cached_property
    def _uids_unread(self) -> dict[str, tuple[Unread, ...]]:
        """namespace -> the uids (of other types than a string) that would say whether a pod
        there stands for its controller's template: the pod's controller reference names
        that object (kind and name) and its uid cannot be compared, so the pod counts as a
        template of its own, which the rules reading the templates are told."""
        unread = {(m.namespace, m.kind, m.name): m for m in self.manifests
                  if m.metadata.get("uid") is not None and not isinstance(m.metadata.get("uid"), str)}
        found: dict[str, list[Unread]] = {}
        for pod in self.manifests if unread else ():
            owner = pod.controller if pod.kind == "Pod" else None
            named = unread.get((pod.namespace, text(owner.get("kind")), text(owner.get("name")))) if owner else None
            if named is not None:
                found.setdefault(pod.namespace, []).append(Unread(
                    named.metadata, "uid", f"is {shown(named.metadata['uid'])}, not a uid: whether it controls "
                    f"Pod {pod.name} is not known", named))
        return {namespace: tuple(records) for namespace, records in found.items()}

    def pdbs_near(self, namespace: str) -> list[Manifest]:
        """The PodDisruptionBudgets that may select pods of `namespace`: its own and those
        that name no namespace (all of them for an object that names none)."""
        self.read("PodDisruptionBudget", namespace)
        return _near(self._pdbs_by_namespace, self.pdbs, namespace)

    def pod_templates_near(self, namespace: str) -> list[PodSite]:
        """The pod templates a PodDisruptionBudget of `namespace` may select (as pdbs_near)."""
        self.read(PODS, namespace)
        if self._uids_unread:
            told([record for near, records in self._uids_unread.items() if not namespace or near in ("", namespace)
                  for record in records])
        return _near(self._templates_by_namespace, self.pod_templates, namespace)

    @cached_property
    def _pdbs_by_namespace(self) -> dict[str, list[Manifest]]:
        return _by_namespace(self.pdbs, lambda m: m.namespace)

    @cached_property
    def _templates_by_namespace(self) -> dict[str, list[PodSite]]:
        return _by_namespace(self.pod_templates, lambda site: site.owner.namespace)


#: kinds every rule may read without a lookup that is recorded: a change to one reaches everything
CLUSTER_WIDE = frozenset({"DeviceClass", "ResourceSlice", "Node"})
#: kinds that hold no pod spec; anything else may (workload custom resources included)
PODLESS = frozenset({
    "Service", "ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
    "Ingress", "NetworkPolicy", "PriorityClass", "StorageClass", "PersistentVolumeClaim", "PersistentVolume",
    "ResourceClaim", "ResourceClaimTemplate", "PodDisruptionBudget", "HorizontalPodAutoscaler", "DeviceClass",
    "ResourceSlice", "Namespace", "Node", "CustomResourceDefinition", "LimitRange", "ResourceQuota", "Endpoints",
    "EndpointSlice"})


def identity(data: Yaml) -> tuple[str, str, str, str | None]:
    """(kind, namespace, name, the claim template it makes: a ComputeDomain's) of object data:
    what a lookup may find it by (Touched)."""
    data = mapping(data)
    metadata = mapping(data.get("metadata"))
    kind = text(data.get("kind"))
    made = compute_domain_template(data.get("spec")) if kind == "ComputeDomain" else None
    return kind, text(metadata.get("namespace")), text(metadata.get("name")), made


def touches(kind: str, name: str, made: str | None = None) -> list[tuple[str, str | None]]:
    """(kind, name or None) of each lookup an object of that kind and name (identity()) may
    answer, in its namespace: its own kind, the claim template a ComputeDomain makes, the pod
    templates of a kind that may hold them, and the whole set."""
    found: list[tuple[str, str | None]] = [(kind, name)]
    if kind == "ComputeDomain":  # it makes the claim template it names
        found.append(("ResourceClaimTemplate", made or ""))
    if kind not in PODLESS:
        found.append((PODS, None))
    found.append((EVERY_KIND, None))
    return found


class Touched:
    """The read keys some objects answer to (ObjectSet.read): an object whose judging looked
    one of them up may judge otherwise beside these objects. `draguard fix` judges again what
    a change reaches; `lint --jobs` judges again, with them, what another part's objects reach.
    A cluster-wide object reaches everything; one that names no namespace may be applied to
    any, so it reaches every namespace, and a lookup that names none sees every namespace."""

    def __init__(self) -> None:
        self.everything = False  # a cluster-wide object
        self.named: set[tuple[str, str, str | None]] = set()  # (kind, namespace, name)
        self.kinds: set[tuple[str, str]] = set()  # (kind, namespace)
        self.any_namespace: set[tuple[str, str | None]] = set()  # (kind, name) and (kind, None)

    def touch(self, kind: str, namespace: str, name: str, made: str | None = None) -> None:
        """An object (identity()) is among them."""
        if kind in CLUSTER_WIDE:
            self.everything = True
            return
        for what, called in touches(kind, name, made):
            self.named.add((what, namespace, called))
            self.kinds.add((what, namespace))
            self.any_namespace.update({(what, called), (what, None)})

    def update(self, other: "Touched") -> None:
        """The objects `other` holds are among them too."""
        self.everything |= other.everything
        self.named |= other.named
        self.kinds |= other.kinds
        self.any_namespace |= other.any_namespace

    def reaches(self, keys: set[ReadKey]) -> bool:
        """Whether one of these objects answers one of these read keys (kind, namespace, name or None)."""
        if self.everything:
            return True
        for kind, namespace, name in keys:
            if not namespace:
                if (kind, name) in self.any_namespace:
                    return True
            elif name is None:
                if (kind, namespace) in self.kinds or (kind, "") in self.kinds:
                    return True
            elif (kind, namespace, name) in self.named or (kind, "", name) in self.named:
                return True
        return False


def _by_namespace(items: list[_Item], namespace_of: Callable[[_Item], str]) -> dict[str, list[_Item]]:
    grouped: dict[str, list[_Item]] = {}
    for item in items:
        grouped.setdefault(namespace_of(item), []).append(item)
    return grouped


def _near(grouped: dict[str, list[_Item]], every: list[_Item], namespace: str) -> list[_Item]:
    """Rollout rules match objects of one namespace, or where either names none (a manifest
    applied with `-n`): the namespace's own items and the unnamespaced ones."""
    if not namespace:
        return every
    return grouped.get(namespace, []) + grouped.get("", [])


def pdb_selector(pdb: Manifest) -> Yaml:
    """A budget's label selector; None (it selects nothing) where it is not one, which the
    rules reading it are told (core.unread): they cannot say what it would select."""
    return pdb.derive(_pdb_selector)


def _pdb_selector(pdb: Manifest) -> Yaml:
    spec = mapping(pdb.spec)
    bad = malformed(spec, "selector")
    if bad is None:
        return spec.get("selector")
    container, key, value = bad
    unreadable(container, key, f"is {shown(value)}, not what a label selector takes there", pdb)
    return None


def budget_problems(spec: YamlMap) -> list[tuple[str, str]]:
    """(field, what the API server says) for each field of a PodDisruptionBudget spec it
    refuses (ValidatePodDisruptionBudgetSpec): a count or percentage it refuses
    (core.intstr.problem; a value of another type too), and maxUnavailable beside minAvailable."""
    given = [key for key in ("minAvailable", "maxUnavailable") if spec.get(key) is not None]
    found = [(key, said) for key in given if (said := intstr_problem(spec[key]))]
    if len(given) == 2:
        found.append(("maxUnavailable", BOTH_BUDGETS))
    return found


BOTH_BUDGETS = "cannot be set with minAvailable"
