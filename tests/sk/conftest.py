"""Fixtures for the Semantic Kernel tier (``make test-semantic-kernel``, its own venv): Semantic Kernel's own spans on a
private provider per test, the breaker, the Semantic Kernel adapter on or off, its diagnostics off, on or sensitive.

Semantic Kernel takes its tracers from the global provider (proxies made at import), and the global provider can be
set only once per process: the session sets a switchboard whose tracers start every span on the current test's own SDK
provider (``genai_rig.make_rig``), as the AutoGen and Google ADK tiers do. Its diagnostics settings are read from the
environment once, at import: each test sets them on the settings objects its telemetry reads.

``make_env(adapter=True, diagnostics="off", **config)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from spanbreaker.adapters.semantic_kernel import ADAPTER

from ..genai_rig import Rig, Switchboard, global_switchboard, switchboard_rigs

DIAGNOSTICS = {"off": (False, False), "on": (True, False), "sensitive": (True, True)}
"""Semantic Kernel's two switches (``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS`` and
``..._SENSITIVE``) per setting."""
SETTINGS_MODULES = ("semantic_kernel.utils.telemetry.model_diagnostics.decorators",
                    "semantic_kernel.utils.telemetry.model_diagnostics.function_tracer",
                    "semantic_kernel.utils.telemetry.agent_diagnostics.decorators")


@pytest.fixture(scope="session")
def switchboard() -> Switchboard:
    return global_switchboard("Semantic Kernel")


@pytest.fixture
def make_env(switchboard: Switchboard, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Rig]]:
    import importlib

    with switchboard_rigs(switchboard, ADAPTER) as make_rig_for:

        def make(adapter: bool = True, diagnostics: str = "off", **overrides: Any) -> Rig:
            enabled, sensitive = DIAGNOSTICS[diagnostics]
            for module in SETTINGS_MODULES:
                settings = importlib.import_module(module).MODEL_DIAGNOSTICS_SETTINGS
                monkeypatch.setattr(settings, "enable_otel_diagnostics", enabled)
                monkeypatch.setattr(settings, "enable_otel_diagnostics_sensitive", sensitive)
            return make_rig_for(adapter, **overrides)

        yield make
