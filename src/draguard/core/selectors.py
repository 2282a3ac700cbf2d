"""Kubernetes label selectors (matchLabels + matchExpressions), as the API server evaluates them."""

from __future__ import annotations

from collections.abc import Mapping

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")



def matches(selector: object, labels: Mapping[str, object]) -> bool:
    """True when `selector` (a LabelSelector mapping) selects `labels`. An empty selector
    selects everything; a malformed one selects nothing."""
    if not isinstance(selector, dict):
        return False
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, dict) or not isinstance(expressions, list):
        return False
    for key, value in match_labels.items():
        if labels.get(key) != value:
            return False
    for expression in expressions:
        if not isinstance(expression, dict):
            return False
        key, operator = expression.get("key"), expression.get("operator")
        values = expression.get("values") or []
        if not isinstance(key, str) or not isinstance(values, list):
            return False
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator not in _OPERATORS:
            return False
    return True


def malformed(container: dict[str, object], key: str) -> tuple[object, str | int, object] | None:
    """The first part of the LabelSelector `container[key]` (absent: none) that is not of its
    type, as (its container, its key, the value), for the note that says a rule could not read
    it (core.unread); None when the selector reads. `matches` takes a malformed selector as
    selecting nothing, which no rule should state as a finding."""
    selector = container.get(key)
    if selector is None:
        return None
    if not isinstance(selector, dict):
        return container, key, selector
    labels, expressions = selector.get("matchLabels"), selector.get("matchExpressions")
    if labels is not None and not isinstance(labels, dict):
        return selector, "matchLabels", labels
    for name, value in (labels or {}).items():
        if not isinstance(name, str) or not isinstance(value, str):
            return labels, name, value
    if expressions is not None and not isinstance(expressions, list):
        return selector, "matchExpressions", expressions
    for index, expression in enumerate(expressions or []):
        if not isinstance(expression, dict):
            return expressions, index, expression
        for part, wanted in (("key", str), ("operator", str), ("values", list)):
            value = expression.get(part)
            if value is not None and not isinstance(value, wanted):
                return expression, part, value
        if expression.get("operator") not in _OPERATORS:
            return expression, "operator", expression.get("operator")
        for place, value in enumerate(expression.get("values") or []):
            if not isinstance(value, str):
                return expression["values"], place, value
    return None
