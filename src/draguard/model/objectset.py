"""Every object of one run, with the typed indexes cross-object rules look things up in.

Each index is built on first use and kept for the run: the objects never change after loading.
A caller that judges again only what a change can reach (draguard fix between its rounds)
has each lookup recorded as a read key of the object being judged (`judging`): what kind of
object, in which namespace, of which name (None: all of them there). The cluster-wide ones
(DeviceClasses, Namespaces) are not recorded: a change to one reaches every object."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator, TypeVar, cast

from ..core.intstr import problem as intstr_problem
from ..core.selectors import malformed
from ..core.unread import shown, unreadable
from .claims import RESOURCE_GROUP, ClaimIndex
from .extended_resources import ClassRef, resolver
from .manifest import Manifest
from .pods import PodSite, mapping, pod_sites, text
from .values import Yaml, YamlMap


EVERY_KIND = "*"  # a read of the whole set: every change reaches it
PODS = "pods"  # what holds pod templates (any workload kind)

#: one recorded lookup: (kind, namespace, name; None: every one of that kind there)
ReadKey = tuple[str, str, str | None]

_Subject = TypeVar("_Subject")
_Answer = TypeVar("_Answer")
_Item = TypeVar("_Item")


@dataclass
class ObjectSet:
    manifests: list[Manifest]
    _memo: dict[tuple[Callable[..., object], int], tuple[object, object]] = field(default_factory=dict, repr=False)
    _reading: set[ReadKey] | None = field(default=None, repr=False)  # the read keys of the object being judged

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

    def done(self, manifest: Manifest) -> None:
        """`manifest`'s own rules are done with it: its derived views are dropped
        (Manifest.forget_views), and what was remembered for its judging, which only that
        judging may ask for (remembered). Kept, they held every pod's sites to the end of the
        run: 1.4 KiB a pod, 15 MiB of a 3 MB stream of pods (tracemalloc)."""
        manifest.forget_views()
        self._memo.clear()

    def _of(self, group: str, kind: str) -> list[Manifest]:
        return [m for m in self.manifests if m.kind == kind and m.group == group]

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

    @cached_property
    def namespaces(self) -> dict[str, Manifest]:
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
        return (namespace, kind, name) in self._autoscaled

    @cached_property
    def _autoscaled(self) -> set[tuple[str, str, str]]:
        return {(m.namespace, text(mapping(m.spec.get("scaleTargetRef")).get("kind")),
                 text(mapping(m.spec.get("scaleTargetRef")).get("name")))
                for m in self.manifests if m.kind == "HorizontalPodAutoscaler" and m.group == "autoscaling"}

    @cached_property
    def pod_templates(self) -> list[PodSite]:
        """Pod specs that carry template metadata (the labels a PDB or Service selects). A
        pod whose controller is in the set stands for nothing its controller's template does
        not (a snapshot's 40,000 pods come from a few templates): only the template counts."""
        uids = {text(m.metadata.get("uid")) for m in self.manifests} - {""}  # a uid of another type is none
        return [site for m in self.manifests
                if not (m.kind == "Pod" and text((m.controller or {}).get("uid")) in uids)
                for site in pod_sites(m) if site.metadata]

    def pdbs_near(self, namespace: str) -> list[Manifest]:
        """The PodDisruptionBudgets that may select pods of `namespace`: its own and those
        that name no namespace (all of them for an object that names none)."""
        self.read("PodDisruptionBudget", namespace)
        return _near(self._pdbs_by_namespace, self.pdbs, namespace)

    def pod_templates_near(self, namespace: str) -> list[PodSite]:
        """The pod templates a PodDisruptionBudget of `namespace` may select (as pdbs_near)."""
        self.read(PODS, namespace)
        return _near(self._templates_by_namespace, self.pod_templates, namespace)

    @cached_property
    def _pdbs_by_namespace(self) -> dict[str, list[Manifest]]:
        return _by_namespace(self.pdbs, lambda m: m.namespace)

    @cached_property
    def _templates_by_namespace(self) -> dict[str, list[PodSite]]:
        return _by_namespace(self.pod_templates, lambda site: site.owner.namespace)


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
