"""CEL pieces that several rules' admission conditions share (rules.base.Admission)."""

from __future__ import annotations

#: CEL for the containers, init containers and ephemeral containers of one pod spec `s`.
SPEC_CONTAINERS = ("((has(s.containers) ? s.containers : []) + (has(s.initContainers) ? s.initContainers : []) + "
                   "(has(s.ephemeralContainers) ? s.ephemeralContainers : []))")
