"""Where a kustomize-built object came from, so findings point into the user's files.

draguard builds a kustomization through a wrapper that sets `buildMetadata: [originAnnotations,
transformerAnnotations]` (kustomize's own provenance: `config.kubernetes.io/origin` names the
resource file, `alpha.config.kubernetes.io/transformations` the kustomizations whose patches
changed it). A finding's path is then looked up in the resource file and in those patches;
the deepest match wins: a key a patch added points into the patch, one from the base into
the base. The two annotations are removed before the rules see the object."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import yaml

from .yamlpos import Mark, YMap, YSeq, mark_of, parse_stream

ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "alpha.config.kubernetes.io/transformations"
WRAPPER = "resources:\n- {target}\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"
#: kustomization fields whose files are strategic-merge patches (kustomize's types/kustomization.go)
_PATCH_FIELDS = ("patches", "patchesStrategicMerge")


@dataclass
class OriginIndex:
    """Parsed files of one kustomization build, read once each."""

    wrapper_dir: str  # where the build ran: origin paths are relative to it
    user_dir: str  # the kustomization folder the user named
    display_dir: str  # how the user wrote it
    _documents: dict = field(default_factory=dict)

    def display(self, absolute: str) -> str:
        return os.path.normpath(os.path.join(self.display_dir, os.path.relpath(absolute, self.user_dir)))

    def objects(self, absolute: str) -> list:
        if absolute not in self._documents:
            try:
                with open(absolute, encoding="utf-8") as handle:
                    documents, _ = parse_stream(handle.read())
            except (OSError, UnicodeDecodeError):
                documents = []
            self._documents[absolute] = [d.data for d in documents if isinstance(d.data, YMap)]
        return self._documents[absolute]

    def locator(self, data: dict, fallback: str):
        """A locator for one built object (its provenance annotations removed from `data`),
        or None when kustomize recorded none (a generated ConfigMap, a remote base)."""
        annotations = data.get("metadata", {}).get("annotations") if isinstance(data.get("metadata"), dict) else None
        if not isinstance(annotations, dict):
            return None
        origin = _yaml(annotations.pop(ORIGIN, None))
        changed = _yaml(annotations.pop(TRANSFORMATIONS, None))
        if not annotations:
            del data["metadata"]["annotations"]
        if not isinstance(origin, dict) or not isinstance(origin.get("path"), str) or origin.get("repo"):
            return None
        source = os.path.normpath(os.path.join(self.wrapper_dir, origin["path"]))
        transformations = [entry for entry in (changed if isinstance(changed, list) else []) if isinstance(entry, dict)]
        patches = [p for entry in transformations for p in self._patch_files(entry.get("configuredIn"))]
        name = data["metadata"].get("name")
        located = _ObjectLocator(self, source, patches, str(data.get("kind", "")), name, fallback)
        if any(_RENAMES.intersection(_kinds(entry.get("configuredBy"))) for entry in transformations):
            located.renamed_from = self._name_in_source(source, located.kind, name)
        return located

    def _name_in_source(self, source: str, kind: str, built) -> str | None:
        """The name an object had in its resource file before a namePrefix or nameSuffix
        made `built` of it (the longest of the file's names of that kind inside it)."""
        if not isinstance(built, str):
            return None
        names = [obj["metadata"].get("name") for obj in self.objects(source)
                 if obj.get("kind") == kind and isinstance(obj.get("metadata"), dict)]
        inside = [n for n in names if isinstance(n, str) and n and n != built and n in built]
        return max(inside, key=len) if inside else None

    def _patch_files(self, configured_in) -> list[str]:
        if not isinstance(configured_in, str):
            return []
        kustomization = os.path.normpath(os.path.join(self.wrapper_dir, configured_in))
        found = self.objects(kustomization)
        spec = found[0] if found else {}
        files = []
        for key in _PATCH_FIELDS:
            for entry in spec.get(key) or []:
                path = entry.get("path") if isinstance(entry, dict) else entry
                if isinstance(path, str):
                    files.append(os.path.normpath(os.path.join(os.path.dirname(kustomization), path)))
        return files


#: kustomize's builtin transformers that rename objects (namePrefix, nameSuffix)
_RENAMES = {"PrefixTransformer", "SuffixTransformer", "PrefixSuffixTransformer"}


def _kinds(configured_by) -> set:
    return {configured_by.get("kind")} if isinstance(configured_by, dict) else set()


def _yaml(text):
    try:
        return yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        return None


@dataclass
class _ObjectLocator:
    index: OriginIndex
    source: str
    patches: list
    kind: str
    name: object
    fallback: str  # the kustomization file, when nothing better is known
    renamed_from: str | None = None  # its name in the resource file, where namePrefix/nameSuffix changed it

    def _candidates(self, file: str) -> list:
        """The object in a file: same kind and name, else (a namePrefix renamed it) same kind."""
        same_kind = [obj for obj in self.index.objects(file) if obj.get("kind") == self.kind]
        named = [obj for obj in same_kind if isinstance(obj.get("metadata"), dict)
                 and obj["metadata"].get("name") == self.name]
        return named or same_kind

    def __call__(self, line: int, column: int, path: tuple | None = None) -> tuple:
        best: tuple[int, str, Mark | None] | None = None  # (depth, file, mark) of the deepest match
        for file in [self.source, *self.patches]:
            for obj in self._candidates(file):
                depth, mark = _deepest(obj, path or ())
                if best is None or depth > best[0]:
                    best = (depth, file, mark)
        found = best[2] if best is not None else None
        if best is None or found is None:
            return (self.fallback, 1, 1)
        return (self.index.display(best[1]), found[0], found[1])


def _deepest(obj, path: tuple) -> tuple[int, tuple | None]:
    """How many steps of `path` exist in `obj`, and the position of the last one. A patch's
    list usually holds only the item it changes: a missing index falls back to a sole item."""
    node, container, key, depth = obj, None, None, 0
    for step in path:
        if isinstance(node, YSeq) and isinstance(step, int):
            step = step if step < len(node) else (0 if len(node) == 1 else None)
            if step is None:
                break
        elif not (isinstance(node, YMap) and step in node):
            break
        container, key, node = node, step, node[step]
        depth += 1
    mark = mark_of(container, key) if container is not None else getattr(obj, "mark", None)
    return depth, mark
