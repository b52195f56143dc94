"""``opentelemetry-instrument python <app>`` with OpenLLMetry's instrumentors (their entry points load them, as
``Traceloop.init()`` would switch them on): apps that know nothing about spanbreaker are stopped, content tracing on or
off. A plain OpenAI, Anthropic, Groq, Ollama, Google Gen AI or Bedrock loop at the sixth model call, with or without a
span of its own around it; a LangGraph, an OpenAI Agents SDK and a LlamaIndex agent at the fifth identical call."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..launcher.runs import launch_dev


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("span", "content"), [("app", "true"), ("none", "true"), ("none", "false")],
                         ids=["in-a-span", "no-span", "no-span-content-off"])
def test_launcher_stops_a_plain_openai_loop_traced_by_openllmetry(tmp_path: Path, span: str, content: str) -> None:
    done = launch_dev("client_loop_app.py", tmp_path, disabled="", LAUNCHER_APP_CLIENT="openai",
                      LAUNCHER_APP_SPAN=span, TRACELOOP_TRACE_CONTENT=content)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    assert '"spanbreaker.blocked": true' in done.stdout and '"name": "openai.chat"' in done.stdout
    if content == "false":
        assert "acme 2026 revenue guidance" not in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("content", ["true", "false"], ids=["content-on", "content-off"])
def test_launcher_stops_a_plain_anthropic_loop_traced_by_openllmetry(tmp_path: Path, content: str) -> None:
    done = launch_dev("client_loop_app.py", tmp_path, disabled="", LAUNCHER_APP_CLIENT="anthropic",
                      LAUNCHER_APP_SPAN="none", TRACELOOP_TRACE_CONTENT=content)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    assert '"name": "anthropic.chat"' in done.stdout and '"spanbreaker.blocked": true' in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


AGENT_APPS = {"langgraph": ("langgraph_app.py", "execute_tool search", "Tripped"),
              "openai-agents": ("openai_agents_app.py", "order_status.tool", "Tripped"),
              "llama-index": ("llama_index_app.py", "FunctionTool.task", "LlamaIndexTripped")}
"""Agent apps by framework: (the app, the name of its tool call spans under OpenLLMetry's instrumentor, what the
caller catches)."""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("content", ["true", "false"], ids=["content-on", "content-off"])
@pytest.mark.parametrize("framework", list(AGENT_APPS))
def test_launcher_stops_a_looping_agent_traced_by_openllmetry(tmp_path: Path, framework: str, content: str) -> None:
    """The launcher loads OpenLLMetry's LangChain, OpenAI Agents or LlamaIndex instrumentor by its entry point and
    spanbreaker's adapter with it: the 5th identical call is vetoed before it runs, content tracing on or off."""
    app, tool_span, exception = AGENT_APPS[framework]
    done = launch_dev(app, tmp_path, disabled="", TRACELOOP_TRACE_CONTENT=content)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", exception, "tool_repeat")
    assert summary["tool_calls"] == 4, summary
    assert done.stdout.count(f'"name": "{tool_span}"') == 5 and '"spanbreaker.blocked": true' in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


CLIENT_SPANS = {"groq": "chat llama-3.3-70b-versatile", "ollama": "ollama.chat",
                "google-genai": "generate_content gemini-2.5-flash", "bedrock": "chat claude-3-5-sonnet-20240620-v1:0"}
"""The plain loops of the other clients OpenLLMetry instruments here, by the name of its model-call span."""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("client", sorted(CLIENT_SPANS))
def test_launcher_stops_a_plain_loop_of_another_client_content_off(tmp_path: Path, client: str) -> None:
    """Groq, Ollama, Google Gen AI and Bedrock loops with no span around them and content tracing off: each request is
    shown to the breaker as its span starts, and the sixth is vetoed."""
    done = launch_dev("client_loop_app.py", tmp_path, disabled="", LAUNCHER_APP_CLIENT=client,
                      LAUNCHER_APP_SPAN="none", TRACELOOP_TRACE_CONTENT="false")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.summary
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat")
    assert (summary["model_calls"], summary["tool_calls"]) == (5, 5)
    assert f'"name": "{CLIENT_SPANS[client]}"' in done.stdout and '"spanbreaker.blocked": true' in done.stdout
    assert "acme 2026 revenue guidance" not in done.stdout, "content tracing off: no request on the spans"
    assert "spanbreaker could not" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
