"""The metrics `draguard exporter` serves, read from its state at each scrape (one consistent
view: the state's lock is held while they are read). Labels are bounded: nodes, node pools,
profiles, device classes, rules and phases are as many as the cluster has; namespaces are at
most --max-namespaces, the rest summed as `other`; no pod, claim or uid is ever a label.
docs/exporter.md lists them."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client.core import CounterMetricFamily, GaugeHistogramMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector as _Collector

from .exporter import AGE_BUCKETS, LEAK_RULES, PHASES, STATES, WATCHED

_LE = tuple("+Inf" if b == float("inf") else str(int(b)) for b in AGE_BUCKETS)


def _gauge(name, help_, labels):
    return GaugeMetricFamily(f"draguard_{name}", help_, labels=labels)


class Collector(_Collector):
    def __init__(self, state):
        self.state = state

    def describe(self):
        return list(self._families())

    def collect(self):
        with self.state.lock:  # what a scrape reads, copied: the families are built without the lock
            view = _read(self.state)
        return list(self._families(view))

    def _families(self, view: dict | None = None):
        node_devices = _gauge("node_devices", "DRA devices per node by state (free, allocated, tainted, admin-held)",
                              ["node_pool", "node", "state"])
        devices = _gauge("devices", "DRA devices per node pool and profile by state (free, allocated, tainted, "
                                    "admin-held)", ["node_pool", "profile", "state"])
        utilization = _gauge("node_utilization", "DRA utilization per node, as the cluster autoscaler computes it",
                             ["node_pool", "node"])
        allocatable = _gauge("allocatable_devices", "devices of each profile that can still be allocated now, per "
                                                    "node pool (KEP-5677 partitionSummary)", ["node_pool", "profile"])
        stranded = _gauge("stranded_ratio", "1 - allocatable now / allocatable after the best repacking, per node "
                                            "pool and profile", ["node_pool", "profile"])
        largest = _gauge("largest_placeable_gpus", "GPUs by the largest profile of which one more device fits now "
                                                   "('none': nothing fits)", ["node_pool", "profile"])
        top = _gauge("largest_profile_allocatable", "devices of each GPU's largest profile that can still be "
                                                    "allocated now, per node pool", ["node_pool", "profile"])
        claims = _gauge("claims", "ResourceClaims by phase (pending, reserved, allocated-unreserved, deleting)",
                        ["namespace", "phase"])
        ages = GaugeHistogramMetricFamily("draguard_claim_age_seconds", "ResourceClaims now in a phase that should "
                                          "not last, by age (pending and allocated-unreserved: since creation; "
                                          "deleting: since deletion)", labels=["phase"])
        classes = _gauge("allocated_devices", "allocated devices by the claim's namespace and the request's "
                                              "DeviceClass", ["namespace", "device_class"])
        findings = _gauge("findings", "leaked or stuck claim state: the audit's claim rules' findings",
                          ["rule", "severity"])
        ready = _gauge("exporter_ready", "1 once the initial LIST is judged", [])
        restarts = CounterMetricFamily("draguard_exporter_watch_restarts", "watch streams opened again other than "
                                       "on their timeout (expired: listed again; error)", labels=["resource", "reason"])
        events = CounterMetricFamily("draguard_exporter_events", "watch events applied",
                                     labels=["resource", "type"])
        last = _gauge("exporter_last_event_age_seconds", "seconds since the last watch event of each resource (since "
                                                         "the start before the first)", ["resource"])
        judged = CounterMetricFamily("draguard_exporter_judged", "claims and nodes judged again (a change judges "
                                     "only what it touches)", labels=["kind"])
        objects = _gauge("exporter_objects", "objects held, by resource", ["resource"])
        families = (node_devices, devices, utilization, allocatable, stranded, largest, top, claims, ages, classes, findings, ready,
                    restarts, events, last, judged, objects)
        if view is None:
            yield from families
            return
        for name, pool, counts, value in view["nodes"]:
            for state, n in counts.items():
                node_devices.add_metric([pool, name, state], n)
            utilization.add_metric([pool, name], value)
        pools = view["pools"]
        for pool, profile in sorted({key[1:3] for key in pools if key[0] == "devices"}):
            for state in STATES:
                devices.add_metric([pool, profile, state], pools.get(("devices", pool, profile, state), 0))
        for (what, pool, profile, *_), n in sorted(pools.items()):
            family = {"allocatable": allocatable, "largest": largest, "top": top}.get(what)
            if family is not None:
                family.add_metric([pool, profile], n)
            elif what == "top-gpus" and ("top", pool, profile) not in pools:
                top.add_metric([pool, profile], 0)
        for (pool, profile), value in view["stranded"].items():
            stranded.add_metric([pool, profile], value)
        label = view["namespaces"]
        tallied: dict = {}
        for (namespace, phase), n in view["claims"].items():
            key = (label[namespace], phase)
            tallied[key] = tallied.get(key, 0) + n
        for namespace in sorted({ns for ns, _ in tallied}):
            for phase in PHASES:
                claims.add_metric([namespace, phase], tallied.get((namespace, phase), 0))
        for phase, (buckets, total) in view["ages"].items():
            ages.add_metric([phase], list(zip(_LE, buckets)), total)
        tallied = {}
        for (namespace, device_class), n in view["classes"].items():
            key = (label[namespace], device_class)
            tallied[key] = tallied.get(key, 0) + n
        for (namespace, device_class), n in sorted(tallied.items()):
            classes.add_metric([namespace, device_class], n)
        for key in sorted(view["rules"] | set(view["findings"])):
            findings.add_metric(list(key), view["findings"].get(key, 0))
        h = view["health"]
        ready.add_metric([], 1 if h.ready else 0)
        for (resource, why), n in sorted(h.restarts.items()):
            restarts.add_metric([resource, why], n)
        for (resource, kind), n in sorted(h.events.items()):
            events.add_metric([resource, kind], n)
        for resource in WATCHED:
            last.add_metric([resource], view["now"] - h.last_event.get(resource, h.started))
            objects.add_metric([resource], view["objects"][resource])
        for kind, n in sorted(h.judged.items()):
            judged.add_metric([kind], n)
        yield from families


def _read(s) -> dict:
    """What one scrape serves, copied from the state (under its lock)."""
    nodes = []
    for name, view in sorted(s.node_rows.items()):
        counts = dict.fromkeys(STATES, 0)
        for (_, state), n in view.states.items():
            counts[state] += n
        nodes.append((name, view.node_pool, counts, view.utilization))
    rules = {(rule.id, str(s.config.severity(rule.id, rule.severity))) for rule in LEAK_RULES
             if s.config.settings(rule.id).enabled}
    h = s.health
    health = replace(h, restarts=dict(h.restarts), events=dict(h.events), last_event=dict(h.last_event),
                     judged=dict(h.judged))
    return {"nodes": nodes, "pools": dict(s.pools), "stranded": s.stranded(), "namespaces": s.namespace_labels(),
            "claims": dict(s.claims), "ages": s.ages(), "classes": dict(s.classes), "rules": rules,
            "findings": dict(s.findings), "health": health, "now": s.clock(),
            "objects": {resource: len(s.store[resource]) for resource in WATCHED}}
