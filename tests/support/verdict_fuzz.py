"""Seeded mutations of Kubernetes objects for the one-verdict differential test: each one a
change a tenant might make that moves an object across an exported rule's line (a legacy GPU
limit on or off, a claim referenced or left undefined, an allocation mode, a device-visibility
variable, hostIPC, a host device mount, a grace period, a surge) or a graft of a field from
another object of the same kind. Deterministic for a seed."""

from __future__ import annotations

import copy
import random

from draguard.model.manifest import Manifest
from draguard.model.pods import mapping, mappings, pod_sites

GPU = "nvidia.com/gpu"
VISIBILITY = ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"]
#: values that hide devices, others that select them, and spellings between (case, whitespace
#: Python's str.strip and CEL's trim() may read differently)
VISIBILITY_VALUES = ["0", "all", "void", " None ", "NONE", "\tvoid\n", "\x1fnone", "none\u00a0", "vo id",
                     "GPU-1234", ""]
HOST_PATHS = ["/dev", "/dev/nvidia0", "/dev/nvidiactl", "/dev/dri", "/dev/dri/card0", "/tmp/nvidia-mps",
              "/run/nvidia/driver", "/var/run/nvidia-persistenced", "/var/log", "/dev//", "/device", "/opt/nvidia",
              "/dev\n", "/dev/nvidia0\n", "/dev/.", "/dev/./nvidia0", "//dev", "/dev/shm", "/dev/kfd", "/dev/accel",
              "/run/nvidia", "/dev/dri/renderD128", "/DEV/nvidia0"]
SHM_MOUNTS = ["/dev/shm", "/dev/shm/", "/dev/shm//", "/dev/shm\n", "/dev/shmem", "/dev/shm/x", "/shm"]
SURGES = [0, 1, 2, "0%", "00%", "25%", "100%"]


def _specs(data: dict) -> list[dict]:
    """The pod specs of `data`, as dicts inside it (mutated in place)."""
    return [site.spec for site in pod_sites(Manifest.from_data(data, positions=False)) if site.spec]


def _containers(spec: dict) -> list[dict]:
    return [c for key in ("containers", "initContainers") for c in mappings(spec.get(key))]


def _requests(data: dict) -> list[dict]:
    """The request mappings of a claim or a claim template (v1: `exactly`; v1beta1 flat)."""
    spec = mapping(data.get("spec"))
    if data.get("kind") == "ResourceClaimTemplate":
        spec = mapping(spec.get("spec"))
    found = []
    for request in mappings(mapping(spec.get("devices")).get("requests")):
        if isinstance(request.get("exactly"), dict):
            found.append(request["exactly"])
        elif isinstance(request.get("firstAvailable"), list):
            found.extend(s for s in request["firstAvailable"] if isinstance(s, dict))
        else:
            found.append(request)
    return found


def legacy_limit(data, rng) -> bool:
    containers = [c for s in _specs(data) for c in _containers(s)]
    if not containers:
        return False
    container = rng.choice(containers)
    resources = container.setdefault("resources", {})
    limits = resources.setdefault("limits", {})
    if GPU in limits:
        del limits[GPU]
        resources.get("requests", {}).pop(GPU, None)
    else:
        limits[GPU] = rng.choice([1, 2, "1"])
    return True


def visibility_env(data, rng) -> bool:
    containers = [c for s in _specs(data) for c in _containers(s)]
    if not containers:
        return False
    container = rng.choice(containers)
    if container.get("env") and rng.random() < 0.3:
        del container["env"]
    else:
        entry = {"name": rng.choice(VISIBILITY)}
        value = rng.choice(VISIBILITY_VALUES + [None, None])
        if value is not None:
            entry["value"] = value
        elif rng.random() < 0.5:
            entry["valueFrom"] = {"fieldRef": {"fieldPath": "metadata.annotations['gpus']"}}
        container.setdefault("env", []).append(entry)
    return True


def host_ipc(data, rng) -> bool:
    specs = _specs(data)
    if not specs:
        return False
    spec = rng.choice(specs)
    if spec.get("hostIPC"):
        spec.pop("hostIPC")
    else:
        spec["hostIPC"] = True
    return True


def host_device(data, rng) -> bool:
    specs = _specs(data)
    if not specs:
        return False
    spec = rng.choice(specs)
    volume = {"name": f"host-{rng.randrange(1000)}", "hostPath": {"path": rng.choice(HOST_PATHS)}}
    if rng.random() < 0.3:
        volume["hostPath"]["type"] = "Directory"
    spec.setdefault("volumes", []).append(volume)
    return True


