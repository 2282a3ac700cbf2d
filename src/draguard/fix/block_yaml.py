"""Block YAML for the plain values a fix adds, written directly, byte for byte as PyYAML's
emitter writes them (fix.splice's dumpers): a fix's value is mostly small mappings of names
and numbers (and the CEL selectors of a MIG device's claim template), and PyYAML's representer walked every node in Python before its emitter ran
(half the cost of an HTML report's diffs on a stream of pods with a fix each). Anything
outside the simple subset (empty collections, a list directly in a list, floats, strings
that need quotes, a style or a width to judge) is None here and the caller dumps it with
PyYAML, as before; tests/unit/fix/test_block_yaml.py compares the two on generated values."""

from __future__ import annotations

import re

from yaml import ScalarNode
from yaml.resolver import Resolver

#: a string PyYAML writes plain in block style: letters, digits and `._/-`, starting with a
#: letter or digit, short enough to be a simple key (the emitter's limit is 128)
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,126}")
#: a value (not a key) written plain in block style besides those: printable ASCII from a letter
#: or digit to a character that is not a space, with no block indicator inside, which the
#: emitter's scalar analysis (PyYAML's analyze_scalar, libyaml's yaml_emitter_analyze_scalar)
#: finds as `:` before a space or the end and `#` after a space; flow indicators (`[]{},?`)
#: and quotes inside bar only a flow plain scalar. A CEL selector is one
#: (`device.attributes['gpu.nvidia.com'].profile == '1g.5gb'`): PyYAML's emitter wrote the
#: 110 claim templates that hold one on the 2,125-file tree, about 150 us each.
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9](?:[ -~]*[!-~])?")
_BLOCK_INDICATORS = re.compile(r": |:$| #")
_STR = "tag:yaml.org,2002:str"
_RESOLVER = Resolver()
#: string -> how it may be written plain: 2 as a key or a value, 1 as a value only, 0 not
#: (names repeat across a run's fixes)
_PLAIN_SEEN: dict[str, int] = {}


class _Unsimple(Exception):
    """The value is outside the subset written here."""


def block_yaml(value: object, indented_sequences: bool, indent: int) -> str | None:
    """`value` (a non-empty mapping or list) as PyYAML dumps it in block style with
    `indent` (2 to 9) and block sequences indented under their key or not; None when it is
    outside the subset written here."""
    if not 2 <= indent <= 9:
        return None
    lines: list[str] = []
    try:
        if isinstance(value, dict):
            _mapping(value, 0, "", lines, indented_sequences, indent)
        elif isinstance(value, list):
            _sequence(value, 0, lines, indented_sequences, indent)
        else:
            return None
    except _Unsimple:
        return None
    return "\n".join(lines) + "\n"


def _mapping(value: dict, column: int, lead: str, lines: list[str], indented: bool, step: int) -> None:
    """The keys at `column`; the first after `lead` (a sequence's dash, padded to it)."""
    if not value:
        raise _Unsimple
    pad = " " * column
    for number, (key, item) in enumerate(value.items()):
        head = (lead if number == 0 else pad) + _scalar_text(key, keys_only=True) + ":"
        if isinstance(item, dict):
            lines.append(head)
            _mapping(item, column + step, " " * (column + step), lines, indented, step)
        elif isinstance(item, list):
            lines.append(head)
            _sequence(item, column + step if indented else column, lines, indented, step)
        else:
            lines.append(head + " " + _scalar_text(item))


def _sequence(value: list, column: int, lines: list[str], indented: bool, step: int) -> None:
    if not value:
        raise _Unsimple
    dash = " " * column + "-"
    for item in value:
        if isinstance(item, dict):
            _mapping(item, column + step, dash + " " * (step - 1), lines, indented, step)
        elif isinstance(item, list):
            raise _Unsimple  # `- - a`: the emitter's own rules for it are not repeated here
        else:
            lines.append(dash + " " + _scalar_text(item))


def _scalar_text(value: object, keys_only: bool = False) -> str:
    if isinstance(value, str):
        plain = _PLAIN_SEEN.get(value)
        if plain is None:
            if len(_PLAIN_SEEN) > 65536:
                _PLAIN_SEEN.clear()
            plain = _PLAIN_SEEN[value] = _plain_form(value)
        if plain > keys_only:
            return value
        raise _Unsimple
    if keys_only:
        raise _Unsimple
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    raise _Unsimple


def _plain_form(value: str) -> int:
    """How `value` may be written plain: 2 as a key or a value, 1 as a value only, 0 not
    (what the resolver would read as another type is quoted)."""
    if _PLAIN.fullmatch(value):
        form = 2
    elif _PLAIN_VALUE.fullmatch(value) and not _BLOCK_INDICATORS.search(value):
        form = 1
    else:
        return 0
    return form if _RESOLVER.resolve(ScalarNode, value, (True, False)) == _STR else 0
