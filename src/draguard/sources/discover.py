"""Turn command-line inputs into units to load: files, stdin, Helm charts, Kustomize folders."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from functools import lru_cache

from ..core import confine
from ..core.errors import InputError
from ..core.value import Value
from ..core.patterns import Lazy

DEFAULT_INCLUDE = ("*.yaml", "*.yml", "*.json")
#: unit kinds that are rendered into objects (a chart, a kustomization)
RENDERED = ("helm", "kustomize")
#: unit kinds that stand for a chart's or kustomization's folder: rendered, or (a Component) said
FOLDER_KINDS = (*RENDERED, "component")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class Unit(Value):
    """One thing to load. `kind` is 'file', 'stdin', 'helm' or 'kustomize'; 'component', a
    kustomize Component (said, not built); 'disabled', a file a kustomization names only in a
    comment (said, not read); or 'skipped': found in a folder but not read, for `reason`;
    `display` is the path as the user would write it (relative to what they gave on the
    command line)."""

    __slots__ = ("kind", "path", "display", "reason", "through")

    def __init__(self, kind: str, path: str, display: str, reason: str = "", through: tuple = ()) -> None:
        self.kind = kind
        self.path = path
        self.display = display
        self.reason = reason
        #: a kustomization reached through files of it named as inputs (its patches, itself): those files
        self.through = through


def _matches(relpath: str, patterns) -> bool:
    """Whether a pattern matches the path or its last part (fnmatch, case-sensitive)."""
    matching = _matcher(tuple(patterns))
    return matching is not None and (matching(relpath) is not None or matching(os.path.basename(relpath)) is not None)


@lru_cache(maxsize=64)
def _matcher(patterns: tuple):
    """The patterns as one compiled expression's fullmatch (None for none): a walk asks twice
    a file, and fnmatch per pattern, path and last part cost 6 µs a file."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match if patterns else None


def _render_kind(directory: str) -> str | None:
    """'helm', 'kustomize', or 'component': a kustomize Component, which is built only inside
    the overlays that name it under `components` (`kustomize build` refuses it alone)."""
    if os.path.isfile(os.path.join(directory, "Chart.yaml")):
        return "helm"
    if kustomization_file(directory) is None:
        return None
    spec = _kustomization(directory)
    return "component" if spec is not None and spec.get("kind") == "Component" else "kustomize"


def expand(inputs: list[str], include=DEFAULT_INCLUDE, exclude=()) -> list[Unit]:
    """Expand paths into units, in a stable order. A folder holding Chart.yaml or a
    kustomization is one unit to render; other folders are walked (hidden entries skipped).
    A kustomization's patch (or the kustomization file itself) is no object alone: named as
    an input, or met in a walk, it stands for the build of the nearest kustomization at or
    above its folder that patches it (the patch's findings point into it); a Helm chart's
    template, values file or Chart.yaml stands for the chart, rendered. Where reads are
    confined (confine.active), an input outside the roots is refused (confine.Outside)."""
    units: list[Unit] = []
    roots = confine.active()
    for given in inputs:
        if given == "-":
            units.append(Unit("stdin", "-", "-"))
            continue
        if roots is not None:
            roots.check(given)
        if os.path.isdir(given):
            units.extend(_walk(given, include, exclude))
        elif os.path.isfile(given):
            units.append(_file_unit(given))
        elif os.path.exists(given):
            raise InputError(f"{given}: not a regular file or folder")
        else:
            raise InputError(f"{given}: no such file or folder")
    units = _builds_once(units)
    return units if roots is None else [_confined_render(unit, roots) for unit in units]


def _file_unit(path: str, absolute: str | None = None) -> Unit:
    """A manifest file, or the render of the chart or kustomization it is part of (one inside
    the roots, where reads are confined). `absolute`: the path made absolute, where a walk
    has it."""
    roots = confine.active()
    absolute = absolute or os.path.abspath(path)
    folder = os.path.dirname(absolute)
    for kind, owner in (("helm", _chart_above(folder)), ("kustomize", _patches_above(folder).get(absolute))):
        if owner is not None and (roots is None or roots.holding(owner) is not None):
            display = owner if os.path.isabs(path) else os.path.relpath(owner)
            return Unit((_render_kind(owner) or kind) if kind == "kustomize" else kind, owner, display, through=(path,))
    return Unit("file", path, path)


@lru_cache(maxsize=4096)
def _chart_above(folder: str) -> str | None:
    """The nearest Helm chart's folder at or above `folder` (absolute), whose files (templates,
    values files, Chart.yaml) stand for the chart: a walk renders such a folder whole; else None."""
    if os.path.isfile(os.path.join(folder, "Chart.yaml")):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _chart_above(parent)


def _builds_once(units: list[Unit]) -> list[Unit]:
    """One render per chart or kustomization, where several of its files (or the folder)
    were named: at the first one's place, holding every file that led to it."""
    first: dict[str, int] = {}
    out: list[Unit] = []
    for unit in units:
        if unit.kind not in FOLDER_KINDS:
            out.append(unit)
            continue
        key = os.path.abspath(unit.path)
        if key not in first:
            first[key] = len(out)
            out.append(unit)
        else:
            kept = out[first[key]]
            out[first[key]] = Unit(kept.kind, kept.path, kept.display, kept.reason, kept.through + unit.through)
    return out


