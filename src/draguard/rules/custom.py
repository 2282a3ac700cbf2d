"""Checks users write in `.draguard.yaml` (kube-linter's custom checks): a CEL expression over
one object, true when it passes, for the kinds named, with a message and a severity.

Each becomes a rule like the built-in ones: lint judges it by evaluating the expression on the
object as admission would receive it (cel.objects, the engine the exported policies are
checked with), and `draguard policy export` writes its ValidatingAdmissionPolicy through the
same code as the built-in rules' (its `admission` condition is the expression). A runtime error
(a field read without `has()`) fails the check in both, as a policy with `failurePolicy: Fail`
denies on one."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterator

from ..core.finding import Finding, Severity
from ..core.fixes import plain
from .base import DOCS_BASE_URL, Admission, Rule, Targets

if TYPE_CHECKING:
    from ..core.config import Config
    from ..model.manifest import Manifest
    from .context import Context

CATEGORY = "custom"
#: where users read how to write one (docs/custom-checks.md)
GUIDE = DOCS_BASE_URL.rsplit("/", 1)[0] + "/custom-checks.md"


class UserCheck(Rule):
    """The base of every check a `.draguard.yaml` declares (user_check makes one class each:
    a rule's metadata is class data)."""

    category = CATEGORY
    reference = GUIDE
    #: where the check is declared (file:line:col), named in its findings' help
    declared_at = ""
    #: the check's expression and message (user_check sets them on each)
    admission: ClassVar[Admission]

    @property
    def help_uri(self) -> str:
        return GUIDE

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        from ..cel.objects import as_admitted, evaluate  # a config's own checks only

        data = {"object": as_admitted(plain(obj.data)), "oldObject": None, "request": {"operation": "CREATE"},
                "params": None, "variables": {}}
        passed, error = evaluate(self.admission.condition, data)
        if error is not None:
            yield ctx.finding(self, obj, f"{self.admission.message} (the check's expression failed on this object: "
                              f"{error}; admission denies on that too)", help=f"declared at {self.declared_at}")
        elif passed is not True:
            yield ctx.finding(self, obj, self.admission.message, help=f"declared at {self.declared_at}")


def user_check(rule_id: str, kinds: Targets, expression: str, message: str, severity: Severity,
               declared_at: str) -> UserCheck:
    """The rule of one declared check: `kinds` are (group, kind) pairs."""
    names = ", ".join(sorted(f"{g}/{k}" if g else k for g, k in kinds))
    attributes = {
        "id": rule_id, "name": message, "severity": severity, "targets": kinds, "declared_at": declared_at,
        "summary": f"{message} (a check declared in {declared_at})",
        "rationale": f"Declared in {declared_at}: `{expression}` must be true of every {names}.",
        "admission": Admission(expression, message),
    }
    made: UserCheck = type(f"UserCheck[{rule_id}]", (UserCheck,), attributes)()
    return made


def catalog(config: "Config") -> list[Rule]:
    """Every rule a run with `config` has: the built-in ones and the config's own checks."""
    from . import REGISTRY

    return [*REGISTRY, *config.checks]


def rule_named(config: "Config", rule_id: str) -> Rule | None:
    from . import REGISTRY

    return REGISTRY.get(rule_id) or next((c for c in config.checks if c.id == rule_id), None)
