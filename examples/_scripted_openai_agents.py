"""A scripted model for the OpenAI Agents SDK, standing in for the LLM in the examples, tests and benchmarks.

A subclass of the SDK's own ``Model``. It records its call in a ``generation_span`` the way the SDK's OpenAI models
do, so the real OpenInference instrumentor turns it into an LLM span with the messages sent and the token counts.
The script is a function of the input items sent so far (how many tool results came back), returning the calls
or the text of the next reply.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents import Model, ModelResponse, Usage
from agents.tracing import generation_span
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

Reply = list[tuple[str, dict[str, Any]]] | str
"""Tool calls ``[(name, arguments), ...]`` or a final text."""
Script = Callable[[int, list[Any]], Reply]
"""(number of tool results in the input, input items) -> reply."""


def tool_results(items: Any) -> int:
    if not isinstance(items, list):
        return 0
    return sum(1 for item in items if isinstance(item, dict) and item.get("type") == "function_call_output")


class ScriptedModel(Model):
    def __init__(self, script: Script, name: str = "scripted-gpt") -> None:
        self.script = script
        self.name = name
        self.calls = 0

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                           output_schema: Any, handoffs: Any, tracing: Any, *, previous_response_id: Any = None,
                           conversation_id: Any = None, prompt: Any = None) -> ModelResponse:
        self.calls += 1
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        sent = [{"role": "system", "content": system_instructions}, *items] if system_instructions else items
        usage = Usage(requests=1, input_tokens=100 + 10 * len(items), output_tokens=20,
                      total_tokens=120 + 10 * len(items))
        with generation_span(model=self.name, input=sent, disabled=tracing.is_disabled()) as span:
            reply = self.script(tool_results(items), items)
            output: list[Any]
            if isinstance(reply, str):
                output = [ResponseOutputMessage(
                    id=f"msg_{uuid.uuid4().hex[:8]}", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text=reply, annotations=[])])]
            else:
                output = [ResponseFunctionToolCall(
                    id=f"fc_{uuid.uuid4().hex[:8]}", call_id=f"call_{uuid.uuid4().hex[:8]}", type="function_call",
                    name=name, arguments=json.dumps(arguments), status="completed") for name, arguments in reply]
            span.span_data.output = [item.model_dump() for item in output]
            span.span_data.usage = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        return ModelResponse(output=output, usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run the scripted model without streaming")
