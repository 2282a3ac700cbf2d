"""Values a rule needed and could not read: a count of `.nan`, a selector that is a number, a
grace period past int64. The typed views that read such a value say so here (`unreadable`)
and go on as if it were absent; the run that called the rule then drops that rule's findings
on the object it was judging and reports, at the value's own place, which rules skipped which
object (engine.run). Nothing is skipped silently, and nothing is blamed on another object.

The record is a context variable, not an argument: the views are called from deep inside
rules, and only the run knows which rule on which object asked. Outside a run (the
simulator, the allocator's CLI) nobody listens and the views behave as before."""

from __future__ import annotations

from contextvars import ContextVar

from .excerpt import bounded
from .value import Value


class Unread(Value):
    """`container[key]` could not be read, for the reason `why`; `owner` is the object it is
    in (a Manifest; None: the object being judged)."""

    __slots__ = ("container", "key", "why", "owner")

    def __init__(self, container: object, key: str | int | None, why: str, owner: object = None):
        self.container = container
        self.key = key
        self.why = why
        self.owner = owner


def shown(value: object) -> str:
    """`value` as the note quotes it: YAML's spelling of NaN and the infinities, a bounded
    excerpt of anything else, and what it is."""
    if isinstance(value, float) and value != value:
        return ".nan (not a number)"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f"{'-' if value < 0 else ''}.inf (an infinity)"
    kind = "a map" if isinstance(value, dict) else "a list" if isinstance(value, list) else \
        "a boolean" if isinstance(value, bool) else "a number" if isinstance(value, (int, float)) else \
        "a string" if isinstance(value, str) else "null" if value is None else type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return f"a number of {value.bit_length()} bits (past int64)"  # str() of it may itself fail
    return kind if value is None else f"{bounded(repr(value) if isinstance(value, str) else str(value))} ({kind})"


_listening: ContextVar[list[Unread] | None] = ContextVar("draguard_unread", default=None)


def unreadable(container: object, key: str | int | None, why: str, owner: object = None) -> None:
    """Say that `container[key]` could not be read (`why`: what it is, and what was expected)."""
    heard = _listening.get()
    if heard is not None:
        heard.append(Unread(container, key, why, owner))


def told(records: tuple[Unread, ...] | list[Unread]) -> None:
    """Say again what a cached view met when it was computed (each reader of it skips too)."""
    heard = _listening.get()
    if heard is not None:
        heard.extend(records)


class listening:  # noqa: N801 - used like a function: `with listening() as heard`
    """Collect what is said unreadable inside the block (the list is cleared by its owner).
    A class, not a generator under `contextlib.contextmanager`: every view a run derives
    listens (Manifest.derive, 100,000 times a lint of 20,000 objects), and the generator's
    machinery cost three times the block's own bookkeeping."""

    __slots__ = ("heard", "token")

    def __enter__(self) -> list[Unread]:
        self.heard: list[Unread] = []
        self.token = _listening.set(self.heard)
        return self.heard

    def __exit__(self, *exc: object) -> None:
        _listening.reset(self.token)
