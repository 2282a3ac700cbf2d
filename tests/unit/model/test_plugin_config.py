"""The device plugin's configs in ConfigMaps are parsed once, and read once a run, however
many pods ask which way their shared GPUs are shared (each parse is a pure-Python YAML load,
and each question walked every ConfigMap of the set)."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

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
    tagged = CONFIG.replace("4", "!!int 4")  # a tag: left to libyaml by the block reader
    assert plugin_config._config(tagged) == plugin_config.mapping(load(tagged, Loader=no_aliases))
    assert plugin_config._config(ALIASED) == {}
    assert loaders == [getattr(yaml, "CSafeLoader", yaml.SafeLoader), no_aliases] == [safe, no_aliases]


def test_a_block_style_config_is_read_without_pyyaml(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # importing it fails
    assert plugin_config._config(CONFIG) == {"version": "v1", "sharing": {"timeSlicing": {
        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}
    assert plugin_config._config(CONFIG + "---\n" + CONFIG) == {}  # two documents: no config, as to PyYAML


def test_both_loaders_read_the_same_configs():
    import yaml

    safe, no_aliases = plugin_config._loaders()
    texts = [CONFIG, CONFIG.replace("4", "'4'"), CONFIG.replace("4", "0o7"), CONFIG + "flags: {migStrategy: none}\n",
             CONFIG.replace("replicas: 4", "replicas: 4\n      renameByDefault: yes"), "sharing: [1, 2]\n",
             "sharing:\n  mps: {resources: [{name: nvidia.com/gpu, replicas: 1e3}]}\n"]
    for text in texts:
        assert yaml.load(text, Loader=safe) == yaml.load(text, Loader=no_aliases), text


def test_pyyaml_is_imported_only_for_a_config_the_block_reader_leaves():
    """PyYAML is imported at the first value that holds a config the block reader does not read
    whole (16 to 25 ms of a lint)."""
    import subprocess

    probe = ("import sys\nfrom draguard.model.plugin_config import _config\n"
             "print(_config('mode: fast'), bool(_config(sys.argv[1])), 'yaml' in sys.modules,"
             " bool(_config(sys.argv[2])), 'yaml' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe, CONFIG, ALIASED], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["{}", "True", "False", "False", "True"]


#: scalars where PyYAML's safe loader and the block reader's resolver might part: YAML 1.1's
#: numbers and booleans, timestamps (a date to PyYAML), `=` and `<<` (no constructor), quotes
_WORDS = ["4", "'4'", '"4"', "0x4", "0o7", "010", "1_0", "1:30", "4.0", "1e3", ".inf", "yes", "on", "~", "null", "",
          "nvidia.com/gpu", "2001-12-14", "2001-12-14 21:59:43.10 -5", "'2001-12-14'", "=", "<<", "a=b", "x y",
          "{}", "[]", "[a, 2]", "{name: a, replicas: 2}", "&a 4", "*a", "!!str 4", "|\n        4"]
_KEYS = ["name", "'name'", "replicas", '"replicas"', "yes", "1", "~", "2001-12-14", "<<"]


@st.composite
def _configs(draw) -> str:
    """A device plugin config with scalars, keys and layouts the two readers may differ on:
    each resource a name and a replica count (mostly ones that share), and maybe another key."""
    name, replicas = st.sampled_from(["nvidia.com/gpu"] * 8 + _WORDS), st.sampled_from(["4", "0x4", "1:30"] * 4 + _WORDS)
    entries = []
    for _ in range(draw(st.integers(0, 3))):
        lines = [f"{draw(st.sampled_from(_KEYS[:2]))}: {draw(name)}", f"{draw(st.sampled_from(_KEYS[2:4]))}: {draw(replicas)}"]
        if draw(st.booleans()):
            lines.append(f"{draw(st.sampled_from(_KEYS))}: {draw(st.sampled_from(_WORDS))}")
        entries.append("    - " + "\n      ".join(draw(st.permutations(lines))))
    strategy = draw(st.sampled_from(["timeSlicing", "mps"]))
    text = f"version: v1\nsharing:\n  {strategy}:\n    resources:\n" + "\n".join(entries) + "\n"
    if draw(st.integers(0, 4)) == 0:
        text += draw(st.sampled_from(["---\n", "...\n", "# end\n", "--- x\n", "flags: {a: 2001-01-01}\n"]))
    return text


def _shared(text: str) -> list[tuple]:
    config_map = Manifest.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plugin"},
                                     "data": {"config.yaml": text}})
    return [(s.key, s.strategy, s.resource, s.replicas, s.offset) for s in plugin_config.shared_resources(config_map)]


@settings(max_examples=300, deadline=None)
@given(text=_configs())
def test_generated_configs_share_what_pyyamls_safe_loader_reads(text):
    """Whichever reads a config (the block reader, else PyYAML), the resources it shares are
    those of PyYAML's reading. (The keys PyYAML reads as other than text, `yes` or `1`, are
    text to the block reader; no str key, the only ones looked up, differs.)"""
    read_whole = plugin_config.read_whole
    plugin_config.read_whole = lambda text: None  # PyYAML only, as before the block reader
    try:
        expected = _shared(text)
    finally:
        plugin_config.read_whole = read_whole
    assert _shared(text) == expected, text
