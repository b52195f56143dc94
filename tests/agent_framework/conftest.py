"""Fixtures for the Agent Framework suite: Agent Framework's own GenAI spans on a private provider, the breaker.

Agent Framework's stock spans are what the breaker sees (its adapter adds nothing to them). It takes its tracer from
the global provider on every span (``agent_framework.observability.get_tracer``); each environment points that at the
environment's provider instead (the global one is never touched) and puts it back at teardown.

``make_env(sensitive=True, adapter=True, **config)``: ``sensitive`` is Agent Framework's sensitive-data setting
(``enable_instrumentation(enable_sensitive_data=...)``, env ``ENABLE_SENSITIVE_DATA``), which alone puts a tool
call's arguments and result on its ``execute_tool`` span; ``adapter`` switches spanbreaker's Agent Framework adapter
on (what ``spanbreaker.instrument()`` does: the call shown to the breaker in process) or leaves Agent Framework
stock. Instrumentation is on, as by default, and
``OTEL_SEMCONV_STABILITY_OPT_IN`` unset (Agent Framework then emits the latest experimental GenAI conventions, which
the tool-call attributes also need).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agent_framework import observability

from spanbreaker.adapters.agent_framework import ADAPTER
from spanbreaker.instrumentation import uninstrument

from ..genai_rig import Rig, make_rig


@pytest.fixture
def make_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []
    settings = observability.OBSERVABILITY_SETTINGS

    def make(sensitive: bool = True, adapter: bool = True, **overrides: Any) -> Rig:
        assert not made, "one environment per test"
        uninstrument()
        rig = make_rig(**overrides)
        if adapter:
            ADAPTER.instrument(rig.provider, rig.processor)
        provider = rig.provider

        def get_tracer(instrumenting_module_name: str = "agent_framework",
                       instrumenting_library_version: str = observability.version_info,
                       schema_url: str | None = None, attributes: dict[str, Any] | None = None) -> Any:
            # as if the rig's provider were the global one
            return provider.get_tracer(instrumenting_module_name, instrumenting_library_version, schema_url,
                                       attributes)

        monkeypatch.setattr(observability, "get_tracer", get_tracer)
        monkeypatch.setattr(settings, "otel_semconv_stability_opt_in", None)
        monkeypatch.setattr(settings, "enable_instrumentation", True)
        monkeypatch.setattr(settings, "enable_sensitive_data", sensitive)
        assert settings.emit_tool_call_attributes is sensitive
        made.append(rig)
        return rig

    yield make
    ADAPTER.uninstrument()
    for rig in made:
        rig.provider.shutdown()


@pytest.fixture
def env(make_env: Callable[..., Rig]) -> Rig:
    return make_env()