def grace(data, rng) -> bool:
    specs = _specs(data)
    if not specs:
        return False
    spec = rng.choice(specs)
    value = rng.choice([0, 0, 1, 30, None])
    if value is None:
        spec.pop("terminationGracePeriodSeconds", None)
    else:
        spec["terminationGracePeriodSeconds"] = value
    if rng.random() < 0.2:  # claims present but empty, or one claim
        spec["resourceClaims"] = rng.choice([[], [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]])
    return True


def shm(data, rng) -> bool:
    specs = _specs(data)
    if not specs:
        return False
    spec = rng.choice(specs)
    memory = [v for v in spec.get("volumes") or [] if (v.get("emptyDir") or {}).get("medium") == "Memory"]
    if memory and rng.random() < 0.5:
        empty = rng.choice(memory)["emptyDir"]
        if "sizeLimit" in empty:
            del empty["sizeLimit"]
        else:
            empty["sizeLimit"] = rng.choice(["1Gi", "16Gi"])
    else:
        empty = {"medium": rng.choice(["Memory", "Memory", ""])}
        if rng.random() < 0.4:
            empty["sizeLimit"] = "8Gi"
        name = f"shm-{rng.randrange(1000)}"
        spec.setdefault("volumes", []).append({"name": name, "emptyDir": empty})
        containers = _containers(spec)
        if containers and rng.random() < 0.8:
            rng.choice(containers).setdefault("volumeMounts", []).append(
                {"name": name, "mountPath": rng.choice(SHM_MOUNTS)})
    return True


def pod_claims(data, rng) -> bool:
    """A claim referenced by a container that the pod defines or not, a pod claim unused,
    with one source, both or none, or the pod's claims removed."""
    specs = _specs(data)
    if not specs:
        return False
    spec = rng.choice(specs)
    defined = [c.get("name") for c in spec.get("resourceClaims") or [] if isinstance(c, dict)]
    choice = rng.randrange(4)
    if choice == 0 and defined:
        del spec["resourceClaims"]
    elif choice == 1:
        name = rng.choice(defined + ["undefined-gpu"]) if defined else "undefined-gpu"
        containers = _containers(spec)
        if not containers:
            return False
        rng.choice(containers).setdefault("resources", {}).setdefault("claims", []).append({"name": name})
    else:
        entry = {"name": f"claim-{rng.randrange(100)}"}
        sources = rng.choice([["resourceClaimTemplateName"], ["resourceClaimName"],
                              ["resourceClaimName", "resourceClaimTemplateName"], []])
        for source in sources:
            entry[source] = "gpu"
        spec.setdefault("resourceClaims", []).append(entry)
        if choice == 3:  # and used by a container
            containers = _containers(spec)
            if containers:
                rng.choice(containers).setdefault("resources", {}).setdefault("claims", []).append(
                    {"name": entry["name"]})
    return True


def mps_daemon(data, rng) -> bool:
    containers = [c for s in _specs(data) for c in _containers(s)]
    if not containers:
        return False
    container = rng.choice(containers)
    where = rng.choice(["command", "args"])
    container[where] = rng.choice([["nvidia-cuda-mps-control", "-d"], ["sh", "-c", "nvidia-cuda-mps-control -f"],
                                   ["python", "serve.py"]])
    return True


def allocation_mode(data, rng) -> bool:
    requests = _requests(data)
    if not requests:
        return False
    request = rng.choice(requests)
    mode = rng.choice(["All", "ExactCount", None])
    if mode is None:
        request.pop("allocationMode", None)
        request.pop("count", None)
    else:
        request["allocationMode"] = mode
        if mode == "All":
            request.pop("count", None)
        else:
            request["count"] = rng.choice([1, 2])
    if rng.random() < 0.25:
        request["adminAccess"] = rng.choice([True, False])
    return True


