"""The device plugin's configs in ConfigMaps are parsed once, and read once a run, however
many pods ask which way their shared GPUs are shared (each parse is a pure-Python YAML load,
and each question walked every ConfigMap of the set)."""

from __future__ import annotations

from draguard.core.config import Config
from draguard.engine.run import Inputs, Run
from draguard.model import plugin_config
from draguard.model.manifest import Manifest
from draguard.model.objectset import ObjectSet

CONFIG = """\
version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""
PLUGIN = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plugin"},
          "data": {"any": CONFIG, "other": "not: a config"}}


def _pod(name: str) -> dict:
    """A pod on nodes whose nvidia.com/gpu is a shared replica: its migration asks how."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeSelector": {"nvidia.com/gpu.replicas": "4"},
                     "containers": [{"name": "app", "image": "app", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


def test_each_config_is_parsed_once(monkeypatch):
    calls: list[str] = []
    parse = plugin_config._config
    monkeypatch.setattr(plugin_config, "_config", lambda text: calls.append(text) or parse(text))
    objects = ObjectSet([Manifest.from_data(PLUGIN)])
    answers = {plugin_config.sharing_strategy({}, objects.plugin_gpu_shares) for _ in range(20)}
    assert answers == {("TimeSlicing", "ConfigMap 'plugin' key 'any'")}
    assert len(calls) == 2  # one per data key, not one per question


def test_the_configs_are_read_once_a_run(monkeypatch):
    asked = []
    derive = Manifest.derive

    def counted(self, compute):
        if compute is plugin_config.shared_resources:
            asked.append(self.name)
        return derive(self, compute)

    monkeypatch.setattr(Manifest, "derive", counted)
    result = Run(Config(), Inputs.objects([PLUGIN, *(_pod(f"p{i}") for i in range(5))])).findings()
    migrations = [f.fix.title for f in result.findings if f.rule == "legacy-gpu-resource" and f.fix is not None]
    assert len(migrations) == 5 and all("TimeSlicing" in title for title in migrations)
    assert asked == ["plugin", "plugin"]  # its own judging (legacy-gpu-sharing), then once for the set: not once a pod
