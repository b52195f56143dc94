"""One check every framework suite makes: nothing lost, every span the breaker saw start exported exactly once."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan

import spanbreaker


def assert_exported_once(spans: Sequence[ReadableSpan], breaker: spanbreaker.BreakerSpanProcessor) -> None:
    ids = [span.context.span_id for span in spans if span.context is not None]
    assert len(ids) == len(set(ids)), "a span was exported twice"
    stats = breaker.stats
    assert stats.spans_started == stats.spans_ended == len(spans)
    assert stats.internal_errors == 0
