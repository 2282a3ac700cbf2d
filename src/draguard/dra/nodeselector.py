"""core/v1 NodeSelectors as the allocator parses and matches them.

Mirrors k8s.io/component-helpers v0.37.2 scheduling/corev1/nodeaffinity (NewNodeSelector:
every term is parsed up front and any parse error fails the whole selector) with
k8s.io/apimachinery labels.NewRequirement (label key and value validation, `In`/`NotIn`
need values, `Exists`/`DoesNotExist` none, `Gt`/`Lt` exactly one strconv.ParseInt integer)
and the field-selector form of `matchFields` (`In`/`NotIn` with exactly one value). The
allocator (structured/internal/stable GatherPools) turns a parse error into an allocation
error, not into "no match"."""

from __future__ import annotations

from ..core.value import Value
from ..core.patterns import Lazy

#: apimachinery validation.IsQualifiedName (label keys) and IsValidLabelValue.
_NAME = Lazy(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
#: a DNS-1123 subdomain's characters (k8s.io/apimachinery IsDNS1123Subdomain; the length is the caller's)
DNS_SUBDOMAIN = Lazy(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INT64 = Lazy(r"^[+-]?[0-9]+$")
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


class NodeSelectorError(ValueError):
    pass


def _parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64), or None."""
    if not _INT64.match(text):
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


def label_key_problem(key) -> str | None:
    if not isinstance(key, str):
        return "must be a string"
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return "prefix part must be a DNS subdomain"
    if not name or len(name) > 63 or not _NAME.match(name):
        return "name part must consist of alphanumerics, '-', '_' or '.' (at most 63), starting and ending alphanumeric"
    return None


def label_value_ok(value) -> bool:
    return isinstance(value, str) and (value == "" or (len(value) <= 63 and _NAME.match(value) is not None))


class _LabelRequirement(Value):
    """One matchExpressions requirement over a node's labels."""

    __slots__ = ("key", "operator", "values")

    def __init__(self, key: str, operator: str, values: tuple):
        self.key, self.operator, self.values = key, operator, values

    def matches(self, labels: dict) -> bool:
        present = self.key in labels
        value = str(labels[self.key]) if present else None
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        have = _parse_int64(value) if value is not None else None  # Gt, Lt
        want = _parse_int64(str(self.values[0]))  # parse_node_selector let only an integer through
        if have is None or want is None:
            return False
        return have > want if self.operator == "Gt" else have < want


class _FieldRequirement(Value):
    """One matchFields requirement (metadata.name) over a node's fields."""

    __slots__ = ("key", "equal", "value")

    def __init__(self, key: str, equal: bool, value: str):
        self.key, self.value = key, value
        self.equal = equal  # In: the field equals the value; NotIn: it does not

    def matches(self, fields: dict) -> bool:
        return (fields.get(self.key, "") == self.value) == self.equal


class _Term(Value):
    """One node selector term: its label and field requirements, ANDed."""

    __slots__ = ("labels", "fields")

    def __init__(self, labels: tuple | None, fields: tuple | None):
        self.labels = labels  # None: the term has no matchExpressions
        self.fields = fields

    def matches(self, node) -> bool:
        if self.labels is not None and not all(r.matches(node.labels) for r in self.labels):
            return False
        fields = {"metadata.name": node.name} if node.name else {}
        # upstream skips field requirements for a node without a name
        return not (self.fields is not None and fields and not all(r.matches(fields) for r in self.fields))


class NodeSelector(Value):
    """A parsed node selector: its terms, ORed."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple):
        self.terms = terms

    def matches(self, node) -> bool:
        """Terms are ORed; an empty term (or none at all) selects no node."""
        return node is not None and any(term.matches(node) for term in self.terms)


def parse_node_selector(raw) -> NodeSelector:
    """NodeSelectorError naming every problem, as NewNodeSelector reports them."""
    terms: list[_Term] = []
    problems: list[str] = []
    raw_terms = raw.get("nodeSelectorTerms") if isinstance(raw, dict) else None
    for i, term in enumerate(raw_terms if isinstance(raw_terms, list) else []):
        term = term if isinstance(term, dict) else {}
        expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not expressions and not fields:
            continue  # an empty term selects nothing
        where = f"nodeSelectorTerms[{i}]"
        labels = tuple(_label_requirements(expressions, f"{where}.matchExpressions", problems)) if expressions else None
        field_reqs = tuple(_field_requirements(fields, f"{where}.matchFields", problems)) if fields else None
        terms.append(_Term(labels, field_reqs))
    if problems:
        raise NodeSelectorError("; ".join(problems))
    return NodeSelector(tuple(terms))


def _values(raw) -> list:
    values = raw.get("values") if isinstance(raw, dict) else None
    return list(values) if isinstance(values, list) else []


def _label_requirements(expressions: list, where: str, problems: list):
    for i, raw in enumerate(expressions):
        raw = raw if isinstance(raw, dict) else {}
        at, key, operator, values = f"{where}[{i}]", raw.get("key"), raw.get("operator"), _values(raw)
        if operator not in _LABEL_OPERATORS:
            problems.append(f"{at}.operator: Unsupported value: {operator!r}")
            continue
        before = len(problems)
        key_problem = label_key_problem(key)
        if key_problem:
            problems.append(f"{at}.key: Invalid value: {key!r}: {key_problem}")
        if operator in ("In", "NotIn") and not values:
            problems.append(f"{at}.values: Invalid value: for 'in', 'notin' operators, values set can't be empty")
        if operator in ("Exists", "DoesNotExist") and values:
            problems.append(f"{at}.values: Invalid value: values set must be empty for exists and does not exist")
        if operator in ("Gt", "Lt"):
            if len(values) != 1:
                problems.append(f"{at}.values: Invalid value: for 'Gt', 'Lt' operators, exactly one value is required")
            problems.extend(f"{at}.values[{k}]: Invalid value: {v!r}: for 'Gt', 'Lt' operators, the value must be an "
                            "integer" for k, v in enumerate(values) if _parse_int64(str(v)) is None)
        problems.extend(f"{at}.values[{k}]: Invalid value: {v!r}: a valid label value" for k, v in enumerate(values)
                        if not label_value_ok(v))
        if len(problems) == before and isinstance(key, str):  # label_key_problem let only a string through
            yield _LabelRequirement(key, operator, tuple(values))


def _field_requirements(fields: list, where: str, problems: list):
    for i, raw in enumerate(fields):
        raw = raw if isinstance(raw, dict) else {}
        at, operator, values = f"{where}[{i}]", raw.get("operator"), _values(raw)
        if operator not in ("In", "NotIn"):
            problems.append(f"{at}.operator: Unsupported value: {operator!r}: supported values: \"In\", \"NotIn\"")
        elif len(values) != 1:
            problems.append(f"{at}.values: Invalid value: {values!r}: must have one element")
        else:
            yield _FieldRequirement(str(raw.get("key", "")), operator == "In", str(values[0]))