def patched_by(path: str) -> str | None:
    """The folder of the nearest kustomization at or above `path`'s own that is `path` or
    names it as a patch; None for a file no such kustomization patches."""
    target = os.path.abspath(path)  # kustomize joins its paths to the kustomization's folder, links unresolved
    return _patches_above(os.path.dirname(target)).get(target)


@lru_cache(maxsize=4096)
def _patches_above(folder: str) -> dict[str, str]:
    """Absolute path -> the folder of the nearest kustomization at or above `folder` that is
    that file or names it as a patch."""
    parent = os.path.dirname(folder)
    found = dict(_patches_above(parent)) if parent != folder else {}
    spec, name = _kustomization(folder), kustomization_file(folder)
    if spec is not None and name is not None:
        named = [v for v in spec.get("patchesStrategicMerge") or [] if isinstance(v, str)]
        named += [v["path"] for key in ("patches", "patchesJson6902") for v in spec.get(key) or []
                  if isinstance(v, dict) and isinstance(v.get("path"), str)]
        found.update({path: folder for path in [os.path.join(folder, name)]
                      + [os.path.normpath(os.path.join(folder, p)) for p in named]})
    return found


def kustomization_file(folder: str) -> str | None:
    """The name of the kustomization file in `folder`, None when it has none."""
    return next((n for n in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(folder, n))), None)


def _kustomization(folder: str) -> dict | None:
    """The kustomization in `folder` as data; None when there is none or it does not parse."""
    name = kustomization_file(folder)
    if name is None:
        return None
    import yaml  # a folder without a kustomization (nearly every one) does without PyYAML

    try:
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            spec = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return spec if isinstance(spec, dict) else None


def _walk(root: str, include, exclude, top: str | None = None) -> list[Unit]:
    """Units of a folder: a chart is rendered (its files are templates and values); a
    kustomization is rendered and every manifest file below it that it does not use is
    linted as a file too (nothing is skipped silently); other folders are walked."""
    top = top or root
    kind = _render_kind(root)
    if kind in ("helm", "component"):
        return [Unit(kind, root, root)]
    units, used, disabled = [], set(), set()
    if kind == "kustomize":
        units.append(Unit(kind, root, root))
        used = kustomize_inputs(root)
        disabled = kustomize_disabled(root) - used  # named in a comment, and used after all: not disabled
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        # each file's absolute and relative paths from its folder's, made once a folder: a
        # file's name is one part, so joining it needs no normalising (5 abspath a file were
        # most of a walk's 20 µs a file)
        absolute_dir, relative_dir = os.path.abspath(dirpath), os.path.relpath(dirpath, top)
        special = _special_files(dirpath)
        keep = []
        for name in dirnames:
            sub = os.path.join(dirpath, name)
            if name.startswith(".") or _matches(os.path.relpath(sub, top), exclude) or os.path.abspath(sub) in used:
                continue
            if _render_kind(sub):
                units.extend(_outside(sub) or _walk(sub, include, exclude, top))
            elif os.path.islink(sub):
                units.extend(_folder_link(sub, top))
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.startswith("."):  # dotfiles: .draguard.yaml, editor and CI configs
                continue
            path, absolute = os.path.join(dirpath, name), os.path.join(absolute_dir, name)
            rel = name if relative_dir == os.curdir else os.path.join(relative_dir, name)
            if kind == "kustomize" and (name in KUSTOMIZATION_FILES or absolute in used):
                continue
            if absolute in disabled:
                units.append(Unit("disabled", path, path, f"named only in a commented-out line of "
                                  f"{os.path.join(root, kustomization_file(root) or KUSTOMIZATION_FILES[0])}: a disabled patch of that build "
                                  "(no object alone), not checked; name it as an input to check it anyway"))
                continue
            if _matches(rel, include) and not _matches(rel, exclude):
                units.extend(_outside(path) or [_file_unit(path, absolute) if name not in special else Unit(
                    "skipped", path, path, "not a regular file (a pipe, socket or device): not read")])
    return units


def _outside(path: str) -> list[Unit]:
    """A link met in a walk that leads out of the roots reads are confined to: said, not read."""
    roots = confine.active()
    if roots is None or roots.holding(path) is not None:
        return []
    return [Unit("skipped", path, path, f"a link to {os.path.realpath(path)}, outside the workspace "
                                        f"({roots.named()}): not read")]


def _confined_render(unit: Unit, roots: confine.Roots) -> Unit:
    """A chart or kustomization whose render would read outside the roots, as skipped."""
    escape = _render_escape(unit.path, roots, set()) if unit.kind in RENDERED else None
    if escape is None:
        return unit
    return Unit("skipped", unit.path, unit.display, f"{escape}, outside the workspace ({roots.named()}): not rendered")


