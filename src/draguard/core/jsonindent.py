"""JSON text indented as `json.dumps(value, indent=N, ensure_ascii=False)` writes it, faster.

With an indent, Python 3.11's json module leaves its C encoder for a pure-Python walk, every
chunk passing up through a chain of generators: a `-f json` report of a large lint spent about
40% of the run there. Here a list or mapping of leaves has them encoded by the C encoder in
one call, separated by NUL (a character the encoder always escapes inside a string, so it splits
them exactly), and placed in a %-template that puts each item on its own line (a mapping's keys
encoded once per set of keys); one with lists or mappings inside has all its leaves encoded by
one call and placed in a template of its whole shape, made once per shape and depth, so that
only the walk that collects the leaves is Python. The C
encoder coerces keys, writes floats and escapes strings as json.dumps does:
tests/unit/core/test_jsonindent.py compares the bytes with json.dumps.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import lru_cache
from typing import Any, cast

from .cached import by_value, kept

_CONTAINERS = (dict, list, tuple)
#: the types whose every value is a leaf as the C encoder writes it (subclasses are looked at one by one)
_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})


class Encoded(str):
    """A value's text already encoded as `dumps` writes it at the depth where it is placed:
    put there as it is (a report encodes a part that many items share once: report.json_report)."""

    __slots__ = ()


def _refuse(value: object) -> object:
    """What json.dumps says of a value it cannot write."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _c_encoder(item: str, key: str) -> Callable[[Any], str]:
    """The C encoder with these separators, made once and called directly (`JSONEncoder.encode`
    builds a new one on every call, which costs more than a finding's encoding)."""
    made = getattr(json.encoder, "c_make_encoder", None)  # untyped in typeshed: the C accelerator
    if made is None:  # an interpreter without the C accelerator: the same text, slower
        return json.JSONEncoder(ensure_ascii=False, separators=(item, key)).encode
    # markers None: no circular check (a report is a tree); allow_nan as json.dumps
    chunks = made(None, _refuse, json.encoder.encode_basestring, None, key, item, False, False, True)
    return lambda value: "".join(chunks(value, 0))


_LEAVES = _c_encoder("\0", ": ")


@lru_cache(maxsize=1024)
def _template(keys: tuple[Hashable, ...], inner: str, here: str) -> str:
    """A mapping with these keys (_shape_keys') at this depth, with a %s for each value."""
    lines = [text.replace("%", "%%") + ": %s" for text in _key_texts(keys)]
    return "{\n" + inner + (",\n" + inner).join(lines) + "\n" + here + "}"


#: the first item of a mapping's keys held as the texts written for them (_shape_keys)
_WRITTEN = object()


