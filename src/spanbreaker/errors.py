"""The exceptions spanbreaker raises, and how a trip picks the variant a framework cannot swallow.

A trip has to stop a run from inside the framework's own wrappers. Frameworks differ in what gets through:

* smolagents wraps every ``Exception`` raised by a tool or by agent code into an ``AgentError`` and feeds it
  back to the model, so only a ``BaseException`` stops the run. ``Tripped`` is therefore a
  ``BaseException`` subclass (like ``KeyboardInterrupt``): ordinary ``except Exception`` clauses in the
  framework and in agent-written code do not catch it.
* Agno absorbs every exception into the returned RunOutput and *hangs* ``team.arun`` on a bare
  ``BaseException``; its own ``RunCancelledException`` is the clean stop. Its adapter registers a class
  deriving from both ``RunCancelledException`` and ``Tripped``.

Adapters register the variant for the instrumentation scope whose spans they own, and the processor raises
that variant. ``except spanbreaker.Tripped`` catches every one of them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, TypeVar


class ConfigError(ValueError):
    """A configuration value is invalid. The message names the variable or key and the accepted range."""


class Tripped(BaseException):
    """The circuit breaker of a trace is open: the run was stopped on purpose.

    Attributes:
        detector: the detector id that tripped (``tool_repeat``, ``token_budget``, ...).
        reason: one human-readable sentence.
        trace_id: the trace id as 32 hex digits.
        evidence: figures and span ids (hex) that support the trip; never raw arguments or model text.
        blocked: True when raised because the breaker was already open (a latched re-raise).
    """

    def __init__(
        self,
        detector: str,
        reason: str,
        trace_id: str,
        evidence: Mapping[str, Any] | None = None,
        blocked: bool = False,
    ) -> None:
        super().__init__(f"spanbreaker tripped [{detector}] {reason} (trace {trace_id})")
        self.detector = detector
        self.reason = reason
        self.trace_id = trace_id
        self.evidence: dict[str, Any] = dict(evidence or {})
        self.blocked = blocked

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.detector, self.reason, self.trace_id, self.evidence, self.blocked))


class Steered(Exception):
    """A loop detector's first finding under ``response="steer"``: this tool call was not run.

    Unlike :class:`Tripped` this is an ordinary ``Exception``, on purpose: the framework's own tool-error path
    catches it and hands its message to the model as the call's result, so the agent can change course. The
    message starts with ``spanbreaker:`` and says what was repeated and that repeating it again stops the
    run; it carries no raw arguments or model text (the same redaction as the trip attributes).

    Attributes: ``detector``, ``reason``, ``trace_id``, ``evidence`` as on :class:`Tripped`.
    """

    def __init__(self, detector: str, reason: str, trace_id: str, evidence: Mapping[str, Any] | None = None) -> None:
        super().__init__(steer_message(reason))
        self.detector = detector
        self.reason = reason
        self.trace_id = trace_id
        self.evidence: dict[str, Any] = dict(evidence or {})

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.detector, self.reason, self.trace_id, self.evidence))


def steer_message(reason: str) -> str:
    """What the model reads: the finding (tool, counts; never arguments), the call not run, the consequence."""
    return (f"spanbreaker: {reason}. This call was not run. Repeating it again stops the run: "
            f"change course (different arguments, another tool, or a final answer).")


_E = TypeVar("_E", bound=BaseException)
_variants: dict[str, type[Tripped]] = {}
_steer_variants: dict[str, type[Steered]] = {}
_variants_lock = threading.Lock()


def register_trip_exception(scope_prefix: str, exception_type: type[Tripped]) -> None:
    """Raise ``exception_type`` for trips on spans whose instrumentation scope starts with ``scope_prefix``.

    ``exception_type`` must subclass :class:`Tripped` so that ``except spanbreaker.Tripped`` still works.
    """
    if not (isinstance(exception_type, type) and issubclass(exception_type, Tripped)):
        raise TypeError(f"{exception_type!r} must be a subclass of spanbreaker.Tripped")
    with _variants_lock:
        _variants[scope_prefix] = exception_type


def register_steer_exception(scope_prefix: str, exception_type: type[Steered]) -> None:
    """Raise ``exception_type`` (a :class:`Steered` subclass) for steers on spans of ``scope_prefix``: for a
    framework whose tool-error path needs its own exception type to reach the model."""
    if not (isinstance(exception_type, type) and issubclass(exception_type, Steered)):
        raise TypeError(f"{exception_type!r} must be a subclass of spanbreaker.Steered")
    with _variants_lock:
        _steer_variants[scope_prefix] = exception_type


_no_steer: set[str] = set()


def register_steer_unsupported(scope_prefix: str) -> None:
    """Spans of ``scope_prefix`` cannot carry a steer to the model: the framework swallows an ordinary exception
    raised where the span starts (LangChain's callback manager logs it and runs the tool anyway). A steer there
    is raised as the hard trip instead, so the call still never runs."""
    with _variants_lock:
        _no_steer.add(scope_prefix)


def steer_supported(scope_name: str | None) -> bool:
    """False when the span's instrumentation scope was registered with :func:`register_steer_unsupported`."""
    return not (scope_name and _no_steer and any(scope_name.startswith(prefix) for prefix in _no_steer))


def steer_exception_for(scope_name: str | None) -> type[Steered]:
    """The exception class to raise for a steer on a span of the given instrumentation scope."""
    return _variant(_steer_variants, scope_name, Steered)


def trip_exception_for(scope_name: str | None) -> type[Tripped]:
    """The exception class to raise for a span of the given instrumentation scope (O(variants))."""
    return _variant(_variants, scope_name, Tripped)


def _variant(variants: Mapping[str, type[_E]], scope_name: str | None, default: type[_E]) -> type[_E]:
    """The variant registered for the first prefix of ``scope_name`` (in registration order), else ``default``."""
    if scope_name:
        for prefix, exception_type in variants.items():
            if scope_name.startswith(prefix):
                return exception_type
    return default
