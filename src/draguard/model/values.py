"""The names for parsed YAML and JSON values that the model and the rules pass around.

What a manifest, an admission request or a live object holds is tenant input: any key may hold
any shape (a string where a mapping belongs, a list where a number does). Code narrows every
value with `isinstance` before it relies on it, so the static type of a value before that
check is deliberately open (`Any`): these aliases say *what* a value is (a parsed document,
one of its mappings, one of its lists) where a bare `Any` or `dict` would say nothing. The
mappings are `sources.yamlpos.YMap` (a `dict`) after loading, plain `dict`s from JSON; their
keys are usually strings, but YAML lets a tenant write `1: x`, so keys are not promised."""

from __future__ import annotations

from typing import Any, TypeAlias

#: one parsed value of any shape: mapping, list, str, int, float, bool or None
Yaml: TypeAlias = Any
#: one parsed mapping (an object, its `metadata`, a pod spec, ...)
YamlMap: TypeAlias = dict[Any, Yaml]
#: one parsed sequence (containers, requests, ownerReferences, ...)
YamlList: TypeAlias = list[Yaml]
#: a mapping's key or a list's index: one step of a path (core.location.Path)
Key: TypeAlias = str | int
