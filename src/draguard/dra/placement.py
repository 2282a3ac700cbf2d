"""Which nodes a pod may go to before its claims are tried: the scheduler's node filters that
read the pod spec and the Node, beside the DRA plugin's allocation.

Mirrored upstream (pkg/scheduler/framework/plugins):
- nodeunschedulable: a cordoned node (spec.unschedulable) takes no new pod unless it
  tolerates node.kubernetes.io/unschedulable:NoSchedule;
- nodeaffinity: every spec.nodeSelector label must equal the node's, and the required
  node affinity (requiredDuringSchedulingIgnoredDuringExecution) must select it
  (k8s.io/component-helpers nodeaffinity.GetRequiredNodeAffinity);
- tainttoleration: a NoSchedule or NoExecute taint of the node the pod does not tolerate
  filters it out (v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc);
  PreferNoSchedule only scores.
Preferred affinities and scores are not modelled: the simulated scheduler is first-fit."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import InputError
from ..model.claims import tolerations
from ..model.pods import PodSite
from .devices import Taint
from .nodeselector import NodeSelector, NodeSelectorError, parse_node_selector

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class NodeFit:
    """A pod template's node filters; `key` names them for the placement cache (the pods of
    one template share it)."""

    selector: tuple = ()  # (label, value) pairs of spec.nodeSelector
    affinity: NodeSelector | None = None
    tolerations: tuple = ()
    key: str = ""

    @classmethod
    def of(cls, site: PodSite) -> "NodeFit":
        spec = site.spec
        selector = spec.get("nodeSelector") or {}
        required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution"))
        try:
            affinity = parse_node_selector(required) if required is not None else None
        except NodeSelectorError as exc:
            raise InputError(f"{site.owner.source.display}: {site.owner.kind} '{site.owner.name}': required node "
                             f"affinity: {exc}") from None
        pairs = tuple(sorted((str(k), str(v)) for k, v in selector.items())) if isinstance(selector, dict) else ()
        tolerated = tolerations(spec.get("tolerations"))
        key = repr((pairs, required, tolerated)) if pairs or required is not None or tolerated else ""
        return cls(pairs, affinity, tolerated, key)

    def admits(self, node, cordoned: bool) -> bool:
        """Whether the filters let the pod onto the node (the scheduler's hot path: a node
        with nothing to filter on is let through without asking why not)."""
        if not (cordoned or node.taints or self.selector or self.affinity):
            return True
        return self.why_not(node, cordoned) is None

    def why_not(self, node, cordoned: bool) -> str | None:
        """The first filter that refuses the node, in the scheduler's words; None when none does."""
        if cordoned and not self._tolerates(Taint(UNSCHEDULABLE_TAINT, "", "NoSchedule")):
            return "node(s) were unschedulable"
        if any(node.labels.get(label) != value for label, value in self.selector) or \
                (self.affinity is not None and not self.affinity.matches(node)):
            return "node(s) didn't match Pod's node affinity/selector"
        if any(taint.effect in _FILTERED_EFFECTS and not self._tolerates(taint) for taint in node.taints):
            return "node(s) had untolerated taint(s)"
        return None

    def _tolerates(self, taint: Taint) -> bool:
        return any(t.tolerates(taint) for t in self.tolerations)


#: a pod without node filters of its own: only cordons keep it off a node
ANYWHERE = NodeFit()
