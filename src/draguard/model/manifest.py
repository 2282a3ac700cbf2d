"""One Kubernetes object, where it came from, and how to point at a place inside it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar, cast

from ..core.finding import ObjectRef, Site
from ..core.location import Location, Path
from ..core.unread import Unread, listening, told
from ..sources.loader import Entry, Locator, Source
from ..sources.reread import Reread
from ..sources.scalars import char_position
from ..sources.yamlpos import YMap, mark_of, path_of, positioned
from .values import Key, Yaml, YamlMap

_NO_TEXT = Source("(object)", "")
#: what a re-read object lets go and parses again (Manifest.release)
_TREE = ("data", "_metadata")
#: what is read from its tree once (Manifest._read_identity): a re-read object reads its
#: tree for them when first asked, and keeps them when it lets the tree go
_IDENTITY = ("name", "namespace", "is_live")

_View = TypeVar("_View")


class Manifest:
    """One Kubernetes object (a document, or an item of a `List` document). The data never
    changes after loading: views derived from it are computed once (`derive`). Its fields
    are slots (a re-read object's tree is unset until read): a run holds one per object, and
    a 5 MB List of 17,963 pods held 13.2 MiB of their attribute dicts (768 B each), against
    ~190 B of slots; compared by them as a dataclass is, but for its name, namespace and
    re-read text, which follow."""

    __slots__ = ("source", "document", "data", "item", "locate", "derived", "unread", "has_paths", "renamed_from",
                 "reread", "api_version", "kind", "group", "_metadata", "name", "namespace", "is_live", "_ref")

    api_version: str
    kind: str
    group: str
    _metadata: YamlMap
    #: metadata.name (else generateName) and metadata.namespace, '' where absent or not text
    name: str
    namespace: str
    #: read back from a cluster (`kubectl get -o yaml`): the API server set its uid
    is_live: bool
    _ref: ObjectRef  # made when first asked (ref)
    __hash__ = None  # type: ignore[assignment]  # compared by its fields: never a key

    def __init__(self, source: Source, document: int, data: YamlMap, item: int | None = None,
                 locate: Locator | None = None, derived: dict[Callable[..., object], object] | None = None,
                 unread: dict[object, tuple[Unread, ...]] | None = None, has_paths: bool = True,
                 renamed_from: str | None = None, reread: Reread | None = None) -> None:
        self.source = source
        self.document = document
        self.data = data
        self.item = item
        #: Maps a parsed position to what the user should see; identity for plain files.
        self.locate = locate
        #: views by the function that computes them (one that also takes another argument, such
        #: as live.judged_elsewhere, keys its own)
        self.derived: dict[Callable[..., object], object] = {} if derived is None else derived
        #: what computing a derived view met unreadable (core.unread), said again to each reader
        self.unread: dict[object, tuple[Unread, ...]] = {} if unread is None else unread
        #: False: plain data kept as read (a large snapshot's objects), paths found on demand
        self.has_paths = has_paths
        #: its name in the file it was built from, where a kustomize namePrefix/nameSuffix changed it
        self.renamed_from = renamed_from
        #: where its text is, when its tree is parsed again from it on demand (sources.reread):
        #: `data` is then missing until read, and again once its own rules are done (release)
        self.reread = reread
        if self.reread is not None:  # its identity from what the load read; its tree when read (__getattr__)
            self.api_version, self.kind = self.reread.api_version, self.reread.kind
            self.group = self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""
            self.release()
            return
        if self.has_paths and not isinstance(self.data, YMap):  # built in memory: give every node its path
            self.data = positioned(self.data)
        self._read_identity()

    def _compared(self) -> tuple[object, ...]:
        return (self.source, self.document, self.data, self.item, self.locate, self.derived, self.unread,
                self.has_paths, self.renamed_from, self.api_version, self.kind, self.group, self._metadata)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()  # the same class

    if not TYPE_CHECKING:  # missing only while a re-read object holds no tree: typed as the fields
        def __getattr__(self, name: str):  # an unset slot: only a re-read object's tree and identity read it
            if name not in _TREE and name not in _IDENTITY:
                raise AttributeError(name)
            reread = self.reread  # set first in __init__ (unset only while unpickling: AttributeError)
            if reread is None:
                raise AttributeError(name)
            self.data = reread.data()
            self._read_identity()
            return getattr(self, name)

    def __getstate__(self) -> tuple[None, dict[str, object]]:
        """Its fields that are set, read past `__getattr__`: pickle and copy read each slot by
        getattr, so a re-read object that let its tree go (release) parsed it again only to
        send it, where its attribute dict sent none (`lint --jobs` sends a part's shipped
        objects before their rules are done: they hold their trees then)."""
        state: dict[str, object] = {}
        for name in self.__slots__:
            try:
                state[name] = object.__getattribute__(self, name)
            except AttributeError:
                pass  # unset: a tree let go, a ref not made yet
        return None, state

    def release(self) -> None:
        """Its own rules are done with it: a re-read object (sources.reread) lets its tree go,
        parsed again if another object's rule reads it later. The positioned trees of a
        stream of pods were ten times its text, all held to the end of the run. A rule that
        kept a part of it (an index of the set) keeps that part; positions are read from the
        part itself, so they stay right."""
        if self.reread is not None:
            for name in _TREE:
                _unset(self, name)

    def _read_identity(self) -> None:
        """The fields every rule reads, read once (a snapshot's 90,000 objects are asked
        millions of times; a lint of 20,000 asked their names and namespaces 160,000 times)."""
        meta = self.data.get("metadata")
        self._metadata = meta = meta if isinstance(meta, dict) else {}
        api = self.data.get("apiVersion")
        self.api_version = api if isinstance(api, str) else ""
        kind = self.data.get("kind")
        self.kind = kind if isinstance(kind, str) else ""
        self.group = self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""
        self.name = _text(meta.get("name")) or _text(meta.get("generateName"))
        self.namespace = _text(meta.get("namespace"))
        self.is_live = bool(_text(meta.get("uid")))
        _unset(self, "_ref")

    @classmethod
    def from_entry(cls, entry: Entry) -> "Manifest":
        """The object an entry holds; one that holds no data (sources.reread) parses it when read."""
        data = {} if entry.reread is not None else entry.data  # {}: not kept (__init__)
        return cls(entry.source, entry.document, data, entry.item, entry.locate, renamed_from=entry.renamed_from,
                   reread=entry.reread)

    @classmethod
    def from_data(cls, data: YamlMap, display: str = "(object)", document: int = 0, *,
                  positions: bool = True) -> "Manifest":
        """An object that never had text (an admission request, a live object): paths only;
        `document` numbers it among the objects it came with. With `positions=False` the
        data stays as given (tens of thousands of a snapshot's objects cost no conversion)
        until `position()`; a finding on it still gets its path, searched for then."""
        source = _NO_TEXT if display == _NO_TEXT.display else Source(display, "")
        return cls(source, document, data, has_paths=positions)

    def position(self) -> None:
        """Give every node of plain data its path (what rules that build fixes need)."""
        if not self.has_paths:
            self.data, self.has_paths = positioned(self.data), True
            self.derived.clear()
            self.unread.clear()
            self._read_identity()

    def derive(self, compute: Callable[[Manifest], _View]) -> _View:
        """The view `compute(self)` of `data` (pod sites, device requests), computed on first
        use and kept, keyed by the function that computes it."""
        found = self.derived.get(compute)
        if found is not None and not self.unread:  # the common case, asked 330,000 times a large lint
            return found  # type: ignore[return-value]  # keyed by `compute`: what it returned
        if found is None:
            with listening() as heard:
                found = self.derived[compute] = compute(self)
            if heard:
                self.unread[compute] = tuple(Unread(u.container, u.key, u.why, u.owner or self) for u in heard)
        if self.unread:
            told(self.unread.get(compute, ()))
        return cast(_View, found)  # keyed by `compute`, so the value is what it returned

    def forget_views(self) -> None:
        """Drop what `derive` kept, once the object's own rules are done with it: a stream of
        pods kept a pod site with its container sites (1.2 KiB) per pod to the end of the run.
        A rule judging another object that reads a view again derives it again (the indexes
        of the object set keep their own)."""
        self.derived.clear()
        self.unread.clear()

    @property
    def metadata(self) -> YamlMap:
        return self._metadata

    @property
    def annotations(self) -> YamlMap:
        value = self.metadata.get("annotations")
        return value if isinstance(value, dict) else {}

    @property
    def labels(self) -> YamlMap:
        value = self.metadata.get("labels")
        return value if isinstance(value, dict) else {}

    @property
    def controller(self) -> YamlMap | None:
        """Its ownerReference with `controller: true` (controller_reference)."""
        return controller_reference(self.metadata)

    @property
    def spec(self) -> YamlMap:
        value = self.data.get("spec")
        return value if isinstance(value, dict) else {}

    @property
    def ref(self) -> ObjectRef:
        """Which object it is, made once (every finding on it names it)."""
        try:
            return self._ref
        except AttributeError:
            self._ref = ObjectRef(self.api_version, self.kind, self.namespace, self.name)
            return self._ref

    def location(self, container: Yaml = None, key: Key | None = None, *, value: bool = False,
                 offset: int | None = None) -> Location:
        """Where `container[key]` is (its key, or its value with `value=True`; the object itself
        when `container` is None); with `offset`, that character inside the string value (a
        CEL error's exact character)."""
        container = self.data if container is None else container
        path = path_of(container, key) if self.has_paths else _search_path(self.data, container, key)
        mark = mark_of(container, key, value=value or offset is not None)
        if mark is None:
            return Location(self.source.display, None, None, path, self.document)
        line, column = mark
        if offset is not None:
            line, column = char_position(self.source.lines, line, column, offset)
        file = self.source.display
        if self.locate is not None:
            file, line, column = self.locate(line, column, path)
        return Location(file, line, column, path, self.document)

    def located(self, site: Site) -> Location | None:
        """Where `site` (a finding's, from another text of the same data) is in this object;
        None when its container is not here."""
        node = self.data
        for part in site.container:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return None
        return self.location(node, site.key, value=site.value, offset=site.offset)

    def place(self, path: Path) -> tuple[Yaml, Key | None]:
        """(container, key) of `path`, as location() and findings take them; for a path
        that leads nowhere (a missing field), the mapping that lacks it."""
        container: Yaml = None
        key: Key | None = None
        node: Yaml = self.data
        for part in path:
            container, key = node, part
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break
        return container, key


def _unset(manifest: Manifest, name: str) -> None:
    try:
        delattr(manifest, name)
    except AttributeError:
        pass  # not set


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _search_path(data: Yaml, container: Yaml, key: Key | None) -> Path | None:
    """The path of `container[key]` inside plain `data`, found by identity (findings on plain
    data are few: the search runs only for them)."""
    stack: list[tuple[Yaml, Path]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if node is container:
            return path if key is None else path + (key,)
        if isinstance(node, dict):
            stack.extend((value, path + (k,)) for k, value in node.items() if isinstance(value, (dict, list)))
        elif isinstance(node, list):
            stack.extend((value, path + (i,)) for i, value in enumerate(node) if isinstance(value, (dict, list)))
    return None


def edit_path(container: Yaml, key: Key | None = None) -> Path:
    """The path of `container[key]` (or of the container) that a fix's edit addresses. Rules
    build fixes on the objects the engine judges, which always have paths (Manifest.position);
    in data without paths there is no place to address, and this says so (ValueError) rather
    than an edit landing elsewhere."""
    path = path_of(container, key)
    if path is None:
        raise ValueError("a fix was built on data without paths (Manifest.position gives it them)")
    return path


def controller_reference(metadata: YamlMap) -> YamlMap | None:
    """The ownerReference with `controller: true` of an object's `metadata`, as the garbage
    collector reads it; None when there is none."""
    owners = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    return next((o for o in owners if isinstance(o, dict) and o.get("controller") is True), None) \
        if isinstance(owners, list) else None
