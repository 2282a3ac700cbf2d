"""What a check may consult: the object set and its indexes, the config and its own options,
the inventory; and the one way to make a finding."""

from __future__ import annotations

from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Callable

from ..core.config import Config
from ..core.finding import Finding, Severity, Site
from ..core.location import Path
from ..core.fixes import Fix, NoFix, Op
from ..model.manifest import Manifest
from ..model.objectset import ObjectSet
from ..model.pods import pod_sites
from ..model.values import Key, Yaml
from ..model.workloads import PodController, workload_for
from ..sources.yamlpos import path_of

if TYPE_CHECKING:
    from ..dra.funnel import RequestExplanation
    from ..model.claims import DeviceRequest
    from ..dra.inventory import Inventory
    from ..model.live import ClusterView
    from ..dra.target import Target
    from .base import Rule


class Context:
    def __init__(self, config: Config, objects: ObjectSet, inventory: "Inventory | None" = None,
                 cluster: "ClusterView | None" = None, devices: "Target | None" = None):
        self.config = config
        self.objects = objects
        self.inventory = inventory  # None: judge satisfiability against the built-in GPU inventory
        self.cluster = cluster  # live state (an audit): the cluster rules run only with it
        self._devices = devices  # `satisfiability` built by the caller, who reuses it across runs
        self.kube_version = config.kube_version
        self._options: dict[tuple[str, str], Any] = {}

    def option(self, rule: "Rule", name: str) -> Any:
        """The rule's option as configured, else its default: a value `Option.coerce` checked
        against the default's type, which the rule reads as that type. Looked up once a run
        (rules ask for their options once an object: 75,000 times a lint of 20,000)."""
        key = (rule.id, name)
        try:
            return self._options[key]
        except KeyError:
            value = self._options[key] = self.config.rule_option(rule, name)
            return value

    @cached_property
    def satisfiability(self) -> "Target":
        """The inventory (or the built-in one) with its allocator, built on first use for the run
        (or given: the webhook builds it once per state of its cache)."""
        from ..dra.target import Target

        if self._devices is not None:
            return self._devices
        return Target.for_release(self.inventory, list(self.objects.device_classes.values()), self.kube_version,
                                  self.config.feature_gates)

    @property
    def judges_builtin(self) -> bool:
        """Whether claims are judged against the built-in GPU inventory with this run's own
        DeviceClasses (no inventory given, no target built by the caller)."""
        return self.inventory is None and self._devices is None

    def builtin_funnel(self, request: "DeviceRequest", name: str) -> "RequestExplanation":
        """The funnel of `request` against the built-in inventory (`judges_builtin`), from the
        per-user cache where it was computed before (dra.builtin_funnels), else by
        `satisfiability`, built then."""
        builtin_funnel, allocated_selectors = _funnels()
        own = self.objects.device_classes.get(request.class_name or "")
        return builtin_funnel(request, name, allocated_selectors(own) if own is not None else None,
                              self.kube_version, self.config.feature_gates,
                              lambda: self.satisfiability.explain(request, name))

    @cached_property
    def live_devices(self) -> "Target":
        """The audited cluster's devices (the run's inventory) with what its claims hold now:
        pending pods are explained against it (`satisfiability` asks whether a claim could
        ever fit)."""
        from ..dra.inventory import Inventory
        from ..dra.target import Target

        if self.inventory is None:  # a cluster whose drivers publish nothing
            return Target.build(Inventory(), [])
        return self.satisfiability.with_allocated(self.live.held)

    @property
    def live(self) -> "ClusterView":
        """The audited cluster, which the cluster rules (Needs.CLUSTER) read: the engine runs
        them only with one, so its absence is a bug in the caller, said as such."""
        if self.cluster is None:
            raise RuntimeError("a cluster rule was run without a cluster snapshot")
        return self.cluster

    def finding(self, rule: "Rule", obj: Manifest, message: str, container: Yaml = None, key: Key | None = None, *,
                value: bool = False, help: str | None = None, fix: Fix | NoFix | None = None,
                severity: Severity | None = None, offset: int | None = None) -> Finding:
        """A finding of `rule` at `container[key]` inside `obj` (the object itself if None);
        `offset` points at one character of that string value. `fix` may be the NoFix that
        says why there is none; a fix that writes what the workload's controller refuses in
        its pod specs becomes one (model.workloads.PodController)."""
        if isinstance(fix, Fix):
            fix = refused_by_controller(obj, fix) or fix
        within = path_of(obj.data if container is None else container)
        return Finding(rule.id, rule.category, severity or rule.severity, message,
                       obj.location(container, key, value=value, offset=offset), obj.ref, help,
                       fix if isinstance(fix, Fix) else None, no_fix=str(fix) if isinstance(fix, NoFix) else None,
                       site=Site(within, key, value, offset) if within is not None else None)


@cache
def _funnels() -> tuple[Callable[..., RequestExplanation], Callable[[Manifest], list[str]]]:
    """dra.builtin_funnels.builtin_funnel and model.classes.allocated_selectors, imported when a
    claim's request is first judged (a lint of ConfigMaps loads neither), once a process: an
    import in builtin_funnel cost 2 us a request, 5,372 a lint of 20,000."""
    from ..dra.builtin_funnels import builtin_funnel
    from ..model.classes import allocated_selectors

    return builtin_funnel, allocated_selectors


def refused_by_controller(obj: Manifest, fix: Fix) -> NoFix | None:
    """Why `fix` cannot be written into `obj`, where an edit sets or adds a field that the
    controller of the pod spec it lands in refuses (Knative Serving's field mask), else None."""
    refusing = obj.derive(_refusing)
    if not refusing:
        return None
    controller, specs = refusing
    for edit in fix.edits:
        if edit.op in (Op.REMOVE, Op.ADD_DOCUMENT):
            continue  # taking a field out is never refused; an added object is no pod spec
        path = tuple(edit.path)
        for spec in specs:
            why = path[:len(spec)] == spec and controller.refusal(path[len(spec):])
            if why:
                return NoFix(why)
    return None


def _refusing(obj: Manifest) -> "tuple[PodController, list[Path]] | tuple[()]":
    """(the controller of `obj`'s pod specs that refuses fields in them, the paths of those
    specs), else (): found once an object (Manifest.derive), not once a fix (a lint of
    20,000 objects makes 17,000 fixes; nearly none in a Knative Service)."""
    workload = workload_for(obj)
    controller = workload.controller_for(obj) if workload is not None else None
    if controller is None:
        return ()
    return controller, [site.path for site in pod_sites(obj) if site.path is not None]
