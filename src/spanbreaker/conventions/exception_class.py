"""Which words of an error may be taken as its exception class: only names that really are exception classes.

An error's class reaches the trip reason, the trip event's evidence, ``Tripped``, warnings and the shared state.
Its message and a span's status description are free text: they carry tool arguments, looked-up keys, the
model's code (``Code execution failed at line 'print(d["missing"])'``). So no word of that text is trusted for
its shape alone: ``KeyError: 'ProjectApolloError'`` names a key, not a class, and ``"<customer>: lookup failed"``
starts with data.

A class name is accepted when it is

* the structured ``exception.type`` field (written by ``Span.record_exception`` from the real type), checked
  to be a dotted Python identifier path of bounded length; its last part is the class, or
* a word of the free text that is the ``__name__`` of an exception class this process really has: the
  builtins (``KeyError``), the wrappers and parse/validation errors the conventions name, the configured
  format errors, and every ``BaseException`` subclass loaded in the process (``AgentExecutionError``,
  ``HTTPError``, the app's own ``QuotaExceeded``). A class the process has is code, not data, whatever the
  text around it says.

Not imported by name from text: importing what text names would run code the text chose. A class the process
does not have (replaying a foreign trace with its own exception classes) is not found in the text, and the
wrapper's own class from ``exception.type`` stands: the loop is still seen, only which root is lost.

The loaded classes are walked once and again only when a word is not found (a class defined since); words
found absent are remembered (bounded), so a loop of failures naming the same data walks once.
"""

from __future__ import annotations

import builtins
import re
import threading
from collections.abc import Iterable

MAX_NAME = 128
"""Longest class name kept (Python allows more; no real exception class is near it)."""
_TYPE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
"""A dotted Python path (``smolagents.utils.AgentExecutionError``, ``KeyError``): ASCII identifiers only."""
_MAX_PATH = 512
_MISSES_KEPT = 4096

_BUILTIN = frozenset(name for name, value in vars(builtins).items()
                     if isinstance(value, type) and issubclass(value, BaseException))

_lock = threading.Lock()
_loaded: frozenset[str] = frozenset()
_loaded_count = -1
_misses: set[str] = set()


def from_type_field(value: str) -> str | None:
    """The class named by a structured ``exception.type``: its last dotted part, or None when it is no path."""
    if len(value) > _MAX_PATH or _TYPE_PATH.fullmatch(value) is None:
        return None
    name = value.rsplit(".", 1)[-1]
    return name if len(name) <= MAX_NAME else None


def is_exception_class(name: str, extra: Iterable[str] = ()) -> bool:
    """``name`` is the name of an exception class: a builtin, one of ``extra``, or one loaded in this process."""
    if not name or len(name) > MAX_NAME or not name.isidentifier():
        return False
    if name in _BUILTIN or name in _loaded or name in extra:
        return True
    if name in _misses:
        return False
    _walk()
    if name in _loaded:
        return True
    with _lock:
        if len(_misses) >= _MISSES_KEPT:
            _misses.clear()
        _misses.add(name)
    return False


def _walk() -> None:
    """Names of every exception class alive in the process (``__subclasses__`` from ``BaseException``)."""
    global _loaded, _loaded_count
    names: set[str] = set()
    seen: set[type] = set()
    stack: list[type] = [BaseException]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        name = getattr(cls, "__name__", None)
        if isinstance(name, str):
            names.add(name)
        try:
            stack.extend(type.__subclasses__(cls))
        except TypeError:
            continue
    with _lock:
        if len(seen) != _loaded_count:  # something new: names once absent may be classes now
            _misses.clear()
        _loaded, _loaded_count = frozenset(names), len(seen)
