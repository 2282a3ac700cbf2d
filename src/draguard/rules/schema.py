"""Structural validation against the official OpenAPI schema of the target Kubernetes version."""

from __future__ import annotations

import re

from ..core.finding import Severity
from ..core.location import format_path
from ..facts.schemas import validator_for
from ..sources.yamlpos import YMap
from .base import Option, Rule
from .registry import register

_NULL_TYPES = re.compile(r'is not of types "null", ')
_ONE_OF = re.compile(r"is not valid under any of the schemas listed in the 'oneOf' keyword")


def _dotted(path) -> str:
    return format_path(tuple(path)) or "(object)"


def _resolve(data, path):
    """(container, key) of the last step of `path`; (None, None) for the root."""
    container, key = None, None
    node = data
    for part in path:
        container, key = node, part
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return container, key


def _one_of_types(error) -> str:
    kinds = []
    for branch in error.kind.as_dict().get("context") or []:
        for sub in branch:
            kinds.extend(re.findall(r'"(\w+)"', sub.message.split("is not of type", 1)[-1]))
    names = [k for k in dict.fromkeys(kinds) if k != "null"]
    return " or ".join(names) if names else "a valid value"


@register
class SchemaInvalid(Rule):
    id = "schema-invalid"
    name = "Object does not match the Kubernetes schema"
    category = "schema"
    severity = Severity.ERROR
    lint_only = "the API server decodes the object against its schema before admission and refuses what does not fit"
    summary = "A built-in object has a missing required field, an unknown field or a wrong type."
    rationale = """
        The API server rejects such objects, or (for unknown fields without strict validation)
        silently drops them: a misspelt `resourceClaimTemplateName` means the pod runs with no
        device at all. Validation uses the official OpenAPI schema of `--kube-version`
        (strict: unknown fields are errors), as shipped by `kubernetes-validate`. Versions the
        target does not serve and custom resources are left to other rules."""
    reference = "https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation"
    compliant = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec:
              containers: [{name: web, image: nginx}]
        """
    noncompliant = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          template:
            spec:
              containers: [{name: web, image: nginx}]
        """
    options = {"maxErrorsPerObject": Option(20, "report at most this many schema errors per object")}

    def check(self, obj, ctx):
        validator = validator_for(ctx.kube_version, obj.api_version, obj.kind)
        if validator is None or validator.is_valid(obj.data):
            return
        limit = ctx.option(self, "maxErrorsPerObject")
        for count, error in enumerate(validator.iter_errors(obj.data)):
            if count >= limit:
                break
            yield self._finding(obj, ctx, error)

    def _finding(self, obj, ctx, error):
        path = list(error.instance_path)
        kind = type(error.kind).__name__
        container, key = _resolve(obj.data, path)
        if kind == "Required":
            missing = error.kind.as_dict()["property"]
            where = _dotted(path)
            return ctx.finding(self, obj, f"{where}: required field '{missing}' is missing", container, key)
        if kind == "AdditionalProperties":
            unexpected = error.kind.as_dict()["unexpected"]
            target = obj.data
            for part in path:
                target = target[part]
            first = unexpected[0]
            node = target if isinstance(target, YMap) else None
            return ctx.finding(self, obj, f"{_dotted(path + [first])}: unknown field '{first}'", node,
                               first if node is not None else None)
        if kind == "OneOfNotValid":
            message = f"{_dotted(path)}: must be {_one_of_types(error)}"
        else:
            message = f"{_dotted(path)}: {_NULL_TYPES.sub('is not of type ', error.message)}"
        return ctx.finding(self, obj, _ONE_OF.sub("is not valid", message), container, key, value=True)
