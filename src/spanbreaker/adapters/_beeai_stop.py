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

A steer (``response="steer"``) is an ordinary exception raised the same way, at a tool run's start event, where
BeeAI wraps it in an ``EmitterError`` (its cause a group holding the steer) before the tool's own error
handling runs. The agents turn only a ``ToolError`` into a tool result for the model, so the steer is raised
as :class:`BeeSteered` (a ``ToolError`` and a :class:`~spanbreaker.Steered`) and unwrapped
at the tool run's boundary, where the agent's ``except ToolError`` meets it.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from ..errors import Steered, Tripped, register_steer_exception
from .base import PatchLog

_patches = PatchLog()


def only_trip(group: BaseException) -> Tripped | None:
    """The first trip in ``group`` when every leaf is a trip or a cancellation, else None."""
    found: Tripped | None = None
    stack: list[BaseException] = [group]
    while stack:
        error = stack.pop()
        if isinstance(error, BaseExceptionGroup):
            stack.extend(reversed(error.exceptions))
        elif isinstance(error, Tripped):
            found = found or error
        elif not isinstance(error, asyncio.CancelledError):
            return None
    return found


def only_steer(error: BaseException) -> Steered | None:
    """The steer inside an emitter error (its causes and groups), else None."""
    stack: list[BaseException] = [error]
    seen = 0
    while stack and seen < 32:
        current = stack.pop()
        seen += 1
        if isinstance(current, Steered):
            return current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(reversed(current.exceptions))
        elif current.__cause__ is not None:
            stack.append(current.__cause__)
        elif isinstance(cause := getattr(current, "cause", None), BaseException):  # FrameworkError's own
            stack.append(cause)
    return None


def make_steer_exception() -> type[Steered]:
    from beeai_framework.tools.errors import ToolError

    class BeeSteered(Steered, ToolError):
        """A steer on a BeeAI tool run: the agent's ``except ToolError`` hands its message to the model."""

        def __init__(self, detector: str, reason: str, trace_id: str, evidence: Any = None) -> None:
            # Also ToolError's, via super(). It stays "retryable": ReActAgent re-raises a non-retryable tool
            # error out of the run instead of showing it to the model. Nothing retries it: the tool's own
            # retry_options loop starts after the start event that raised it.
            Steered.__init__(self, detector, reason, trace_id, evidence)

    BeeSteered.__module__ = __name__
    BeeSteered.__qualname__ = "BeeSteered"
    return BeeSteered


def install(scope: str | None = None) -> None:
    """Wrap ``Run._run_tasks`` (idempotent)."""
    from beeai_framework.context import Run

    if scope is not None:
        register_steer_exception(scope, make_steer_exception())
    if _patches:
        return
    original = Run._run_tasks

    @functools.wraps(original)
    async def _run_tasks(self: Any) -> Any:
        try:
            return await original(self)
        except BaseExceptionGroup as group:
            trip = only_trip(group)
            if trip is None:
                steer = only_steer(group)
                if steer is None:
                    raise
                raise steer from None
            raise trip from None
        except Exception as error:
            steer = only_steer(error)
            if steer is None:
                raise
            raise steer from None

    _patches.patch(Run, "_run_tasks", _run_tasks)


def uninstall() -> None:
    _patches.undo()
