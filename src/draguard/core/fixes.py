"""Fixes as data: what a rule proposes to change, addressed by paths, never by text.

The same `Fix` serves `draguard fix` (spliced into the original text), the mutating webhook
(as JSON Patch), SARIF `fixes[]` and the before/after in the rule docs. Applicability follows
ruff's three levels: a `safe` fix keeps the meaning and is applied by default, an `unsafe` fix
changes behaviour and is applied only when asked, a `display-only` fix is a suggestion."""

from __future__ import annotations

import enum
import marshal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .excerpt import bounded
from .location import Path, format_path
from .value import Value


class Applicability(enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"

    def __str__(self) -> str:
        return self.value


class FixAvailability(enum.Enum):
    """What a rule declares about its findings: whether they carry a fix."""

    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"

    def __str__(self) -> str:
        return self.value


class Op(enum.Enum):
    SET = "set"  # a mapping key (created with any missing parent mappings) or an existing list item
    REMOVE = "remove"  # a mapping key or a list item
    APPEND = "append"  # an item at the end of the list at `path` (the list is created if missing)
    ADD_DOCUMENT = "add-document"  # a new document after the finding's document, in the same file

    def __str__(self) -> str:
        return self.value


class Edit(Value):
    """One change inside the finding's document (`path` from the document root), or a new
    document (`value` is the object). Every path of a fix names the document as it was
    before the fix: removing `containers[0]` does not renumber `containers[1]` for the
    fix's other edits."""

    __slots__ = ("op", "path", "value")

    def __init__(self, op: Op, path: Path = (), value: object = None):
        self.op = op
        self.path = path
        self.value = value

    def as_json(self) -> dict[str, object]:
        return _edit_json(self.op.value, self.path, self.value)


def _edit_json(op: str, path: Path, value: object) -> dict[str, object]:
    """An edit as the reports write it, from its op's text, path and value (Edit.as_json, and
    Fix.as_json from the edits as held)."""
    out: dict[str, object] = {"op": op}
    if op != _ADD_DOCUMENT:
        out["path"] = format_path(path)
    if op != _REMOVE:
        out["value"] = value
    return out


_ADD_DOCUMENT, _REMOVE = Op.ADD_DOCUMENT.value, Op.REMOVE.value
#: an op by its text: Op(text) goes through the enum's metaclass call (about 40% of a five-edit
#: fix's Fix.edits, which an HTML report reads for each fix)
_OPS = {op.value: op for op in Op}


def set_value(path: Iterable[str | int], value: object) -> Edit:
    return Edit(Op.SET, tuple(path), value)


def remove(path: Iterable[str | int]) -> Edit:
    return Edit(Op.REMOVE, tuple(path))


def remove_items(list_path: Path, indices: Iterable[int], length: int) -> tuple[Edit, ...]:
    """Remove these items of a list of `length` items; the whole key when none would be left
    (a fixed manifest says nothing rather than `env: []`)."""
    removed = sorted(set(indices))
    if len(removed) >= length:
        return (remove(list_path),)
    return tuple(remove((*list_path, i)) for i in removed)


def append(path: Iterable[str | int], value: object) -> Edit:
    return Edit(Op.APPEND, tuple(path), value)


def add_document(value: Mapping[str, object]) -> Edit:
    return Edit(Op.ADD_DOCUMENT, (), value)


class Fix:
    """A change a rule proposes: its title, how safe it is, and its edits.

    Every finding keeps its fix until the report is written, so a fix is held compact: its
    edits, when their values are plain data (dicts, lists, strings, numbers), are one bytes
    object (`marshal`, which round-trips exactly those types), unpacked again each time
    `edits` is read. As Edit objects with their values (a whole ResourceClaimTemplate for a
    migrated pod), the fixes were half of what judging a stream of 10,406 legacy pods held:
    28 MiB (tracemalloc). Values of another type (positioned nodes) are kept as given."""

    __slots__ = ("title", "applicability", "_edits")
    title: str
    applicability: Applicability
    _edits: "bytes | tuple[Edit, ...]"

    def __init__(self, title: str, applicability: Applicability, edits: Iterable[Edit]) -> None:
        edits = tuple(edits)
        try:
            recipe: Any = tuple([(e.op.value, e.path, e.value) for e in edits])  # marshal's stub names its types
            held: bytes | tuple[Edit, ...] = marshal.dumps(recipe)
        except ValueError:  # a value marshal cannot hold exactly: a dict or list subclass
            held = edits
        object.__setattr__(self, "title", bounded(title))  # it names what the input named
        object.__setattr__(self, "applicability", applicability)
        object.__setattr__(self, "_edits", held)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Fix is not changed: cannot set {name}")

    def __getstate__(self) -> tuple[object, ...]:
        return self.title, self.applicability, self._edits

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(self.__slots__, state):
            object.__setattr__(self, name, value)

    @property
    def edits(self) -> tuple[Edit, ...]:
        held = self._edits
        if isinstance(held, tuple):
            return held
        return tuple([Edit(_OPS[op], path, value) for op, path, value in marshal.loads(held)])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fix):
            return NotImplemented
        return (self.title, self.applicability, self.edits) == (other.title, other.applicability, other.edits)

    __hash__ = None  # type: ignore[assignment]  # its edits hold dicts, as the dataclass's did

    def __repr__(self) -> str:
        return f"Fix(title={self.title!r}, applicability={self.applicability!r}, edits={self.edits!r})"

    def key(self) -> tuple[str, Applicability, bytes] | None:
        """What the fix is, hashable, where its edits are held as plain data (None where not):
        fixes of equal keys are equal, and so is their JSON (a report encodes it once for
        every finding of that fix: report.json_report)."""
        held = self._edits
        return (self.title, self.applicability, held) if isinstance(held, bytes) else None

    def as_json(self) -> dict[str, object]:
        """The fix as the reports write it; edits held as plain data are written from it, not
        made into Edit objects first (a third of a migration fix's 24 us)."""
        held = self._edits
        edits = [e.as_json() for e in held] if isinstance(held, tuple) else \
            [_edit_json(*recipe) for recipe in marshal.loads(held)]
        return {"title": self.title, "applicability": str(self.applicability), "edits": edits}


