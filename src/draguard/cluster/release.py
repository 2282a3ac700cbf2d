"""The release and the feature gates a live cluster runs, so that the audit and the webhook
judge it as it is. The gates are read as its API server reports them: every Kubernetes
component exports `kubernetes_feature_enabled{name="...",stage="..."} 0|1` on /metrics
(k8s.io/component-base/metrics/prometheus/feature, registered for every gate since 1.26).
The API server's gates decide what it stores (the fields of a gate that is off are dropped);
the scheduler, which runs the allocator, is normally given the same."""

from __future__ import annotations

import re

from ..core.config import Config
from ..core.versions import check_kube_version
from ..facts.gates import known_gates

METRICS_PATH = "/metrics"
_SAMPLE = re.compile(r'^kubernetes_feature_enabled\{([^}]*)\}\s+([01](?:\.0*)?)\s*$', re.MULTILINE)
_NAME = re.compile(r'(?:^|,)name="([^"]*)"')


def gates_from_metrics(text: str) -> dict[str, bool]:
    """{gate: enabled} for the gates draguard knows among the samples of `text` (the
    Prometheus text format)."""
    gates = {}
    for labels, value in _SAMPLE.findall(text):
        name = _NAME.search(labels)
        if name and name.group(1) in known_gates():
            gates[name.group(1)] = value.startswith("1")
    return gates


def judge_as_cluster(config: Config, server_version: str, gates: dict, given_version: str | None) -> str | None:
    """`config` set to judge as the cluster: its release is `given_version` (the command
    line's), else the server's; the gates the server reported count where the config sets
    none. ValueError for an unknown `given_version`; a note when the server's version is one
    draguard does not know (then the config's release is kept)."""
    config.feature_gates = {**gates, **config.feature_gates}
    wanted = given_version or server_version
    if not wanted:
        return None
    try:
        config.kube_version = check_kube_version(wanted)
    except ValueError:
        if given_version:
            raise
        return (f"the server's version {server_version} is not one draguard knows; judging as {config.kube_version} "
                "(pass --kube-version)")
    return None
