"""AutoGen agents whose tools come from a real MCP server (autogen-ext's ``McpWorkbench`` over stdio): autogen-ext
starts an ``execute_tool`` span per call without the arguments or the result, like ``BaseTool.run_json``. With the
adapter the span carries both, so a loop over an MCP tool is stopped; the polled look-alike stays quiet; a steer
reaches the model as the call's error result; stock, the loop runs on. The model is the only stub."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_ext.tools.mcp import McpWorkbench, StdioServerParams

import spanbreaker

from .scripted import MODEL, ScriptedModel, client_for, loop, scripted, tool_results

pytestmark = pytest.mark.timeout(90)

SERVER = Path(__file__).with_name("mcp_search_server.py")
MAX_TOOL_ITERATIONS = 30


def run_with_mcp(model: ScriptedModel, log: Path, answers: str = "same") -> Any:
    params = StdioServerParams(command=sys.executable, args=[str(SERVER)],
                               env={"SEARCH_LOG": str(log), "SEARCH_ANSWERS": answers}, read_timeout_seconds=30)

    async def go() -> Any:
        async with McpWorkbench(params) as workbench:
            agent = AssistantAgent("weather_agent", model_client=client_for(model), workbench=workbench,
                                   max_tool_iterations=MAX_TOOL_ITERATIONS, system_message="You look things up.")
            return await agent.run(task="What's the weather?")

    return asyncio.run(asyncio.wait_for(go(), 60))


def server_calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def tool_spans(env: Any) -> list[Any]:
    return [s for s in env.spans() if s.name == "execute_tool search"]


def test_identical_mcp_calls_trip_and_stop_the_run(make_env: Any, tmp_path: Path) -> None:
    env = make_env()
    model = scripted(loop(calls=12))
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_with_mcp(model, tmp_path / "calls.log")
    assert caught.value.detector == "tool_repeat"
    assert caught.value.evidence["identical_calls"] == 5
    assert server_calls(tmp_path / "calls.log") == 4 and model.calls == 5  # the fifth call never reached the server
    assert [s.name for s in env.blocked()] == ["execute_tool search"]
    first = tool_spans(env)[0].attributes or {}
    assert first["gen_ai.tool.call.arguments"] == '{"query": "weather in Paris"}'
    assert first["gen_ai.tool.call.result"] == "Paris: sunny, 18C"
    env.assert_nothing_lost()


def test_the_same_mcp_call_with_new_results_is_quiet(make_env: Any, tmp_path: Path) -> None:
    """The loop's twin: the same search each time, the server's answer moving (a status being polled)."""
    env = make_env()
    result = run_with_mcp(scripted(loop(calls=8)), tmp_path / "calls.log", answers="new")
    assert result.messages[-1].content == "Sunny."
    assert server_calls(tmp_path / "calls.log") == 8
    assert [(s.attributes or {})["gen_ai.tool.call.result"] for s in tool_spans(env)][-1] == "update #8: still raining"
    env.assert_quiet()
    env.assert_nothing_lost()


def test_a_steer_reaches_the_model_as_the_mcp_calls_error_result(make_env: Any, tmp_path: Path) -> None:
    """``response="steer"``: the fifth identical call is failed with the steer's message, which the model reads as
    the tool's error (the MCP workbench would have let the exception end the run); the next identical call trips."""
    env = make_env(response="steer")
    read: list[str] = []

    def script(messages: list[dict[str, Any]]) -> Any:
        read.extend(str(m.get("content")) for m in messages[len(read):])
        calls = tool_results(messages)
        return [("search", {"query": "weather in Paris"})] if calls < 12 else "Sunny."

    model = ScriptedModel(script, model=MODEL)
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_with_mcp(model, tmp_path / "calls.log")
    assert caught.value.detector == "tool_repeat"
    steered = [s for s in tool_spans(env) if (s.attributes or {}).get("spanbreaker.steered")]
    assert len(steered) == 1 and len(env.blocked()) == 2  # the steered call, then the tripped one
    assert read[-1].startswith("spanbreaker: search called 5 times with identical arguments"), read[-1]
    assert server_calls(tmp_path / "calls.log") == 4  # neither the steered call nor the tripped one reached it
    assert model.calls == 6
    env.assert_nothing_lost()


def test_stock_mcp_spans_do_not_catch_the_loop(make_env: Any, tmp_path: Path) -> None:
    env = make_env(adapter=False)
    result = run_with_mcp(scripted(loop(calls=12)), tmp_path / "calls.log")
    assert result.messages[-1].content == "Sunny."
    assert server_calls(tmp_path / "calls.log") == 12
    assert "gen_ai.tool.call.arguments" not in (tool_spans(env)[0].attributes or {})
    env.assert_quiet()


def test_content_capture_off_keeps_mcp_calls_off_the_spans_and_still_stops_the_loop(make_env: Any, tmp_path: Path,
                                                                                     monkeypatch: Any) -> None:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false``: the MCP spans stay as autogen-ext makes them, and
    the calls, shown to the breaker in process, still stop the loop at the 5th."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    env = make_env()
    with pytest.raises(spanbreaker.Tripped) as caught:
        run_with_mcp(scripted(loop(calls=12)), tmp_path / "calls.log")
    assert caught.value.detector == "tool_repeat" and server_calls(tmp_path / "calls.log") == 4
    attributes = [s.attributes or {} for s in tool_spans(env)]
    assert len(attributes) == 5
    assert not any("gen_ai.tool.call.arguments" in a or "gen_ai.tool.call.result" in a for a in attributes)
    env.assert_nothing_lost()


def test_unexpected_mcp_internals_leave_the_rest_of_the_adapter_on(make_env: Any, tmp_path: Path,
                                                                    monkeypatch: Any, caplog: Any) -> None:
    """Another autogen-ext's MCP workbench: a warning, MCP calls stay stock, and the adapter's other patches hold."""
    from autogen_core.tools import BaseTool
    from autogen_ext.tools.mcp import _actor

    from spanbreaker.adapters import autogen

    async def call(self: Any, type: str, args: Any = None, extra: Any = None) -> Any:
        raise AssertionError("not called")

    with monkeypatch.context() as patched:
        patched.setattr(_actor.McpSessionActor, "call", call)
        assert autogen._mcp_problems() == ["McpSessionActor.call('self', 'type', 'args', 'extra')"]
    monkeypatch.setattr(autogen, "_mcp_problems", lambda: ["McpSessionActor.call(...)"])
    env = make_env()
    assert "could not instrument AutoGen's MCP workbench" in caplog.text
    assert type(McpWorkbench.__dict__["call_tool"]).__name__ == "function"  # left as autogen-ext wrote it
    assert type(BaseTool.__dict__["run_json"]).__name__ == "function" and BaseTool.run_json is autogen._run_json
    result = run_with_mcp(scripted(loop(calls=6)), tmp_path / "calls.log")
    assert result.messages[-1].content == "Sunny." and server_calls(tmp_path / "calls.log") == 6
    env.assert_quiet()
