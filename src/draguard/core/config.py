"""What a run is configured with: `.draguard.yaml` and the command line, as plain data.

Reading and validating the file against the rule catalog is the engine's job
(`engine.config_file`); rules only read these values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from .finding import Problem, Severity
from .value import Record, replace
from .versions import DEFAULT_KUBE_VERSION

EXTERNAL_KINDS = ("resourceClaims", "resourceClaimTemplates", "deviceClasses")


class Defaulted(Protocol):
    """An option as the config reads it (rules.base.Option)."""

    @property
    def default(self) -> object: ...


class Configurable(Protocol):
    """A rule as the config reads it (rules.base.Rule, which this layer cannot import)."""

    @property
    def id(self) -> str: ...

    @property
    def options(self) -> Mapping[str, Defaulted]: ...


class RuleSettings(Record):
    """One rule's settings from a config file: on or off, its severity, its options."""

    __slots__ = ("enabled", "severity", "options")

    def __init__(self, enabled: bool = True, severity: Severity | None = None,
                 options: dict[str, object] | None = None):
        self.enabled = enabled
        self.severity = severity
        #: option -> value, checked by Option.coerce
        self.options: dict[str, object] = {} if options is None else options


class Config(Record):
    """A run's configuration: the target release, gates, thresholds and each rule's settings."""

    __slots__ = ("path", "kube_version", "kube_version_from", "fail_on", "rules", "external", "admin_namespaces",
                 "inventory", "feature_gates", "problems", "daemonsets_are_node_agents", "checks", "profile", "select",
                 "extend_select", "ignore", "preview", "selection_off")

    def __init__(self, path: str | None = None, kube_version: str = DEFAULT_KUBE_VERSION,
                 kube_version_from: str | None = None, fail_on: Severity = Severity.ERROR,
                 rules: dict[str, RuleSettings] | None = None, external: dict[str, set[str]] | None = None,
                 admin_namespaces: set[str] | None = None, inventory: list[str] | None = None,
                 feature_gates: dict[str, bool] | None = None, problems: list[Problem] | None = None,
                 daemonsets_are_node_agents: bool = True, checks: list[Any] | None = None,
                 profile: str = "recommended", select: tuple[str, ...] | None = None,
                 extend_select: tuple[str, ...] = (), ignore: tuple[str, ...] = (), preview: bool = False,
                 selection_off: frozenset[str] = frozenset()) -> None:
        self.path = path
        self.kube_version = kube_version
        #: who chose `kube_version` ("--kube-version", or the config file's path); None: nobody, it
        #: is the default, which `fix` says since its output (the API versions it writes) depends on it
        self.kube_version_from = kube_version_from
        self.fail_on = fail_on
        self.rules: dict[str, RuleSettings] = {} if rules is None else rules
        self.external: dict[str, set[str]] = {k: set() for k in EXTERNAL_KINDS} if external is None else external
        self.admin_namespaces: set[str] = set() if admin_namespaces is None else admin_namespaces
        #: paths of ResourceSlices etc. for satisfiability
        self.inventory: list[str] = [] if inventory is None else inventory
        #: gate -> enabled, where the cluster differs from defaults
        self.feature_gates: dict[str, bool] = {} if feature_gates is None else feature_gates
        self.problems: list[Problem] = [] if problems is None else problems  # unknown rule ids in the file
        #: whether DaemonSets are the platform's node agents (GPU drivers, device plugins), which
        #: need the host's devices: lint's view of a repository. Admission says False: the
        #: platform's node agents run in the namespaces its install exempts, so a DaemonSet in a
        #: namespace admission judges is a tenant's, and the tenant rules judge it as any workload.
        self.daemonsets_are_node_agents = daemonsets_are_node_agents
        #: the file's own checks (rules.custom.UserCheck), judged as rules. Any: they are rules.base.Rule
        #: objects, which this layer cannot name, and the rules' catalog takes them as such
        self.checks: list[Any] = [] if checks is None else checks
        #: the rule selection (rules.selection) as configured: a profile, select (None: the
        #: profile's rules), extendSelect, ignore, preview ...
        self.profile = profile
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore
        self.preview = preview
        #: ... and the rules it leaves out, decided by engine.config_file.apply_selection. A
        #: Config made in code leaves out none: every rule runs
        self.selection_off = selection_off

    def settings(self, rule_id: str) -> RuleSettings:
        """The rule's settings: its own entry under `rules:` wins (naming a rule there turns it
        on unless it says off); else off where the selection leaves it out."""
        explicit = self.rules.get(rule_id)
        if explicit is not None:
            return explicit
        return _OFF if rule_id in self.selection_off else _DEFAULT_SETTINGS

    def severity(self, rule_id: str, default: Severity, chosen: Severity | None = None) -> Severity:
        """The one place a finding's severity is decided (the run's, the exported policies',
        the exporter's metrics): the rule's own choice for this finding (`chosen`; else the
        rule's `default`) unless the config sets that rule's severity. A configured severity
        replaces the default; a finding the rule set at a level of its own (a note beside its
        main finding) keeps that level, capped at the configured one: a rule turned down never
        says anything louder than asked, and a rule turned up does not make its notes fail a
        build."""
        configured = self.settings(rule_id).severity
        if chosen is None or chosen == default:
            return default if configured is None else configured
        return chosen if configured is None else min(chosen, configured)

    def rule_option(self, rule: Configurable, name: str) -> Any:
        """The rule's option `name`, as configured else its default. Any: each option has its
        own type (its default's, which Option.coerce held the configured value to)."""
        configured = self.settings(rule.id).options
        return configured[name] if name in configured else rule.options[name].default

    def without(self, rule_ids: Iterable[str]) -> "Config":
        """A copy with these rules switched off (the rest of the settings shared)."""
        off = list(rule_ids)
        if not off:
            return self
        rules = dict(self.rules)
        rules.update((rule_id, RuleSettings(enabled=False)) for rule_id in off)
        return replace(self, rules=rules)

    def is_external(self, what: str, name: str, namespace: str = "") -> bool:
        names = self.external.get(what, set())
        return "*" in names or name in names or f"{namespace}/{name}" in names


_DEFAULT_SETTINGS = RuleSettings()
_OFF = RuleSettings(enabled=False)
