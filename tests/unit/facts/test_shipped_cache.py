"""The shipped facts are read back from the per-user cache as JSON: every data file must
come back from JSON exactly as its YAML reads (no integer keys, dates or tuples), and the
second read must not parse the YAML again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draguard.facts import shipped


@pytest.mark.parametrize("path", sorted(Path(shipped.DATA).glob("*.yaml")), ids=lambda p: p.name)
def test_each_data_file_survives_json(path):
    data = shipped._read(path)
    assert json.loads(json.dumps(data)) == data


def test_read_once_then_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path))
    first = shipped._load("gpus.yaml")
    monkeypatch.setattr(shipped, "_read", lambda path: pytest.fail(f"{path} parsed again"))
    assert shipped._load("gpus.yaml") == first
    assert first["models"]


def test_the_built_in_inventory_from_the_cache_is_the_generated_one(tmp_path, monkeypatch):
    from draguard.dra import target

    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path))
    target.builtin_manifests.cache_clear()
    generated = target._generate_builtin()
    assert [m.data for m in target.builtin_manifests()] == generated
    target.builtin_manifests.cache_clear()
    monkeypatch.setattr(target, "_generate_builtin", lambda: pytest.fail("generated again"))
    assert [m.data for m in target.builtin_manifests()] == generated
    target.builtin_manifests.cache_clear()
