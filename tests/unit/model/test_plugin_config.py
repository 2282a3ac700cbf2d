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


ALIASED = """\
version: v1
sharing:
  timeSlicing:
    resources:
    - &gpu {name: nvidia.com/gpu, replicas: 4}
    - *gpu
"""


def test_a_config_with_an_alias_is_refused():
    """Tenant input: an alias (which can expand without bound) makes the value no config."""
    assert plugin_config._config(ALIASED) == {}
    assert plugin_config._config(ALIASED.replace("*gpu", "{name: nvidia.com/mig-1g.5gb, replicas: 2}"))


def test_a_config_without_an_alias_is_read_by_the_c_loader(monkeypatch):
    """The pure-Python loader, needed only to refuse aliases, is used only where one may be."""
    import yaml

    safe, no_aliases = plugin_config._loaders()
    loaders = []
    load = yaml.load
    monkeypatch.setattr(yaml, "load", lambda text, Loader: loaders.append(Loader) or load(text, Loader))
    assert plugin_config._config(CONFIG) == plugin_config.mapping(load(CONFIG, Loader=no_aliases))
    assert plugin_config._config(ALIASED) == {}
    assert loaders == [getattr(yaml, "CSafeLoader", yaml.SafeLoader), no_aliases] == [safe, no_aliases]


def test_both_loaders_read_the_same_configs():
    import yaml

    safe, no_aliases = plugin_config._loaders()
    texts = [CONFIG, CONFIG.replace("4", "'4'"), CONFIG.replace("4", "0o7"), CONFIG + "flags: {migStrategy: none}\n",
             CONFIG.replace("replicas: 4", "replicas: 4\n      renameByDefault: yes"), "sharing: [1, 2]\n",
             "sharing:\n  mps: {resources: [{name: nvidia.com/gpu, replicas: 1e3}]}\n"]
    for text in texts:
        assert yaml.load(text, Loader=safe) == yaml.load(text, Loader=no_aliases), text


def test_a_config_map_without_a_sharing_config_does_not_import_yaml():
    """PyYAML is imported at the first value that may hold a config (16 to 25 ms of a lint)."""
    import subprocess
    import sys

    probe = ("import sys\nfrom draguard.model.plugin_config import _config\n"
             "print(_config('mode: fast'), 'yaml' in sys.modules, bool(_config(sys.argv[1])), 'yaml' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe, CONFIG], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["{}", "False", "True", "True"]