def selectors(data, rng) -> bool:
    if data.get("kind") == "DeviceClass":
        spec = data.setdefault("spec", {})
        if spec.get("selectors") or rng.random() < 0.3:
            spec["selectors"] = rng.choice([[], None])
            if spec["selectors"] is None:
                del spec["selectors"]
        else:
            spec["selectors"] = [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]
        return True
    requests = _requests(data)
    if not requests:
        return False
    request = rng.choice(requests)
    if request.get("selectors"):
        del request["selectors"]
    else:
        request["selectors"] = [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName != ''"}}]
    return True


def admin_label(data, rng) -> bool:
    if data.get("kind") != "Namespace":
        return False
    labels = data.setdefault("metadata", {}).setdefault("labels", {})
    key = "resource.kubernetes.io/admin-access"
    if key in labels:
        del labels[key]
    else:
        labels[key] = rng.choice(["true", "True", "TRUE", "false", "yes", "1"])
    return True


def surge(data, rng) -> bool:
    kind = data.get("kind")
    spec = data.get("spec")
    if kind not in ("Deployment", "DaemonSet") or not isinstance(spec, dict):
        return False
    key = "strategy" if kind == "Deployment" else "updateStrategy"
    if rng.random() < 0.2:
        spec[key] = {"type": "Recreate" if kind == "Deployment" else "OnDelete"}
        return True
    rolling = {"maxSurge": rng.choice(SURGES)}
    rolling["maxUnavailable"] = 1 if rolling["maxSurge"] in (0, "0%") else rng.choice([0, 1])
    spec[key] = {"type": "RollingUpdate", "rollingUpdate": rolling}
    if kind == "Deployment" and rng.random() < 0.2:
        spec["replicas"] = 0
    return True


def device_names(data, rng) -> bool:
    """A slice device given an unqualified attribute or capacity name that repeats a qualified one."""
    if data.get("kind") != "ResourceSlice":
        return False
    devices = (data.get("spec") or {}).get("devices") or []
    if not devices:
        return False
    device = rng.choice(devices)
    driver = data["spec"].get("driver", "gpu.example.com")
    field = rng.choice(["attributes", "capacity"])
    entries = device.setdefault(field, {})
    value = {"string": "x"} if field == "attributes" else {"value": "1"}
    name = rng.choice(["model", "memory", "index"])
    entries[rng.choice([name, f"{driver}/{name}"])] = value
    return True


MUTATIONS = [legacy_limit, visibility_env, host_ipc, host_device, grace, shm, pod_claims, mps_daemon,
             allocation_mode, selectors, admin_label, surge, device_names]


def graft(data, donors: list[dict], rng) -> bool:
    """A top-level `spec` key of another object of the same kind (or a pod-spec key of another
    pod spec) copied over this one's."""
    same = [d for d in donors if d.get("kind") == data.get("kind") and d is not data]
    specs, donor_specs = _specs(data), [s for d in donors for s in _specs(d)]
    if specs and donor_specs and rng.random() < 0.6:
        spec, donor = rng.choice(specs), rng.choice(donor_specs)
        keys = [k for k in donor if k not in ("containers", "initContainers")]
        if not keys:
            return False
        key = rng.choice(keys)
        spec[key] = copy.deepcopy(donor[key])
        return True
    if not same or not isinstance(data.get("spec"), dict):
        return False
    donor = rng.choice(same).get("spec")
    if not isinstance(donor, dict) or not donor:
        return False
    key = rng.choice(sorted(donor))
    data["spec"][key] = copy.deepcopy(donor[key])
    return True


def fuzzed(seeds: list[dict], count: int, seed: int) -> list[tuple[str, dict]]:
    """`count` mutated copies of `seeds` ((what was done, the object)), each from one to three
    mutations that apply to it; seeded, so every run judges the same objects."""
    rng = random.Random(seed)
    made = []
    attempts = 0
    while len(made) < count and attempts < count * 20:
        attempts += 1
        base = rng.randrange(len(seeds))
        data = copy.deepcopy(seeds[base])
        done = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            mutation = (lambda d, r: graft(d, seeds, r)) if rng.random() < 0.2 else rng.choice(MUTATIONS)
            try:
                if mutation(data, rng):
                    done.append(getattr(mutation, "__name__", "graft").replace("<lambda>", "graft"))
            except (AttributeError, TypeError, KeyError):  # a seed of the wrong shape (some examples are)
                pass
        if done:
            made.append((f"seed {base}: {'+'.join(done)}", data))
    return made


def _pod(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai"}], **spec}}


def _claim(api_version: str, request: dict) -> dict:
    """A ResourceClaim of one request in the shape of `api_version` (v1beta1: flat)."""
    if api_version != "resource.k8s.io/v1beta1":
        request = {"name": request["name"], "exactly": {k: v for k, v in request.items() if k != "name"}}
    return {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": "gpu"},
            "spec": {"devices": {"requests": [request]}}}


def edges() -> list[tuple[str, dict]]:
    """One object for each value on a line some rule draws (every visibility value, host path,
    shm mount, grace period, surge, label value, allocation mode in each claim version), where
    a random mutation may never land."""
    found = []
    for value in VISIBILITY_VALUES + [None]:
        entry = {"name": "NVIDIA_VISIBLE_DEVICES"}
        entry.update({"value": value} if value is not None else
                     {"valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})
        pod = _pod("env")
        pod["spec"]["containers"][0]["env"] = [entry]
        found.append((f"env {value!r}", pod))
    for path in HOST_PATHS:
        found.append((f"hostPath {path!r}", _pod("host", volumes=[{"name": "h", "hostPath": {"path": path}}])))
    for mount in SHM_MOUNTS:
        for limit in (None, "1Gi"):
            empty = {"medium": "Memory", **({"sizeLimit": limit} if limit else {})}
            pod = _pod("shm", volumes=[{"name": "shm", "emptyDir": empty}])
            pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "shm", "mountPath": mount}]
            found.append((f"shm at {mount!r}, sizeLimit {limit}", pod))
    template_claim = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    for grace in (None, 0, 1):
        for claims in ([], template_claim):
            pod = _pod("grace", **({"terminationGracePeriodSeconds": grace} if grace is not None else {}),
                       **({"resourceClaims": claims} if claims else {}))
            if claims:
                pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
            found.append((f"grace {grace}, claims {claims}", pod))
    for sources in ({"resourceClaimName": "a"}, {"resourceClaimTemplateName": "a"}, {},
                    {"resourceClaimName": "a", "resourceClaimTemplateName": "a"}):
        for used in (True, False):
            pod = _pod("claims", resourceClaims=[{"name": "gpu", **sources}])
            if used:
                pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu", **({"request": "r"} if
                                                                                          sources else {})}]}
            found.append((f"pod claim {sources}, used {used}", pod))
    pod = _pod("undefined")
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    found.append(("a container claim the pod does not define", pod))
    for command in (["nvidia-cuda-mps-control", "-d"], ["sh", "-c", "exec nvidia-cuda-mps-control -f"],
                    ["/usr/bin/nvidia-cuda-mps-server"], ["NVIDIA-CUDA-MPS-CONTROL"]):
        for key in ("command", "args"):
            pod = _pod("mps")
            pod["spec"]["containers"][0][key] = command
            found.append((f"{key} {command}", pod))
    for value in ("true", "True", "TRUE", "false", "yes", "1", ""):
        found.append((f"admin-access label {value!r}", {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "tenant-edge", "labels": {"resource.kubernetes.io/admin-access": value}}}))
    for selectors in (None, [], [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]):
        found.append((f"DeviceClass selectors {selectors}", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "edge"},
            "spec": {} if selectors is None else {"selectors": selectors}}))
    for api_version in ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"):
        for mode in ("All", "ExactCount", None):
            for admin in (None, True, False):
                request = {"name": "gpu", "deviceClassName": "gpu.nvidia.com",
                           **({"allocationMode": mode} if mode else {}),
                           **({"adminAccess": admin} if admin is not None else {})}
                found.append((f"{api_version} claim, allocationMode {mode}, adminAccess {admin}",
                              _claim(api_version, request)))
    for kind, key in (("Deployment", "strategy"), ("DaemonSet", "updateStrategy")):
        for surge in SURGES:
            template = _pod("x", resourceClaims=template_claim, terminationGracePeriodSeconds=30)
            template["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
            workload = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "surge"},
                        "spec": {"selector": {"matchLabels": {"app": "x"}},
                                 "template": {"metadata": {"labels": {"app": "x"}}, "spec": template["spec"]},
                                 key: {"type": "RollingUpdate", "rollingUpdate": {
                                     "maxSurge": surge, "maxUnavailable": 1 if surge in (0, "0%", "00%") else 0}}}}
            found.append((f"{kind} maxSurge {surge!r}", workload))
    return found


