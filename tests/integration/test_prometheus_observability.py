"""The dashboard and the alerts under deploy/observability, proven by the real Prometheus (the
Debian package; .ci/run installs it) rather than read by a pattern: `promtool` checks and
unit-tests the alerts on series named as the exporter serves them, and a `prometheus` scraping
an in-process exporter of a small synthetic cluster answers every query of the dashboard and
evaluates the alerts. Skipped, saying why, where the binaries are absent."""

from __future__ import annotations

import copy
import json
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from datetime import datetime, timezone

import pytest
import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from draguard.cli.exporter import serve
from draguard.cluster.exporter import CLAIMS, NODES, PODS, SLICES, ExporterState
from draguard.core.config import Config
from draguard.dra.generate import generate
from draguard.model.manifest import Manifest

from support.paths import DATA, ROOT

PROMTOOL, PROMETHEUS = shutil.which("promtool"), shutil.which("prometheus")
pytestmark = pytest.mark.skipif(PROMTOOL is None or PROMETHEUS is None,
                                reason="Prometheus is not installed (apt install prometheus: prometheus and promtool)")

OBSERVABILITY = ROOT / "deploy" / "observability"
ALERT_TESTS = DATA / "prometheus" / "alerts.test.yaml"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc).timestamp()
KINDS = {"Node": NODES, "ResourceSlice": SLICES, "Pod": PODS, "ResourceClaim": CLAIMS}
#: Grafana's variables as a dashboard load would set them: `$node_pool` at its default, All
#: (the variable's allValue), and at one pool; the built-in intervals at what Grafana picks for
#: a 1 s scrape interval.
ALL, FULL_POOL = {"$node_pool": ".*"}, {"$node_pool": "full"}
GRAFANA = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h"}
#: panels allowed no series for the full pool alone: the audit gives no stranded ratio where
#: nothing fits even after repacking (0 allocatable of 0 possible)
EMPTY_WHEN_FULL = {"Fragmentation: stranded capacity per profile"}
#: alerts that the synthetic cluster leaves pending (the `for` of each is minutes; the test
#: lasts seconds), and the one it must leave inactive: the exporter is ready and its streams
#: do not keep restarting (promtool's unit test makes that one fire)
PENDING = {"DraguardClaimStuckDeleting", "DraguardReservationForGonePod", "DraguardPoolCannotPlaceLargestProfile"}
INACTIVE = {"DraguardExporterNotReady"}


def _rules_file(folder) -> None:
    """The PrometheusRule's spec.groups as a plain rules file, as its header says to copy them."""
    rule = yaml.safe_load((OBSERVABILITY / "prometheusrule.yaml").read_text())
    (folder / "draguard-rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}, sort_keys=False))


def _promtool(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


# -- the synthetic cluster -------------------------------------------------------------------

def _pod(name: str, node: str, namespace: str = "team-a") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"pod-{namespace}-{name}",
                         "creationTimestamp": "2026-12-01T11:00:00Z"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}, "status": {"phase": "Running"}}


