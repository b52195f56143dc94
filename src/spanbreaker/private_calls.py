"""Tool calls (agent runs, prompts) an adapter shows the breaker without putting them on spans.

Frameworks that trace themselves with the OpenTelemetry GenAI conventions keep a tool call's arguments and result
off their spans unless the application opts in to exporting content (Microsoft Agent Framework's sensitive data,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``). Their defaults are right for what leaves the process, but
then every call is unknown to the breaker and no loop is caught. An adapter can instead hand the breaker the call
in process: it opens :func:`showing` around the framework's tool invocation (the span starts and ends inside it)
and sets :attr:`PrivateCall.result` when the tool returns, before the span ends. The engine reads them only for a
tool span that carries no arguments (no result) of its own, and only for the tool of the same name. They never reach
a span or an exporter; what leaves the process of them is what leaves of any call, a trip's evidence naming the
repeated call by its fingerprint (a 64-bit digest of its name and arguments).

OpenInference instrumentors hide a call's values when the application asks them to (``hide_inputs`` /
``hide_outputs``, ``OPENINFERENCE_HIDE_*``): the span then carries ``__REDACTED__`` under the same keys, and
:mod:`spanbreaker.adapters.openinference` shows the values as they were before masking, under those keys
(:attr:`PrivateCall.arguments_key`, :attr:`PrivateCall.result_key`): the breaker reads them as it would have read
the span without the setting. It shows an agent run's task and answer the same way (the engine reads them for an
agent span of the same name), and a model call's prompt (:attr:`PrivateCall.prompt`).

A context variable carries them: each asyncio task and each thread started with a copy of the context (as
``asyncio.to_thread`` does) sees its own call; a nested call (an agent called as a tool) sees its own, and the
outer one's again once it returns.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .conventions import genai


@dataclass(slots=True)
class PrivateCall:
    name: str
    """The tool's name as the breaker reads it from its span (``gen_ai.tool.name``, ``tool.name``); an agent's, for an
    agent run; empty for a model call's prompt."""
    arguments: str | None
    """The arguments as text (JSON), compared as the span's arguments would be; None while not known."""
    result: str | None = None
    """What the tool returned, as text, once it has; None until then."""
    arguments_key: str = genai.TOOL_ARGUMENTS
    result_key: str = genai.TOOL_RESULT
    """The span attributes the values stand for: the engine reads them as if the span carried them there."""
    prompt: Mapping[str, Any] | None = None
    """A model call's start attributes as the instrumentor gave them, before masking: its prompt, read where the span
    carries none (a loop around a model client is known only from its prompts)."""

    def on(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        """``attributes`` with what this call shows in place of the span's own values under its keys."""
        shown = dict(attributes)
        if self.arguments is not None:
            shown[self.arguments_key] = self.arguments
        if self.result is not None:
            shown[self.result_key] = self.result
        return shown


_current: contextvars.ContextVar[PrivateCall | None] = contextvars.ContextVar("spanbreaker_private_call",
                                                                                default=None)
current = _current.get
"""The call shown in this context, or None (the engine's read: one context-variable lookup)."""


@contextmanager
def showing(name: str, arguments: str) -> Iterator[PrivateCall]:
    """Show the breaker the call of ``name`` with ``arguments`` while the block runs (the tool's span starts and
    ends inside it); set ``.result`` on what this yields when the tool returns."""
    call = PrivateCall(name, arguments)
    with shown(call):
        yield call


class shown:
    """Show the breaker ``call`` while the block runs. A class rather than a generator: OpenInference's hidden values
    (:mod:`spanbreaker.adapters.openinference`) show one around every span start and end."""

    __slots__ = ("_call", "_token")

    def __init__(self, call: PrivateCall) -> None:
        self._call = call

    def __enter__(self) -> None:
        self._token = _current.set(self._call)

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)


V = TypeVar("V")

MAX_OPEN_CALLS = 4096
"""Calls an :class:`OpenCalls` keeps between their start and end (one whose end never comes is dropped oldest first)."""


class OpenCalls(Generic[V]):
    """Tool calls whose span is open, by the framework's own id for the call (a LangChain run id, a LlamaIndex span
    id): what the end of the call shows with its result, for adapters whose start and end are separate callbacks."""

    def __init__(self) -> None:
        self._calls: OrderedDict[Any, V] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, key: Any, call: V) -> None:
        with self._lock:
            self._calls[key] = call
            if len(self._calls) > MAX_OPEN_CALLS:
                self._calls.popitem(last=False)

    def peek(self, key: Any) -> V | None:
        """What :meth:`keep` kept under ``key``, left kept."""
        with self._lock:
            return self._calls.get(key)

    def take(self, key: Any) -> V | None:
        with self._lock:
            return self._calls.pop(key, None)