_BUILT_IN = {"": "v1", "apps": "apps/v1", "batch": "batch/v1"}


def _built(parts: list[str], leaf):
    """Nested objects along `parts` ('[*]': a list of one, '*': a map of one) ending in `leaf`."""
    if not parts:
        return leaf
    head, rest = parts[0], parts[1:]
    if head == "[*]":
        return [_built(rest, leaf)]
    if head == "*":
        return {"Worker": _built(rest, leaf)}
    return {head: _built(rest, leaf)}


def in_a_workload(spec: dict, workload) -> dict | None:
    """Pod spec `spec` where `workload` (model.workloads.WORKLOADS) keeps one: its first pod
    template, else its first pod spec, else its first container (None: it keeps none)."""
    spec = copy.deepcopy(spec)
    if workload.templates:
        path, leaf = workload.templates[0], {"metadata": {"labels": {"app": "x"}}, "spec": spec}
    elif workload.pod_specs:
        path, leaf = workload.pod_specs[0], spec
    elif workload.containers and spec.get("containers"):
        path, leaf = workload.containers[0][0], spec["containers"][0]
    else:
        return None
    if workload.kind in ("Job", "CronJob") and workload.group == "batch":
        spec["restartPolicy"] = "Never"
    obj = {"apiVersion": _BUILT_IN.get(workload.group, f"{workload.group}/v1"), "kind": workload.kind,
           "metadata": {"name": "wrapped"}}
    obj.update(_built(path.replace("[*]", ".[*]").split("."), leaf))
    if workload.group == "apps":
        obj["spec"]["selector"] = {"matchLabels": {"app": "x"}}
    if workload.kind == "CronJob":
        obj["spec"]["schedule"] = "*/5 * * * *"
    return obj


