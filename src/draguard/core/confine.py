"""Reads and writes confined to a few folders, the roots. The MCP server takes paths from
its clients, and a client's path is hostile until shown to lie inside a root: a path is
judged by where it resolves (links followed, `..` folded: os.path.realpath), so a link in a
root that points out of it is outside. The roots hold for the calling context only (a
ContextVar, set around an MCP tool call); the command line reads anywhere."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import InputError
from .value import Value


class Outside(InputError):
    """A path that resolves outside the roots."""


class Roots(Value):
    """The folders (and the server's own temporary files) a server may read: nothing outside them."""

    __slots__ = ("folders", "files")

    def __init__(self, folders: tuple[str, ...], files: tuple[str, ...] = ()):
        self.folders = folders  # resolved
        self.files = files  # the server's own temporary copies of texts, resolved

    @classmethod
    def of(cls, paths: Iterable[str]) -> Roots:
        return cls(tuple(dict.fromkeys(os.path.realpath(p) for p in paths)))

    def holding(self, path: str) -> str | None:
        """The nearest root that `path` resolves inside, else None."""
        real = os.path.realpath(path)
        if real in self.files:
            return real
        return max((r for r in self.folders if os.path.commonpath([real, r]) == r), key=len, default=None)

    def check(self, path: str) -> str:
        """`path` resolved, when it lies inside a root; else Outside, naming it and the roots."""
        if self.holding(path) is None:
            real = os.path.realpath(path)
            resolved = f" (it resolves to {real})" if real != os.path.abspath(path) else ""
            raise Outside(f"{path}{resolved}: outside the workspace ({self.named()}): refused")
        return os.path.realpath(path)

    def named(self) -> str:
        return ", ".join(self.folders) or "no folder"

    def narrowed(self, folders: Iterable[str]) -> Roots:
        """The folders both these roots and `folders` (resolved) hold: a client narrows the
        server's roots, never widens them."""
        return Roots(tuple(dict.fromkeys(
            inner for f in map(os.path.realpath, folders) for r in self.folders
            for inner, outer in ((f, r), (r, f)) if os.path.commonpath([inner, outer]) == outer)))

    def with_file(self, path: str) -> Roots:
        """These roots and the one file `path` (the server's own temporary copy of a text)."""
        return Roots(self.folders, (*self.files, os.path.realpath(path)))


_ACTIVE: ContextVar[Roots | None] = ContextVar("draguard_confined_to", default=None)


def active() -> Roots | None:
    """The roots of this context, None where reads are not confined."""
    return _ACTIVE.get()


def check(path: str) -> None:
    """Outside, where reads are confined and `path` resolves outside the roots."""
    roots = _ACTIVE.get()
    if roots is not None:
        roots.check(path)


@contextmanager
def confined(roots: Roots) -> Iterator[Roots]:
    token = _ACTIVE.set(roots)
    try:
        yield roots
    finally:
        _ACTIVE.reset(token)
