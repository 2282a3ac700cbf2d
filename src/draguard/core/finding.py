"""The finding: the one record every stage produces and every report consumes."""

from __future__ import annotations

import enum
from operator import attrgetter
from typing import Any, NamedTuple

from .excerpt import bounded
from .fixes import Fix
from .location import Location, Path
from .value import Record, Value

#: The fixed set of categories a rule may belong to (documented in the README).
CATEGORIES = (
    "schema",
    "parse",
    "legacy-resources",
    "env-partitioning",
    "host-sharing",
    "claim-wiring",
    "request-shape",
    "cel",
    "satisfiability",
    "isolation",
    "teardown",
    "rollout",
    "memory",
    "api-currency",
    "cluster",
    "internal",
    "custom",  # checks users declare in .draguard.yaml (rules.custom)
)


class Severity(enum.IntEnum):
    """Ordered so that `--fail-on` is a plain comparison."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[str(text).strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or info)") from None

    def __str__(self) -> str:
        return self.name.lower()


class ObjectRef(Value):
    """Which Kubernetes object a finding is about (empty strings when unknown)."""

    __slots__ = ("api_version", "kind", "namespace", "name")

    def __init__(self, api_version: str = "", kind: str = "", namespace: str = "", name: str = ""):
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name

    def as_json(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return bounded(f"{self.kind or '?'} {ns}{self.name or '?'}")


class Site(NamedTuple):
    """A place as a rule names it: the path of a mapping or list, the key or index inside it
    (None: the container itself), whether the value is meant rather than its key, and a
    character of a string value (Manifest.location's arguments, with the container as a path)."""

    container: Path
    key: str | int | None = None
    value: bool = False
    offset: int | None = None


class Finding(Record):
    """One problem at one place; `help` says in prose what to do, `fix` is the change as data.
    Slotted: a run keeps every finding until its report is written, and a dict of twelve
    fields per finding was a tenth of what judging a stream of 10,406 pods held. Compared and
    shown without its `site` and `judged`."""

    __slots__ = ("rule", "category", "severity", "message", "location", "obj", "help", "fix", "suppressed_by",
                 "no_fix", "site", "judged")
    _unshown = ("site", "judged")

    def __init__(self, rule: str, category: str, severity: Severity, message: str, location: Location,
                 obj: ObjectRef | None = None, help: str | None = None, fix: Fix | None = None,
                 suppressed_by: str | None = None, no_fix: str | None = None, site: "Site | None" = None,
                 judged: object = None) -> None:
        self.rule = rule
        self.category = category
        self.severity = severity
        # what a rule quoted from the input is the tenant's: bounded once, here, for every report
        self.message = bounded(message)
        self.location = location
        self.obj = ObjectRef() if obj is None else obj
        self.help = None if help is None else bounded(help)
        self.fix = fix
        self.suppressed_by = suppressed_by
        self.no_fix = no_fix  # why the rule offers no fix here, where it has one for others (core.fixes.NoFix)
        #: where in its object the rule pointed, so that the finding can be placed again on another
        #: text of the same data (draguard fix judges its rounds in memory, and writes the text once)
        self.site = site
        #: the object whose judging found it (a model.manifest.Manifest, whose `source` is the text
        #: it was judged on; None for a run's own notes): a finding may be placed on another object
        #: (rollout-pdb reports a workload's budget on the budget), and draguard fix judges again
        #: by the file judged
        self.judged = judged

    def _fields(self) -> tuple[object, ...]:
        return (self.rule, self.category, self.severity, self.message, self.location, self.obj, self.help, self.fix,
                self.suppressed_by, self.no_fix)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickled (sent to another process: lint --jobs) without the object it was judged
        on, which stays with the process that judged it; its location and site as tuples of
        their fields, its severity as a number: each pickled by a call of its own, 3,000
        findings took 0.021-0.026 s to pickle and 0.015-0.019 s to read back (now 0.013-0.018 s
        and 0.009-0.012 s)."""
        site = self.site
        return _unpickled, (self.rule, self.category, int(self.severity), self.message,
                            _location_fields(self.location), self.obj, self.help, self.fix, self.suppressed_by,
                            self.no_fix, None if site is None else tuple(site))

    # the file position, flat: every text report reads these
    @property
    def file(self) -> str:
        return self.location.file

    @property
    def line(self) -> int:
        return self.location.line or 1

    @property
    def column(self) -> int:
        return self.location.column or 1

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.rule, self.message)

    def as_json(self) -> dict[str, object]:
        return {**self.json_fields(), "object": self.obj.as_json(), "fix": self.fix.as_json() if self.fix else None}

    def json_fields(self) -> dict[str, object]:
        """`as_json` up to its object and fix, each a leaf (a string, a number or null): the
        JSON report encodes these by one call, and places the object's and the fix's texts
        after them, each encoded once for all the findings whose object or fix is the same
        (report.json_report)."""
        location = self.location
        return {
            "rule": self.rule,
            "category": self.category,
            "severity": _SEVERITY_TEXTS[self.severity],
            "message": self.message,
            "help": self.help,
            "file": location.file,
            "line": location.line,
            "column": location.column,
            "document": location.document,
            "path": location.dotted,
        }


#: what a finding is pickled as (Finding.__reduce__): every field but the object judged
_PICKLED = ("rule", "category", "severity", "message", "location", "obj", "help", "fix", "suppressed_by", "no_fix",
            "site")
if tuple(name for name in Finding.__slots__ if name != "judged") != _PICKLED:  # a field added is sent too
    raise AssertionError("Finding.__reduce__ and _unpickled name every field of a Finding but `judged`")
_location_fields = attrgetter(*Location.__slots__)
_SEVERITIES = {int(severity): severity for severity in Severity}
#: each severity's text (str(severity)), looked up rather than read through the enum's name once a finding
_SEVERITY_TEXTS = {severity: str(severity) for severity in Severity}


def _unpickled(rule: str, category: str, severity: int, message: str, location: tuple[Any, ...], obj: ObjectRef,
               help: str | None, fix: Fix | None, suppressed_by: str | None, no_fix: str | None,
               site: tuple[Any, ...] | None) -> Finding:
    """A finding as Finding.__reduce__ pickled it."""
    finding = Finding.__new__(Finding)
    finding.rule, finding.category, finding.severity, finding.message = rule, category, _SEVERITIES[severity], message
    finding.location, finding.obj, finding.help, finding.fix = Location(*location), obj, help, fix
    finding.suppressed_by, finding.no_fix = suppressed_by, no_fix
    finding.site, finding.judged = None if site is None else Site(*site), None
    return finding


class Problem(Value):
    """Something found before any rule runs (reading, parsing, configuration): the engine
    turns it into a finding of the input rule `rule`."""

    __slots__ = ("rule", "message", "location")

    def __init__(self, rule: str, message: str, location: Location):
        self.rule = rule
        self.message = message
        self.location = location
