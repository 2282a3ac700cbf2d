"""The funnel of one request (dra.explain): the devices left after each step, the step that
emptied it, and what could not be judged; as data, and as the JSON the per-user cache keeps
(dra.builtin_funnels), so that reading one back needs neither the allocator nor CEL."""

from __future__ import annotations

from typing import Any

from ..core.value import Record, Value


class Stage(Value):
    """One step of a funnel: what it keeps, and how many devices are left after it."""

    __slots__ = ("label", "count", "selector")

    def __init__(self, label: str, count: int, selector: int | None = None):
        self.label = label
        self.count = count
        self.selector = selector  # index of the request selector this stage applied


class RequestExplanation(Record):
    """A request's funnel: the devices left after each step and why it ends where it does."""

    __slots__ = ("request", "wanted", "stages", "needed", "emptied_at", "errors", "unjudged", "note", "skipped")

    def __init__(self, request: str, wanted: str, stages: list | None = None, needed: int = 1,
                 emptied_at: Stage | None = None, errors: list | None = None, unjudged: list | None = None,
                 note: str = "", skipped: list | None = None):
        self.request = request
        self.wanted = wanted  # "1 device", "all devices"
        self.stages = [] if stages is None else stages
        self.needed = needed  # devices the request takes at least (its count; one for All)
        self.emptied_at = emptied_at
        self.errors = [] if errors is None else errors
        #: what draguard's CEL engine could not evaluate where upstream's would (CelUnsupported):
        #: the funnel after it proves nothing
        self.unjudged = [] if unjudged is None else unjudged
        self.note = note
        self.skipped = [] if skipped is None else skipped  # pools the allocator does not read, and why

    def named(self, request: str) -> RequestExplanation:
        """This funnel for the request named `request`, sharing its stages and notes (a funnel
        is the same for every request of its shape)."""
        return RequestExplanation(request, self.wanted, self.stages, self.needed, self.emptied_at, self.errors,
                                  self.unjudged, self.note, self.skipped)

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
