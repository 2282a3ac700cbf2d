"""Loaded objects: where they came from, and how to point at a place inside them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..findings import ObjectRef
from ..load.scalars import char_position
from ..load.yamlpos import mark_of

#: Maps a position in the text that was parsed to (file, line, column) shown to the user.
Locator = Callable[[int, int], tuple]


@dataclass
class Source:
    """One parsed text: a file, stdin, or the output of a renderer."""

    display: str  # what findings call this text: the path as given, '-' for stdin
    text: str
    rendered_by: str | None = None  # 'helm' or 'kustomize'
    _lines: list | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    def line_text(self, line: int) -> str:
        lines = self.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""


@dataclass
class Manifest:
    """One Kubernetes object (a document, or an item of a `List`)."""

    source: Source
    doc_index: int
    data: dict
    item_index: int | None = None
    #: Maps a parsed position to what the user should see; identity for plain files.
    locate: Locator | None = None
    #: Views derived from `data`, filled by `derive`.
    derived: dict = field(default_factory=dict, repr=False)
    api_version: str = field(init=False)
    kind: str = field(init=False)
    group: str = field(init=False)

    def __post_init__(self):
        # identity fields are read by every rule; the data never changes after loading
        api = self.data.get("apiVersion")
        self.api_version = api if isinstance(api, str) else ""
        kind = self.data.get("kind")
        self.kind = kind if isinstance(kind, str) else ""
        self.group = self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""

    def derive(self, key: str, compute):
        """A view of `data` (pod sites, device requests), computed on first use and kept:
        every rule asks for the same views and the data never changes after loading."""
        found = self.derived.get(key)
        if found is None:
            found = self.derived[key] = compute(self)
        return found

    @property
    def metadata(self) -> dict:
        meta = self.data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        value = self.metadata.get("name") or self.metadata.get("generateName")
        return value if isinstance(value, str) else ""

    @property
    def namespace(self) -> str:
        value = self.metadata.get("namespace")
        return value if isinstance(value, str) else ""

    @property
    def annotations(self) -> dict:
        value = self.metadata.get("annotations")
        return value if isinstance(value, dict) else {}

    @property
    def labels(self) -> dict:
        value = self.metadata.get("labels")
        return value if isinstance(value, dict) else {}

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name)

    def position(self, container=None, key=None, *, value: bool = False,
                 offset: int | None = None) -> tuple[str, int, int]:
        """(file, line, column) of `container[key]` as the user should see it; with `offset`,
        of that character inside the string value (a CEL error's exact character)."""
        line, column = mark_of(self.data if container is None else container, key, value=value or offset is not None)
        if offset is not None:
            line, column = char_position(self.source.lines, line, column, offset)
        if self.locate is not None:
            return self.locate(line, column)
        return (self.source.display, line, column)


@dataclass
class ObjectSet:
    """Every object of one lint run (cross-object rules build their indexes with Context.memo)."""

    manifests: list[Manifest]

    def __iter__(self) -> Iterator[Manifest]:
        return iter(self.manifests)

    def __len__(self) -> int:
        return len(self.manifests)
