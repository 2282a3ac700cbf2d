"""The rule index (rules.index): it says what the catalog says, a run imports only the rule
modules that judge the kinds it was given, and a cached index that no longer matches the
modules, or is damaged, is built again."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from draguard.rules import REGISTRY, index

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata: {a: b}\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    index.entries.cache_clear()
    yield tmp_path / "cache"
    index.entries.cache_clear()


def test_the_index_is_the_catalog(cache):
    entries = index.entries()
    assert list(entries) == [rule.id for rule in REGISTRY]  # the catalog's order
    for rule in REGISTRY:
        entry = entries[rule.id]
        assert (entry.module, entry.category, entry.profile, entry.lifecycle, entry.needs, entry.targets,
                entry.has_check, entry.authored_only) == (
            type(rule).__module__, rule.category, rule.profile, rule.lifecycle, rule.needs,
            rule.targets and frozenset(rule.targets), rule.has_check, rule.authored_only)


def test_read_back_from_the_cache(cache, monkeypatch):
    built = index.entries()
    index.entries.cache_clear()
    monkeypatch.setattr(index, "_build", lambda: pytest.fail("a current entry was built again"))
    assert index.entries() == built


def _entry_file(cache):
    [path] = (p for p in cache.rglob("*.json") if "rules" in p.parts)
    return path


def test_a_changed_module_is_a_miss(cache, tmp_path):
    index.entries()
    path = _entry_file(cache)
    entry = json.loads(path.read_text())
    module = tmp_path / "edited.py"
    module.write_text("x = 1\n")
    stat = module.stat()
    entry["value"]["files"].append([str(module), stat.st_size, stat.st_mtime_ns])
    assert index._current(entry["value"])
    module.write_text("x = 22\n")  # an edited module: its size (and time) changed
    assert not index._current(entry["value"])
    module.unlink()
    assert not index._current(entry["value"])


@pytest.mark.parametrize("damage", [
    "not json", "[]", '{"key": 1}',
    None,  # the right key, rules that do not read as an index
])
def test_a_damaged_entry_is_built_again(cache, damage):
    built = index.entries()
    path = _entry_file(cache)
    if damage is None:
        entry = json.loads(path.read_text())
        entry["value"]["rules"][0][3] = "no-such-profile"
        damage = json.dumps(entry)
    path.write_text(damage)
    index.entries.cache_clear()
    assert index.entries() == built
    assert index._current(json.loads(path.read_text())["value"])


def _modules_after(script: str, tmp_path) -> set[str]:
    """The draguard modules a fresh interpreter has loaded after `script` (run twice: the
    first fills the cache)."""
    code = textwrap.dedent(script) + "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('draguard')))"
    env = {"DRAGUARD_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": ":".join(p for p in sys.path if p)}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return set(done.stdout.split())


def test_a_run_imports_only_the_rules_of_its_kinds(tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(CONFIG_MAP)
    loaded = _modules_after(f"""
        from draguard.cli import main
        main(["lint", "--no-config", {str(manifest)!r}])
    """, tmp_path)
    # a ConfigMap: the rules that judge every object, and those of ConfigMaps (env, legacy)
    assert {"draguard.rules.currency", "draguard.rules.schema", "draguard.rules.env"} <= loaded
    assert not loaded & {"draguard.rules.cel", "draguard.rules.satisfiability", "draguard.rules.rollout",
                         "draguard.rules.cluster_claims", "draguard.dra.allocator", "draguard.simulate.rollout"}


def test_looking_a_rule_up_imports_its_module_only(tmp_path):
    loaded = _modules_after("""
        from draguard.rules import REGISTRY
        assert REGISTRY.get("host-ipc").id == "host-ipc"
        assert REGISTRY.get("no-such-rule") is None and "no-such-rule" not in REGISTRY
        assert "cel-invalid" in REGISTRY
    """, tmp_path)
    assert "draguard.rules.host" in loaded
    assert "draguard.rules.cel" not in loaded


def test_going_through_the_catalog_imports_every_rule(tmp_path):
    loaded = _modules_after("""
        from draguard.rules import REGISTRY
        assert len(list(REGISTRY)) == len(REGISTRY) > 70
    """, tmp_path)
    assert {"draguard.rules.cel", "draguard.rules.cluster_pods", "draguard.rules.wiring"} <= loaded


@pytest.mark.parametrize("cache_dir", ["", "unwritable"])
def test_without_a_cache_the_run_is_the_same(cli, tmp_path, monkeypatch, cache_dir):
    """The cache only saves time: off (DRAGUARD_CACHE_DIR=) or unwritable, the index is built
    in memory and the findings are the same."""
    example = REGISTRY.get("legacy-gpu-resource").noncompliant
    expected = cli("lint", "-", "--no-config", "-f", "json", stdin=textwrap.dedent(example)).json
    if cache_dir:
        blocked = tmp_path / "file"
        blocked.write_text("a file where the cache's folder would be")
        cache_dir = str(blocked)
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", cache_dir)
    index.entries.cache_clear()
    try:
        again = cli("lint", "-", "--no-config", "-f", "json", stdin=textwrap.dedent(example)).json
    finally:
        index.entries.cache_clear()
    assert again == expected and again["findings"]
