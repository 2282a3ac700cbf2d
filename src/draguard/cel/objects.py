"""CEL over whole Kubernetes objects, as the API server evaluates an admission policy's
expressions: `object`, `oldObject`, `request`, `params` and `variables`, each dynamic, with
draguard's CEL engine and libraries (cel.library). The exported policies' in-process check
(admission.celcheck) and the checks users write in `.draguard.yaml` (rules.custom) both
evaluate here, so a user's check means the same in lint as in the policy it is exported to."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: the variables an admission policy's expressions read (ValidatingAdmissionPolicy)
VARIABLES = ("object", "oldObject", "request", "params", "variables")
_ERROR_AT = re.compile(r"<input>:(\d+):(\d+): (.*?)(?:\n|$)")


@lru_cache(maxsize=512)
def program(expression: str) -> Any:
    """The compiled expression (a cel-expr-python Expression: Any, it ships no type
    information); RuntimeError (cel-cpp's message) when it does not compile."""
    from .library import runtime

    rt = runtime()
    env = rt.new_env({name: rt.T.DYN for name in VARIABLES})
    return env.compile(expression)


def compile_error(expression: str) -> tuple[str, int, int] | None:
    """(message, line, column: 1-based, inside the expression) of why `expression` does not
    compile; None when it does."""
    try:
        program(expression)
    except RuntimeError as exc:
        found = _ERROR_AT.search(str(exc))
        if found is None:
            return str(exc), 1, 1
        return found.group(3), int(found.group(1)), int(found.group(2)) + 1
    return None


def evaluate(expression: str, data: dict[str, object]) -> tuple[object, str | None]:
    """(the value of `expression` over `data`, the variables, None), or (None, the runtime error)."""
    from .library import runtime

    result = program(expression).eval(data=data)
    if result.type() == runtime().T.ERROR:
        return None, str(result.value())
    return result.plain_value(), None


def as_admitted(node: object) -> Any:
    """The object as the apiserver sends it to admission: typed objects are serialized
    without null fields. Any: parsed YAML in, parsed YAML out."""
    if isinstance(node, dict):
        return {key: as_admitted(value) for key, value in node.items() if value is not None}
    if isinstance(node, list):
        return [as_admitted(value) for value in node]
    return node
