"""A model client's requests shown to the breaker in process, around an instrumentor that records them late or not at
all (OpenTelemetry's openai-v2; OpenLLMetry's OpenAI, Anthropic, Groq, Ollama and Google GenAI instrumentors:
:mod:`.openai_v2`, :mod:`.openllmetry_openai`, :mod:`.openllmetry_anthropic`, :mod:`.openllmetry_clients`).

An agent written as a loop around the client makes no tool span: the breaker knows its tool calls only from each
request's messages (:mod:`spanbreaker.conventions.prompt_calls`), and it decides whether a model call may run when
the call's span starts. An instrumentor whose span carries no messages then (content capture off, or the request set
just after the start) leaves the loop unread, or read only when the call ends, which cannot stop a loop with no span
of the application's around it (each model call a trace of its own: there is no next call in the trace to veto).

Here each chat call's messages are shown to the breaker (:mod:`spanbreaker.private_calls`) while the instrumentor's
span starts and ends, as OpenInference's OpenAI and Anthropic instrumentors record them at start (``input.value``,
the request's messages as JSON): a repeated tool call is seen when the model call that would read its result starts,
and that call is vetoed before it is sent. The spans get exactly what the instrumentor gives them. The messages are
turned into text only if the breaker reads them (a trace with tool spans of its own never does).

How: when the instrumentor instruments, it wraps the client's methods (OpenAI's ``Completions.create`` and
``AsyncCompletions.create``, Anthropic's ``Messages.create``, Ollama's ``Client._request`` ...: :class:`ClientMethod`)
in ``wrapt`` wrappers; the adapter puts in their place wrappers that show the request and call the instrumentor's
wrapper function inside, whichever of the two was instrumented first. The instrumentor's ``uninstrument`` removes
them as it would its own; the adapter's puts the instrumentor's own wrappers back. Checked against the release it
meets: on one whose internals differ, the adapter logs a warning and leaves the instrumentor as it is.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ..conventions import openinference as oi
from ..conventions.prompt_calls import MAX_RUN_MESSAGES
from ..private_calls import PrivateCall, shown
from ._patching import PatchingAdapter
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

Body = tuple[str, Any]
"""The part of a request the breaker reads: (its key in the request, its value), e.g. ``("messages", [...])``."""


def messages(_args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Body | None:
    """The history of a chat call (OpenAI's, Anthropic's, Groq's ``create``): its ``messages`` keyword."""
    return "messages", kwargs.get("messages")


@dataclass(frozen=True)
class ClientMethod:
    """A client class's method that the instrumentor wraps, and how to find the history in a call of it."""

    module: str
    owner: str
    method: str
    asynchronous: bool
    body: Callable[[tuple[Any, ...], Mapping[str, Any]], Body | None] = messages


Clients = tuple[ClientMethod, ...]
OPENAI_CHAT: Clients = (ClientMethod("openai.resources.chat.completions", "Completions", "create", False),
                        ClientMethod("openai.resources.chat.completions", "AsyncCompletions", "create", True))
"""OpenAI's Chat Completions (its request's ``messages`` read as OpenInference's OpenAI instrumentor records them)."""
ANTHROPIC_MESSAGES: Clients = (ClientMethod("anthropic.resources.messages", "Messages", "create", False),
                               ClientMethod("anthropic.resources.messages", "AsyncMessages", "create", True))
"""Anthropic's Messages (its request's ``messages``, ``tool_use`` and ``tool_result`` blocks, read as OpenInference's
Anthropic instrumentor records them)."""
_UNREAD = object()


class Request(Mapping[str, Any]):
    """A call's start attributes as OpenInference's instrumentor for the client would record them: ``input.value``,
    the request's history (``messages``, Gemini's ``contents``) as JSON text, made on the breaker's first read (most
    model calls are never read: a trace with tool spans of its own is judged by them). The last
    :data:`MAX_RUN_MESSAGES` messages, as far back as the breaker reads a run; messages it cannot turn into JSON leave
    the request unknown (no prompt)."""

    __slots__ = ("_body", "_text")

    def __init__(self, body: Body | None) -> None:
        self._body = body
        self._text: Any = _UNREAD

    def _read(self) -> str | None:
        if self._text is _UNREAD:
            self._text = None if self._body is None else request_text(*self._body)
            self._body = None  # read: the history stays the application's
        return self._text  # type: ignore[no-any-return]

    def __getitem__(self, key: str) -> str:
        text = self._read() if key == oi.INPUT else None
        if text is None:
            raise KeyError(key)
        return text

    def __iter__(self) -> Iterator[str]:
        return iter((oi.INPUT,) if self._read() is not None else ())

    def __len__(self) -> int:
        return 0 if self._read() is None else 1


def request_text(key: str, messages: Any) -> str | None:
    """``{key: [...]}`` as JSON (``{"messages": [...]}``), the messages as the client sends them (its pydantic objects,
    such as the ``ChatCompletionMessage`` an application appends as it came back, by their ``model_dump``); None for
    anything else (a one-shot iterable is never consumed: the client still has to send it). msgspec's encoder: the
    history is encoded on every model call the breaker reads, and ``json.dumps`` took several times as long."""
    if not isinstance(messages, list | tuple):
        return None
    try:
        return _ENCODER.encode({key: messages[-MAX_RUN_MESSAGES:]}).decode("utf-8", "replace")
    except Exception:  # a message with no JSON form: the request is unknown, the call goes on
        logger.debug("spanbreaker could not read a model request's messages", exc_info=True)
        return None


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = msgspec.json.Encoder(enc_hook=_plain)


def request_call(body: Callable[[tuple[Any, ...], Mapping[str, Any]], Body | None], args: tuple[Any, ...],
                 kwargs: Mapping[str, Any]) -> PrivateCall:
    """The call to show the breaker for one request: its history as ``body`` finds it in the call's arguments."""
    try:
        found = body(args, kwargs)
    except Exception:  # an odd call: its request is unknown, the call goes on
        found = None
    return PrivateCall("", None, prompt=Request(found))


def showing(theirs: Callable[..., Any], client: ClientMethod) -> Callable[..., Any]:
    """A ``wrapt`` wrapper function that shows the breaker the request while ``theirs`` (the instrumentor's wrapper
    function, which starts and ends the span) runs."""
    if client.asynchronous:
        async def show_async(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            with shown(request_call(client.body, args, kwargs)):
                return await theirs(wrapped, instance, args, kwargs)

        show_async.spanbreaker_shows = theirs  # type: ignore[attr-defined]
        return show_async

    def show(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with shown(request_call(client.body, args, kwargs)):
            return theirs(wrapped, instance, args, kwargs)

    show.spanbreaker_shows = theirs  # type: ignore[attr-defined]
    return show


def _instrumentors_wrapper(installed: Any, package: str) -> Callable[..., Any] | None:
    """The wrapper function inside ``installed`` (a client class's method) when it is the one the instrumentor in
    ``package`` installed, else None (not instrumented, another library's, or already showing)."""
    function = getattr(installed, "_self_wrapper", None)
    if function is None or getattr(function, "spanbreaker_shows", None) is not None:
        return None
    module = str(getattr(function, "__module__", ""))
    return function if module == package or module.startswith(package + ".") else None


def compose(patches: PatchLog, package: str, clients: Clients) -> None:
    """Put a showing wrapper in place of each of the instrumentor's wrappers now installed; the undo puts the
    instrumentor's back, unless it was uninstrumented since (then its ``create`` stays as the instrumentor left it)."""
    from wrapt import FunctionWrapper

    for client in clients:
        module = sys.modules.get(client.module)
        if module is None:
            # Not imported, so not wrapped: an instrumentor imports the client's module as it wraps it. The client is
            # not installed (OpenLIT instruments whichever are, and has an instrumentation for Groq whether or not
            # Groq is there), or it is not instrumented yet and is composed after its instrumentor instruments.
            continue
        owner = getattr(module, client.owner)
        installed = vars(owner).get(client.method)
        theirs = _instrumentors_wrapper(installed, package)
        if theirs is None:
            continue
        composed = FunctionWrapper(installed.__wrapped__, showing(theirs, client))
        setattr(owner, client.method, composed)

        def restore(owner: Any = owner, method: str = client.method, composed: Any = composed,
                    installed: Any = installed) -> None:
            if vars(owner).get(method) is composed:
                setattr(owner, method, installed)

        patches.on_undo(restore)


class ClientRequestsAdapter(PatchingAdapter):
    """A client instrumentor's wrappers, composed with the request showing: subclasses name the instrumentor's
    package (``framework``, whose import instruments), its instrumentor class and the client classes it wraps."""

    instrumentor: str = "OpenAIInstrumentor"
    clients: Clients = OPENAI_CHAT

    def patch(self, patches: PatchLog) -> None:
        import importlib

        instrumentor = getattr(importlib.import_module(self.framework), self.instrumentor)
        if "_instrument" not in vars(instrumentor):
            raise RuntimeError(f"{self.instrumentor} has no _instrument")
        adapter = self

        def after_instrument(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            result = wrapped(*args, **kwargs)
            with adapter._lock:
                if adapter._patches:  # still instrumented by spanbreaker
                    adapter._compose_checked(adapter._patches)
            return result

        patches.wrap(instrumentor, "_instrument", after_instrument)
        self._compose_checked(patches)  # instrumented before spanbreaker: its wrappers are already in place

    def _compose_checked(self, patches: PatchLog) -> None:
        try:
            compose(patches, self.framework, self.clients)
        except Exception:  # an odd client or wrapper: the calls go through the instrumentor's wrappers as they are
            logger.warning("spanbreaker could not read %s's requests: %s", self.title, self.unguarded, exc_info=True)
