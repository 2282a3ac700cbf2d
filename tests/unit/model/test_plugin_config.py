"""The device plugin's configs in ConfigMaps are parsed once a run, however many pods ask
which way their shared GPUs are shared (each parse is a pure-Python YAML load)."""

from __future__ import annotations

from draguard.model import plugin_config
from draguard.model.manifest import Manifest

CONFIG = """\
version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def test_each_config_is_parsed_once(monkeypatch):
    calls = []
    parse = plugin_config._config
    monkeypatch.setattr(plugin_config, "_config", lambda text: calls.append(text) or parse(text))
    objects = [Manifest.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plugin"},
                                   "data": {"any": CONFIG, "other": "not: a config"}})]
    answers = {plugin_config.sharing_strategy({}, objects) for _ in range(20)}
    assert answers == {("TimeSlicing", "ConfigMap 'plugin' key 'any'")}
    assert len(calls) == 2  # one per data key, not one per question
