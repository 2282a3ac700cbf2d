"""A workload's pod template as the simulated controllers stamp pods from it: the claims the
resourceclaim controller makes for each pod from its ResourceClaimTemplates (and the one
kube-scheduler makes for extended resources a DeviceClass serves, dra.extended), the phase
durations, when its containers stop after a deletion (model.teardown), its node filters and
its labels."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..dra.devices import claim_from
from ..dra.extended import special_claim
from ..model.manifest import Manifest
from ..model.pods import PodSite, pod_sites, pre_stop_of
from ..model.teardown import MINIMUM_SIGTERM_SECONDS, Stopping, schedule, stopping_of
from ..dra.placement import NodeFit
from ..facts.schemas import schema_errors
from .world import Durations, Pod, World


class ScenarioError(ValueError):
    """What draguard cannot simulate as given (the CLI reports it with exit status 2)."""


@dataclass
class PodTemplate:
    made: list  # (the pod's claim entry name, the Claim its template makes)
    namespace: str
    durations: Durations
    stop_after: float  # seconds from a deletion until every container stopped
    min_ready: float = 0.0
    labels: dict = field(default_factory=dict)
    fit: NodeFit = NodeFit()
    completes: bool = False  # a Job's pod: it exits 0 after durations.run

    def pod(self, name: str, owner: str, now: float) -> Pod:
        claims = [dataclasses.replace(claim, name=f"{name}-{entry}", namespace=self.namespace)
                  for entry, claim in self.made]
        return Pod(name, owner, claims, self.durations, self.stop_after, now, self.min_ready, dict(self.labels),
                   fit=self.fit, completes=self.completes)


def template_of(workload: Manifest, templates: dict[str, Manifest], durations: Durations, world: World) -> PodTemplate:
    """The workload's pod template on `world`; ScenarioError when it has none, claims nothing
    the simulation can allocate, or is an object its release refuses."""
    _refuse_invalid(workload, world.kube_version)
    sites = pod_sites(workload)
    if not sites:
        raise ScenarioError(f"{workload.kind} '{workload.name}' has no pod template")
    site = sites[0]
    grace, _ = site.grace_period
    return PodTemplate(_made(site, templates, world), workload.namespace or "", durations,
                       stop_after(grace, site.spec, durations.shutdown, durations.pre_stop),
                       float(workload.spec.get("minReadySeconds", 0) or 0), dict(site.labels), NodeFit.of(site),
                       completes=workload.kind == "Job")


def _refuse_invalid(m: Manifest, kube_version: str) -> None:
    """No controller ever sees an object whose fields are not of the types its schema gives
    them (the API server refuses it), and the simulated ones read them as typed."""
    error = next(schema_errors(m.data, kube_version, m.api_version, m.kind, strict=False), None)
    if error is not None:
        raise ScenarioError(f"{m.kind} '{m.name}' is not valid on Kubernetes {kube_version}: {error.message}")


def _made(site: PodSite, templates: dict[str, Manifest], world: World) -> list:
    made = []
    for entry in site.claims:
        name = entry.get("resourceClaimTemplateName")
        if not isinstance(name, str):
            raise ScenarioError(f"pod claim '{entry.get('name')}' names no ResourceClaimTemplate: claims shared "
                                "through resourceClaimName are not simulated yet")
        if name not in templates:
            raise ScenarioError(f"ResourceClaimTemplate '{name}' is not among the manifests")
        _refuse_invalid(templates[name], world.kube_version)
        made.append((str(entry.get("name")), claim_from(templates[name])))
    special = special_claim(site.spec, world.extended_resources)  # on a simulated node no device plugin serves it
    if special is not None:
        made.append(("extended-resources", special))
    if not made:
        raise ScenarioError(f"{site.owner.kind} '{site.owner.name}': the pod template claims no devices: nothing "
                            "for the simulation to allocate")
    return made


def stop_after(grace: float, spec: dict, shutdown: float, pre_stop: float | None = None) -> float:
    """model.teardown's schedule, with `shutdown` seconds from SIGTERM to exit (cut at SIGKILL)
    and, when given, `pre_stop` seconds for every preStop hook instead of its own waits."""
    containers = stopping_of(spec)
    if pre_stop is not None:
        hooked = {str(c.get("name")) for key in ("initContainers", "containers") for c in spec.get(key) or ()
                  if isinstance(c, dict) and pre_stop_of(c)}
        containers = [Stopping(c.name, pre_stop, c.sidecar, c.ends_with_mains) if c.name in hooked else c
                      for c in containers]
    stopped = schedule(grace, containers)
    if not stopped:
        return min(shutdown, max(grace, MINIMUM_SIGTERM_SECONDS))
    return max(min(s.sigterm_at + shutdown, s.kill_at) for s in stopped)
