"""One view of every pod spec, wherever it lives: built-in workloads and CRDs that embed pod
specs. The table is data: supporting a new kind is one `Workload(...)` row.

Path syntax: dotted keys; `[*]` is every item of a list, `*` every value of a mapping."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .manifest import Manifest

KSERVE_FRAMEWORKS = ("model", "tensorflow", "pytorch", "sklearn", "xgboost", "onnx", "triton",
                     "huggingface", "lightgbm", "paddle", "pmml", "mlflow")


@dataclass(frozen=True)
class Workload:
    """Where pod specs sit inside objects of one (group, kind).

    templates: paths to pod templates ({metadata, spec});
    pod_specs: paths to bare pod specs (no template metadata);
    inline_containers: for each pod spec path, keys under it that hold a single container;
    containers: paths to container-like objects with no pod spec around them, with the key
        that holds their resource requirements."""

    group: str
    kind: str
    templates: tuple = ()
    pod_specs: tuple = ()
    inline_containers: tuple = ()
    containers: tuple = ()  # ((path, resources_key), ...)
    replicas: str | None = None  # path of the replica count, for workloads that scale pods


WORKLOADS = (
    Workload("", "Pod", pod_specs=("spec",)),
    Workload("", "PodTemplate", templates=("template",)),
    Workload("apps", "Deployment", templates=("spec.template",), replicas="spec.replicas"),
    Workload("apps", "ReplicaSet", templates=("spec.template",), replicas="spec.replicas"),
    Workload("apps", "StatefulSet", templates=("spec.template",), replicas="spec.replicas"),
    Workload("apps", "DaemonSet", templates=("spec.template",)),
    Workload("batch", "Job", templates=("spec.template",)),
    Workload("batch", "CronJob", templates=("spec.jobTemplate.spec.template",)),
    Workload("ray.io", "RayCluster",
             templates=("spec.headGroupSpec.template", "spec.workerGroupSpecs[*].template")),
    Workload("ray.io", "RayService", templates=("spec.rayClusterConfig.headGroupSpec.template",
                                                "spec.rayClusterConfig.workerGroupSpecs[*].template")),
    Workload("ray.io", "RayJob", templates=("spec.rayClusterSpec.headGroupSpec.template",
                                            "spec.rayClusterSpec.workerGroupSpecs[*].template")),
    Workload("serving.kserve.io", "InferenceService",
             pod_specs=("spec.predictor", "spec.transformer", "spec.explainer"),
             inline_containers=KSERVE_FRAMEWORKS),
    Workload("serving.kserve.io", "LLMInferenceService",
             pod_specs=("spec.template", "spec.worker", "spec.prefill.template", "spec.prefill.worker")),
    Workload("serving.kserve.io", "LLMInferenceServiceConfig",
             pod_specs=("spec.template", "spec.worker", "spec.prefill.template", "spec.prefill.worker")),
    Workload("leaderworkerset.x-k8s.io", "LeaderWorkerSet",
             templates=("spec.leaderWorkerTemplate.leaderTemplate", "spec.leaderWorkerTemplate.workerTemplate"),
             replicas="spec.replicas"),
    Workload("jobset.x-k8s.io", "JobSet", templates=("spec.replicatedJobs[*].template.spec.template",)),
    Workload("kubeflow.org", "MPIJob", templates=("spec.mpiReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "PyTorchJob", templates=("spec.pytorchReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "TFJob", templates=("spec.tfReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "XGBoostJob", templates=("spec.xgbReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "PaddleJob", templates=("spec.paddleReplicaSpecs.*.template",)),
    Workload("trainer.kubeflow.org", "TrainJob", containers=(("spec.trainer", "resourcesPerNode"),)),
    Workload("trainer.kubeflow.org", "TrainingRuntime",
             templates=("spec.template.spec.replicatedJobs[*].template.spec.template",)),
    Workload("trainer.kubeflow.org", "ClusterTrainingRuntime",
             templates=("spec.template.spec.replicatedJobs[*].template.spec.template",)),
)
_BY_KEY = {(w.group, w.kind): w for w in WORKLOADS}
POD_KINDS = frozenset(w.kind for w in WORKLOADS)


@dataclass
class ContainerSite:
    """One container (or container-like object) and where it sits."""

    container: dict
    path: str
    resources_key: str = "resources"
    init: bool = False

    @property
    def name(self) -> str:
        name = self.container.get("name")
        return name if isinstance(name, str) else ""

    @property
    def resources(self) -> dict:
        value = self.container.get(self.resources_key)
        return value if isinstance(value, dict) else {}


@dataclass
class PodSite:
    """One pod spec inside an object, with its template metadata ({} when it has none)."""

    owner: Manifest
    spec: dict
    metadata: dict
    path: str
    containers: list[ContainerSite] = field(default_factory=list)

    @property
    def labels(self) -> dict:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}


@lru_cache(maxsize=None)
def _compile(path: str) -> tuple:
    parts = []
    for part in path.split("."):
        if part.endswith("[*]"):
            parts.extend([part[:-3], "[*]"])
        else:
            parts.append(part)
    return tuple(parts)


def resolve(data, path: str):
    """Yield (node, concrete path) for every match of `path` in `data`."""
    def walk(node, parts, here):
        if not parts:
            yield node, here
            return
        head, rest = parts[0], parts[1:]
        if head == "[*]":
            if isinstance(node, list):
                for i, item in enumerate(node):
                    yield from walk(item, rest, f"{here}[{i}]")
        elif head == "*":
            if isinstance(node, dict):
                for key, value in node.items():
                    yield from walk(value, rest, f"{here}.{key}")
        elif isinstance(node, dict) and head in node:
            yield from walk(node[head], rest, f"{here}.{head}" if here else head)

    yield from walk(data, _compile(path), "")


def workload_for(manifest: Manifest) -> Workload | None:
    return _BY_KEY.get((manifest.group, manifest.kind))


def _pod_containers(spec: dict, path: str, inline: tuple) -> list[ContainerSite]:
    sites = []
    for list_key, init in (("initContainers", True), ("containers", False)):
        items = spec.get(list_key)
        if isinstance(items, list):
            sites.extend(ContainerSite(c, f"{path}.{list_key}[{i}]", init=init)
                         for i, c in enumerate(items) if isinstance(c, dict))
    for key in inline:
        value = spec.get(key)
        if isinstance(value, dict):
            sites.append(ContainerSite(value, f"{path}.{key}"))
    return sites


def pod_sites(manifest: Manifest) -> list[PodSite]:
    """Every pod spec of `manifest` (none for kinds that hold no pods); computed once."""
    return manifest.derive("pod_sites", _find_pod_sites)


def _find_pod_sites(manifest: Manifest) -> list[PodSite]:
    workload = workload_for(manifest)
    if workload is None:
        return []
    data = manifest.data
    sites = []
    for template_path in workload.templates:
        for template, path in resolve(data, template_path):
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                meta = template.get("metadata")
                spec = template["spec"]
                sites.append(PodSite(manifest, spec, meta if isinstance(meta, dict) else {}, path,
                                     _pod_containers(spec, f"{path}.spec", workload.inline_containers)))
    for spec_path in workload.pod_specs:
        for spec, path in resolve(data, spec_path):
            if isinstance(spec, dict):
                meta = manifest.metadata if spec_path == "spec" else {}
                sites.append(PodSite(manifest, spec, meta, path,
                                     _pod_containers(spec, path, workload.inline_containers)))
    for container_path, resources_key in workload.containers:
        for container, path in resolve(data, container_path):
            if isinstance(container, dict):
                sites.append(PodSite(manifest, {}, {}, path, [ContainerSite(container, path, resources_key)]))
    return sites
