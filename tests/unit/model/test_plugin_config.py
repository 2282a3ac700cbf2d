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


#: scalars of YAML 1.1 and 1.2 forms where a resolver may part from PyYAML's safe loader, and
#: indicators where a reader may take a scalar for text (`-`, `?`, `#`, flow collections)
_SCALARS = ["4", "'4'", '"4"', "4.0", "4.5", "1e3", "1.0e+3", "1.", ".5", "+1", "-1", "0", "00", "09", "010", "0o7", "-0o7",
            "0x4", "+0x1", "0x_1", "0b101", "1_000", "1__0", "_1", "1_", "1:30", "190:20:30", "1:60", "1,000", ".inf",
            "-.Inf", ".NaN", "~", "null", "Null", "NULL", "", "yes", "Yes", "NO", "no", "on", "On", "off", "OFF", "y",
            "n", "true", "True", "TRUE", "tRue", "nvidia.com/gpu", "a b", "'a''b'", '"a\\tb"', '"\\x41"', "x:y", "-",
            "-x", "- x", "?", "? x", "a #b", "4 # c", "{name: nvidia.com/gpu, replicas: 2}", "[a, 2]", "[a, ]", "{a: -}",
            "[-]", "{'k': v}", "[a, [b]]", "{a}", "[a b, c]"]
#: what the block reader leaves to PyYAML (or _config does): a timestamp, `=`, `<<`, anchors,
#: aliases, tags, block scalars
_LEFT = ["2001-12-14", "=", "<<", "&a 4", "*a", "!!str 4", "!!int 4", "|\n        4", ">-\n        4"]
#: a resource's keys; none PyYAML reads as other than text (`1`, `yes`), which the block reader
#: keeps as text: a difference in the data no lookup sees (shared_resources asks str keys alone)
_RESOURCE_KEYS = ["name", "replicas", "'name'", '"replicas"', "renameByDefault", "failRequestsGreaterThanOne",
                  "devices", "<<", "? replicas", "replicas ", "'1'", "yes please"]
_STRATEGY_KEYS = ["timeSlicing", "mps"] * 4 + ["'mps'", '"timeSlicing"']


@st.composite
def _hostile_configs(draw) -> str:
    """A device plugin config written every way a tenant might: the scalars above as values
    and flags, repeated and quoted keys, merge keys, anchors, comments, sequences indented or
    not, flow resources, other documents before or after it, a BOM, CRLF, tabs."""
    scalar, indent = st.sampled_from(_SCALARS * 4 + _LEFT), draw(st.sampled_from(["    ", "", "  "]))
    lines = ["version: v1", draw(st.sampled_from(["sharing:"] * 6 + ["'sharing':", "sharing: # c", "sharing: &s"])),
             f"  {draw(st.sampled_from(_STRATEGY_KEYS))}:"]
    for flag in draw(st.lists(st.sampled_from(["renameByDefault", "failRequestsGreaterThanOne", "resources"]), max_size=2)):
        lines.append(f"    {flag}: {draw(scalar)}")
    lines.append("    resources:" + draw(st.sampled_from([""] * 6 + [" # c", " []"])))
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(f"{indent}- {draw(scalar)}")
            continue
        pairs = [f"{draw(st.sampled_from(_RESOURCE_KEYS[:2] * 8 + _RESOURCE_KEYS))}: {draw(scalar)}"
                 for _ in range(draw(st.integers(1, 4)))]
        lines.append(f"{indent}- " + f"\n{indent}  ".join(pairs))
        if draw(st.integers(0, 6)) == 0:
            lines.append(draw(st.sampled_from(["# c", "", f"{indent}  # c", "  ", "    x: 1"])))
    text = "\n".join(lines) + "\n"
    text = draw(st.sampled_from([""] * 8 + ["---\n", "# c\n", "--- # c\n", "%YAML 1.1\n---\n", "\n", "a: 1\n---\n"])) + text
    text += draw(st.sampled_from([""] * 8 + ["---\n", "...\n", "--- x\n", "---\n...\n", "...\n---\n", "sharing: 1\n",
                                  "version: v2\n", "<<: {version: v3}\n", "flags: {a: 2001-01-01}\n"]))
    change = draw(st.sampled_from([None] * 16 + [("\n", "\r\n"), ("  ", "\t"), (": ", ":\t")]))
    text = text if change is None else text.replace(change[0], change[1], 1 if change[0] != "\n" else -1)
    return draw(st.sampled_from([""] * 16 + ["\ufeff"])) + text


@settings(max_examples=400, deadline=None)
@given(text=_hostile_configs())
def test_hostile_configs_are_read_as_pyyamls_safe_loader_reads_them(text):
    """Whatever the block reader reads of a config is what PyYAML's safe loader reads (the
    values, their types, which key of a repeated one is kept; no config where the loader
    refuses the text), so every rule that asks which GPUs a config shares
    (shared_resources) hears what it heard before the block reader read configs."""
    read_whole = plugin_config.read_whole
    plugin_config.read_whole = lambda text: None  # PyYAML only, as before the block reader
    try:
        expected, shared = plugin_config._config(text), _shared(text)
    finally:
        plugin_config.read_whole = read_whole
    assert repr(plugin_config._config(text)) == repr(expected), text  # repr: a NaN is not equal to itself
    assert _shared(text) == shared, text
