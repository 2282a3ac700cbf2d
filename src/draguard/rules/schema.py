"""Structural validation against the official OpenAPI schema of the target Kubernetes version."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..facts.schemas import schema_errors
from .base import Option, Rule
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context


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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        limit = ctx.option(self, "maxErrorsPerObject")
        for count, error in enumerate(schema_errors(obj.data, ctx.kube_version, obj.api_version, obj.kind)):
            if count >= limit:
                break
            yield ctx.finding(self, obj, error.message, *obj.place(error.path), value=error.value)
