"""Suppression annotations: `ignore.draguard.io/<rule-id>: "<reason>"` on an object."""

from __future__ import annotations

from ..core.config import Config
from ..core.finding import Finding
from ..model.manifest import Manifest
from ..rules import REGISTRY
from ..rules.custom import rule_named
from .result import engine_finding

SUPPRESS_PREFIX = "ignore.draguard.io/"


def suppressions(manifest: Manifest, config: Config | None = None) -> tuple[dict[str, str], list[Finding]]:
    """(rule id -> reason, unknown-rule findings for ids neither draguard nor the config's
    own checks have; without `config`, the built-in rules only)."""
    found: dict[str, str] = {}
    unknown: list[Finding] = []
    annotations = manifest.annotations
    for key, reason in annotations.items():
        if not isinstance(key, str) or not key.startswith(SUPPRESS_PREFIX):
            continue
        rule_id = key[len(SUPPRESS_PREFIX):]
        if (rule_named(config, rule_id) if config is not None else REGISTRY.get(rule_id)) is not None:
            found[rule_id] = str(reason) if reason is not None else ""
        else:
            unknown.append(engine_finding("unknown-rule", f"suppression names unknown rule '{rule_id}' (see "
                                          "`draguard rules`)", manifest.location(annotations, key), manifest.ref))
    return found, unknown