def _shape_keys(mapping: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """A mapping's keys as a cache of templates (_template, _SHAPES) holds them: the keys
    where all are strings, else _WRITTEN and the texts the encoder writes for them. True, 1
    and 1.0 are one key to a cache but are written "true", "1" and "1.0", so a mapping keyed
    by one took another's template (a YAML `on:` key is True)."""
    keys = tuple(mapping)
    if all(type(key) is str for key in keys):
        return keys
    return (_WRITTEN, *map(_key_text, keys))


def _key_texts(keys: tuple[Hashable, ...]) -> Iterable[str]:
    """The texts written for `_shape_keys`' keys."""
    return cast("tuple[str, ...]", keys[1:]) if keys[:1] == (_WRITTEN,) else map(_key_text, keys)


@by_value(maxsize=1024)
def _key_text(key: Hashable) -> str:
    """A mapping's key as the C encoder writes it."""
    return _LEAVES({key: 0})[1:-4]


def _text(value: object, step: str, here: str) -> str:
    """The text of `value`, whose first line is already indented by `here`."""
    if not isinstance(value, _CONTAINERS) or not value:
        # a leaf, [] or {}: no separator used
        return value if type(value) is Encoded else _LEAVES(value)
    inner = here + step
    is_dict = isinstance(value, dict)
    items = list(value.values()) if isinstance(value, dict) else list(value)
    others = [index for index, kind in enumerate(map(type, items)) if kind not in _LEAF_TYPES]
    if not others:  # leaves only (most of a manifest): one C call
        encoder = _BY_INDENT.get(inner) or _by_indent(inner)
        return ("{\n" if is_dict else "[\n") + inner + encoder(value)[1:-1] + "\n" + here + ("}" if is_dict else "]")
    placed: dict[int, str] = {}  # the texts of the items that are not leaves, placed as they are (Encoded)
    for index in others:
        item = items[index]
        if type(item) is Encoded:
            placed[index] = item
        elif isinstance(item, _CONTAINERS) and item:
            return _shaped(value, step, here)  # a list or mapping inside
        else:
            continue  # a leaf of a subclass, or [] or {}: the C encoder writes it
        items[index] = 0
    leaves = _LEAVES(items)[1:-1].split("\0")
    for index, text in placed.items():
        leaves[index] = text
    if is_dict:
        return _template(_shape_keys(value), inner, here) % tuple(leaves)
    return "[\n" + inner + (",\n" + inner).join(leaves) + "\n" + here + "]"


#: the C encoder whose items each start a line indented by the key, made once per depth
_BY_INDENT: dict[str, Callable[[Any], str]] = {}


def _by_indent(inner: str) -> Callable[[Any], str]:
    encoder = _BY_INDENT[inner] = _c_encoder(",\n" + inner, ": ")
    return encoder


def _shaped(value: object, step: str, here: str) -> str:
    """`_text` of a list or mapping with lists or mappings inside: every leaf encoded by one
    C call, placed in the template of the value's shape (_skeleton), rather than a C call and
    a template for each list and mapping (a migration fix's 17 took 125 us, 40 now)."""
    shape: list[object] = []
    leaves: list[object] = []
    placed: list[tuple[int, str]] = []
    _flatten(value, shape, leaves, placed)
    key = (tuple(shape), step, here)
    template = _SHAPES.get(key)
    if template is None:
        template = kept(_SHAPES, key, _skeleton(iter(shape), step, here), _SHAPES_HELD)
    texts = _LEAVES(leaves)[1:-1].split("\0")
    for index, text in placed:
        texts[index] = text
    return template % tuple(texts)


def _flatten(value: Any, shape: list[object], leaves: list[object], placed: list[tuple[int, str]]) -> None:
    """`value`'s shape (each mapping's keys as a tuple, each list's length, None for a leaf, in
    the order they are written) and its leaves, added to `shape` and `leaves`; a text encoded
    already (Encoded) is a leaf whose text is `placed` as it is, by its index among the leaves."""
    if isinstance(value, dict):
        shape.append(_shape_keys(value))
        items = value.values()
    else:
        shape.append(len(value))
        items = value
    for item in items:
        kind = type(item)
        if kind in _LEAF_TYPES:
            shape.append(None)
            leaves.append(item)
        elif kind is Encoded:
            shape.append(None)
            placed.append((len(leaves), item))
            leaves.append(0)
        elif isinstance(item, _CONTAINERS) and item:
            _flatten(item, shape, leaves, placed)
        else:  # a leaf of a subclass, or [] or {}: the C encoder writes it
            shape.append(None)
            leaves.append(item)


def _skeleton(shape: Iterator[object], step: str, here: str) -> str:
    """The %-template of the next value of `shape` (_flatten's), its first line indented by
    `here`: a %s for each leaf."""
    token = next(shape)
    if token is None:
        return "%s"
    inner = here + step
    if isinstance(token, tuple):  # a mapping's keys
        items = [text.replace("%", "%%") + ": " + _skeleton(shape, step, inner) for text in _key_texts(token)]
        return "{\n" + inner + (",\n" + inner).join(items) + "\n" + here + "}"
    items = [_skeleton(shape, step, inner) for _ in range(cast(int, token))]  # a list's length
    return "[\n" + inner + (",\n" + inner).join(items) + "\n" + here + "]"


#: the template of each shape at each depth (_shaped): the nested values of a report come in few
#: shapes (the fixes of each rule), while their leaves differ (a migrated pod's claim's name)
_SHAPES: dict[tuple[tuple[object, ...], str, str], str] = {}
_SHAPES_HELD = 1024


def mapping(leaves: dict[str, object], placed: Iterable[tuple[str, str]], *, indent: int = 2, level: int = 0) -> str:
    """`dumps` of the mapping of `leaves` (at least one; every value a leaf: a string, a number,
    a boolean or null) followed by the keys and texts `placed`, each text already encoded as it reads one
    level down: the leaves by one C call, with no walk of the mapping (a report's finding: 12
    keys, its object's and fix's texts shared with other findings)."""
    here = " " * indent * level
    inner = here + " " * indent
    encoder = _BY_INDENT.get(inner) or _by_indent(inner)
    tail = "".join([",\n" + inner + _key_text(key) + ": " + text for key, text in placed])
    return "{\n" + inner + encoder(leaves)[1:-1] + tail + "\n" + here + "}"


def rows(items: list[dict[Any, Any]], *, indent: int = 2, level: int = 0) -> str:
    """`dumps` of a list of mappings that have the same keys and only leaves (a 40,000-pod
    rollout's timeline: 240,000 records): every leaf by one C call, placed in one template
    made once for the list, instead of a call and a walk for each mapping. Any other list
    goes to `dumps`."""
    keys = tuple(items[0]) if items else ()
    leaves = [value for item in items for value in item.values()]
    if not keys or not {*map(type, leaves)} <= _LEAF_TYPES or any(tuple(item) != keys for item in items):
        return dumps(items, indent=indent, level=level)
    here = " " * indent * level
    inner = here + " " * indent
    one = _template(_shape_keys(keys), inner + " " * indent, inner)
    texts = _LEAVES(leaves)[1:-1].split("\0")
    return "[\n" + inner + (",\n" + inner).join([one] * len(items)) % tuple(texts) + "\n" + here + "]"


def dumps(value: object, *, indent: int = 2, level: int = 0) -> str:
    """The text of json.dumps(value, indent=indent, ensure_ascii=False), as it reads `level`
    levels down a document (its first line already indented there)."""
    return _text(value, " " * indent, " " * indent * level)
