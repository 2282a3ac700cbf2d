"""A computed-once attribute for read-only views.

`functools.cached_property` takes a lock on every first access up to Python 3.11, which cost
more than the views it cached (the model builds hundreds of thousands of them on a large
run). Views here are built and read by one thread, so the value is simply stored in the
instance's `__dict__`, where later reads find it without calling this descriptor again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

_View = TypeVar("_View")
_Value = TypeVar("_Value")


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