def _claim(name: str, node: str | None = None, device: str | None = None, namespace: str = "team-a",
           reserved: dict | None = None, **metadata) -> dict:
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": f"claim-{namespace}-{name}",
                         "creationTimestamp": "2026-12-01T11:00:00Z", **metadata},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    if device is not None:
        body["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        if reserved:
            body["status"]["reservedFor"] = [{"resource": "pods", "name": reserved["metadata"]["name"],
                                              "uid": reserved["metadata"]["uid"]}]
    return body


def synthetic_cluster() -> list[dict]:
    """Pool h100 (three nodes of two GPUs) with a running pod's claim, a pending claim, a claim
    allocated for nobody, one reserved for a gone pod and one deleting for 30 minutes; pool
    `full` (one node) with both GPUs taken, so it cannot place its largest profile."""
    objects = generate({"nodes": [
        {"namePrefix": "gpu", "count": 3, "labels": {"karpenter.sh/nodepool": "h100"},
         "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}},
        {"namePrefix": "full", "count": 1, "labels": {"karpenter.sh/nodepool": "full"},
         "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}}]})
    for o in objects:
        o["metadata"]["uid"] = f"uid-{o['kind']}-{o['metadata']['name']}"
    runner, other, filler = _pod("runner", "gpu-0"), _pod("other", "gpu-1", "team-b"), _pod("filler", "full-0")
    return [*objects, runner, other, filler,
            _claim("held", "gpu-0", "gpu-0", reserved=runner),
            _claim("other", "gpu-1", "gpu-0", namespace="team-b", reserved=other),
            _claim("waiting"),
            _claim("leaked", "gpu-1", "gpu-1"),
            _claim("stale", "gpu-0", "gpu-1", reserved=_pod("gone", "gpu-0")),
            _claim("doomed", "gpu-2", "gpu-0", deletionTimestamp="2026-12-01T11:30:00Z",
                   finalizers=["example.com/hold"]),
            _claim("fill-0", "full-0", "gpu-0", reserved=filler),
            _claim("fill-1", "full-0", "gpu-1", reserved=filler)]


def exporter_state() -> ExporterState:
    """The exporter's state of the synthetic cluster, with one watch stream restarted (so the
    restarts counter has a series, as it does once any stream has restarted)."""
    state = ExporterState(Config(), clock=lambda: NOW)
    state.load([Manifest.from_data(copy.deepcopy(o), positions=False) for o in synthetic_cluster()],
               lambda m: KINDS[m.kind])
    state.restarted(PODS, "expired")
    return state


# -- promtool --------------------------------------------------------------------------------

def test_promtool_checks_the_alert_rules(tmp_path):
    _rules_file(tmp_path)
    done = _promtool("check", "rules", "draguard-rules.yaml", cwd=tmp_path)
    assert done.returncode == 0 and "SUCCESS: 4 rules found" in done.stdout, done.stdout + done.stderr


def test_the_alert_unit_tests_feed_series_the_exporter_serves():
    """promtool's unit test proves the alerts only on the series it is fed: those must be the
    exporter's own names with its own label names, or a misnamed alert and a misnamed input
    would agree."""
    served: dict[str, set] = {}
    for family in text_string_to_metric_families(generate_latest(exporter_state().registry).decode()):
        for sample in family.samples:
            served.setdefault(sample.name, set()).add(frozenset(sample.labels))
    tests = yaml.safe_load(ALERT_TESTS.read_text())["tests"]
    fed = [s["series"] for t in tests for s in t["input_series"]]
    assert len(fed) > 10
    for series in fed:
        name, _, labels = series.partition("{")
        keys = frozenset(pair.split("=")[0].strip() for pair in labels.rstrip("}").split(",") if pair.strip())
        assert keys in served.get(name, set()), series


def test_promtool_unit_tests_fire_each_alert_past_its_threshold_only(tmp_path):
    _rules_file(tmp_path)
    shutil.copy(ALERT_TESTS, tmp_path / ALERT_TESTS.name)
    done = _promtool("test", "rules", ALERT_TESTS.name, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    alerts = {r["alert"] for g in yaml.safe_load((tmp_path / "draguard-rules.yaml").read_text())["groups"]
              for r in g["rules"]}
    tested = {case["alertname"] for t in yaml.safe_load(ALERT_TESTS.read_text())["tests"]
              for case in t["alert_rule_test"]}
    assert tested == alerts == PENDING | INACTIVE


# -- prometheus scraping the exporter --------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(base: str, path: str, **params) -> dict:
    query = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{base}{path}?{query}", timeout=10) as response:
        return json.load(response)


def _until(what: str, check, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.25)
    pytest.fail(f"Prometheus: {what} within {seconds} s")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    """The real Prometheus on loopback scraping an in-process exporter every second, with the
    alerts loaded; yields its base URL once it holds at least three scrapes, then is stopped
    (killed if it will not stop) and its folder removed."""
    folder = tmp_path_factory.mktemp("prometheus")
    state = exporter_state()
    exporter = serve(("127.0.0.1", 0), state, lambda: True)
    process = log = None
    try:
        _rules_file(folder)
        port = _free_port()
        (folder / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": ["draguard-rules.yaml"],
            "scrape_configs": [{"job_name": "draguard",
                                "static_configs": [{"targets": [f"127.0.0.1:{exporter.server_address[1]}"]}]}]}))
        log = (folder / "prometheus.log").open("w")
        process = subprocess.Popen([PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
                                    f"--storage.tsdb.path={folder / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                                   stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"

        def scrapes() -> int:
            if process.poll() is not None:
                pytest.fail(f"prometheus exited {process.returncode}: "
                            f"{(folder / 'prometheus.log').read_text()[-2000:]}")
            try:
                query = "count_over_time(draguard_exporter_ready[5m])"
                result = _get(base, "/api/v1/query", query=query)["data"]["result"]
            except OSError:  # not listening yet
                return 0
            return int(result[0]["value"][1]) if result else 0

        _until("the first scrape", lambda: scrapes() >= 1)
        state.tick()  # a judging pass between scrapes: the judge duration's rate is not all zeros
        _until("three scrapes", lambda: scrapes() >= 3)
        yield base
    finally:
        if process is not None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if log is not None:
            log.close()
        exporter.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


def _instant(rfc3339: str) -> datetime:
    """Prometheus's timestamps (nanoseconds, `Z` or an offset) as a datetime."""
    return datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", rfc3339).replace("Z", "+00:00"))


def _dashboard() -> dict:
    return json.loads((OBSERVABILITY / "dashboard.json").read_text())


def _substituted(expr: str, variables: dict) -> str:
    for name, value in sorted({**GRAFANA, **variables}.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace("${" + name[1:] + "}", value).replace(name, value)
    assert "$" not in expr, f"a Grafana variable the test does not set: {expr}"
    return expr


def test_the_dashboards_variable_lists_the_pools(prometheus):
    """`label_values(metric, label)` is Grafana's call of the label values API."""
    (variable,) = [v for v in _dashboard()["templating"]["list"] if v["type"] == "query"]
    metric, label = variable["query"]["query"].removeprefix("label_values(").rstrip(")").replace(" ", "").split(",")
    answer = _get(prometheus, f"/api/v1/label/{label}/values", **{"match[]": metric})
    assert answer["status"] == "success" and set(answer["data"]) == {"h100", "full"}


@pytest.mark.parametrize("variables, allowed_empty", [(ALL, set()), (FULL_POOL, EMPTY_WHEN_FULL)],
                         ids=["all-pools", "the-full-pool"])
def test_every_dashboard_query_answers(prometheus, variables, allowed_empty):
    """Every panel target's expression parses and returns at least one series: the synthetic
    cluster has every state a panel shows (a deleting claim for the age panel, a restarted
    stream for the restarts panel), so an empty answer means a query names what is not served,
    or a panel left blank where it has something to say (a full pool's allocatable is 0)."""
    targets = [(panel["title"], target["expr"]) for panel in _dashboard()["panels"] for target in panel["targets"]]
    assert len(targets) >= 12
    empty = []
    for title, expr in targets:
        answer = _get(prometheus, "/api/v1/query", query=_substituted(expr, variables))
        assert answer["status"] == "success", (title, expr, answer)
        if not answer["data"]["result"] and title not in allowed_empty:
            empty.append((title, expr))
    assert not empty, f"no series for: {empty}"


def test_the_alerts_load_and_the_synthetic_cluster_makes_them_pending(prometheus):
    """Prometheus loads the alerts and evaluates them on what the exporter serves: the leaks of
    the synthetic cluster (a claim deleting for 30 minutes, a reservation for a gone pod, a full
    pool) are pending, waiting out their `for`; the exporter's health alert is not."""

    since = datetime.now(timezone.utc)  # after three scrapes

    def evaluated():
        rules = [r for g in _get(prometheus, "/api/v1/rules", type="alert")["data"]["groups"] for r in g["rules"]]
        return rules if rules and all(_instant(r["lastEvaluation"]) > since for r in rules) else None

    rules = _until("the alerts evaluated since the scrapes", evaluated)
    assert {r["name"] for r in rules} == PENDING | INACTIVE
    for rule in rules:
        assert rule["health"] == "ok", rule
        assert rule["state"] == ("pending" if rule["name"] in PENDING else "inactive"), rule
    (full,) = [a for r in rules if r["name"] == "DraguardPoolCannotPlaceLargestProfile" for a in r["alerts"]]
    assert full["labels"]["node_pool"] == "full" and full["labels"]["profile"] == "gpu"
