"""Turn command-line inputs into units to load: files, stdin, Helm charts, Kustomize folders."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from ..core.errors import InputError

DEFAULT_INCLUDE = ("*.yaml", "*.yml", "*.json")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass(frozen=True)
class Unit:
    """One thing to load. `kind` is 'file', 'stdin', 'helm' or 'kustomize'; `display` is the
    path as the user would write it (relative to what they gave on the command line)."""

    kind: str
    path: str
    display: str


def _matches(relpath: str, patterns) -> bool:
    base = os.path.basename(relpath)
    return any(fnmatch.fnmatchcase(relpath, p) or fnmatch.fnmatchcase(base, p) for p in patterns)


def _render_kind(directory: str) -> str | None:
    if os.path.isfile(os.path.join(directory, "Chart.yaml")):
        return "helm"
    if any(os.path.isfile(os.path.join(directory, name)) for name in KUSTOMIZATION_FILES):
        return "kustomize"
    return None


def expand(inputs: list[str], include=DEFAULT_INCLUDE, exclude=()) -> list[Unit]:
    """Expand paths into units, in a stable order. A folder holding Chart.yaml or a
    kustomization is one unit to render; other folders are walked (hidden entries skipped)."""
    units: list[Unit] = []
    for given in inputs:
        if given == "-":
            units.append(Unit("stdin", "-", "-"))
        elif os.path.isdir(given):
            units.extend(_walk(given, include, exclude))
        elif os.path.isfile(given):
            units.append(Unit("file", given, given))
        elif os.path.exists(given):
            raise InputError(f"{given}: not a regular file or folder")
        else:
            raise InputError(f"{given}: no such file or folder")
    return units


def _walk(root: str, include, exclude) -> list[Unit]:
    kind = _render_kind(root)
    if kind:
        return [Unit(kind, root, root)]
    units = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        keep = []
        for name in dirnames:
            sub = os.path.join(dirpath, name)
            rel = os.path.relpath(sub, root)
            if name.startswith(".") or _matches(rel, exclude):
                continue
            sub_kind = _render_kind(sub)
            if sub_kind:
                units.append(Unit(sub_kind, sub, sub))
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.startswith("."):  # dotfiles: .draguard.yaml, editor and CI configs
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if _matches(rel, include) and not _matches(rel, exclude):
                units.append(Unit("file", path, path))
    return units
