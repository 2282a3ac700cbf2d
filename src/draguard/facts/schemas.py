"""The official Kubernetes OpenAPI schemas (as JSON Schema, shipped by `kubernetes-validate`),
compiled once per (version, apiVersion, kind) with the Rust validator `jsonschema-rs`.

kubernetes-validate's own `validate()` re-reads and re-compiles the 1 MB definitions file on
every call (~30 objects/s); caching the compiled validator makes validation cost microseconds.
`jsonschema_rs` is imported on first use: commands that validate nothing do not pay for it,
nor does a lint of a few objects that fit their schemas (facts.schema_fit: FIT_IN_PYTHON)."""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from importlib import import_module
from importlib.util import find_spec
from typing import Iterator, NamedTuple

from ..core.location import format_path
from ..core.usercache import cached_json, source_stamp
from ..core.patterns import Lazy
from .schema_fit import fits


@lru_cache(maxsize=None)
def _schema_root() -> str:
    # located, not imported: importing kubernetes_validate pulls in jsonschema (~0.1 s)
    spec = find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the kubernetes-validate package is not installed")
    return os.path.join(spec.submodule_search_locations[0], "kubernetes-json-schema")


def _schema_dir(kube_version: str, strict: bool) -> str:
    """strict: unknown fields are errors (the API server's fieldValidation=Strict, kubectl's
    default); otherwise only types, formats and required fields are checked."""
    return os.path.join(_schema_root(), f"v{kube_version}.0-local{'-strict' if strict else ''}")


#: how a kind's schema file refers to the shared definitions, and how the schema bundled for
#: it refers to its own copy of those it needs
_SHARED_REF, _OWN_REF = "/api/_definitions.json#/$defs/", "#/$defs/"


@lru_cache(maxsize=None)
def _definitions(kube_version: str, strict: bool) -> dict:
    """The release's shared definitions (1.8 MB of JSON), read only to bundle a kind the
    per-user cache does not hold yet."""
    with open(os.path.join(_schema_dir(kube_version, strict), "_definitions.json"), encoding="utf-8") as handle:
        return json.load(handle)["$defs"]


def _bundled(path: str, kube_version: str, strict: bool) -> dict:
    """The kind's schema made whole: the definitions it reaches copied in, its references
    pointed at them, and the descriptions, which validate nothing, left out. A validator
    compiles this in milliseconds, where a registry of all 862 definitions took 0.1 s."""
    with open(path, encoding="utf-8") as handle:
        schema = json.loads(handle.read().replace(_SHARED_REF, _OWN_REF))
    definitions, wanted, own = _definitions(kube_version, strict), _references(schema), {}
    while wanted:
        name = wanted.pop()
        if name not in own:
            own[name] = definitions[name]
            wanted.extend(_references(own[name]))
    schema["$defs"] = own
    return _without_descriptions(schema)


def _references(node) -> list[str]:
    """The definition names `node` refers to (`#/$defs/NAME`), nested ones included."""
    found, stack = [], [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_OWN_REF):
                found.append(ref[len(_OWN_REF):])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _without_descriptions(node):
    """`node` without its schemas' descriptions (a property named `description` is a
    mapping, and stays)."""
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


