"""What the rules ask of a selector without running it: whether it compiles (and the
diagnostic when not), the API server's cost estimate, what it reads, guards with `has()` and
compares with `==`. These are facts of the expression's text and of the engine alone, so they
are kept in the per-user cache (core.usercache), keyed by the expression, the environment's
switches and the stamps of the engine's own modules (draguard's cel package and
cel-expr-python): a lint whose selectors were seen before reads them back and imports neither
cel-expr-python nor protobuf (about a sixth of a one-file lint's start). Evaluating a selector
on devices still compiles it (cel.env.compile_selector)."""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from typing import Any, Iterable

from ..core.usercache import cached_json, folder_stamp, source_stamp
from ..core.value import Value
from .reads import Name, References

#: resourceapi.CELSelectorExpressionMaxCost: the API server refuses a selector whose cost
#: cel-go estimates above it, and kube-scheduler's program stops at that actual cost
#: (k8s.io/dynamic-resource-allocation/cel: cel.CostLimit); draguard's engine stops earlier,
#: after 10,000 comprehension iterations (CompiledSelector._over_budget): not judged, said so
MAX_COST = 1_000_000


class CelDiagnostic(Value):
    """Why an expression does not compile (or is not checked), at a character of it."""

    __slots__ = ("message", "offset", "suggestion", "unsupported")

    def __init__(self, message: str, offset: int, suggestion: str | None = None, unsupported: bool = False):
        self.message = message
        self.offset = offset  # 0-based character offset into the expression
        self.suggestion = suggestion
        # draguard's engine cannot check the expression, which upstream may accept: not the
        # expression's fault, and said as such
        self.unsupported = unsupported


class SelectorSummary:
    """The facts of one compiled selector that need no device (see cel.env.CompiledSelector,
    whose properties of the same names they are)."""

    __slots__ = ("error", "max_cost", "costliest", "references", "guarded", "compared")

    def __init__(self, error: CelDiagnostic | None, max_cost: int, costliest: int, references: References,
                 guarded: set[Name], compared: dict[tuple[str, ...], set[str]]):
        self.error = error
        self.max_cost = max_cost
        self.costliest = costliest
        self.references = references
        self.guarded = guarded
        self.compared = compared

    @property
    def too_complex(self) -> bool:
        """Whether the API server refuses the selector as too complex (over MAX_COST)."""
        return self.max_cost > MAX_COST


def summarize(expression: str, allow_multiple_allocations: bool = True, includes: bool = True) -> SelectorSummary:
    """The summary of `expression` compiled as cel.env.compile_selector compiles it with the
    same switches: read from the per-user cache, else compiled and stored."""
    return _summary(expression, allow_multiple_allocations, includes)


def all_compile(expressions: Iterable[str]) -> bool:
    """Whether every expression compiles (cel-invalid reports those that do not: other rules
    leave such requests alone rather than report the same fault again)."""
    return all(summarize(expression).error is None for expression in expressions)


@lru_cache(maxsize=4096)
def _summary(expression: str, allow_multiple_allocations: bool, includes: bool) -> SelectorSummary:
    key = f"selector {int(allow_multiple_allocations)}{int(includes)}\n{engine_stamp()}\n{expression}"
    return _parsed(cached_json("cel", key, lambda: _facts(expression, allow_multiple_allocations, includes),
                               _well_formed))


@lru_cache(maxsize=1)
def engine_stamp() -> str:
    """The stamps of the modules a summary is computed by: draguard's cel package, the
    quantity reader it folds literals with, cel-expr-python (found, not imported) and the
    protobuf it reads checked ASTs with (its version's file, installed beside it)."""
    here = os.path.dirname(__file__)
    spec = importlib.util.find_spec("cel_expr_python")
    engine = list(spec.submodule_search_locations or []) if spec else []
    protobuf = [os.path.join(os.path.dirname(e), "google", "protobuf", "__init__.py") for e in engine]
    return "\n".join((folder_stamp(here, *engine),
                      source_stamp(os.path.join(os.path.dirname(here), "core", "quantity.py"),
                                   *(p for p in protobuf if os.path.isfile(p)))))


def _facts(expression: str, allow_multiple_allocations: bool, includes: bool) -> dict[str, Any]:
    from .env import compile_selector

    compiled = compile_selector(expression, allow_multiple_allocations, includes)
    error = compiled.error
    references = compiled.references
    return {
        "error": None if error is None else [error.message, error.offset, error.suggestion, error.unsupported],
        "cost": [compiled.max_cost, compiled.costliest] if error is None else [0, 0],
        "references": [[list(item) for item in references.items], references.everything,
                       list(references.driver_domains)],
        "guarded": sorted(list(name) for name in compiled.guarded),
        "compared": [[list(what), sorted(values)] for what, values in compiled.compared.items()],
    }


def _parsed(facts: dict[str, Any]) -> SelectorSummary:
    error = facts["error"]
    items, everything, driver_domains = facts["references"]
    return SelectorSummary(
        None if error is None else CelDiagnostic(error[0], error[1], error[2], error[3]),
        facts["cost"][0], facts["cost"][1],
        References(tuple((f, d, n) for f, d, n in items), everything, tuple(driver_domains)),
        {(f, d, n) for f, d, n in facts["guarded"]},
        {tuple(what): set(values) for what, values in facts["compared"]})


def _well_formed(facts: object) -> bool:
    """Whether a cached entry reads as a summary (a damaged one is computed again)."""
    try:
        _parsed(facts)  # type: ignore[arg-type]  # checked by reading it
    except (TypeError, ValueError, KeyError, IndexError):
        return False
    return True
