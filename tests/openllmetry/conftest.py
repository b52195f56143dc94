"""Fixtures for the OpenLLMetry tier (``make test-openllmetry``, its own venv): OpenLLMetry's OpenAI instrumentor
(Traceloop's ``opentelemetry-instrumentation-openai``) on a private provider with the breaker, content tracing on
(its default) or off (``TRACELOOP_TRACE_CONTENT=false``, read on every call). Everything is uninstrumented in teardown
so the next test starts clean; the chat methods are then put back as the client defines them, since the instrumentor's
own ``uninstrument`` leaves its wrappers in place (0.62.4 passes ``unwrap`` a dotted attribute it does not resolve)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import openai.resources.chat.completions as chat
import pytest
from opentelemetry.instrumentation.openai import OpenAIInstrumentor

from spanbreaker.adapters.openllmetry_openai import ADAPTER

from ..genai_rig import Rig, instrumentor_rigs

CONTENT = {"content on": "true", "content off": "false"}
PLAIN = {owner: vars(owner)["create"] for owner in (chat.Completions, chat.AsyncCompletions)}
"""The client's own chat methods, before any instrumentor wrapped them."""


def _as_defined() -> dict[Any, dict[str, Any]]:
    """What OpenLLMetry's LangChain instrumentor wraps, as LangChain and LangGraph define it (its ``uninstrument``
    hands ``unwrap`` the same dotted attributes and leaves every wrapper in place: each test would stack another)."""
    from langchain_core.callbacks import BaseCallbackManager
    from langgraph.pregel import Pregel
    from langgraph.types import Command

    return {BaseCallbackManager: {"__init__": vars(BaseCallbackManager)["__init__"]},
            Pregel: {name: vars(Pregel)[name] for name in ("stream", "astream")},
            Command: {"__init__": vars(Command)["__init__"]}}


LANGCHAIN_AS_DEFINED = _as_defined()


@contextmanager
def content_rigs(monkeypatch: pytest.MonkeyPatch, adapter: Any, instrumentor: Callable[[], Any],
                 restore: dict[Any, dict[str, Any]] | None = None) -> Iterator[Callable[..., Rig]]:
    """:func:`~tests.genai_rig.instrumentor_rigs` with OpenLLMetry's content tracing set per rig: ``make(content=
    "content on", instrumentor_first=False, **config)``."""
    with instrumentor_rigs(adapter, instrumentor, restore) as rig_for:

        def make(content: str = "content on", instrumentor_first: bool = False, **config: Any) -> Rig:
            monkeypatch.setenv("TRACELOOP_TRACE_CONTENT", CONTENT[content])
            return rig_for(instrumentor_first, **config)

        yield make


@pytest.fixture
def instrumented(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    """``make(content="content on", instrumentor_first=False)``: a rig with the breaker's adapter and the instrumentor
    on, in that order (or the instrumentor first, as an application that instrumented it before spanbreaker)."""
    with content_rigs(monkeypatch, ADAPTER, OpenAIInstrumentor,
                      {owner: {"create": create} for owner, create in PLAIN.items()}) as make:
        yield make
