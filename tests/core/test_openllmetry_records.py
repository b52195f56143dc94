"""OpenLLMetry's LangChain tool records (``conventions/openllmetry.py``), as its instrumentor sets them on a tool span
(recorded from opentelemetry-instrumentation-langchain 0.62.4 under LangGraph 1.2): the call and the result are read
out of them, and nothing that merely looks like one is taken apart; the older instrumentations' model calls are known by
their ``llm.request.type``."""

from __future__ import annotations

import json

from spanbreaker.conventions import openllmetry
from spanbreaker.conventions.read import fill_tool_result, tool_start

CAP = 8192


def record(query: str, step: int, call_id: str) -> str:
    return json.dumps({
        "input_str": str({"query": query}), "tags": [f"seq:step:{step}"],
        "metadata": {"ls_integration": "langgraph", "langgraph_step": step, "langgraph_node": "tools",
                     "langgraph_checkpoint_ns": f"tools:{call_id}-ns"},
        "inputs": {"query": query}, "kwargs": {"color": "green", "name": None, "tool_call_id": call_id}})


def result(content: object, call_id: str) -> str:
    return json.dumps({
        "output": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
                   "kwargs": {"content": content, "type": "tool", "name": "web_search", "tool_call_id": call_id,
                              "status": "success"}},
        "kwargs": {"tags": ["seq:step:1"], "color": "green", "name": "web_search"}})


def span(query: str, step: int, call_id: str, content: object) -> dict[str, str]:
    return {"gen_ai.tool.name": "web_search", "gen_ai.tool.call.arguments": record(query, step, call_id),
            "gen_ai.tool.call.result": result(content, call_id)}


def read(attributes: dict[str, str]) -> tuple[int, int, str]:
    call = tool_start("execute_tool web_search", attributes, frozenset(), CAP)
    fill_tool_result(call, attributes, None, CAP, frozenset())
    return call.key, call.result_key, call.result_sample


def test_the_same_call_in_two_steps_reads_the_same_despite_its_per_call_ids() -> None:
    first, second = read(span("acme", 2, "call_1", "page")), read(span("acme", 4, "call_2", "page"))
    assert first == second and first[2] == "page"


def test_different_arguments_or_results_read_different() -> None:
    base = read(span("acme", 2, "call_1", "page"))
    assert read(span("acme corp", 2, "call_1", "page"))[0] != base[0]
    assert read(span("acme", 2, "call_1", "another page"))[1] != base[1]


def test_structured_content_and_plain_outputs_are_read() -> None:
    assert openllmetry.tool_result(result([{"type": "text", "text": "x"}], "c")) == '[{"text": "x", "type": "text"}]'
    assert openllmetry.tool_result(json.dumps({"output": "plain text", "kwargs": {}})) == "plain text"
    assert openllmetry.tool_arguments(json.dumps({"input_str": "just text", "inputs": None})) == "just text"


def test_a_tools_own_json_that_starts_the_same_way_is_read_as_it_is() -> None:
    """A result whose first key happens to be ``output`` but which carries other keys is the tool's own document:
    unwrapping it would drop what tells two results apart."""
    own = json.dumps({"output": "ok", "rows": 12})
    assert openllmetry.tool_result(own) is None
    assert openllmetry.tool_arguments(json.dumps({"input_str": "q", "limit": 10})) is None
    assert openllmetry.tool_result('{"output": not json') is None
    attributes = {"gen_ai.tool.name": "t", "gen_ai.tool.call.arguments": "{}", "gen_ai.tool.call.result": own}
    assert read(attributes)[2] == own


# ------------------------------------------------------------------------------------------------- LlamaIndex
def llama_span(query: str, output: str = "Paris weather: sunny, 20C") -> dict[str, str]:
    """A tool span as OpenLLMetry's LlamaIndex instrumentor records it (content on), started by the adapter."""
    envelope = {"blocks": [{"block_type": "text", "text": output}], "tool_name": "search",
                "raw_input": {"args": [], "kwargs": {"query": query}}, "raw_output": output, "is_error": False}
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
            "traceloop.span.kind": "task", "traceloop.entity.input": json.dumps({"kwargs": {"query": query}}),
            "traceloop.entity.output": json.dumps(envelope)}


