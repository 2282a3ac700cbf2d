"""A real Kubernetes control plane for integration tests, on loopback only.

etcd, kube-apiserver (all resource.k8s.io versions served), kube-scheduler and
kube-controller-manager (leader election off; the resourceclaim, deployment, replicaset,
disruption, garbage-collector, podgc, statefulset, job and device taint eviction controllers;
node lifecycle off) are
built from upstream modules by harness/control-plane/build.sh. There is no kubelet: a fake one
keeps the GPU nodes Ready, moves bound pods to Running and, on deletion, waits out the
preStop/grace-period model before removing the pod; a fake driver publishes the nodes'
ResourceSlices from draguard's inventory generator."""

from __future__ import annotations

import base64
import os
import socket
import ssl
import subprocess
import threading
from contextlib import contextmanager
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from kubernetes import client, dynamic

from draguard.facts.shipped import device_classes
from draguard.dra.generate import generate
from draguard.model.teardown import pod_gone_after
from support.harness import built

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "harness" / "control-plane" / "build.sh"
FEATURE_GATES = "DRAPartitionableDevices=true,DRAConsumableCapacity=true,DRADeviceBindingConditions=true"
RUN_SECONDS = "fidelity.draguard.io/run-seconds"  # a pod that exits 0 this long after it runs
CONTROLLERS = ("resourceclaim-controller,deployment-controller,replicaset-controller,disruption-controller,"
               "garbage-collector-controller,pod-garbage-collector-controller,statefulset-controller,job-controller,"
               "device-taint-eviction-controller")


CONTROLLER_MANAGER = "system:kube-controller-manager"


def _new_token() -> str:
    return base64.b32encode(os.urandom(20)).decode().lower()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build() -> Path:
    return Path(built(BUILD))


