"""Small records written by hand: compared, shown (and, immutable, hashed and pickled) by
their fields, as a dataclass is.

Why not `@dataclass(frozen=True)`: a dataclass writes the source of its `__init__`, `__eq__`,
`__repr__`, `__hash__`, `__setattr__` and `__delattr__` and compiles it at every start, about
0.7 ms a class: the ~60 a one-file lint made were a fifth of its start. A record here names its
fields in `__slots__` and assigns them in its own `__init__`; this base gives the rest, once.
What a frozen dataclass also gives and these do not: `fields` and `asdict` (a class converted
here is one nothing calls them on), and refusing assignment (nothing assigns to a record's
fields after its `__init__`); `replace` below is `dataclasses.replace` for records."""

from __future__ import annotations

from typing import Any, TypeVar

R = TypeVar("R", bound="Record")


class Record:
    """A mutable record, as a (non-frozen) dataclass is: its fields (`__slots__`, in order) set
    in its own `__init__`, equal when of the same class with equal fields, unhashable, shown by
    its fields but those in `_unshown` (a back reference, a recorder)."""

    __slots__: tuple[str, ...] = ()
    _unshown: tuple[str, ...] = ()
    # no __hash__: a class that defines __eq__ alone is unhashable (mutable: never a key)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # the same class

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__ if name not in self._unshown)
        return f"{type(self).__qualname__}({shown})"


class Viewed(Record):
    """A mutable record that also keeps views computed once (core.cached stores them in its
    `__dict__`); its fields are still its `__slots__`, compared and shown as a Record's."""


class Value(Record):
    """A record whose identity is its fields (`__slots__`, in order): equal when of the same
    class with equal fields, hashed and shown by them, pickled (for `--jobs` workers) as its
    class called with them."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return self.__class__, self._fields()


def replace(record: R, **changes: Any) -> R:
    """`record` with some of its fields changed, as `dataclasses.replace` makes a dataclass's:
    its class called with every field by name (a record's `__init__` takes them so); a name
    that is no field is a TypeError."""
    unknown = set(changes) - set(record.__slots__)
    if unknown:
        raise TypeError(f"{type(record).__qualname__} has no field {sorted(unknown)[0]!r}")
    return type(record)(**{name: changes.get(name, getattr(record, name)) for name in record.__slots__})
