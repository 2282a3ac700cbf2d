"""`.draguard.yaml`: found upward from the first input, read with positions, and validated
against the rule catalog (rule ids, their options and severities). Errors say
file:line:column and stop the run (exit status 2); unknown rule ids are findings.

    kubeVersion: "1.33"
    failOn: warning
    rules:
      env-device-visibility: off              # shorthand: off / on / error / warning / info
      teardown-grace-period: {severity: warning, minGraceSeconds: 90}
    profile: strict                          # recommended (the default) or strict
    select: [teardown, rollout-surge]        # rule ids, categories or `all`: replaces the profile's rules
    extendSelect: [shm-size-limit]           # added to them
    ignore: [env-device-visibility]          # taken from them
    preview: true                            # run preview rules too
    external:
      resourceClaims: [team-a/shared-gpu]    # namespace/name, or a bare name for any namespace
      resourceClaimTemplates: []
      deviceClasses: [gpu.acme.com]
    adminNamespaces: [gpu-ops]
    daemonSets: tenants                      # judged as any workload, as admission does (default: nodeAgents)
    inventory: [inventory/slices.yaml]       # for request-unsatisfiable (default: built-in GPU inventory)
    featureGates: {DRAConsumableCapacity: true}   # where the cluster's gates differ from the release defaults
    checks: [...]                            # your own CEL checks (engine.user_checks, docs/custom-checks.md)
"""

from __future__ import annotations

import os
import re
from typing import NoReturn

from ..core.config import EXTERNAL_KINDS, Config, RuleSettings
from ..core.errors import ConfigError
from ..core.finding import Problem, Severity
from ..core.location import Location
from ..core.versions import check_kube_version
from ..facts.gates import known_gates
from ..rules.base import Profile
from ..rules.custom import rule_named
from ..rules.selection import Selection
from ..sources.yamlpos import DocumentError, YMap, mark_of, read_document

CONFIG_NAMES = (".draguard.yaml", ".draguard.yml")
_TOP_KEYS = {"kubeVersion", "failOn", "rules", "external", "adminNamespaces", "daemonSets", "inventory",
             "featureGates", "checks", "profile", "select", "extendSelect", "ignore", "preview"}
#: `daemonSets`: what the repository's DaemonSets are (core.config.Config.daemonsets_are_node_agents)
_DAEMONSETS = {"nodeAgents": True, "tenants": False}
_SELECTION_KEYS = {"select": "select", "extendSelect": "extend_select", "ignore": "ignore"}
_SWITCHES = {"off": False, "on": True, "false": False, "true": True}


def find_config(inputs: list[str], top: str | None = None) -> str | None:
    """The nearest `.draguard.yaml` above the first input (the working folder for stdin), in
    `top` at the highest when given (the MCP server's workspace root)."""
    start = next((p for p in inputs if p != "-"), os.getcwd())
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory or directory == top:
            return None
        directory = parent


def load_config(path: str | None) -> Config:
    """The config in `path` (none: the defaults), with its rule selection applied."""
    config = Config(path=path)
    if path is not None:
        try:
            data = read_document(path)
        except DocumentError as exc:
            raise ConfigError(str(exc)) from None
        if data is not None:
            _Reader(path, config).read(data)
    apply_selection(config)
    return config


def apply_selection(config: Config) -> None:
    """Decide which rules `config`'s profile and selectors leave out (rules.selection);
    ValueError, saying which selector, where one names nothing or a rule that cannot run."""
    selection = Selection(Profile(config.profile), config.select, tuple(config.extend_select), tuple(config.ignore),
                          config.preview, tuple(config.checks))
    config.selection_off = selection.left_out()