@dataclass
class ControlPlane:
    bin_dir: Path
    work: Path
    token: str = field(default_factory=lambda: _new_token())
    processes: list = field(default_factory=list)
    #: users without any group (no permission until a test binds a role), by name -> token
    users: dict = field(default_factory=lambda: {"auditor": _new_token()})

    def __post_init__(self):
        self.etcd_port, self.etcd_peer, self.api_port = free_port(), free_port(), free_port()
        self.url = f"https://127.0.0.1:{self.api_port}"
        self.ca_file = self.work / "certs" / "apiserver.crt"  # the self-signed serving cert

    # -- processes --
    def _spawn(self, name: str, *args: str) -> None:
        log = open(self.work / f"{name}.log", "wb")
        self.processes.append((name, subprocess.Popen([str(self.bin_dir / name), *args], stdout=log,
                                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)))

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.work / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def _wait(self, what: str, probe, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited ({process.returncode}):\n{self.log_tail(name)}")
            try:
                if probe():
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{what} not ready after {timeout}s")

    def _get(self, url: str, token: bool = True) -> bool:
        if url.startswith("https") and not self.ca_file.exists():
            return False
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.token}"} if token else {})
        context = ssl.create_default_context(cafile=str(self.ca_file)) \
            if url.startswith("https") else None
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.status == 200

    def start(self) -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (self.work / "sa.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                              serialization.PrivateFormat.TraditionalOpenSSL,
                                                              serialization.NoEncryption()))
        # the controller manager as a cluster names it (without per-controller service account
        # credentials): admission sees its requests as that user
        manager_token = _new_token()
        (self.work / "tokens.csv").write_text(
            f"{self.token},admin,admin,system:masters\n"
            f"{manager_token},{CONTROLLER_MANAGER},{CONTROLLER_MANAGER},system:masters\n" + "".join(
            f"{token},{name},{name}\n" for name, token in self.users.items()))
        self._write_kubeconfig()
        self._spawn("etcd", "--data-dir", str(self.work / "etcd"), "--name", "draguard",
                    "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                    "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
                    "--listen-peer-urls", f"http://127.0.0.1:{self.etcd_peer}",
                    "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.etcd_peer}",
                    "--initial-cluster", f"draguard=http://127.0.0.1:{self.etcd_peer}",
                    "--unsafe-no-fsync", "--log-level", "warn")
        self._wait("etcd", lambda: self._get(f"http://127.0.0.1:{self.etcd_port}/health", token=False))
        self._spawn("kube-apiserver", "--etcd-servers", f"http://127.0.0.1:{self.etcd_port}",
                    "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
                    "--endpoint-reconciler-type", "none",  # loopback cannot back the kubernetes Service
                    "--secure-port", str(self.api_port), "--cert-dir", str(self.work / "certs"),
                    "--token-auth-file", str(self.work / "tokens.csv"), "--authorization-mode", "RBAC",
                    "--service-account-issuer", "https://kubernetes.default.svc",
                    "--service-account-key-file", str(self.work / "sa.key"),
                    "--service-account-signing-key-file", str(self.work / "sa.key"),
                    "--service-cluster-ip-range", "10.96.0.0/24",
                    "--allow-privileged=true",  # as kubeadm and managed clusters run it: node agents need it
                    "--runtime-config", "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true,"
                                        "resource.k8s.io/v1alpha3=true",
                    "--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition",
                    "--feature-gates", FEATURE_GATES)
        self._wait("kube-apiserver", lambda: self._get(f"{self.url}/readyz"))
        common = ("--kubeconfig", str(self.kubeconfig), "--leader-elect=false", "--bind-address", "127.0.0.1",
                  "--secure-port", "0", "--feature-gates", FEATURE_GATES)
        self._spawn("kube-scheduler", *common)
        manager = ("--kubeconfig", str(self.kubeconfig_for(CONTROLLER_MANAGER, manager_token, self.work)),
                   *common[2:])
        self._spawn("kube-controller-manager", *manager, "--controllers", CONTROLLERS,
                    "--use-service-account-credentials=false")
        time.sleep(1)  # let a bad flag or kubeconfig surface as an exit, which _wait reports
        self._wait("kube-scheduler and kube-controller-manager", lambda: True, timeout=2)

    def _write_kubeconfig(self) -> None:
        self.kubeconfig = self.kubeconfig_for("admin", self.token, self.work)

    def kubeconfig_for(self, user: str, token: str, folder: Path, server: str | None = None) -> Path:
        """A kubeconfig for `user` with `token` (to this plane, or to `server`), written in `folder`."""
        path = folder / f"kubeconfig-{user}-{len(list(folder.glob('kubeconfig*')))}"
        path.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: draguard\n  cluster:\n"
            f"    server: {server or self.url}\n    certificate-authority: {self.ca_file}\nusers:\n- name: {user}\n"
            f"  user:\n    token: {token}\ncontexts:\n- name: draguard\n  context: {{cluster: draguard, user: {user}}}\n"
            "current-context: draguard\n")
        return path

    def stop(self) -> None:
        for _, process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for _, process in reversed(self.processes):
            try:
                process.wait(timeout=5)  # then SIGKILL: nothing here needs a graceful shutdown
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    # -- clients --
    def api(self) -> client.ApiClient:
        configuration = client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = str(self.ca_file)
        configuration.api_key = {"authorization": f"Bearer {self.token}"}
        return client.ApiClient(configuration)

    def dry_run_create(self, obj: dict, namespace: str | None = None, user: str | None = None,
                       timeout: float = 20) -> tuple[int, str, list[str]]:
        """(HTTP status, body, Warning headers) of a server-side dry-run create of `obj` in
        `namespace` (None: cluster-scoped), as `user` when given (impersonated, in
        system:masters: admission alone decides)."""
        import json
        import urllib.error

        from draguard.admission.install import resource_name

        version = obj["apiVersion"]
        base = f"/api/{version}" if "/" not in version else f"/apis/{version}"
        where = f"/namespaces/{namespace}" if namespace else ""
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        if user:
            headers.update({"Impersonate-User": user, "Impersonate-Group": "system:masters"})
        request = urllib.request.Request(f"{self.url}{base}{where}/{resource_name(obj['kind'])}?dryRun=All",
                                         data=json.dumps(obj).encode(), method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=str(self.ca_file)),
                                        timeout=timeout) as response:
                return response.status, response.read().decode(), response.headers.get_all("Warning") or []
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), exc.headers.get_all("Warning") or []

    def apply(self, objects: list[dict], namespace: str | None = None) -> None:
        dyn = dynamic.DynamicClient(self.api())
        for obj in objects:
            resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            ns = obj.get("metadata", {}).get("namespace") or (namespace if resource.namespaced else None)
            resource.create(body=obj, namespace=ns)


