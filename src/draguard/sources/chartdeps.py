"""A Helm chart's dependencies that its charts/ folder does not hold.

`helm template` refuses such a chart before it renders anything (helm pkg/action/install.go
CheckDependencies: every dependency named in Chart.yaml must be among the charts loaded from
charts/), whatever the values say. Charts in repositories are often that way: charts/ is
left out of git, filled by `helm dependency build` in the release pipeline, and the missing
ones are optional subcharts (monitoring, a cache) that the default values disable. A
dependency the values disable renders nothing (pkg/chart/v2/util/dependencies.go
processDependencyEnabled drops it), so the chart renders the same without its entry: render
reads such a chart from a copy without the missing entries (`pruned_copy`) and says so. A
missing dependency the values enable, or may (its condition has no value there), still
fails the render, named."""

from __future__ import annotations

import os
import shutil
import tarfile
from dataclasses import dataclass

import yaml

from .yamlpos import DocumentError, YSeq, read_document

#: a template the copy gets, whose render is the values the chart's templates see (the same
#: values helm reads conditions and tags from: the chart's own coalesced with the user's)
VALUES_TEMPLATE = "draguard-effective-values.yaml"


@dataclass(frozen=True)
class Dependency:
    name: str
    condition: str
    tags: tuple
    file: str  # Chart.yaml, or requirements.yaml of an apiVersion v1 chart
    line: int
    column: int


def missing(chart: str) -> list[Dependency]:
    """The dependencies `helm template` would find missing from charts/; none when one of
    charts/ cannot be named (then helm itself decides, and says what it finds)."""
    wanted = _dependencies(chart)
    if not wanted:
        return []
    present = _subchart_names(os.path.join(chart, "charts"))
    if present is None:
        return []
    return [d for d in wanted if d.name not in present]


def _dependencies(chart: str) -> list[Dependency]:
    found = []
    for file in ("Chart.yaml", "requirements.yaml"):  # v1 charts list them in requirements.yaml
        documents = _read(os.path.join(chart, file))
        entries = documents.get("dependencies") if isinstance(documents, dict) else None
        if not isinstance(entries, YSeq):
            continue
        for index, entry in enumerate(entries):
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                tags = entry.get("tags")
                where = entries.item_mark(index) or entries.mark  # a parsed file marks each item
                if where is None:  # only data built in memory has none, and no chart is read so
                    continue
                line, column = where
                found.append(Dependency(entry["name"], str(entry.get("condition") or ""),
                                        tuple(str(t) for t in tags) if isinstance(tags, list) else (), file, line,
                                        column))
    return found


def _read(path: str):
    """A chart file's data, or None when it is not there or does not parse (helm decides)."""
    try:
        return read_document(path)
    except DocumentError:
        return None


def _subchart_names(folder: str) -> set[str] | None:
    """The names of the charts in charts/ (their Chart.yaml's, as helm's loader reads them:
    folders and .tgz archives), None when one of them cannot be read."""
    names: set[str] = set()
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:
        return names
    except OSError:
        return None
    for entry in entries:
        path = os.path.join(folder, entry)
        if entry.endswith(".prov"):
            continue
        if entry.endswith(".tgz"):
            name = _archived_name(path)
        elif os.path.isdir(path):
            data = _read(os.path.join(path, "Chart.yaml"))
            name = data.get("name") if isinstance(data, dict) else None
        else:
            continue
        if not isinstance(name, str):
            return None
        names.add(name)
    return names


def _archived_name(path: str) -> str | None:
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                parts = member.name.split("/")
                if len(parts) == 2 and parts[1] == "Chart.yaml" and member.isfile():
                    extracted = archive.extractfile(member)  # None only for what is not a file
                    data = yaml.safe_load(extracted.read()) if extracted is not None else None
                    return data.get("name") if isinstance(data, dict) else None
    except (OSError, tarfile.TarError, yaml.YAMLError):
        return None
    return None


def pruned_copy(chart: str, leave_out: list[Dependency], into: str) -> str:
    """A copy of `chart` in `into` without the entries of `leave_out`, with VALUES_TEMPLATE
    added; its path."""
    copy = os.path.join(into, os.path.basename(os.path.abspath(chart)) or "chart")
    shutil.copytree(chart, copy, symlinks=True)
    names = {d.name for d in leave_out}
    for file in {d.file for d in leave_out}:
        path = os.path.join(copy, file)
        with open(path, encoding="utf-8-sig") as handle:
            data = yaml.safe_load(handle)
        data["dependencies"] = [d for d in data["dependencies"] if not (isinstance(d, dict) and d.get("name") in names)]
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(data, handle, sort_keys=False)
    os.makedirs(os.path.join(copy, "templates"), exist_ok=True)
    with open(os.path.join(copy, "templates", VALUES_TEMPLATE), "w", encoding="utf-8") as handle:
        handle.write("{{ toJson .Values }}\n")
    return copy


def enabled(dependency: Dependency, values: dict) -> bool | None:
    """Whether helm would render the dependency under the chart's effective `values`: its
    tags, then its condition, which wins (processDependencyTags, then
    processDependencyConditions: the first of its comma-separated paths that holds a bool);
    None when neither decides (enabled, unless the subchart's own values, which are not
    here, turn it off)."""
    decided = None
    table = values.get("tags")
    if isinstance(table, dict):
        said = [table[tag] for tag in dependency.tags if isinstance(table.get(tag), bool)]
        if said:
            decided = any(said)
    for path in dependency.condition.strip().split(","):
        value = _path_value(values, path) if path else None
        if isinstance(value, bool):
            return value
    return decided


def _path_value(values: dict, path: str):
    """helm's Values.PathValue: the value at a dotted path, never a table; None when absent."""
    *tables, key = path.split(".")
    table = values
    for name in tables:
        inner = table.get(name)
        if not isinstance(inner, dict):
            return None
        table = inner
    value = table.get(key)
    return None if isinstance(value, dict) else value
