"""Exported policies checked in-process, before any apiserver sees them: their CEL evaluated
with draguard's CEL engine on an object (the unit tests hold each policy's verdict equal to
its rule's check on the rule's examples and the corpus), and the CEL features each
expression uses held against the release it targets.

A new expression may use a library from the release after the one that introduced it
(k8s.io/apiserver v0.37.2 pkg/cel/environment/base.go: `IntroducedVersion`; expressions
written new are compiled with the environment of the compatibility version, one release
back). ext.Bindings (`cel.bind`) is not in the Kubernetes environment at all, though
draguard's selector engine has it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.versions import minor
from ..cel.objects import as_admitted, evaluate as evaluate_cel

#: (first release whose new expressions may use it, feature, its functions)
_FEATURES = (
    (33, "two-variable comprehensions", {"transformList", "transformMap", "transformMapEntry"}),
    (34, "the semver library", {"semver", "isSemver"}),
    (35, "ext.Lists", {"flatten", "slice", "distinct", "reverse", "sort", "sortBy", "lists.range", "first", "last"}),
    (38, "library.Lists v1", {"includes"}),
)
_NEVER = {"cel.bind": "ext.Bindings is not in the Kubernetes CEL environment"}
_TWO_VARIABLE_MACROS = {"all", "exists", "existsOne"}
_STRING = re.compile(r"""'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|r'[^']*'|r"[^"]*\"""")
_CALL = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\s*\(")


def unavailable(expression: str, kube_version: str) -> list[str]:
    """What `expression` uses that a new expression on `kube_version` may not."""
    code = _STRING.sub("''", expression)
    problems = []
    for match in _CALL.finditer(code):
        name = match.group(1)
        member = name.rsplit(".", 1)[-1]
        if name in _NEVER or member in _NEVER:
            problems.append(f"{name}(): {_NEVER.get(name) or _NEVER[member]}")
            continue
        if member in _TWO_VARIABLE_MACROS and _arguments(code, match.end()) == 3:
            member = "transformList"  # the three-argument forms are two-variable comprehensions
        for since, feature, functions in _FEATURES:
            if (member in functions or name in functions) and minor(kube_version) < since:
                problems.append(f"{name}(): {feature} is usable in new expressions from 1.{since} on")
    return problems


def _arguments(code: str, start: int) -> int:
    """How many top-level arguments the call whose `(` ends at `start` has."""
    depth, count = 0, 1
    for char in code[start:]:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return count
            depth -= 1
        elif char == "," and depth == 0:
            count += 1
    return count


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str | None = None  # the evaluated messageExpression (or message) when it fails
    error: str | None = None  # a runtime error: with failurePolicy Fail the apiserver denies


def variables(policy: dict, obj: dict, params: dict | None = None) -> tuple[dict, str | None]:
    """(the policy's variables on `obj` (a CREATE), computed in order, each seeing those
    before it; the first runtime error, or None)."""
    data, errors = _bound(policy, obj, params, None)
    return data["variables"], next((f"variable {name}: {error}" for name, error in errors.items()), None)


def _bound(policy: dict, obj: dict, params: dict | None, old: dict | None) -> tuple[dict, dict]:
    """What the policy's expressions read (`object` and `oldObject` as the apiserver sends
    them, without null fields; the request's operation; `params`; its variables), and the
    runtime error of each variable that has one. The apiserver computes a variable when an
    expression first reads it, so an error counts only where it is read (_failed); on a
    CREATE nothing reads the old object's variables, which are not computed."""
    data = {"object": as_admitted(obj), "oldObject": as_admitted(old) if old is not None else None,
            "request": {"operation": "CREATE" if old is None else "UPDATE"}, "params": params, "variables": {}}
    errors: dict[str, str] = {}  # variable name -> its evaluation error
    uncomputed: set[str] = set()
    for variable in policy["spec"].get("variables", []):
        expression = variable["expression"]
        if old is None and ("oldObject" in expression or any(_reads(expression, name) for name in uncomputed)):
            uncomputed.add(variable["name"])
            continue
        value, error = evaluate_cel(expression, data)
        if error:
            errors[variable["name"]] = error
        else:
            data["variables"][variable["name"]] = value
    return data, errors


def _failed(expression: str, error: str, errors: dict) -> str:
    """An expression's runtime error, named after the variable it read that failed, if any."""
    read = next((name for name in errors if _reads(expression, name)), None)
    return f"variable {read}: {errors[read]}" if read else error


def _reads(expression: str, variable: str) -> bool:
    return re.search(rf"\bvariables\.{variable}\b", expression) is not None


def evaluate(policy: dict, obj: dict, params: dict | None = None, old: dict | None = None) -> Verdict:
    """The policy's validations on `obj` as the apiserver sends it (no null fields); an
    UPDATE when `old` is given."""
    data, errors = _bound(policy, obj, params, old)
    for validation in policy["spec"]["validations"]:
        passed, error = evaluate_cel(validation["expression"], data)
        if error:
            return Verdict(False, validation.get("message"), _failed(validation["expression"], error, errors))
        if passed is not True:
            message = validation.get("message")
            if "messageExpression" in validation:  # the apiserver falls back to `message` on an error
                evaluated, error = evaluate_cel(validation["messageExpression"], data)
                message = message if error else evaluated
            return Verdict(False, message)
    return Verdict(True)
