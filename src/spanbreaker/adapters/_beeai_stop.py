"""The stop path through BeeAI: hand the caller ``spanbreaker.Tripped`` itself, not an exception group.

The trip is raised inside a blocking emitter listener, and BeeAI's ``Emitter._invoke`` runs listeners as tasks
of an ``asyncio.TaskGroup``. A TaskGroup passes only ``SystemExit`` and ``KeyboardInterrupt`` through bare;
any other ``BaseException`` leaves it wrapped in a ``BaseExceptionGroup`` (once per emitter level), which
``except spanbreaker.Tripped`` does not catch. BeeAI's own ``except Exception`` clauses let the group through
(it is not an ``Exception``), so nothing retries it or feeds it to the model; it only needs unwrapping.

Every BeeAI ``run()`` returns a ``beeai_framework.context.Run`` whose ``_run_tasks`` coroutine is what the
caller awaits. Wrapping that one method unwraps the group at each run boundary: a nested agent's run, a tool
run, the caller's ``await agent.run(...)``. Groups holding anything but trips and cancellations are left
untouched.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
from typing import Any

from ..errors import Tripped
from .base import PatchLog

_patches = PatchLog()
_GROUP: Any = getattr(builtins, "BaseExceptionGroup", ())
"""``BaseExceptionGroup`` (Python >= 3.11, which BeeAI requires); spanbreaker itself still imports on 3.10."""


def only_trip(group: BaseException) -> Tripped | None:
    """The first trip in ``group`` when every leaf is a trip or a cancellation, else None."""
    found: Tripped | None = None
    stack: list[BaseException] = [group]
    while stack:
        error = stack.pop()
        if isinstance(error, _GROUP):
            stack.extend(reversed(error.exceptions))
        elif isinstance(error, Tripped):
            found = found or error
        elif not isinstance(error, asyncio.CancelledError):
            return None
    return found


def install() -> None:
    """Wrap ``Run._run_tasks`` (idempotent)."""
    from beeai_framework.context import Run

    if _patches:
        return
    original = Run._run_tasks

    @functools.wraps(original)
    async def _run_tasks(self: Any) -> Any:
        try:
            return await original(self)
        except _GROUP as group:
            trip = only_trip(group)
            if trip is None:
                raise
            raise trip from None

    _patches.patch(Run, "_run_tasks", _run_tasks)


def uninstall() -> None:
    _patches.undo()