class FakeKubelet(threading.Thread):
    """Plays the kubelet for `nodes`: Ready nodes, Running pods, modelled teardown."""

    def __init__(self, plane: ControlPlane, nodes: list[dict], start_seconds: float = 0.0, every: float = 0.3):
        """`start_seconds`: from first seeing a pod on its node to Running and Ready. A pod
        whose template carries the RUN_SECONDS annotation succeeds that long after it runs
        (a Job's). On a node in `driver_down` the DRA driver is gone: no pod starts there and
        a deleted pod is never removed (its devices cannot be unprepared), as the kubelet does.
        `every`: seconds between its looks at the pods."""
        super().__init__(daemon=True)
        self.plane, self.nodes, self.start_seconds, self.every = plane, nodes, start_seconds, every
        self.seen: dict[str, float] = {}
        self.running_since: dict[str, float] = {}
        self.driver_down: set[str] = set()
        self.core = client.CoreV1Api(plane.api())
        self.stopping = threading.Event()
        self.errors: list[str] = []

    def register_nodes(self) -> None:
        for node in self.nodes:
            self.core.create_node(node)
            name = node["metadata"]["name"]
            status = {"status": {
                "conditions": [{"type": "Ready", "status": "True", "reason": "FakeKubelet", "message": "ready",
                                "lastHeartbeatTime": _now(), "lastTransitionTime": _now()}],
                "capacity": {"cpu": "64", "memory": "512Gi", "pods": "110"},
                "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}
            self.core.patch_node_status(name, status)

    def run(self) -> None:
        names = {n["metadata"]["name"] for n in self.nodes}
        while not self.stopping.is_set():
            try:
                for pod in self.core.list_pod_for_all_namespaces().items:
                    if pod.spec.node_name in names:
                        self._step(pod)
            except Exception as exc:  # keep playing; the test reports what it saw
                self.errors.append(str(exc))
            self.stopping.wait(self.every)

    def driver(self, node: str, up: bool) -> None:
        if up:
            self.driver_down.discard(node)
            self.seen = {uid: time.monotonic() for uid in self.seen}  # prepare is retried now
        else:
            self.driver_down.add(node)

    def _step(self, pod) -> None:
        meta = pod.metadata
        if pod.spec.node_name in self.driver_down:
            return
        if meta.deletion_timestamp is not None:
            # the pod is gone once its last container stopped, in the kubelet's order (every
            # preStop at once, sidecars after the main containers), for processes that exit
            # on SIGTERM: draguard's termination model, played against the real controllers
            grace = meta.deletion_grace_period_seconds or 0
            requested = meta.deletion_timestamp.timestamp() - grace
            spec = client.ApiClient().sanitize_for_serialization(pod.spec)
            if time.time() >= requested + pod_gone_after(grace, spec):
                self.core.delete_namespaced_pod(meta.name, meta.namespace, grace_period_seconds=0)
            return
        first = self.seen.setdefault(meta.uid, time.monotonic())
        run = (meta.annotations or {}).get(RUN_SECONDS)
        if pod.status.phase == "Running" and run is not None:
            since = self.running_since.setdefault(meta.uid, time.monotonic())
            if time.monotonic() - since >= float(run):
                self.core.patch_namespaced_pod_status(meta.name, meta.namespace, {"status": {
                    "phase": "Succeeded",
                    "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted",
                                    "lastTransitionTime": _now()}],
                    "containerStatuses": [{"name": c.name, "image": c.image, "imageID": "", "ready": False,
                                           "restartCount": 0, "started": False, "state": {"terminated": {
                                               "exitCode": 0, "reason": "Completed", "startedAt": _now(),
                                               "finishedAt": _now()}}} for c in pod.spec.containers]}})
            return
        if pod.status.phase == "Pending" and time.monotonic() - first >= self.start_seconds:
            self.core.patch_namespaced_pod_status(meta.name, meta.namespace, {"status": {
                "phase": "Running", "startTime": _now(),
                "conditions": [{"type": t, "status": "True", "lastTransitionTime": _now()}
                               for t in ("Initialized", "ContainersReady", "Ready")],
                "containerStatuses": [{"name": c.name, "image": c.image, "imageID": "", "ready": True,
                                       "restartCount": 0, "started": True,
                                       "state": {"running": {"startedAt": _now()}}} for c in pod.spec.containers]}})


@contextmanager
def extra_gpu_node(plane: ControlPlane, gpus: dict, prefix: str, start_seconds: float = 0.0,
                   labels: dict | None = None):
    """A node of the fake driver added to a running plane for one test, with its own fake
    kubelet (`gpus`: the inventory spec's gpus entry; `labels`: the node's, as GPU Feature
    Discovery would set them); yields its name; removes its slices and the node afterwards
    (the caller removes its own workloads first)."""
    objects = generate({"nodes": [{"namePrefix": prefix, "count": 1, "gpus": gpus, "labels": labels or {}}]})
    nodes = [o for o in objects if o["kind"] == "Node"]
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    kubelet = FakeKubelet(plane, nodes, start_seconds)
    kubelet.register_nodes()
    plane.apply(slices)
    kubelet.start()
    try:
        yield nodes[0]["metadata"]["name"]
    finally:
        kubelet.stopping.set()
        for o in slices:
            client.ResourceV1Api(plane.api()).delete_resource_slice(o["metadata"]["name"])
        client.CoreV1Api(plane.api()).delete_node(nodes[0]["metadata"]["name"])


def until(what: str, check, timeout: float = 60, every: float = 0.5):
    """check()'s first truthy answer, polling every `every` s; an AssertionError naming `what`
    and the last answer when `timeout` passes first."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def gpu_inventory(nodes: int = 2, gpus: int = 2) -> tuple[list[dict], list[dict]]:
    """(Node objects, ResourceSlices + DeviceClasses) of the fake NVIDIA driver."""
    objects = generate({"nodes": [{"namePrefix": "gpu-node", "count": nodes,
                                   "gpus": {"model": "H100-80GB", "count": gpus, "mig": "none"}}]})
    nodes_ = [o for o in objects if o["kind"] == "Node"]
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    classes = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                "spec": {"selectors": [{"cel": {"expression": entry["selector"]}}]}}
               for name, entry in device_classes().items() if entry["driver"] == "gpu.nvidia.com"]
    return nodes_, classes + slices