class _Reader:
    def __init__(self, path: str, config: Config):
        self.path = path
        self.config = config

    def fail(self, container, key, message: str, *, value: bool = False) -> NoReturn:
        line, column = mark_of(container, key, value=value) or (1, 1)
        raise ConfigError(f"{self.path}:{line}:{column}: {message}")

    def read(self, data) -> None:
        if not isinstance(data, YMap):
            self.fail(data, None, "config must be a mapping")
        for key in data:
            if key not in _TOP_KEYS:
                self.fail(data, key, f"unknown setting '{key}' (expected one of {', '.join(sorted(_TOP_KEYS))})")
        if "kubeVersion" in data:
            try:
                self.config.kube_version = check_kube_version(self._as_written(data, "kubeVersion"))
                self.config.kube_version_from = self.path
            except ValueError as exc:
                self.fail(data, "kubeVersion", str(exc), value=True)
        if "failOn" in data:
            try:
                self.config.fail_on = Severity.parse(str(data["failOn"]))
            except ValueError as exc:
                self.fail(data, "failOn", str(exc), value=True)
        self._external(data)
        if "adminNamespaces" in data:
            self.config.admin_namespaces = set(self._names(data, "adminNamespaces"))
        if "daemonSets" in data:
            if data["daemonSets"] not in _DAEMONSETS:
                self.fail(data, "daemonSets", f"'daemonSets' must be one of {', '.join(_DAEMONSETS)}", value=True)
            self.config.daemonsets_are_node_agents = _DAEMONSETS[data["daemonSets"]]
        if "inventory" in data:  # relative to the config file
            base = os.path.dirname(os.path.abspath(self.path))
            self.config.inventory = [os.path.join(base, p) for p in self._names(data, "inventory")]
        if "featureGates" in data:
            self._feature_gates(data)
        if "checks" in data:
            from .user_checks import read_checks  # a config with checks of its own only

            self.config.checks = read_checks(data["checks"], data, "checks", self.path, self.fail)
        self._selection(data)
        rules = data.get("rules")
        if rules is not None and not isinstance(rules, dict):
            self.fail(data, "rules", "'rules' must be a mapping of rule id to settings")
        for rule_id in rules or {}:
            self._rule(rules, rule_id)

    def _selection(self, data) -> None:
        if "profile" in data:
            if data["profile"] not in {str(p) for p in Profile}:
                self.fail(data, "profile", f"profile must be one of {', '.join(str(p) for p in Profile)}", value=True)
            self.config.profile = data["profile"]
        if "preview" in data:
            if not isinstance(data["preview"], bool):
                self.fail(data, "preview", "'preview' must be true or false", value=True)
            self.config.preview = data["preview"]
        for key, attribute in _SELECTION_KEYS.items():
            if key in data:
                setattr(self.config, attribute, tuple(self._names(data, key)))
        try:
            apply_selection(self.config)
        except ValueError as exc:  # at the selector that names nothing, or a rule that cannot run
            key, at = next(((k, i) for k in _SELECTION_KEYS if k in data for i, v in enumerate(data[k])
                            if str(exc).startswith((f"'{v}'", f"rule {v} "))), ("select", None))
            self.fail(data[key] if at is not None else data, at if at is not None else key, str(exc),
                      value=at is not None)

    def _as_written(self, container, key):
        """A number as its text in the file: YAML reads an unquoted `1.30` as the float 1.3."""
        value = container[key]
        mark = mark_of(container, key, value=True)
        if not isinstance(value, float) or mark is None:
            return value
        with open(self.path, encoding="utf-8") as handle:
            line = handle.read().splitlines()[mark[0] - 1]
        token = re.match(r"[^\s,#}\]]+", line[mark[1] - 1:])
        return token.group(0) if token else value

    def _names(self, container, key) -> list[str]:
        value = container[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(container, key, f"'{key}' must be a list of names")
        return value

    def _feature_gates(self, data) -> None:
        gates = data["featureGates"]
        if not isinstance(gates, dict):
            self.fail(data, "featureGates", "'featureGates' must map gate names to true or false")
        for name, enabled in gates.items():
            if name not in known_gates():
                self.fail(gates, name, f"unknown feature gate '{name}' (known: {', '.join(sorted(known_gates()))})")
            if not isinstance(enabled, bool):
                self.fail(gates, name, f"feature gate {name} must be true or false", value=True)
            self.config.feature_gates[name] = enabled

    def _external(self, data) -> None:
        external = data.get("external")
        if external is None:
            return
        if not isinstance(external, dict):
            self.fail(data, "external", "'external' must be a mapping")
        for key in external:
            if key not in EXTERNAL_KINDS:
                self.fail(external, key, f"unknown external kind '{key}' (expected {', '.join(sorted(EXTERNAL_KINDS))})")
            self.config.external[key] = set(self._names(external, key))

    def _rule(self, rules, rule_id) -> None:
        rule = rule_named(self.config, rule_id)
        if rule is None:
            line, column = mark_of(rules, rule_id) or (1, 1)
            self.config.problems.append(Problem(
                "unknown-rule", f"config names unknown rule '{rule_id}' (see `draguard rules`)",
                Location(self.path, line, column)))
            return
        value = rules[rule_id]
        settings = self.config.rules.setdefault(rule_id, RuleSettings())
        if isinstance(value, bool):
            settings.enabled = value
        elif isinstance(value, str):
            if value.lower() in _SWITCHES:
                settings.enabled = _SWITCHES[value.lower()]
            else:
                settings.severity = self._severity(rules, rule_id, value)
        elif isinstance(value, dict):
            for key, option in value.items():
                if key == "enabled":
                    if not isinstance(option, bool):
                        self.fail(value, key, "'enabled' must be true or false")
                    settings.enabled = option
                elif key == "severity":
                    settings.severity = self._severity(value, key, option)
                elif key in rule.options:
                    try:
                        settings.options[key] = rule.options[key].coerce(option)
                    except ValueError as exc:
                        self.fail(value, key, f"{rule_id}.{key}: {exc}", value=True)
                else:
                    known = ", ".join(["enabled", "severity", *rule.options]) or "enabled, severity"
                    self.fail(value, key, f"rule {rule_id} has no setting '{key}' (settings: {known})")
        else:
            self.fail(rules, rule_id, f"rule {rule_id}: expected off/on, a severity or a mapping")

    def _severity(self, container, key, value) -> Severity:
        try:
            return Severity.parse(str(value))
        except ValueError as exc:
            self.fail(container, key, str(exc), value=True)
