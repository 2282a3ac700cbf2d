"""A live cluster's feature gates, as its API server reports them: every Kubernetes component
exports `kubernetes_feature_enabled{name="...",stage="..."} 0|1` on /metrics
(k8s.io/component-base/metrics/prometheus/feature, registered for every gate since 1.26).
The API server's gates decide what it stores (the fields of a gate that is off are dropped);
the scheduler, which runs the allocator, is normally given the same."""

from __future__ import annotations

import re

from ..facts.gates import known_gates

METRICS_PATH = "/metrics"
_SAMPLE = re.compile(r'^kubernetes_feature_enabled\{([^}]*)\}\s+([0-9.eE+-]+)\s*$', re.MULTILINE)
_NAME = re.compile(r'(?:^|,)name="([^"]*)"')


def gates_from_metrics(text: str) -> dict[str, bool]:
    """{gate: enabled} for the gates draguard knows among the samples of `text` (the
    Prometheus text format)."""
    gates = {}
    for labels, value in _SAMPLE.findall(text):
        name = _NAME.search(labels)
        if name and name.group(1) in known_gates():
            gates[name.group(1)] = float(value) == 1.0
    return gates
