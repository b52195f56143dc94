"""Phoenix's own TracerProvider keeps exporting after the breaker joins it (in process, no server needed).

Why: ``phoenix.otel.TracerProvider.add_span_processor`` removes and shuts down its default exporting processor
unless called with ``replace_default_processor=False``. Before spanbreaker passed that, attaching the breaker
to a ``register()``-made provider silently stopped every span from reaching Phoenix. The provider here is
never made global; the export goes to the real OTLP receiver on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import spanbreaker

from ..inspection.agent import TASK, build_agent
from ..otlp_receiver import Receiver, otlp_receiver

__all__ = ["otlp_receiver"]

pytestmark = pytest.mark.phoenix


@pytest.fixture
def phoenix_provider(otlp_receiver: Receiver) -> Iterator[Any]:
    otel = pytest.importorskip("phoenix.otel", reason="arize-phoenix-otel is not installed (make test-phoenix)")
    provider = otel.register(project_name="spanbreaker-coexistence", endpoint=otlp_receiver.http_traces_url,
                             set_global_tracer_provider=False, verbose=False)
    spanbreaker.instrument(tracer_provider=provider, config=spanbreaker.BreakerConfig(), frameworks=["smolagents"])
    try:
        yield provider
    finally:
        spanbreaker.instrumentation.uninstrument()
        provider.shutdown()


def test_tripped_run_still_reaches_phoenix_exporter(phoenix_provider: Any, otlp_receiver: Receiver) -> None:
    agent, _, _ = build_agent()
    with pytest.raises(spanbreaker.Tripped):
        agent.run(TASK)
    phoenix_provider.force_flush()
    spans = otlp_receiver.store.wait_for(lambda got: any(s.name == "ToolCallingAgent.run" for s in got))
    assert {s.resource["openinference.project.name"] for s in spans} == {"spanbreaker-coexistence"}
    assert any(s.attributes.get("spanbreaker.tripped") is True for s in spans)
