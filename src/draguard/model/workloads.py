"""Where pod specs live, in built-in workloads and in CRDs that embed them. The table is data:
supporting a new kind is one `Workload(...)` row.

Path syntax: dotted keys; `[*]` is every item of a list, `*` every value of a mapping."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ..core.location import Path
from ..core.unread import shown, unreadable
from .manifest import Manifest
from .values import Yaml
from ..core.value import Value

if TYPE_CHECKING:
    from ..core.config import Config

KSERVE_FRAMEWORKS = ("model", "tensorflow", "pytorch", "sklearn", "xgboost", "onnx", "triton",
                     "huggingface", "lightgbm", "paddle", "pmml", "mlflow")


class PodController(Value):
    """A CRD's controller that builds its pods from the pod spec it is given and refuses
    some fields there (its webhook's field mask): paths relative to the pod spec (`[*]` for
    each container), each with why and what to do instead."""

    __slots__ = ("name", "refuses")

    def __init__(self, name: str, refuses: tuple[tuple[tuple[str, ...], str], ...]):
        self.name = name
        self.refuses = refuses  # ((relative path, why), ...)

    def refusal(self, relative: Path) -> str | None:
        """Why an edit at `relative` (a path inside the pod spec) cannot be written, or None."""
        for refused, why in self.refuses:
            if len(relative) >= len(refused) and all(r == "[*]" and isinstance(p, int) or r == p
                                                      for r, p in zip(refused, relative)):
                return f"{self.name} refuses {'.'.join(k for k in refused if k != '[*]')} in its pod specs ({why})"
        return None


#: knative/serving pkg/apis/serving/fieldmask.go (PodSpecMask, ContainerMask and
#: ResourceRequirementsMask keep no claims, grace period or lifecycle) and
#: pkg/reconciler/revision/resources/deploy.go (each user container gets a preStop hook that
#: waits for the queue-proxy to drain; the grace period is the revision's timeoutSeconds)
KNATIVE_SERVING = PodController("Knative Serving", refuses=(
    (("resourceClaims",), "it has no DRA claims, knative/serving#15332: keep the limit and serve it through DRA "
                          "with --strategy extended-resource, 1.34+"),
    (("containers", "[*]", "resources", "claims"), "it has no DRA claims, knative/serving#15332"),
    (("terminationGracePeriodSeconds",), "it sets the grace period from timeoutSeconds, the request timeout: "
                                         "raise that by hand if requests may take that long"),
    (("containers", "[*]", "lifecycle"), "it adds its own preStop hook, which waits for the queue-proxy to drain"),
    (("initContainers",), "unless the cluster enables kubernetes.podspec-init-containers")))


#: (annotation, its values in lower case, the controller its pod specs go to where it has one)
Mode = tuple[str, tuple[str, ...], PodController]

#: kserve pkg/constants: an InferenceService annotated Knative (Serverless before 0.15; read
#: case-insensitively) runs as a Knative Service built from its pod specs. Unannotated, the mode
#: is the cluster's inferenceservice-config default (Knative upstream, Standard in some
#: distributions): unknown here, so only the annotation decides.
KSERVE_KNATIVE_MODE: Mode = ("serving.kserve.io/deploymentMode", ("knative", "serverless"), PodController(
    "KServe in Knative mode (serving.kserve.io/deploymentMode; Standard runs Deployments, which keep them)",
    KNATIVE_SERVING.refuses))


class Workload(Value):
    """Where pod specs sit inside objects of one (group, kind).

    templates: paths to pod templates ({metadata, spec});
    pod_specs: paths to bare pod specs (no template metadata);
    inline_containers: for each pod spec path, keys under it that hold a single container;
    containers: paths to container-like objects with no pod spec around them, with the key
        that holds their resource requirements;
    gpu_aliases: resource names the CRD itself turns into a device-plugin GPU (Dynamo's `gpu`);
    replicas: paths whose integer values multiply into the number of pods (each 1 when unset);
    controller: what the CRD's controller refuses in its pod specs (PodController);
    modes: (annotation, its values in lower case, PodController) for a CRD whose controller
        hands the pod specs to another one where the annotation says so (KServe to Knative)."""

    __slots__ = ("group", "kind", "templates", "pod_specs", "inline_containers", "containers", "gpu_aliases",
                 "replicas", "controller", "modes")

    def __init__(self, group: str, kind: str, templates: tuple[str, ...] = (), pod_specs: tuple[str, ...] = (),
                 inline_containers: tuple[str, ...] = (), containers: tuple[tuple[str, str], ...] = (),
                 gpu_aliases: tuple[str, ...] = (), replicas: tuple[str, ...] = (),
                 controller: PodController | None = None, modes: tuple[Mode, ...] = ()):
        self.group = group
        self.kind = kind
        self.templates = templates
        self.pod_specs = pod_specs
        self.inline_containers = inline_containers
        self.containers = containers  # ((path, resources_key), ...)
        self.gpu_aliases = gpu_aliases
        self.replicas = replicas
        self.controller = controller
        self.modes = modes

    def controller_for(self, manifest: Manifest) -> PodController | None:
        """What refuses fields in this object's pod specs: the mode its annotation picks, else
        the row's controller."""
        for annotation, values, controller in self.modes:
            if str(manifest.annotations.get(annotation, "")).lower() in values:
                return controller
        return self.controller


def _ome_parts(suffix: str) -> tuple[str, ...]:
    """The paths of an OME object's components: `spec.engine{suffix}`, `spec.decoder{suffix}`
    and `spec.router{suffix}`, and the leader and worker of the first two."""
    parts = []
    for component in ("engine", "decoder", "router"):
        base = f"spec.{component}{suffix}"
        parts.append(base)
        if component != "router":
            parts.extend((f"{base}.leader", f"{base}.worker"))
    return tuple(parts)


WORKLOADS = (
    Workload("", "Pod", pod_specs=("spec",)),
    Workload("", "PodTemplate", templates=("template",)),
    Workload("apps", "Deployment", templates=("spec.template",), replicas=("spec.replicas",)),
    Workload("apps", "ReplicaSet", templates=("spec.template",), replicas=("spec.replicas",)),
    Workload("apps", "StatefulSet", templates=("spec.template",), replicas=("spec.replicas",)),
    Workload("apps", "DaemonSet", templates=("spec.template",)),
    Workload("batch", "Job", templates=("spec.template",), replicas=("spec.parallelism",)),
    Workload("batch", "CronJob", templates=("spec.jobTemplate.spec.template",),
             replicas=("spec.jobTemplate.spec.parallelism",)),
    # KubeRay: the groups' templates, the autoscaler sidecar's options (a container of the head
    # pod: its resources, env and securityContext) and a RayJob's submitter pod template
    Workload("ray.io", "RayCluster",
             templates=("spec.headGroupSpec.template", "spec.workerGroupSpecs[*].template"),
             containers=(("spec.autoscalerOptions", "resources"),)),
    Workload("ray.io", "RayService", templates=("spec.rayClusterConfig.headGroupSpec.template",
                                                "spec.rayClusterConfig.workerGroupSpecs[*].template"),
             containers=(("spec.rayClusterConfig.autoscalerOptions", "resources"),)),
    Workload("ray.io", "RayJob", templates=("spec.rayClusterSpec.headGroupSpec.template",
                                            "spec.rayClusterSpec.workerGroupSpecs[*].template",
                                            "spec.submitterPodTemplate"),
             containers=(("spec.rayClusterSpec.autoscalerOptions", "resources"),)),
    Workload("serving.kserve.io", "InferenceService",
             # a multi-node predictor's workers: spec.predictor.workerSpec, a pod spec of its own
             pod_specs=("spec.predictor", "spec.transformer", "spec.explainer", "spec.predictor.workerSpec"),
             inline_containers=KSERVE_FRAMEWORKS, modes=(KSERVE_KNATIVE_MODE,)),
    Workload("serving.kserve.io", "LLMInferenceService",
             pod_specs=("spec.template", "spec.worker", "spec.prefill.template", "spec.prefill.worker")),
    Workload("serving.kserve.io", "LLMInferenceServiceConfig",
             pod_specs=("spec.template", "spec.worker", "spec.prefill.template", "spec.prefill.worker")),
    Workload("leaderworkerset.x-k8s.io", "LeaderWorkerSet",
             templates=("spec.leaderWorkerTemplate.leaderTemplate", "spec.leaderWorkerTemplate.workerTemplate"),
             replicas=("spec.replicas", "spec.leaderWorkerTemplate.size")),
    Workload("jobset.x-k8s.io", "JobSet", templates=("spec.replicatedJobs[*].template.spec.template",)),
    Workload("kubeflow.org", "MPIJob", templates=("spec.mpiReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "PyTorchJob", templates=("spec.pytorchReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "TFJob", templates=("spec.tfReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "XGBoostJob", templates=("spec.xgbReplicaSpecs.*.template",)),
    Workload("kubeflow.org", "PaddleJob", templates=("spec.paddleReplicaSpecs.*.template",)),
    # a TrainJob's podTemplateOverrides patch the runtime's pod specs (volumes, containers' env)
    Workload("trainer.kubeflow.org", "TrainJob", pod_specs=("spec.podTemplateOverrides[*].spec",),
             containers=(("spec.trainer", "resourcesPerNode"),)),
    Workload("trainer.kubeflow.org", "TrainingRuntime",
             templates=("spec.template.spec.replicatedJobs[*].template.spec.template",)),
    Workload("trainer.kubeflow.org", "ClusterTrainingRuntime",
             templates=("spec.template.spec.replicatedJobs[*].template.spec.template",)),
    Workload("batch.volcano.sh", "Job", templates=("spec.tasks[*].template",)),
    Workload("kueue.x-k8s.io", "Workload", templates=("spec.podSets[*].template",)),
    Workload("serving.knative.dev", "Service", templates=("spec.template",), controller=KNATIVE_SERVING),
    Workload("serving.kserve.io", "ServingRuntime", pod_specs=("spec",)),
    Workload("serving.kserve.io", "ClusterServingRuntime", pod_specs=("spec",)),
    # NVIDIA NIM operator: the service's pods get spec.resources (the cache job its own)
    Workload("apps.nvidia.com", "NIMService", containers=(("spec", "resources"),), replicas=("spec.replicas",)),
    Workload("apps.nvidia.com", "NIMCache", containers=(("spec", "resources"),)),
    # NVIDIA Dynamo: v1alpha1 services (a `gpu` count and an extraPodSpec with its mainContainer),
    # v1beta1 components with a podTemplate
    Workload("nvidia.com", "DynamoGraphDeployment", templates=("spec.components[*].podTemplate",),
             pod_specs=("spec.services.*.extraPodSpec",), inline_containers=("mainContainer",),
             containers=(("spec.services.*", "resources"),), gpu_aliases=("gpu",)),
    # vLLM AIBrix (config/crd/orchestration): roles of a StormService or RoleSet, pod sets, Ray
    # fleets, and the KV cache's components, each a pod template
    Workload("orchestration.aibrix.ai", "StormService", templates=("spec.template.spec.roles[*].template",)),
    Workload("orchestration.aibrix.ai", "RoleSet", templates=("spec.roles[*].template",)),
    Workload("orchestration.aibrix.ai", "PodSet", templates=("spec.template",)),
    *(Workload("orchestration.aibrix.ai", kind, templates=("spec.template.spec.headGroupSpec.template",
                                                           "spec.template.spec.workerGroupSpecs[*].template"))
      for kind in ("RayClusterFleet", "RayClusterReplicaSet")),
    Workload("orchestration.aibrix.ai", "KVCache",
             templates=("spec.cache.template", "spec.watcher.template", "spec.metadata.etcd.runtime.template",
                        "spec.metadata.redis.runtime.template")),
    # OME (sgl-project/ome, pkg/apis/ome/v1beta1): each component (engine, decoder, router, and
    # the engine's and decoder's leader and worker) is a pod spec inline with one `runner` container
    *(Workload("ome.io", kind, pod_specs=_ome_parts(suffix), inline_containers=("runner",))
      for kind, suffix in (("ClusterServingRuntime", "Config"), ("ServingRuntime", "Config"), ("InferenceService", ""))),
    *(Workload("argoproj.io", kind, containers=tuple((f"{base}.templates[*].{where}", "resources") for where in (
        "container", "script", "containerSet.containers[*]", "initContainers[*]", "sidecars[*]")))
      for kind, base in (("Workflow", "spec"), ("WorkflowTemplate", "spec"), ("ClusterWorkflowTemplate", "spec"),
                         ("CronWorkflow", "spec.workflowSpec"))),
)
_BY_KEY = {(w.group, w.kind): w for w in WORKLOADS}
#: (group, kind) of every object that holds pod specs.
POD_TARGETS = frozenset(_BY_KEY)


@lru_cache(maxsize=None)
def path_parts(path: str) -> tuple[str, ...]:
    parts = []
    for part in path.split("."):
        if part.endswith("[*]"):
            parts.extend([part[:-3], "[*]"])
        else:
            parts.append(part)
    return tuple(parts)


def resolve(data: Yaml, path: str) -> list[tuple[Yaml, Path]]:
    """(node, concrete path as a tuple) for every match of `path` in `data`, in document
    order. Walked a part at a time over a list of the matches so far, not by recursive
    generators: every pod object resolves its kind's template, pod spec and container paths,
    and a generator a level cost a fifth of a second in a lint of 20,000 objects."""
    found: list[tuple[Yaml, Path]] = [(data, ())]
    for head in path_parts(path):
        deeper: list[tuple[Yaml, Path]] = []
        if head == "[*]":
            for node, here in found:
                if isinstance(node, list):
                    deeper.extend((item, here + (i,)) for i, item in enumerate(node))
        elif head == "*":
            for node, here in found:
                if isinstance(node, dict):
                    deeper.extend((value, here + (key,)) for key, value in node.items())
        else:
            for node, here in found:
                if isinstance(node, dict) and head in node:
                    deeper.append((node[head], here + (head,)))
        if not deeper:
            return deeper
        found = deeper
    return found


def workload_for(manifest: Manifest) -> Workload | None:
    return _BY_KEY.get((manifest.group, manifest.kind))


def node_agent(manifest: Manifest, config: Config) -> bool:
    """Whether `manifest` is a node agent, which the tenant rules leave to
    daemonset-host-access: a DaemonSet, where the configuration takes DaemonSets for node
    agents (lint; not admission: core.config.Config.daemonsets_are_node_agents)."""
    return (manifest.group, manifest.kind) == ("apps", "DaemonSet") and config.daemonsets_are_node_agents


def replica_count(manifest: Manifest) -> int | None:
    """How many pods a scaling workload runs (each count its API default 1 when unset), None
    for kinds that do not scale pods by a count or when a count is not an int32 (`.nan`, 1.5,
    1e400, a map, past 2**31): said unreadable (core.unread) to the rule asking, which cannot
    judge by a guess."""
    workload = workload_for(manifest)
    if workload is None or not workload.replicas:
        return None
    total = 1
    for path in workload.replicas:
        found = resolve(manifest.data, path)
        if not found:
            continue
        value, where = found[0]
        if not is_int32(value):
            unreadable(_parent(manifest.data, where), where[-1], f"is {shown(value)}, not a number of pods")
            return None
        total *= value
    return total


def is_int32(value: object) -> bool:
    """An int32, as a count of replicas is in the API (not a bool, a float or past 2**31)."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31


def _parent(data: Yaml, path: Path) -> Yaml:
    """The collection holding the node at `path` (a path resolve gave)."""
    for part in path[:-1]:
        data = data[part]  # resolve walked these parts
    return data
