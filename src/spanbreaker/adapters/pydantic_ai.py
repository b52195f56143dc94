"""pydantic-ai adapter: its native OpenTelemetry GenAI spans on the breaker's provider.

pydantic-ai instruments itself (``Agent.instrument_all``); no OpenInference instrumentor is involved. Its spans
follow the OpenTelemetry GenAI semantic conventions (``execute_tool``, ``chat``, ``invoke_agent``), read by
:mod:`spanbreaker.conventions.genai`; its deprecated data formats (``version=2``, 3, 4) keep a tool call's
arguments and result under ``tool_arguments`` / ``tool_response``, read as a framework quirk
(:mod:`spanbreaker.conventions.frameworks`). A chat span carries the messages sent only when it ends, so the
size checks on them (session bloat) decide then and veto the next call.

A ``Tripped`` raised by the breaker's ``on_start`` comes out of ``agent.run`` / ``run_sync`` unchanged: pydantic-ai
starts its spans on the caller's task and only catches ``Exception`` around tools (to feed ``ModelRetry`` back to
the model). A steer (``response="steer"``) is raised there as a ``ModelRetry`` too (:func:`steer_exception`):
pydantic-ai's way to tell the model a call failed and why; a plain ``Steered`` would have ended the run. Measured on
pydantic-ai-slim 2.68; pinned by ``tests/pydantic_ai``.

``instrument()`` switches instrumentation on (the class default ``Agent.instrument_all`` sets) for every agent
that has not set its own, through the adapter's :class:`~spanbreaker.adapters.base.PatchLog`, so
``uninstrument()`` puts the previous default back. An application that already called ``Agent.instrument_all``
with its own settings keeps them (its provider, data format and content policy): attach the breaker to that
provider (``spanbreaker.instrument(tracer_provider=...)``).
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

from ..errors import Steered, register_steer_exception
from ._deferred import Deferred
from .base import PatchLog

SCOPE = "pydantic-ai"
"""Instrumentation scope of pydantic-ai's spans."""


def steer_exception() -> type[Steered]:
    """The steer for pydantic-ai's tool spans: a ``ModelRetry`` whose message is the steer's, which pydantic-ai hands
    the model as the call's answer (the tool's own retries count it: past them pydantic-ai ends the run with its
    ``UnexpectedModelBehavior``, as for any tool)."""
    from pydantic_ai import ModelRetry

    class PydanticAISteered(Steered, ModelRetry):
        def __init__(self, detector: str, reason: str, trace_id: str, evidence: Any = None) -> None:
            Steered.__init__(self, detector, reason, trace_id, evidence)
            self.message = str(self)  # what ModelRetry hands the model

    PydanticAISteered.__module__ = __name__
    PydanticAISteered.__qualname__ = "PydanticAISteered"
    return PydanticAISteered


class PydanticAIAdapter:
    name = "pydantic_ai"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._patches = PatchLog()
        self._deferred = Deferred("pydantic_ai")
        self._steer: type[Steered] | None = None

    def available(self) -> bool:
        try:
            return importlib.util.find_spec("pydantic_ai") is not None
        except (ImportError, ValueError):
            return False

    def instrument(self, tracer_provider: Any, processor: Any) -> None:
        """Turn pydantic-ai's own instrumentation on, on ``tracer_provider``, unless the application did: now, or
        when the application imports pydantic-ai (its import takes seconds; see :mod:`._deferred`)."""
        self._deferred.run_or_defer(lambda: self._instrument(tracer_provider))

    def _instrument(self, tracer_provider: Any) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.models.instrumented import InstrumentationSettings

        with self._lock:
            if self._steer is None:
                self._steer = steer_exception()
                register_steer_exception(SCOPE, self._steer)
            if not self._patches and isinstance(Agent._instrument_default, InstrumentationSettings):
                return  # the application's own settings stay
            self._patches.patch(Agent, "_instrument_default", InstrumentationSettings(tracer_provider=tracer_provider))

    def uninstrument(self) -> None:
        self._deferred.cancel()
        with self._lock:
            self._patches.undo()


ADAPTER = PydanticAIAdapter()