def _render_escape(folder: str, roots: confine.Roots, seen: set) -> str | None:
    """What the render of `folder` would read outside the roots, said (None: nothing): helm
    and kustomize follow a link in its tree, and kustomize reads what a kustomization names,
    through its bases, or fetches it when it is not on this machine."""
    if folder in seen:
        return None
    seen.add(folder)
    for dirpath, dirnames, filenames in os.walk(folder):
        for path in (os.path.join(dirpath, name) for name in dirnames + filenames):
            if os.path.islink(path) and roots.holding(path) is None:
                return f"{path} is a link to {os.path.realpath(path)}"
    for named in _named_paths(_kustomization(folder) or {}):
        path = os.path.normpath(os.path.join(os.path.abspath(folder), named))
        if "://" in named or not os.path.exists(path):
            return f"it names {named}, not on this machine"
        if roots.holding(path) is None:
            return f"it names {named}"
        escape = _render_escape(path, roots, seen) if os.path.isdir(path) else None
        if escape is not None:
            return escape
    return None


def _folder_link(link: str, top: str) -> list[Unit]:
    """A link to a folder is not followed (it may lead anywhere, or back up the tree): one
    into the folder walked is read under its own path, one out of it is said."""
    target, root = os.path.realpath(link), os.path.realpath(top)
    if os.path.commonpath([target, root]) == root:
        return []
    return [Unit("skipped", link, link, f"a link to the folder {target}, outside {top}: not followed (give it as an "
                                        "input to check it)")]


def _special_files(folder: str) -> set[str]:
    """The names in `folder` of pipes, sockets and devices: reading a pipe would wait for a
    writer forever. A broken link is read, and its error said. The folder's listing says
    which entries are regular files without a stat each; only the others are looked at."""
    special: set[str] = set()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return special
    for entry in entries:
        try:
            if entry.is_file() or entry.is_dir():
                continue
            mode = os.stat(entry.path).st_mode
        except OSError:  # a broken link, or gone since
            continue
        if not stat.S_ISREG(mode):
            special.add(entry.name)
    return special


#: kustomization fields that name files or folders (kustomize's types/kustomization.go)
_PATH_LISTS = ("resources", "bases", "components", "crds", "configurations", "transformers", "generators",
               "validators", "patchesStrategicMerge")
_PATH_ENTRIES = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")


#: a file name as a commented-out kustomization line writes it (`#- path: patches/x.yaml`)
_COMMENTED_FILE = Lazy(r"[\w./-]+\.(?:ya?ml|json)\b")


#: the kustomization fields whose entries are patches
_PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")
_TOP_LEVEL_KEY = Lazy(r"^([A-Za-z]\w*):")


def kustomize_disabled(directory: str) -> set[str]:
    """Absolute paths of the patches the kustomization in `directory` names in comment lines
    (the walk leaves out those it also uses): the ones scaffolds ship disabled (kubebuilder's
    `#- path: patches/...` under `patches:`, KServe's `#ENABLE_KSERVE - path: ...`), which
    are no objects until enabled. A commented-out entry of `resources` is a whole object (an
    alternative the user may apply by hand) and is not one of them."""
    name = kustomization_file(directory)
    if name is None:
        return set()
    try:
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return set()
    found, section = set(), None
    for line in lines:
        key = _TOP_LEVEL_KEY.match(line)
        if key:
            section = key.group(1)
        elif line.lstrip().startswith("#") and (section in _PATCH_KEYS or "path:" in line):
            found.update(_COMMENTED_FILE.findall(line))
    base = os.path.abspath(directory)
    return {os.path.normpath(os.path.join(base, path)) for path in found}


def kustomize_inputs(directory: str) -> set[str]:
    """Absolute paths of the files and folders the kustomization in `directory` uses (its
    resources, patches, generator sources...), so the walk does not lint them again on their
    own; a kustomization that does not parse uses nothing (its render reports why)."""
    spec = _kustomization(directory)
    if spec is None:
        return set()
    base = os.path.abspath(directory)
    return {os.path.normpath(os.path.join(base, path)) for path in _named_paths(spec) if "://" not in path}


def _named_paths(spec: dict) -> list[str]:
    """The paths and URLs a kustomization names, as written."""
    named = []
    for key in _PATH_LISTS:
        named += [v for v in spec.get(key) or [] if isinstance(v, str)]
    for key in _PATH_ENTRIES:
        named += [v["path"] for v in spec.get(key) or [] if isinstance(v, dict) and isinstance(v.get("path"), str)]
    for key in _GENERATORS:
        for generator in spec.get(key) or []:
            if isinstance(generator, dict):
                for source in (generator.get("files") or []) + (generator.get("envs") or []) + [generator.get("env")]:
                    if isinstance(source, str):
                        named.append(source.split("=", 1)[-1])
    charts = [c for c in spec.get("helmCharts") or [] if isinstance(c, dict)]
    if charts:  # inflated by helm inside the build: their home and values files are its inputs
        helm_globals = spec.get("helmGlobals")
        home = helm_globals.get("chartHome") if isinstance(helm_globals, dict) else None
        named.append(home if isinstance(home, str) else "charts")
        for chart in charts:
            named += [v for v in [chart.get("valuesFile"), *(chart.get("additionalValuesFiles") or [])]
                      if isinstance(v, str)]
    return named
