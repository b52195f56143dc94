"""Span conventions as plug-ins: each module owns its attribute keys and tells what kind a span is.

Order matters and is written once, here (kinds) and in :mod:`.read` (figures): OpenInference first (what the
instrumentors this project drives write), then the OpenTelemetry GenAI conventions, then OpenLLMetry's older
``llm.request.type`` (and the Traceloop SDK's span kinds), then Langfuse's observation types, then framework quirks
(names, envelopes, wrappers), and last the GenAI span-name prefixes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kinds import Kind
from . import frameworks, genai, langfuse, openinference, openllmetry
from .base import Convention

CONVENTIONS: tuple[Convention, ...] = (openinference, genai, openllmetry, langfuse, frameworks)
"""Asked in this order for a span's kind."""


def classify(name: str, attributes: Mapping[str, Any]) -> Kind:
    """The span's kind from its attributes, else from its name (a name that stands for no call, first)."""
    if type(name) is str and name in frameworks.NOT_CALLS:
        return Kind.OTHER
    record = attributes.get(frameworks.LOGFIRE_TYPE)
    if type(record) is str and record in frameworks.RECORDS:
        return Kind.OTHER
    for convention in CONVENTIONS:
        kind = convention.kind(name, attributes)
        if kind is not None:
            return kind
    kind = genai.kind_by_name(name)
    return kind if kind is not None else Kind.OTHER


__all__ = ["CONVENTIONS", "Convention", "classify", "frameworks", "genai", "langfuse", "openinference", "openllmetry"]
