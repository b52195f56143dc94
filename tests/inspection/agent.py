"""A real smolagents ToolCallingAgent driven by a scripted model: the looping run and its healthy look-alike.

The model is the only stand-in. The looping agent asks the same search again and again and gets the same empty
answer (the breaker's ``tool_repeat`` case); the healthy one searches new topics, gets new results, and answers.
"""

from __future__ import annotations

from typing import Any

from smolagents import ChatMessage, MessageRole, Model, TokenUsage, Tool, ToolCallingAgent
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction

TASK = "What was our revenue in Q3 2019?"


class SearchTool(Tool):
    name = "search"
    description = "Search the internal knowledge base."
    inputs = {"query": {"type": "string", "description": "what to look for"}}
    output_type = "string"

    def __init__(self, healthy: bool) -> None:
        super().__init__()
        self.healthy = healthy
        self.calls = 0

    def forward(self, query: str) -> str:
        self.calls += 1
        return f"{self.calls} documents about {query}" if self.healthy else "No results."


class ScriptedModel(Model):
    """Same search forever (looping) or three new searches then a final answer (healthy)."""

    def __init__(self, healthy: bool) -> None:
        super().__init__(model_id="scripted-model")
        self.healthy = healthy
        self.calls = 0

    def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        self.calls += 1
        if self.healthy and self.calls > 3:
            name, arguments = "final_answer", {"answer": "412 million"}
        else:
            query = f"revenue topic {self.calls}" if self.healthy else "quarterly revenue 2019"
            name, arguments = "search", {"query": query}
        call = ChatMessageToolCall(id=f"call_{self.calls}", type="function",
                                   function=ChatMessageToolCallFunction(name=name, arguments=arguments))
        return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[call],
                           token_usage=TokenUsage(input_tokens=200 + self.calls, output_tokens=20))


def build_agent(healthy: bool = False, max_steps: int = 12) -> tuple[ToolCallingAgent, SearchTool, ScriptedModel]:
    tool = SearchTool(healthy)
    model = ScriptedModel(healthy)
    return ToolCallingAgent(tools=[tool], model=model, max_steps=max_steps, verbosity_level=0), tool, model
