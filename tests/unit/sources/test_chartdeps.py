"""A chart's missing dependencies: which helm would find missing, and whether the values
disable them (helm pkg/chart/v2/util/dependencies.go: tags, then conditions)."""

import io
import os
import tarfile

import pytest
import yaml

from draguard.sources.chartdeps import Dependency, enabled, missing, pruned_copy

CHART = """apiVersion: v2
name: app
version: 1.0.0
dependencies:
  - name: cache
    version: 1.x
    condition: cache.enabled
  - name: metrics
    version: 2.0.0
    condition: metrics.enabled,global.metrics
    tags: [monitoring]
"""


def _chart(root, text=CHART):
    root.mkdir(exist_ok=True)
    (root / "Chart.yaml").write_text(text)
    return root


def _subchart_archive(folder, name):
    folder.mkdir(exist_ok=True)
    data = f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n".encode()
    with tarfile.open(folder / f"{name}-1.0.0.tgz", "w:gz") as archive:
        info = tarfile.TarInfo(f"{name}/Chart.yaml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))


def test_the_dependencies_charts_lacks_are_missing_with_their_entry_in_chart_yaml(tmp_path):
    chart = _chart(tmp_path / "app")
    assert [(d.name, d.line, d.column) for d in missing(chart)] == [("cache", 5, 5), ("metrics", 8, 5)]


def test_a_subchart_counts_by_its_own_name_as_a_folder_or_an_archive(tmp_path):
    chart = _chart(tmp_path / "app")
    (chart / "charts" / "cache-folder").mkdir(parents=True)
    (chart / "charts" / "cache-folder" / "Chart.yaml").write_text("apiVersion: v2\nname: cache\nversion: 1.2.0\n")
    assert [d.name for d in missing(chart)] == ["metrics"]
    _subchart_archive(chart / "charts", "metrics")
    assert missing(chart) == []


def test_a_subchart_that_cannot_be_named_leaves_the_verdict_to_helm(tmp_path):
    chart = _chart(tmp_path / "app")
    (chart / "charts").mkdir()
    (chart / "charts" / "broken-1.0.0.tgz").write_bytes(b"not an archive")
    assert missing(chart) == []


def test_an_apiversion_v1_chart_lists_them_in_requirements_yaml(tmp_path):
    chart = _chart(tmp_path / "app", "apiVersion: v1\nname: app\nversion: 1.0.0\n")
    (chart / "requirements.yaml").write_text("dependencies:\n- name: cache\n  version: 1.0.0\n")
    assert [(d.name, d.file, d.line) for d in missing(chart)] == [("cache", "requirements.yaml", 2)]


def _dependency(condition="", tags=()):
    return Dependency("dep", condition, tuple(tags), "Chart.yaml", 1, 1)


@pytest.mark.parametrize("condition, values, expected", [
    ("dep.enabled", {"dep": {"enabled": False}}, False),
    ("dep.enabled", {"dep": {"enabled": True}}, True),
    ("dep.enabled", {}, None),  # no value: helm keeps it (unless the subchart's own values say otherwise)
    ("dep.enabled", {"dep": {"enabled": "false"}}, None),  # not a bool: helm warns and reads on
    ("dep.enabled", {"dep": {"enabled": {"nested": False}}}, None),  # a table is no value
    ("dep.enabled,global.dep", {"global": {"dep": False}}, False),  # the first path holding a bool
    ("dep.enabled,global.dep", {"dep": {"enabled": True}, "global": {"dep": False}}, True),
    ("dep.enabled, global.dep", {"global": {"dep": False}}, None),  # helm splits without trimming each path
    ("flag", {"flag": False}, False),
])
def test_a_condition_is_read_as_helm_reads_it(condition, values, expected):
    assert enabled(_dependency(condition), values) is expected


def test_tags_decide_unless_a_condition_holds_a_bool():
    dependency = _dependency("dep.enabled", tags=["monitoring", "extra"])
    assert enabled(dependency, {"tags": {"monitoring": False}}) is False
    assert enabled(dependency, {"tags": {"monitoring": False, "extra": True}}) is True  # any true tag
    assert enabled(dependency, {"tags": {"monitoring": False}, "dep": {"enabled": True}}) is True
    assert enabled(dependency, {"tags": {"other": False}}) is None


def test_the_copy_leaves_out_only_the_missing_entries_and_shows_the_values(tmp_path):
    chart = _chart(tmp_path / "app")
    (chart / "templates").mkdir()
    (chart / "templates" / "cm.yaml").write_text("kind: ConfigMap\n")
    absent = [d for d in missing(chart) if d.name == "cache"]
    copy = pruned_copy(str(chart), absent, str(tmp_path / "build"))
    assert [d["name"] for d in yaml.safe_load(open(os.path.join(copy, "Chart.yaml")))["dependencies"]] == ["metrics"]
    assert sorted(os.listdir(os.path.join(copy, "templates"))) == ["cm.yaml", "draguard-effective-values.yaml"]
    assert (chart / "Chart.yaml").read_text() == CHART  # the user's chart is not touched
