"""The per-user cache: an entry is built once and read back after, rebuilt when what it came
from changes or the file is damaged, and never needed for a correct answer."""

from __future__ import annotations

import pytest

from draguard.core import usercache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_built_once_then_read_back(root):
    build, calls = counting({"a": [1, 2], "b": "x"})
    assert usercache.cached_json("area", "key", build) == {"a": [1, 2], "b": "x"}
    assert usercache.cached_json("area", "key", build) == {"a": [1, 2], "b": "x"}
    assert len(calls) == 1
    [entry] = (root / f"v{usercache.__version__}" / "area").iterdir()
    assert entry.suffix == ".json"


def test_a_changed_source_is_a_miss(root, tmp_path):
    source = tmp_path / "data.yaml"
    source.write_text("one\n")
    build, calls = counting(1)
    usercache.cached_json("area", usercache.source_stamp(source), build)
    source.write_text("a longer text\n")
    usercache.cached_json("area", usercache.source_stamp(source), build)
    assert len(calls) == 2


def test_a_damaged_entry_is_rebuilt_and_rewritten(root):
    build, calls = counting([3])
    usercache.cached_json("area", "key", build)
    [entry] = (root / f"v{usercache.__version__}" / "area").iterdir()
    entry.write_text('{"key": "key", "val')
    assert usercache.cached_json("area", "key", build) == [3]
    assert usercache.cached_json("area", "key", build) == [3]
    assert len(calls) == 2


def test_an_entry_of_another_key_is_not_taken(root, monkeypatch):
    monkeypatch.setattr(usercache.binascii, "crc32", lambda data: 7)  # every key names one file
    assert usercache.cached_json("area", "first", lambda: "one") == "one"
    assert usercache.cached_json("area", "second", lambda: "two") == "two"
    assert usercache.cached_json("area", "first", lambda: "again") == "again"


def test_empty_setting_turns_it_off(monkeypatch, tmp_path):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    build, calls = counting(5)
    assert usercache.cached_json("area", "key", build) == 5
    assert usercache.cached_json("area", "key", build) == 5
    assert len(calls) == 2 and not list(tmp_path.iterdir())


def test_an_unwritable_cache_still_answers(root, monkeypatch):
    def refuse(path, text, mode=None):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(usercache, "write_atomic", refuse)
    assert usercache.cached_json("area", "key", lambda: "value") == "value"


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("DRAGUARD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert usercache.cache_root() == str(tmp_path / "draguard" / f"v{usercache.__version__}")


def test_a_key_with_a_lone_surrogate_is_kept(root):
    """A key may hold what a tenant wrote; a JSON escape (`\\ud800`) gives a lone surrogate."""
    build, calls = counting(["x"])
    assert usercache.cached_json("area", "selector '\ud800'", build) == ["x"]
    assert usercache.cached_json("area", "selector '\ud800'", build) == ["x"]
    assert len(calls) == 1
