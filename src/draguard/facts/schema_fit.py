"""Whether an object surely fits its kind's bundled schema (facts.schemas), answered in
Python for the few keywords the Kubernetes schemas use: a lint of a few valid objects then
neither imports jsonschema_rs (its module imports `email.utils`, with socket, urllib.parse,
ipaddress, calendar and random: 12 to 17 ms of a one-file lint's start) nor compiles a
validator for each kind.

This answers one way only: True where the object fits, False where it does not *or* where
it is not sure (a keyword not listed here, a value JSON has no exact form for, an integer
asked for and a float given), and then jsonschema_rs judges and words the errors as before.
So it can only spare a check that would have passed. The keywords' meanings are JSON Schema
draft 2020-12's (https://json-schema.org/draft/2020-12/json-schema-validation), which the
bundled schemas declare; `format` is an annotation there, and jsonschema_rs checks no format
for them by default (tests/unit/facts/test_schema_fit.py compares both on the corpus, the
fixtures and changed objects)."""

from __future__ import annotations

#: keywords that validate nothing: annotations, and where the definitions are kept
_ANNOTATIONS = frozenset({"description", "format", "$schema", "$id", "$defs", "title", "default"})
#: what the Kubernetes schemas spell out (besides annotations and `x-kubernetes-*` keys)
_KEYWORDS = frozenset({"$ref", "type", "enum", "oneOf", "required", "properties", "additionalProperties", "items"})
_DEFINITION = "#/$defs/"
#: the integers jsonschema_rs reads as a 64-bit integer (signed or not); others are left to it
_LOWEST, _HIGHEST = -(2 ** 63), 2 ** 64 - 1


class _Unsure(Exception):
    """Met something this module does not answer for: jsonschema_rs is asked."""


def fits(schema: dict, data: object) -> bool:
    """True where `data` is valid under `schema` (a bundled kind's schema, its definitions in
    its `$defs`); False where it is not, or where this module is not sure."""
    try:
        return _fits(schema, data, schema.get("$defs") or {})
    except (_Unsure, RecursionError):  # nested past Python's stack (a recursive schema: CRDs)
        return False


def _fits(node: object, value: object, definitions: dict) -> bool:
    if node is True or node is False:
        return node  # additionalProperties: false is a false schema
    if type(node) is not dict:
        raise _Unsure
    node = _resolved(node, definitions)
    kind = _json_type(value)
    for keyword in node:
        if keyword not in _KEYWORDS and keyword not in _ANNOTATIONS and not keyword.startswith("x-kubernetes-"):
            raise _Unsure
    allowed = node.get("type")
    if allowed is not None and not _of_type(kind, value, allowed):
        return False
    if "enum" in node and not _listed(value, node["enum"]):
        return False
    if "oneOf" in node and sum(_fits(branch, value, definitions) for branch in node["oneOf"]) != 1:
        return False
    if kind == "object":
        assert isinstance(value, dict)
        return _object_fits(node, value, definitions)
    if kind == "array":
        assert isinstance(value, list)
        items = node.get("items", True)
        return all(_fits(items, item, definitions) for item in value)
    return True


def _resolved(node: dict, definitions: dict) -> dict:
    """The definition a `{"$ref": ...}` node names (through any chain of them); a `$ref` beside
    other keywords that validate is left to jsonschema_rs."""
    while "$ref" in node:
        ref = node["$ref"]
        if not (isinstance(ref, str) and ref.startswith(_DEFINITION) and ref[len(_DEFINITION):] in definitions):
            raise _Unsure
        if any(keyword in _KEYWORDS for keyword in node if keyword != "$ref"):
            raise _Unsure
        node = definitions[ref[len(_DEFINITION):]]
        if type(node) is not dict:
            raise _Unsure
    return node


def _object_fits(node: dict, value: dict, definitions: dict) -> bool:
    required = node.get("required")
    if required and any(name not in value for name in required):
        return False
    properties = node.get("properties") or {}
    others = node.get("additionalProperties", True)
    for key, item in value.items():
        if type(key) is not str:
            raise _Unsure  # jsonschema_rs refuses it
        _plain_string(key)
        if not _fits(properties.get(key, others), item, definitions):
            return False
    return True


def _json_type(value: object) -> str:
    """The JSON type of `value`, where it has one jsonschema_rs reads exactly."""
    kind = type(value)
    if kind is str:
        _plain_string(value)  # type: ignore[arg-type]
        return "string"
    if isinstance(value, dict):  # the reader's mappings and sequences are dict's and list's
        return "object"
    if isinstance(value, list):
        return "array"
    if kind is bool:
        return "boolean"
    if value is None:
        return "null"
    if kind is int:
        if not _LOWEST <= value <= _HIGHEST:  # type: ignore[operator]
            raise _Unsure
        return "integer"
    if kind is float:
        if value - value != 0:  # type: ignore[operator]  # NaN or an infinity (read as null)
            raise _Unsure
        return "number"
    raise _Unsure  # a date, bytes, a tuple... whatever jsonschema_rs makes of it


def _plain_string(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise _Unsure from None  # a lone surrogate


def _of_type(kind: str, value: object, allowed: object) -> bool:
    names = (allowed,) if isinstance(allowed, str) else allowed
    if not isinstance(names, list | tuple):
        raise _Unsure
    if kind in names or (kind == "integer" and "number" in names):
        return True
    if kind == "number" and "integer" in names and float(value).is_integer():  # type: ignore[arg-type]
        raise _Unsure  # 2.0 is an integer to JSON Schema: left to jsonschema_rs
    return False


def _listed(value: object, choices: object) -> bool:
    if not (isinstance(value, str) or value is None) or not isinstance(choices, list):
        raise _Unsure  # 1 == 1.0 == True in Python, not in JSON Schema
    return any(type(choice) is type(value) and choice == value for choice in choices)