#: What a built-in kind and a version can be spelled as; anything else names no schema file.
#: Checked before the name is made a path: a tenant's kind is hostile (a 300-character kind
#: failed with "File name too long", a `../` would read another file).
_KIND = Lazy(r"[A-Za-z][A-Za-z0-9]{0,62}")
_VERSION = Lazy(r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?")
_GROUP = Lazy(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


@lru_cache(maxsize=1024)  # bounded: the kinds come from the input
def bundled_schema(kube_version: str, api_version: str, kind: str, strict: bool = True) -> dict | None:
    """The bundled schema of a built-in kind served by `kube_version`, or None when the
    target does not know that apiVersion/kind (CRDs, removed or not-yet-added versions, names
    no built-in kind has). It is kept in the per-user cache, keyed by the files it comes from."""
    group, version = _split(api_version)
    if not (_KIND.fullmatch(kind) and _VERSION.fullmatch(version) and (not group or _GROUP.fullmatch(group))):
        return None
    prefix = group.split(".", 1)[0] + "-" if group else ""
    folder = _schema_dir(kube_version, strict)
    path = os.path.join(folder, f"{kind.lower()}-{prefix}{version}.json")
    if not os.path.isfile(path):
        return None
    key = source_stamp(path, os.path.join(folder, "_definitions.json"))
    schema: dict = cached_json("schemas", key, lambda: _bundled(path, kube_version, strict))
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if not any(g.get("group", "") == group and g.get("version") == version and g.get("kind") == kind
               for g in gvks):
        return None  # same file name, different group (e.g. a CRD in apps.example.com)
    return schema


@lru_cache(maxsize=1024)
def validator_for(kube_version: str, api_version: str, kind: str, strict: bool = True):
    """The compiled validator of `bundled_schema`, or None where there is none."""
    schema = bundled_schema(kube_version, api_version, kind, strict)
    if schema is None:
        return None
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema)


def import_validators() -> None:
    """Import jsonschema_rs now, in a process about to fork parts that each judge hundreds of
    objects (engine.parallel.in_parts): its compiled module loads `email.utils` (with socket,
    urllib.parse, ipaddress, calendar, random) as it initialises, 16-18 ms of CPU that every
    part paid again after the fork, and the forked processes share the modules imported
    before it. Where it cannot be imported, the part that asks for a validator says so (as
    before this import): a run that compiles none (custom resources only) ends as it did."""
    try:
        import_module("jsonschema_rs")
    except Exception:  # noqa: BLE001 - whatever its import raises is raised again where it is needed
        pass


#: how many objects a process checks with facts.schema_fit before it leaves them all to the
#: compiled validators: importing jsonschema_rs and compiling a kind's validator cost a
#: one-file lint more than checking its objects in Python (about 0.1 ms each), a large run
#: much less than checking all of them so
FIT_IN_PYTHON = 16

#: the objects checked in Python so far in this process
_fitted_in_python = 0


class SchemaError(NamedTuple):
    """One way an object does not fit its schema, worded as the `schema-invalid` rule words
    it: `path` is where to point (the missing field's mapping, an unknown field's key, or a
    wrong value), `value` whether at the value there rather than at its key."""

    path: tuple
    message: str
    value: bool


_NULL_TYPES = Lazy(r'is not of types "null", ')
_ONE_OF = Lazy(r"is not valid under any of the schemas listed in the 'oneOf' keyword")


def schema_errors(data: dict, kube_version: str, api_version: str, kind: str,
                  strict: bool = True) -> Iterator[SchemaError]:
    """The schema errors of a built-in object of a kind the release serves (none for others:
    custom resources, versions it does not serve), first to last."""
    global _fitted_in_python
    if _fitted_in_python < FIT_IN_PYTHON:
        schema = bundled_schema(kube_version, api_version, kind, strict)
        if schema is None:
            return
        _fitted_in_python += 1
        if fits(schema, data):
            return
    validator = validator_for(kube_version, api_version, kind, strict)
    if validator is None or validator.is_valid(data):
        return
    for error in validator.iter_errors(data):
        path = tuple(error.instance_path)
        kind_name = type(error.kind).__name__
        if kind_name == "Required":
            yield SchemaError(path, f"{_dotted(path)}: required field '{error.kind.as_dict()['property']}' is missing",
                              False)
        elif kind_name == "AdditionalProperties":
            first = error.kind.as_dict()["unexpected"][0]
            yield SchemaError(path + (first,), f"{_dotted(path + (first,))}: unknown field '{first}'", False)
        else:
            message = f"{_dotted(path)}: must be {_one_of_types(error)}" if kind_name == "OneOfNotValid" \
                else f"{_dotted(path)}: {_NULL_TYPES.sub('is not of type ', _spelt(error.message, data, path))}"
            yield SchemaError(path, _ONE_OF.sub("is not valid", message), True)


def _spelt(message: str, data: dict, path: tuple) -> str:
    """`message` with YAML's spelling of a NaN or an infinity where the validator, which
    reads JSON, wrote `null` for it (".inf is not of type integer", not "null is ...")."""
    value = data
    for part in path:
        value = value[part]
    if isinstance(value, float) and not math.isfinite(value) and message.startswith("null "):
        return (".nan" if value != value else "-.inf" if value < 0 else ".inf") + message[len("null"):]
    return message


def _dotted(path: tuple) -> str:
    return format_path(path) or "(object)"


def _one_of_types(error) -> str:
    kinds = []
    for branch in error.kind.as_dict().get("context") or []:
        for sub in branch:
            kinds.extend(re.findall(r'"(\w+)"', sub.message.split("is not of type", 1)[-1]))
    names = [k for k in dict.fromkeys(kinds) if k != "null"]
    return " or ".join(names) if names else "a valid value"
