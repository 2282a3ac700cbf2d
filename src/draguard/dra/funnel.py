"""The funnel of one request (dra.explain): the devices left after each step, the step that
emptied it, and what could not be judged; as data, and as the JSON the per-user cache keeps
(dra.builtin_funnels), so that reading one back needs neither the allocator nor CEL."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.value import Value


class Stage(Value):
    """One step of a funnel: what it keeps, and how many devices are left after it."""

    __slots__ = ("label", "count", "selector")

    def __init__(self, label: str, count: int, selector: int | None = None):
        self.label = label
        self.count = count
        self.selector = selector  # index of the request selector this stage applied


@dataclass
class RequestExplanation:
    """A request's funnel: the devices left after each step and why it ends where it does."""
    request: str
    wanted: str  # "1 device", "all devices"
    stages: list = field(default_factory=list)
    needed: int = 1  # devices the request takes at least (its count; one for All)
    emptied_at: Stage | None = None
    errors: list = field(default_factory=list)
    #: what draguard's CEL engine could not evaluate where upstream's would (CelUnsupported):
    #: the funnel after it proves nothing
    unjudged: list = field(default_factory=list)
    note: str = ""
    skipped: list = field(default_factory=list)  # pools the allocator does not read, and why

    def text(self) -> str:
        funnel = " -> ".join(f"{s.label}: {s.count}" for s in self.stages)
        out = f"request '{self.request}' ({self.wanted}): {funnel}"
        if self.emptied_at is not None:
            out += f"; nothing left after {self.emptied_at.label}"
        if self.note:
            out += f"; {self.note}"
        for said in self.skipped + self.errors + self.unjudged:
            out += f"; {said}"
        return out

    def as_json(self) -> dict[str, Any]:
        """Everything but the request's name (a funnel is the same for every request of its
        shape): `emptied_at` as the index of its stage (always one of them: explain_request)."""
        return {"wanted": self.wanted, "needed": self.needed, "note": self.note,
                "stages": [[s.label, s.count, s.selector] for s in self.stages],
                "emptied_at": next((i for i, s in enumerate(self.stages) if s is self.emptied_at), None),
                "errors": list(self.errors), "unjudged": list(self.unjudged), "skipped": list(self.skipped)}

    @classmethod
    def from_json(cls, request: str, data: dict[str, Any]) -> "RequestExplanation":
        """The funnel `as_json` wrote, for `request`."""
        stages = [Stage(str(label), int(count), None if selector is None else int(selector))
                  for label, count, selector in data["stages"]]
        emptied = data["emptied_at"]
        return cls(request, str(data["wanted"]), stages, int(data["needed"]),
                   None if emptied is None else stages[emptied], [str(e) for e in data["errors"]],
                   [str(u) for u in data["unjudged"]], str(data["note"]), [str(s) for s in data["skipped"]])
