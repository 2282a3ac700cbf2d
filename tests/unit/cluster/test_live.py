"""The live reader's decisions without a cluster: the resource.k8s.io version read is the
newest one served, and a resource no served version has is listed as unreadable (the real
control plane serves every version, so this is checked with canned discovery here)."""

import json

import pytest

from draguard.cluster import live
from draguard.cluster.snapshot import RESOURCES


class CannedServer:
    """Answers /version, /metrics, discovery and LISTs from tables; counts the requests."""

    def __init__(self, served: list[str], status: dict | None = None):
        self.served, self.status, self.requests, self.listed = served, status or {}, 0, {}

    def get(self, path, query=None):
        self.requests += 1
        if path == "/version":
            return 200, json.dumps({"gitVersion": "v1.33.4"}).encode()
        if path == "/metrics":
            return self.status.get("metrics", 200), METRICS.encode()
        if path == "/apis/resource.k8s.io":
            return 200, json.dumps({"versions": [{"version": v} for v in self.served]}).encode()
        plural = path.rsplit("/", 1)[-1]
        if plural in self.status:
            return self.status[plural], b"{}"
        return 200, json.dumps({"metadata": {"resourceVersion": "7"}, "items": []}).encode()


# the API server's /metrics, in part: gates of other components and other metrics are ignored
METRICS = """# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="DRAConsumableCapacity",stage="ALPHA"} 1
kubernetes_feature_enabled{name="DRADeviceTaints",stage="ALPHA"} 0
kubernetes_feature_enabled{name="InPlacePodVerticalScaling",stage="BETA"} 1
apiserver_request_total{code="200",verb="GET"} 42
"""


@pytest.fixture
def connection():
    def make(served, status=None):
        server = CannedServer(served, status)
        conn = live.Connection(api=None, source="canned")
        conn.get = server.get
        return conn, server
    return make


def test_the_newest_served_version_is_read_and_missing_ones_are_said(connection):
    conn, server = connection(["v1beta1", "v1beta2"])
    snapshot, raw = live.read_snapshot(conn)
    assert snapshot.server_version == "v1.33.4"
    assert conn.listed["resourceclaims.resource.k8s.io"][0] == "v1beta2"
    assert snapshot.unreadable == {"devicetaintrules.resource.k8s.io":
                                   "not served (the server serves resource.k8s.io v1beta1, v1beta2)"}
    assert server.requests == 3 + len(RESOURCES) - 1  # /version, /metrics, discovery, one LIST each but the unserved
    assert snapshot.feature_gates == {"DRAConsumableCapacity": True, "DRADeviceTaints": False}
    assert snapshot.header()["featureGates"] == {"DRAConsumableCapacity": True, "DRADeviceTaints": False}


def test_gates_that_cannot_be_read_are_said_and_left_to_the_release(connection):
    conn, _ = connection(["v1"], {"metrics": 403})
    snapshot, _ = live.read_snapshot(conn)
    assert snapshot.feature_gates == {}
    assert snapshot.unreadable["feature gates"].startswith("GET /metrics: 403: judged with the release's defaults")


def test_the_audit_judges_with_the_server_s_gates_unless_told_otherwise(connection, tmp_path):
    """A 1.33 cluster that runs DRAConsumableCapacity (alpha there): its gates reach the
    config; the config file's and --feature-gates win over them."""
    from argparse import Namespace

    from draguard.cli.audit import _configure

    conn, _ = connection(["v1beta1", "v1beta2"])
    snapshot, _ = live.read_snapshot(conn)
    args = Namespace(no_config=True, config=None, kube_version=None, feature_gates=None, fail_on=None)
    config, _ = _configure(args, snapshot)
    assert config.kube_version == "1.33" and config.feature_gates["DRAConsumableCapacity"] is True
    told = Namespace(**{**vars(args), "feature_gates": "DRAConsumableCapacity=false"})
    assert _configure(told, snapshot)[0].feature_gates["DRAConsumableCapacity"] is False


def test_no_served_dra_version_stops_the_audit_with_what_to_do(connection):
    conn, _ = connection([])
    with pytest.raises(live.ClusterError, match="cannot read resourceclaims.resource.k8s.io"):
        live.read_snapshot(conn)


def test_forbidden_resources_are_listed_and_expired_credentials_stop(connection):
    conn, _ = connection(["v1"], {"deployments": 403})
    snapshot, _ = live.read_snapshot(conn)
    assert snapshot.unreadable["deployments.apps"].startswith("forbidden (RBAC)")
    conn, _ = connection(["v1"], {"pods": 401})
    with pytest.raises(live.ClusterError, match="rejected the credentials reading pods"):
        live.read_snapshot(conn)