def test_llama_index_records_read_as_the_adapter_shows_the_call() -> None:
    """The bound arguments' record reads as the adapter's in-process call; the result is the ToolOutput's raw output,
    so two different queries returning one text read the same result, and two alike read the same call."""
    call = tool_start("FunctionTool.task", llama_span("weather in Paris"), frozenset(), CAP)
    shown = tool_start("FunctionTool.task", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                                             "gen_ai.tool.call.arguments": openllmetry.llama_index_call(
                                                 (), {"query": "weather in Paris"})}, frozenset(), CAP)
    assert call.args_known and call.key == shown.key
    first, other = read(llama_span("weather in Paris")), read(llama_span("weather in Rome"))
    assert first[0] != other[0] and first[1:] == other[1:] and first[2] == "Paris weather: sunny, 20C"
    assert openllmetry.llama_index_arguments(json.dumps({"args": [1], "kwargs": {}})) == '{"args": [1], "kwargs": {}}'


def test_a_task_record_of_another_shape_is_read_as_it_is() -> None:
    """A bound-arguments record with other keys, or without keyword arguments, is no LlamaIndex tool record."""
    assert openllmetry.llama_index_arguments(json.dumps({"kwargs": {"q": 1}, "self": "FunctionTool"})) is None
    assert openllmetry.llama_index_arguments(json.dumps({"args": [1]})) is None
    assert openllmetry.llama_index_arguments(json.dumps({"kwargs": "text"})) is None
    own = json.dumps({"kwargs": {"q": 1}, "extra": True})
    call = tool_start("FunctionTool.task", {"gen_ai.tool.name": "search", "traceloop.entity.input": own},
                      frozenset(), CAP)
    assert call.raw_args == own


def test_a_span_of_openllmetrys_older_instrumentations_is_a_model_call_by_its_request_type() -> None:
    """Ollama's (Mistral AI's, Cohere's, Vertex AI's) instrumentor starts a model call's span with only
    ``gen_ai.system`` and ``llm.request.type``: ``chat`` and ``completion`` are model calls; an embedding or a rerank
    is not, and the OpenInference kind or GenAI operation, where a span has one, comes first."""
    from spanbreaker.conventions import classify
    from spanbreaker.kinds import Kind

    for request_type in ("chat", "completion"):
        assert classify("ollama.chat", {"gen_ai.system": "Ollama", "llm.request.type": request_type}) is Kind.LLM
    for request_type in ("embedding", "rerank", "unknown", 7, ["chat"]):
        assert classify("ollama.embeddings", {"llm.request.type": request_type}) is Kind.OTHER
    assert classify("x", {"llm.request.type": "chat", "openinference.span.kind": "TOOL"}) is Kind.TOOL
    assert classify("x", {"llm.request.type": "chat", "gen_ai.operation.name": "execute_tool"}) is Kind.TOOL


# ------------------------------------------------------------------------------------------ Traceloop SDK decorators
def test_the_traceloop_sdks_decorated_tools_and_agents_are_read_by_their_span_kind() -> None:
    """``@tool`` / ``@agent`` say what their span is under ``traceloop.span.kind`` (what the adapter starts the span
    with, and what an export carries); ``@workflow`` / ``@task`` are no call."""
    from spanbreaker.conventions import classify
    from spanbreaker.conventions.read import agent_name
    from spanbreaker.kinds import Kind

    tool = {"traceloop.span.kind": "tool", "traceloop.entity.name": "search", "gen_ai.tool.name": "search",
            "traceloop.entity.input": json.dumps({"args": ["same"], "kwargs": {}})}
    assert classify("search.tool", tool) is Kind.TOOL
    assert classify("researcher.agent", {"traceloop.span.kind": "agent"}) is Kind.AGENT
    for other in ("workflow", "task", ["tool"], None):
        assert classify("x.task", {"traceloop.span.kind": other}) is Kind.OTHER
    assert agent_name("researcher.agent", {"traceloop.entity.name": "researcher"}) == "researcher"
    call = tool_start("search.tool", tool, frozenset(), CAP)
    assert (call.name, call.args_known, call.raw_args) == ("search", True, '{"args": ["same"], "kwargs": {}}')
