"""Small immutable records written by hand: compared, hashed, shown and pickled by their
fields, as a frozen dataclass is.

Why not `@dataclass(frozen=True)`: a dataclass writes the source of its `__init__`, `__eq__`,
`__repr__`, `__hash__`, `__setattr__` and `__delattr__` and compiles it at every start, about
0.7 ms a class: the ~60 a one-file lint made were a fifth of its start. A record here names its
fields in `__slots__` and assigns them in its own `__init__`; this base gives the rest, once.
What a frozen dataclass also gives and these do not: `dataclasses.replace`, `fields` and
`asdict` (a class converted here is one nothing calls them on), and refusing assignment
(nothing assigns to a record's fields after its `__init__`)."""

from __future__ import annotations

from typing import Any


class Value:
    """A record whose identity is its fields (`__slots__`, in order): equal when of the same
    class with equal fields, hashed and shown by them, pickled (for `--jobs` workers) as its
    class called with them."""

    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # the same class

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({shown})"

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return self.__class__, self._fields()
