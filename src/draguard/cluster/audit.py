"""One audit: a snapshot -> the catalog (cluster rules and manifest rules, with live semantics)
-> findings, the pool view and a score.

The score (0-100, graded A-F as Popeye grades a cluster) is computed per kind, as the share of
that kind's objects with no finding, an object with only warnings counting half (Polaris
weighs warnings the same way); the cluster's score is the mean over the kinds it holds, so
40,000 healthy pods do not hide a broken DeviceClass."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..core.config import Config
from ..core.errors import InputError
from ..core.finding import Severity
from ..dra.inventory import DEVICE_KINDS, Inventory, InventoryError
from ..dra.pools import PoolView, pool_view
from ..dra.inventory_reader import refuse_invalid
from ..engine.result import LintResult
from ..engine.run import Against, Inputs, Run
from ..model.live import ClusterView
from ..model.objectset import ObjectSet
from ..rules import REGISTRY
from ..rules.base import Needs
from ..sources.loader import Loaded
from .snapshot import Snapshot

_GRADES = ((90, "A"), (80, "B"), (70, "C"), (60, "D"), (0, "F"))


@dataclass
class AuditResult:
    lint: LintResult
    snapshot: Snapshot
    pools: PoolView
    skipped: dict[str, list[str]] = field(default_factory=dict)  # rule id -> the resources it lacked

    @property
    def findings(self):
        return self.lint.findings

    def score(self) -> dict:
        worst: dict = {}
        for f in self.lint.findings:
            if f.obj is not None and f.severity >= Severity.WARNING:
                worst[f.obj] = max(worst.get(f.obj, f.severity), f.severity)
        per_kind: dict[str, list] = defaultdict(lambda: [0, 0.0])
        for m in self.snapshot.manifests:
            tally = per_kind[m.kind]
            tally[0] += 1
            severity = worst.get(m.ref)
            tally[1] += 0 if severity is Severity.ERROR else 0.5 if severity is Severity.WARNING else 1
        kinds = {kind: round(100 * clean / total, 1) for kind, (total, clean) in sorted(per_kind.items())}
        value = round(sum(kinds.values()) / len(kinds), 1) if kinds else 100.0
        return {"score": value, "grade": next(g for floor, g in _GRADES if value >= floor), "byKind": kinds}


def audit(snapshot: Snapshot, config: Config, loaded: Loaded | None = None) -> AuditResult:
    """Judge `snapshot`. A cluster rule that needs a resource the snapshot could not read is
    skipped (and listed in the result), never run on half the state."""
    skipped = {r.id: sorted(set(r.reads) & set(snapshot.unreadable)) for r in REGISTRY
               if r.needs is Needs.CLUSTER and set(r.reads) & set(snapshot.unreadable)}
    config = config.without(skipped)
    if snapshot.from_dump:
        refuse_invalid(snapshot.manifests, config.kube_version, "dump")
    objects = ObjectSet(snapshot.manifests)
    view = ClusterView(objects, snapshot.captured_at, sorted(snapshot.unreadable))
    for manifest in snapshot.manifests:
        if not view.judged_elsewhere(manifest):  # the manifest rules (and their fixes) need paths
            manifest.position()
    try:
        inventory = Inventory.from_manifests([m for m in snapshot.manifests if (m.group, m.kind) in DEVICE_KINDS])
    except InventoryError as exc:
        raise InputError(f"the cluster's devices cannot be modelled: {exc}") from None
    live_inventory = inventory if inventory.slices else None  # no slices: judge claims against the built-in GPU inventory
    result = Run(config, Inputs.snapshot(snapshot.manifests, view, loaded), Against(live_inventory)).findings()
    pools = pool_view(inventory, view.held, {name: dict(node.labels) for name, node in view.nodes.items()},
                      view.admin_held)
    return AuditResult(result, snapshot, pools, skipped)
