"""OpenInference client instrumentors whose spans start without their kind or request (Groq, Ollama, Mistral AI).

These instrumentors share one ``_WithTracer._start_as_current_span`` (copied from an early OpenAI instrumentor). It
splits a call's attributes into two tiers so that the important ones survive the SDK's limit of 128 attributes:
``extra_attributes`` (the request's flattened messages, its tools) and ``attributes`` (the span kind ``LLM``, the
model, ``input.value``: the request as JSON). It starts the span with the extra tier and sets the important tier just
after. The breaker decides at start, so such a span was invisible to it: no model call counted against a budget, no
request read, a plain tool loop ran to its own limit (measured on openinference-instrumentation-groq 0.1.33,
-ollama 0.1.13 and -mistralai 2.2.2; ``tests/clients``). OpenInference's OpenAI instrumentor starts its spans with the
important tier.

Here the span starts with both tiers, the extra one first: under the attribute limit the SDK drops the oldest
attributes, so the important tier still survives, as the instrumentor means it to. The instrumentor sets the important
tier again just after, with the same values; the spans end up exactly as the instrumentor makes them. Checked against
the release it meets: on one whose internals differ, the adapter logs a warning and leaves the instrumentor as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from ._patching import PatchingAdapter
from .base import PatchLog

METHOD = "_start_as_current_span"
"""The instrumentor's method that starts a call's span (a context manager, called with keywords)."""
TIERS = ("attributes", "extra_attributes")


def starting_with_both_tiers(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``_start_as_current_span`` with the important tier added to the attributes the span starts with (after the
    extra tier). Both tiers are iterators of pairs, read once here and passed on as lists."""
    if args or not all(tier in kwargs for tier in TIERS):  # a call this was not written for: as it is
        return wrapped(*args, **kwargs)
    important = _pairs(kwargs["attributes"])
    return wrapped(**{**kwargs, "attributes": important,
                      "extra_attributes": [*_pairs(kwargs["extra_attributes"]), *important]})


def _pairs(tier: Iterable[tuple[str, Any]] | Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A tier's (key, value) pairs, read once (the instrumentors pass iterators; a mapping is taken by its items)."""
    return list(tier.items() if isinstance(tier, Mapping) else tier)


class StartTierAdapter(PatchingAdapter):
    """Subclasses name the client library (``framework``, whose import instruments), the instrumentor's package and
    the module of its ``_WithTracer``."""

    package: str
    wrappers: str

    def available(self) -> bool:
        try:
            return (importlib.util.find_spec(self.framework) is not None
                    and importlib.util.find_spec(self.package) is not None)
        except (ImportError, ValueError):
            return False

    def patch(self, patches: PatchLog) -> None:
        owner = importlib.import_module(self.wrappers)._WithTracer
        method = vars(owner).get(METHOD)
        parameters = inspect.signature(getattr(method, "__wrapped__", method)).parameters
        if not all(tier in parameters for tier in TIERS):
            raise RuntimeError(f"{self.wrappers}._WithTracer.{METHOD} takes no {TIERS}")
        patches.wrap(owner, METHOD, starting_with_both_tiers)