class NoFix(Exception):
    """Why a rule that fixes such findings elsewhere offers no fix for this one: a rule's fix
    builder returns it in place of a Fix, and `draguard fix` gives it as the reason the
    finding is left."""


class EditError(ValueError):
    """An edit whose path does not lead where it says (the document changed under it)."""


def plain(node: object) -> Any:
    """A deep copy as plain dicts and lists (positioned YAML nodes lose their positions). Any:
    the copy is parsed YAML, whatever shape the input had."""
    if isinstance(node, dict):
        return {key: plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain(value) for value in node]
    return node


def application_order(edits: Sequence[Edit]) -> list[Edit]:
    """The order a fix's edits are applied in: sets and appends first, as given (they never
    renumber a list item); removals last, from the highest index down, so that every path
    keeps naming what it named before the fix. Applying to data and splicing into text both
    follow it."""
    removals = sorted((e for e in edits if e.op is Op.REMOVE), key=lambda e: _path_order(e.path), reverse=True)
    return [e for e in edits if e.op is not Op.REMOVE] + removals


def apply_edits(document: object, edits: Sequence[Edit]) -> list[Any]:
    """Apply `edits` to a copy of `document`, in application_order; returns [the new
    document, then any added documents]. Only the mappings and lists an edit passes through
    are copied (as plain dicts and lists); the rest is shared with `document`, which is never
    changed (a fix verified on a large document copied all of it, measured). Raises
    EditError when a path does not resolve. Any: the documents are parsed YAML."""
    made: set[int] = set()  # ids of the containers this call made, which it may change
    root = _made_copy(document, made)
    added: list[object] = []
    for edit in application_order(edits):
        if edit.op is Op.ADD_DOCUMENT:
            added.append(plain(edit.value))
            continue
        if not edit.path:
            raise EditError("an edit needs a path inside the document")
        parent = _walk(root, edit.path[:-1], edit.op is not Op.REMOVE, made)
        key = edit.path[-1]
        if edit.op is Op.SET:
            _set(parent, key, plain(edit.value), edit.path)
        elif edit.op is Op.REMOVE:
            _remove(parent, key, edit.path)
        else:
            if isinstance(parent, dict) and key not in parent:
                parent[key] = []
            target = _own_child(parent, key, edit.path, made)
            if not isinstance(target, list):
                raise EditError(f"{format_path(edit.path)} is not a list")
            target.append(plain(edit.value))
    return [root, *added]


def _path_order(path: Path) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in path)


def _made_copy(node: object, made: set[int]) -> object:
    """A shallow copy of a mapping or list that this apply may change (other values as they are)."""
    if isinstance(node, dict):
        node = dict(node)
    elif isinstance(node, list):
        node = list(node)
    else:
        return node
    made.add(id(node))
    return node


def _own_child(node: object, part: str | int, path: Path, made: set[int]) -> object:
    """node[part], copied into `node` first unless this apply made it."""
    if isinstance(node, dict) and isinstance(part, str) and part in node:
        child = node[part]
        if _shared(child, made):
            child = node[part] = _made_copy(child, made)
    elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        child = node[part]
        if _shared(child, made):
            child = node[part] = _made_copy(child, made)
    else:
        raise EditError(f"{format_path(path)} does not exist")
    return child


def _shared(child: object, made: set[int]) -> bool:
    """A mapping or list this apply did not make: copied before it is changed."""
    return id(child) not in made and isinstance(child, (dict, list))


def _walk(node: object, path: Path, create: bool, made: set[int]) -> object:
    for depth, part in enumerate(path):
        if create and isinstance(node, dict) and isinstance(part, str) and part not in node:
            node[part] = _made_copy({}, made)
        node = _own_child(node, part, path[:depth + 1], made)
    return node


def _set(parent: object, key: str | int, value: object, path: Path) -> None:
    if isinstance(parent, dict) and isinstance(key, str):
        parent[key] = value
    elif isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        parent[key] = value
    else:
        raise EditError(f"cannot set {format_path(path)}")


def _remove(parent: object, key: str | int, path: Path) -> None:
    if isinstance(parent, dict) and key in parent:
        del parent[key]
    elif isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        del parent[key]
    else:
        raise EditError(f"{format_path(path)} does not exist")