def wrapped(found: list[tuple[str, dict]], workloads) -> list[tuple[str, dict]]:
    """Each Pod of `found` also in one workload kind, taking the kinds in turn: the policies
    find pod specs through generated CEL (admission.variables) over each kind's paths."""
    kinds = [w for w in workloads if w.kind != "Pod"]
    pods = [(what, obj) for what, obj in found if obj["kind"] == "Pod"]
    made = []
    for i, (what, pod) in enumerate(pods):
        for k in range(len(kinds)):
            workload = kinds[(i + k) % len(kinds)]
            obj = in_a_workload(pod["spec"], workload)
            if obj is not None:
                made.append((f"{what} in a {workload.kind}", obj))
                break
    return made


def every_rule_broken() -> list[tuple[str, dict]]:
    """Pods that break every pod-spec and container rule at once (one breaks those the API
    server validates in a Pod's own spec: a claim the pod does not define, a claim with two
    sources), and one that breaks none: wrapped in every workload kind, each rule's verdict
    is asked of the paths that kind keeps its pod specs and containers at."""
    broken = _pod("broken", hostIPC=True, terminationGracePeriodSeconds=0,
                  resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu"},
                                  {"name": "spare", "resourceClaimName": "spare"}],
                  volumes=[{"name": "dev", "hostPath": {"path": "/dev/nvidia0"}},
                           {"name": "shm", "emptyDir": {"medium": "Memory"}}])
    broken["spec"]["containers"] = [
        {"name": "server", "image": "vllm/vllm-openai", "command": ["nvidia-cuda-mps-control", "-d"],
         "env": [{"name": "CUDA_VISIBLE_DEVICES", "value": "0"}], "resources": {"claims": [{"name": "gpu"}]},
         "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}]
    refused = _pod("refused", resourceClaims=[{"name": "gpu", "resourceClaimName": "a",
                                               "resourceClaimTemplateName": "a"}])
    refused["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}, {"name": "undefined"}]}
    clean = _pod("clean", terminationGracePeriodSeconds=30, resourceClaims=[
        {"name": "gpu", "resourceClaimTemplateName": "gpu"}])
    clean["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return [("every rule broken", broken), ("every rule the API server validates broken", refused),
            ("no rule broken", clean)]


def in_every_workload(found: list[tuple[str, dict]], workloads) -> list[tuple[str, dict]]:
    """Each Pod of `found` in every workload kind that keeps a pod spec or container."""
    made = []
    for what, pod in found:
        for workload in workloads:
            if workload.kind != "Pod" and (obj := in_a_workload(pod["spec"], workload)) is not None:
                made.append((f"{what} in a {workload.kind}", obj))
    return made


REPLACEMENTS = (None, 7, "x", [1], {"a": 1}, True)


def _subtrees(node, here=()):
    yield here
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _subtrees(value, here + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _subtrees(value, here + (index,))


def _replaced(node, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {k: (_replaced(v, rest, value) if k == head else v) for k, v in node.items()}
    return [(_replaced(v, rest, value) if i == head else v) for i, v in enumerate(node)]


def type_confused(objects: list[tuple[str, dict]], count: int, seed: int) -> list[tuple[str, dict]]:
    """`count` copies of `objects` with one subtree of the spec replaced by a value of another
    type (as test_type_confusion does for lint): what a CRD that keeps any spec admits and a
    policy's CEL then reads."""
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        what, obj = rng.choice(objects)
        paths = [p for p in _subtrees(obj.get("spec")) if p]
        path = rng.choice(paths)
        value = rng.choice([r for r in REPLACEMENTS if type(r) is not type(_at(obj["spec"], path))])
        made.append((f"{what}, spec.{'.'.join(map(str, path))} = {value!r}",
                     dict(obj, spec=_replaced(obj["spec"], path, value))))
    return made


def _at(node, path):
    for key in path:
        node = node[key]
    return node
