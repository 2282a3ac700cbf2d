"""Every pod-embedding kind of the corpus yields its pod specs and containers."""

import pytest

from draguard.core.location import format_path
from draguard.model.manifest import Manifest
from draguard.model.pods import pod_sites
from draguard.model.workloads import WORKLOADS, resolve
from draguard.sources.discover import expand
from draguard.sources.loader import load_units

from support.paths import corpus, corpus_files


def sites_of(text):
    import io

    loaded = load_units(expand(["-"]), stdin=io.BytesIO(text.encode()))
    return [site for e in loaded.entries for site in pod_sites(Manifest.from_entry(e))]


@pytest.mark.parametrize("text, paths, containers", [
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}}\nspec: {containers: [{name: c}]}\n",
     ["spec"], ["spec.containers[0]"]),
    ("apiVersion: batch/v1\nkind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: "
     "{initContainers: [{name: i}], containers: [{name: c}]}}}}}\n",
     ["spec.jobTemplate.spec.template.spec"], ["spec.jobTemplate.spec.template.spec.initContainers[0]",
                                          "spec.jobTemplate.spec.template.spec.containers[0]"]),
    ("apiVersion: ray.io/v1\nkind: RayCluster\nspec:\n  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}\n"
     "  workerGroupSpecs:\n  - template: {spec: {containers: [{name: w0}]}}\n  - template: {spec: {containers: [{name: w1}]}}\n",
     ["spec.headGroupSpec.template.spec", "spec.workerGroupSpecs[0].template.spec",
      "spec.workerGroupSpecs[1].template.spec"],
     ["spec.headGroupSpec.template.spec.containers[0]", "spec.workerGroupSpecs[0].template.spec.containers[0]",
      "spec.workerGroupSpecs[1].template.spec.containers[0]"]),
    ("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nspec:\n  mpiReplicaSpecs:\n"
     "    Launcher: {template: {spec: {containers: [{name: l}]}}}\n    Worker: {template: {spec: {containers: [{name: w}]}}}\n",
     ["spec.mpiReplicaSpecs.Launcher.template.spec", "spec.mpiReplicaSpecs.Worker.template.spec"],
     ["spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]", "spec.mpiReplicaSpecs.Worker.template.spec.containers[0]"]),
    ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor:\n"
     "    tensorflow: {resources: {limits: {nvidia.com/gpu: 1}}}\n",
     ["spec.predictor"], ["spec.predictor.tensorflow"]),
    ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nspec:\n  trainer: {resourcesPerNode: {limits: {nvidia.com/gpu: 1}}}\n",
     [None], ["spec.trainer"]),
    ("apiVersion: example.com/v1\nkind: Pod\nspec: {containers: [{name: c}]}\n", [], []),
])
def test_pod_sites(text, paths, containers):
    sites = sites_of(text)
    assert [None if s.path is None else format_path(s.path) for s in sites] == paths
    assert [format_path(c.path) for s in sites for c in s.containers] == containers


def test_trainjob_resources_come_from_resources_per_node():
    [site] = sites_of("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nspec:\n"
                      "  trainer: {resourcesPerNode: {limits: {nvidia.com/gpu: 1}}}\n")
    assert site.containers[0].resources == {"limits": {"nvidia.com/gpu": 1}}


def test_pod_template_labels_are_the_template_metadata():
    [site] = sites_of("apiVersion: apps/v1\nkind: Deployment\nmetadata: {labels: {x: top}}\n"
                      "spec: {template: {metadata: {labels: {app: web}}, spec: {containers: []}}}\n")
    assert site.labels == {"app": "web"}


def test_resolve_wildcards():
    data = {"a": [{"b": 1}, {"b": 2}], "m": {"x": {"c": 3}, "y": {"c": 4}}}
    assert list(resolve(data, "a[*].b")) == [(1, ("a", 0, "b")), (2, ("a", 1, "b"))]
    assert list(resolve(data, "m.*.c")) == [(3, ("m", "x", "c")), (4, ("m", "y", "c"))]
    nested = {"a": [{"b": [1, 2]}, {"c": 0}, {"b": [3]}], "m": {"x": [{"c": 5}], "y": {"c": 6}}}
    assert resolve(nested, "a[*].b[*]") == [(1, ("a", 0, "b", 0)), (2, ("a", 0, "b", 1)), (3, ("a", 2, "b", 0))]
    assert resolve(nested, "m.*[*].c") == [(5, ("m", "x", 0, "c"))]  # document order, each level in turn
    assert resolve(nested, "a[*].z") == [] and resolve(nested, "q.*") == []


def test_resolve_leaves_nothing_to_the_cyclic_collector():
    """A large lint pauses the cyclic collector (core.collector): a reference cycle made per
    pod is held to the end of the run. resolve's recursive local function was one (three
    objects a call: 1 MiB a MB of pods)."""
    import gc

    data = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(100):
            assert len(list(resolve(data, "spec.containers[*]"))) == 2
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_every_corpus_workload_with_containers_is_seen():
    corpus_files()
    loaded = load_units(expand([str(corpus())]))
    kinds_with_pods = {(w.group, w.kind) for w in WORKLOADS}
    for manifest in map(Manifest.from_entry, loaded.entries):
        if (manifest.group, manifest.kind) in kinds_with_pods and "containers" in str(manifest.data):
            sites = pod_sites(manifest)
            assert sites and any(site.containers for site in sites), (manifest.source.display, manifest.kind)
