"""Hooks run just before a trip is raised out of a span's start: for frameworks that leave their own spans open, and
their context attached, when a ``BaseException`` passes through them.

:class:`~spanbreaker.Tripped` is a ``BaseException`` so that no framework's ``except Exception`` swallows it. A few
wrappers clean up only on ``Exception`` (the Traceloop SDK's synchronous decorators end their span and detach their
context in an ``except Exception`` clause): a trip raised inside them would leave their spans unexported and, worse,
their context attached to the thread, so the thread's next, unrelated run would start inside the tripped trace and be
blocked at once. Their adapters register a hook here; the processor calls every hook with the exception it is about
to raise (after marking and ending the blocked span), on the thread that raises it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

logger = logging.getLogger("spanbreaker")

Hook = Callable[[BaseException], None]
_hooks: tuple[Hook, ...] = ()
_lock = threading.Lock()


def register(hook: Hook) -> None:
    """Call ``hook(exception)`` before each trip is raised (once per hook, however often registered)."""
    global _hooks
    with _lock:
        if hook not in _hooks:
            _hooks = (*_hooks, hook)


def unregister(hook: Hook) -> None:
    global _hooks
    with _lock:
        _hooks = tuple(registered for registered in _hooks if registered != hook)


def before_raise(exception: BaseException) -> None:
    """Run the hooks; one that fails is logged and the others still run (the trip is raised either way)."""
    for hook in _hooks:
        try:
            hook(exception)
        except Exception:
            logger.warning("spanbreaker: an unwinding hook failed", exc_info=True)
