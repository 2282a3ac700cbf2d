"""A computed-once attribute for read-only views, the bounded tables that memos keep, and the
memo of a function of a value read from the input.

`functools.cached_property` takes a lock on every first access up to Python 3.11, which cost
more than the views it cached (the model builds hundreds of thousands of them on a large
run). Views here are built and read by one thread, so the value is simply stored in the
instance's `__dict__`, where later reads find it without calling this descriptor again."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, Generic, TypeVar, overload

_View = TypeVar("_View")
_Value = TypeVar("_Value")


def kept(table: dict[Any, Any], key: Any, value: _Value, limit: int) -> _Value:
    """`value`, stored in `table` under `key`, the table emptied first when it holds `limit`
    entries: a memo whose keys come from the input stays bounded, and what a run reuses comes
    back soon after it is made (emptying costs less than evicting one entry at a time)."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


def by_value(maxsize: int) -> Callable[[Callable[..., _Value]], Callable[..., _Value]]:
    """functools.lru_cache for a function whose first argument is a value read from the input
    and whose answer depends on how that value is written: remembered by the value and its
    type (True, 1 and 1.0 are one key to a dict, written apart), never for a float (0.0 and
    -0.0 are equal and of one type, written apart), and answered without the memo for a value
    no dict can hold (a list where a scalar goes: the function's own answer, not a TypeError)."""
    def remember(function: Callable[..., _Value]) -> Callable[..., _Value]:
        remembered = lru_cache(maxsize=maxsize, typed=True)(function)

        @wraps(function)
        def answer(value: Any, *rest: Any, **named: Any) -> _Value:
            if value.__class__ is str or not (isinstance(value, float) or value.__hash__ is None):
                return remembered(value, *rest, **named)  # strings, most values read, asked first
            return function(value, *rest, **named)

        return answer

    return remember


class cached(Generic[_View, _Value]):  # noqa: N801 - used like `property`
    def __init__(self, compute: Callable[[_View], _Value]) -> None:
        self.compute = compute
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> cached[_View, _Value]: ...

    @overload
    def __get__(self, instance: _View, owner: type[Any] | None = None) -> _Value: ...

    def __get__(self, instance: _View | None, owner: type[Any] | None = None) -> cached[_View, _Value] | _Value:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value
