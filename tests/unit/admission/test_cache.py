"""The webhook's cache without its watches (changes applied as the streams would apply them):
what a request sees follows the changes; the devices and their allocator are built once per
change of what they are built from (a claim changing leaves them alone), never per request;
and a claim template is judged against the cluster's devices, not the built-in catalog."""

from __future__ import annotations

import contextlib
import io
import json
import textwrap

import yaml

from draguard.admission.cache import WATCHED, ClusterCache
from draguard.admission.judge import rules_for
from draguard.admission.server import Webhook
from draguard.core.config import Config
from draguard.dra.target import Target
from draguard.rules.examples import COMPLIANT_POD

from support.audit_dump import cluster
from support.webhook import review

CONFIG = Config(kube_version="1.37")


def _cache(built: list) -> tuple[ClusterCache, list[dict]]:
    raw = cluster(nodes=2, gpus=2, pods=4, deployments=2)
    example = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d]
    for i, d in enumerate(example):
        d["metadata"].update(namespace="team-a", uid=f"example-{i}")

    def devices_for(inventory):
        built.append(inventory)
        return Target.for_release(inventory, [], CONFIG.kube_version, CONFIG.feature_gates)

    cache = ClusterCache(None, lambda *args, **kwargs: None, devices_for)
    for name in WATCHED:
        cache._apply((name, "RELIST", raw.get(name, [])))
    return cache, example


def test_devices_are_built_once_per_change_of_what_they_come_from():
    built = []
    cache, example = _cache(built)
    context, devices = cache.view("serving")
    assert isinstance(devices, Target) and len(built) == 1
    assert cache.view("serving")[1] is devices and len(built) == 1  # no change: nothing rebuilt
    template = next(d for d in example if d["kind"] == "ResourceClaimTemplate")
    cache._apply(("resourceclaimtemplates.resource.k8s.io", "ADDED", template))
    assert any(m.name == template["metadata"]["name"] for m in cache.view("team-a")[0])
    assert not any(m.name == template["metadata"]["name"] for m in cache.view("serving")[0])
    claim = next(iter(cache.store["resourceclaims.resource.k8s.io"].values()))
    cache._apply(("resourceclaims.resource.k8s.io", "DELETED", claim))
    assert cache.view("serving")[1] is devices and len(built) == 1
    slice_ = next(iter(cache.store["resourceslices.resource.k8s.io"].values()))
    cache._apply(("resourceslices.resource.k8s.io", "DELETED", slice_))
    assert cache.view("serving")[1] is not devices and len(built) == 2


def test_a_claim_template_is_judged_against_the_cluster_devices():
    """...and one no device of the cluster fits is admitted with a warning (the devices change:
    a node pool scaling from zero gets its node when a claim waits for one)."""
    cache, example = _cache([])
    hook = Webhook(rules_for(CONFIG, offline=False), {"kube-system"}, cache.view)
    template = next(d for d in example if d["kind"] == "ResourceClaimTemplate")
    answers = []
    with contextlib.redirect_stderr(io.StringIO()):
        answers.append(hook.review(json.dumps(review(template, uid="fits")).encode())[1])
        wanted = json.dumps(template).replace("1g.10gb", "7g.80gb")  # the cluster's static layout has none
        answers.append(hook.review(json.dumps(review(json.loads(wanted), uid="does-not")).encode())[1])
    fits, does_not = (a["response"] for a in answers)
    assert fits["allowed"] is True
    assert does_not["allowed"] is True and any("[request-unsatisfiable]" in w for w in does_not["warnings"])
    assert not any("[request-unsatisfiable]" in w for w in fits.get("warnings", []))


def test_a_budget_is_judged_by_the_workloads_it_selects_and_an_update_replaces_the_cached_version():
    from draguard.admission.judge import findings_on
    from draguard.model.manifest import Manifest
    from draguard.rules.examples import COMPLIANT_DEPLOYMENT

    objects = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_DEPLOYMENT)) if d]
    budget = next(d for d in objects if d["kind"] == "PodDisruptionBudget")
    cached = [Manifest.from_data(d, display="(cluster)", document=i, positions=False) for i, d in enumerate(objects)]
    config = rules_for(CONFIG, offline=False)
    assert not [f for f in findings_on(budget, config, cached) if f.rule == "rollout-pdb"]
    loose = dict(budget, spec=dict(budget["spec"], maxUnavailable=3))
    said = [f for f in findings_on(loose, config, cached) if f.rule == "rollout-pdb"]
    assert said and "maxUnavailable 3" in said[0].message
    # the cached budget is the loose one, the request puts it right: nothing is said
    cached_loose = [Manifest.from_data(loose if d is budget else d, display="(cluster)", document=i, positions=False)
                    for i, d in enumerate(objects)]
    assert not [f for f in findings_on(budget, config, cached_loose) if f.rule == "rollout-pdb"]


def test_a_device_variable_a_pod_takes_from_a_config_map_by_env_from_is_denied():
    """The attack review hid NVIDIA_VISIBLE_DEVICES=all in a ConfigMap the pod imports whole
    (envFrom), where no rule looked at admission: the webhook's cache did not hold ConfigMaps.
    It holds them now, each trimmed to the keys that can name a device variable behind some
    prefix: a 1 MiB value of anything else is never kept."""
    cache, _ = _cache([])
    maps = [{"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": name, "namespace": "team-a", "uid": name, "managedFields": [{"x": "y" * 100}]},
             "data": dict(data, blob="x" * (1 << 20))}
            for name, data in (("whole", {"NVIDIA_VISIBLE_DEVICES": "all"}), ("split", {"VISIBLE_DEVICES": "all"}),
                               ("plain", {"LOG_LEVEL": "debug"}))]
    cache._apply(("configmaps", "RELIST", maps))
    assert {uid: o["data"] for uid, o in cache.store["configmaps"].items()} == {
        "whole": {"NVIDIA_VISIBLE_DEVICES": "all"}, "split": {"VISIBLE_DEVICES": "all"}, "plain": {}}
    assert all(set(o["metadata"]) == {"name", "namespace", "uid"} for o in cache.store["configmaps"].values())
    hook = Webhook(rules_for(CONFIG, offline=False), {"kube-system"}, cache.view)

    def verdict(env_from: dict) -> dict:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team-a"},
               "spec": {"containers": [{"name": "c", "image": "cuda", "envFrom": [env_from]}]}}
        with contextlib.redirect_stderr(io.StringIO()):
            return hook.review(json.dumps(review(pod)).encode())[1]["response"]

    whole = verdict({"configMapRef": {"name": "whole"}})
    assert whole["allowed"] is False and "[env-device-visibility]" in whole["status"]["message"]
    assert verdict({"configMapRef": {"name": "split"}, "prefix": "NVIDIA_"})["allowed"] is False
    assert verdict({"configMapRef": {"name": "split"}})["allowed"] is True  # VISIBLE_DEVICES selects nothing
    assert verdict({"configMapRef": {"name": "plain"}})["allowed"] is True
