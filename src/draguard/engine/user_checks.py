"""The `checks:` list of `.draguard.yaml`: checks users write, each a CEL expression over one
object (rules.custom). Validated here like the rest of the file: a mistake stops the run with
file:line:column (exit status 2).

    checks:
    - id: gpu-pods-name-a-team              # lower-case words and dashes, not a built-in rule's id
      kinds: [Pod, apps/Deployment]         # Kind (the core group) or group/Kind
      expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
      message: every GPU workload names its team
      severity: warning                     # error (denied in admission), warning or info; default warning
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NoReturn

from ..core.finding import Severity
from ..rules import REGISTRY
from ..rules.custom import UserCheck, user_check
from ..sources.yamlpos import mark_of

_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KIND = re.compile(r"(?:([a-z0-9.-]+)/)?([A-Z][A-Za-z0-9]*)")
_KEYS = {"id", "kinds", "expression", "message", "severity"}
_REQUIRED = ("id", "kinds", "expression", "message")

#: fail(container, key, message, value=False): stops the run at that place (ConfigError)
Fail = Callable[..., NoReturn]


def read_checks(entries, container, key, path: str, fail: Fail) -> list[UserCheck]:
    """The checks of `container[key]`; `fail(container, key, message, value=False)` stops the
    run at that place."""
    if not isinstance(entries, list):
        fail(container, key, "'checks' must be a list of checks (id, kinds, expression, message, severity)")
    checks: list[UserCheck] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            fail(entries, index, "a check must be a mapping with id, kinds, expression and message", value=True)
        checks.append(_check(entry, path, fail, {c.id for c in checks}))
    return checks


def _check(entry: dict, path: str, fail: Fail, taken: set) -> UserCheck:
    for name in entry:
        if name not in _KEYS:
            fail(entry, name, f"a check has no setting '{name}' (settings: {', '.join(sorted(_KEYS))})")
    missing = [name for name in _REQUIRED if name not in entry]
    if missing:
        fail(entry, None, f"a check needs {', '.join(missing)}")
    for name in ("id", "expression", "message"):
        if not isinstance(entry[name], str) or not entry[name].strip():
            fail(entry, name, f"a check's {name} must be a non-empty string", value=True)
    rule_id = entry["id"]
    if not _ID.fullmatch(rule_id):
        fail(entry, "id", f"check id '{rule_id}' must be lower-case words joined by dashes", value=True)
    if rule_id in REGISTRY or rule_id in taken:
        fail(entry, "id", f"check id '{rule_id}' is taken by {'a built-in rule' if rule_id in REGISTRY else 'another check'}",
             value=True)
    from ..cel.objects import compile_error  # a config that declares checks only

    problem = compile_error(entry["expression"])
    if problem is not None:
        message, line, column = problem
        fail(entry, "expression", f"check {rule_id}: the expression does not compile (line {line}, column {column} of "
             f"it): {message}", value=True)
    line, column = mark_of(entry, "id") or (1, 1)
    return user_check(rule_id, _kinds(entry, fail), entry["expression"], entry["message"].strip(),
                      _severity(entry, fail), f"{path}:{line}:{column}")


def _kinds(entry: dict, fail: Fail) -> frozenset:
    kinds = entry["kinds"]
    if not isinstance(kinds, list) or not kinds:
        fail(entry, "kinds", "a check's kinds must be a non-empty list (Kind, or group/Kind)", value=True)
    found = set()
    for index, kind in enumerate(kinds):
        match = _KIND.fullmatch(kind) if isinstance(kind, str) else None
        if match is None:
            fail(kinds, index, f"kind {kind!r}: expected Kind (the core group) or group/Kind, e.g. apps/Deployment",
                 value=True)
        found.add((match.group(1) or "", match.group(2)))
    return frozenset(found)


def _severity(entry: dict, fail: Fail) -> Severity:
    try:
        return Severity.parse(str(entry.get("severity", "warning")))
    except ValueError as exc:
        fail(entry, "severity", str(exc), value=True)
