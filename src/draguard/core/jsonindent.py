"""JSON text indented as `json.dumps(value, indent=N, ensure_ascii=False)` writes it, faster.

With an indent, Python 3.11's json module leaves its C encoder for a pure-Python walk, every
chunk passing up through a chain of generators: a `-f json` report of a large lint spent about
40% of the run there. Here each list or mapping has its leaves encoded by the C encoder in one
call, separated by NUL (a character the encoder always escapes inside a string, so it splits
them exactly); a mapping's keys are encoded once per set of keys into a %-template that puts
each item on its own line; only the lists and mappings inside are walked in Python. The C
encoder coerces keys, writes floats and escapes strings as json.dumps does:
tests/unit/core/test_jsonindent.py compares the bytes with json.dumps.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any

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
    """A mapping with these keys at this depth, with a %s for each value."""
    lines = [_LEAVES({key: 0})[1:-4].replace("%", "%%") + ": %s" for key in keys]
    return "{\n" + inner + (",\n" + inner).join(lines) + "\n" + here + "}"


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
    nested: dict[int, str] = {}  # the texts of the items that are not leaves: placed as they are (Encoded), or walked
    for index in others:
        item = items[index]
        if type(item) is Encoded:
            nested[index] = item
        elif isinstance(item, _CONTAINERS) and item:
            nested[index] = _text(item, step, inner)
        else:
            continue  # a leaf of a subclass, or [] or {}: the C encoder writes it
        items[index] = 0
    leaves = _LEAVES(items)[1:-1].split("\0")
    for index, text in nested.items():
        leaves[index] = text
    if is_dict:
        return _template(tuple(value), inner, here) % tuple(leaves)
    return "[\n" + inner + (",\n" + inner).join(leaves) + "\n" + here + "]"


#: the C encoder whose items each start a line indented by the key, made once per depth
_BY_INDENT: dict[str, Callable[[Any], str]] = {}


def _by_indent(inner: str) -> Callable[[Any], str]:
    encoder = _BY_INDENT[inner] = _c_encoder(",\n" + inner, ": ")
    return encoder


def dumps(value: object, *, indent: int = 2, level: int = 0) -> str:
    """The text of json.dumps(value, indent=indent, ensure_ascii=False), as it reads `level`
    levels down a document (its first line already indented there)."""
    return _text(value, " " * indent, " " * indent * level)
