"""Google ADK's function responses, as OpenInference's ADK instrumentor records a tool's output.

OpenInference's ``GoogleADKInstrumentor`` (openinference-instrumentation-google-adk 1.0, on ADK 2.13) puts ADK's
whole ``FunctionResponse`` in a tool span's ``output.value``: ``{"id":"call_3_0","name":"search","response":{...}}``.
Its ``id`` is the call's own, new on every call, so no two results read alike: a loop of identical searches returning
the same page was caught only by ``low_exploration``, after 11 calls. The result is the ``response``, read when the
envelope carries the span's own call id (``tool.id``, ``gen_ai.tool.call.id``): a tool that returns a record with an
``id`` of its own keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import jsontext

FUNCTION_RESPONSE = '{"id":'
"""How the instrumentor's JSON of a ``FunctionResponse`` begins (compact, ``None`` fields left out)."""
CALL_IDS = ("tool.id", "gen_ai.tool.call.id")
"""Where the span names its call's id (OpenInference's key, then the GenAI conventions' that ADK sets)."""
_FIELDS = frozenset({"id", "name", "response", "will_continue", "scheduling", "parts"})
"""A ``FunctionResponse``'s fields."""


def tool_result(text: str, attributes: Mapping[str, Any], cap: int) -> str | None:
    """The ``response`` of a function-response envelope carrying the span's own call id (text as it is, anything else
    as JSON); None when ``text`` is not one. An envelope longer than ``cap`` is not parsed: the id is cut out."""
    call_id = next((value for key in CALL_IDS if isinstance(value := attributes.get(key), str) and value), None)
    if call_id is None:
        return None
    if len(text) > cap:
        marked = f'{FUNCTION_RESPONSE}{json.dumps(call_id)},'
        return "{" + text[len(marked):] if text.startswith(marked) else None
    try:
        data = jsontext.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("id") != call_id or "response" not in data or not data.keys() <= _FIELDS:
        return None
    response = data["response"]
    return response if isinstance(response, str) else json.dumps(response, ensure_ascii=False, sort_keys=True)
