"""Nothing is lost and nothing leaks: every abort path ends its spans once, the next run starts a clean trace."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import StatusCode
from smolagents import CodeAgent, ToolCallingAgent, tool
from smolagents.agents import ActionStep
from smolagents.models import ChatMessage, MessageRole, Model
from smolagents.monitoring import LogLevel
from smolagents.utils import AgentError, AgentGenerationError

import spanbreaker

from .conftest import Rig
from .scripted import ScriptedModel, call, code, final_call, final_code


def looping_agent(max_steps: int = 20) -> tuple[CodeAgent, ScriptedModel]:
    model = ScriptedModel([code(f'print({{"a": 1}}["{k}"])') for k in "bcdefghijk"])
    return CodeAgent(tools=[], model=model, max_steps=max_steps, verbosity_level=LogLevel.OFF), model


def healthy_agent() -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel([code("print(2)"), final_code("2")]), max_steps=5,
                     verbosity_level=LogLevel.OFF)


def assert_no_leak() -> None:
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert otel_context.get_current() == {}


def test_custom_model_subclasses_get_llm_spans(rig: Rig) -> None:
    class LateModel(ScriptedModel):  # defined after instrument(): traced through the subclass hook
        def generate(self, messages: list[Any], **kwargs: Any) -> ChatMessage:
            return super().generate(messages, **kwargs)

    agent = CodeAgent(tools=[], model=LateModel([final_code("ok")]), verbosity_level=LogLevel.OFF)
    assert agent.run("go") == "ok"
    names = [s.name for s in rig.spans()]
    assert "LateModel.generate" in names
    llm = [s for s in rig.spans() if s.name.endswith(".generate")]
    assert all((s.attributes or {}).get("llm.token_count.prompt") == 400 for s in llm)
    rig.assert_nothing_lost()


def test_a_custom_model_without_token_usage_still_works_when_traced(rig: Rig) -> None:
    reply = ChatMessage(role=MessageRole.ASSISTANT, content='<code>\nfinal_answer("x")\n</code>', token_usage=None)
    agent = CodeAgent(tools=[], model=ScriptedModel([reply]), verbosity_level=LogLevel.OFF)
    assert agent.run("go") == "x"  # the instrumentor alone would raise AgentGenerationError here
    assert rig.named("ScriptedModel.generate")
    rig.assert_nothing_lost()


def test_a_keyboard_interrupt_in_a_tool_ends_the_run_with_error(rig: Rig) -> None:
    @tool
    def hang(x: int) -> str:
        """Stands for a tool the user interrupts.

        Args:
            x: anything
        """
        raise KeyboardInterrupt

    agent = ToolCallingAgent(tools=[hang], model=ScriptedModel([call("hang", {"x": 1})]), verbosity_level=LogLevel.OFF)
    with pytest.raises(KeyboardInterrupt):
        agent.run("go")
    assert_no_leak()
    rig.assert_nothing_lost()
    assert all(s.status.status_code is StatusCode.ERROR for s in rig.spans() if not s.name.endswith(".generate"))


def test_a_trip_ends_every_span_once_and_the_next_run_starts_a_clean_trace(rig: Rig) -> None:
    agent, _ = looping_agent()
    with pytest.raises(spanbreaker.Tripped) as caught:
        agent.run("Sum")
    assert_no_leak()
    rig.assert_nothing_lost()
    first_trace = int(caught.value.trace_id, 16)
    assert healthy_agent().run("Again") == "2"
    assert_no_leak()
    roots = [s for s in rig.named(".run") if s.parent is None]
    assert len(roots) == 2
    assert roots[1].context.trace_id != first_trace
    assert all(s.context.trace_id != first_trace for s in rig.spans() if s.start_time >= roots[1].start_time)
    record = rig.processor.trip_record(first_trace)
    assert record is not None and record.detector == "error_loop" and record.step == "Step 4"
    rig.assert_nothing_lost()


def test_the_same_agent_runs_cleanly_after_a_trip(rig: Rig) -> None:
    agent, model = looping_agent()
    with pytest.raises(spanbreaker.Tripped):
        agent.run("Sum")
    model.script, model.calls = [final_code("fixed")], 0
    assert agent.run("Sum, properly") == "fixed"
    assert_no_leak()
    last = rig.named(".run")[-1]
    assert last.parent is None and last.status.status_code is StatusCode.OK
    rig.assert_nothing_lost()


def test_streaming_run_is_tripped_and_its_agent_span_keeps_the_error(rig: Rig) -> None:
    agent, model = looping_agent()
    steps: list[Any] = []
    with pytest.raises(spanbreaker.Tripped) as caught:
        for item in agent.run("Sum", stream=True):
            steps.append(item)
    assert caught.value.detector == "error_loop"
    assert model.calls == 4
    assert sum(isinstance(s, ActionStep) for s in steps) == 5  # smolagents yields the refused step from `finally`
    assert_no_leak()
    rig.assert_nothing_lost()
    rig.assert_trip_visible("error_loop")
    (run,) = rig.named(".run")
    assert run.status.status_code is StatusCode.ERROR  # the instrumentor alone would force OK here


def test_streaming_run_nests_its_steps_under_the_agent_span(rig: Rig) -> None:
    items = list(healthy_agent().run("Stream", stream=True))
    assert items
    assert_no_leak()
    (run,) = rig.named(".run")
    steps = [s for s in rig.spans() if s.name.startswith("Step")]
    assert steps and all(s.parent is not None and s.parent.span_id == run.context.span_id for s in steps)
    assert run.status.status_code is StatusCode.OK
    rig.assert_nothing_lost()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_abandoned_stream_still_ends_its_spans(rig: Rig) -> None:
    """smolagents' ``_run_stream`` yields from ``finally``, so closing it mid-run raises "generator ignored
    GeneratorExit" (without spanbreaker too); the spans must still all be ended."""
    agent, _ = looping_agent()
    stream = agent.run("Sum", stream=True)
    next(stream)
    stream.close()
    assert_no_leak()
    rig.assert_nothing_lost()


def test_model_error_ends_the_agent_span_with_error(rig: Rig) -> None:
    def fail(messages: list[Any]) -> ChatMessage:
        raise RuntimeError("provider unavailable")

    agent = CodeAgent(tools=[], model=ScriptedModel([fail]), verbosity_level=LogLevel.OFF)
    with pytest.raises(AgentGenerationError):
        agent.run("go")
    assert_no_leak()
    rig.assert_nothing_lost()
    (run,) = rig.named(".run")
    assert run.status.status_code is StatusCode.ERROR
    assert "AgentGenerationError" in (run.status.description or "")
    assert rig.marked() == []


def test_interrupt_ends_the_agent_span_with_error(rig: Rig) -> None:
    holder: dict[str, Any] = {}

    @tool
    def stop_now(reason: str) -> str:
        """Asks the agent to stop.

        Args:
            reason: why
        """
        holder["agent"].interrupt()
        return "stopping"

    agent = ToolCallingAgent(tools=[stop_now], model=ScriptedModel([call("stop_now", {"reason": "enough"}),
                                                                    final_call()]),
                             verbosity_level=LogLevel.OFF)
    holder["agent"] = agent
    with pytest.raises(AgentError, match="interrupted"):
        agent.run("go")
    assert_no_leak()
    rig.assert_nothing_lost()
    (run,) = rig.named(".run")
    assert run.status.status_code is StatusCode.ERROR


def test_a_callers_enclosing_span_stays_open_and_carries_the_trip(rig: Rig) -> None:
    tracer = rig.provider.get_tracer("app")
    agent, _ = looping_agent()
    with tracer.start_as_current_span("handle request") as request:
        with pytest.raises(spanbreaker.Tripped):
            agent.run("Sum")
        assert request.is_recording()  # the repair ended the agent's spans, not the caller's
        assert trace.get_current_span() is request
    assert_no_leak()
    rig.assert_nothing_lost()
    (root,) = rig.named("handle request")
    assert (root.attributes or {}).get("spanbreaker.detector") == "error_loop"
    rig.assert_trip_visible("error_loop")


def test_observe_mode_marks_but_never_stops(rig_factory: Any) -> None:
    rig = rig_factory(mode="observe")
    agent, model = looping_agent(max_steps=6)
    agent.run("Sum")  # max_steps ends it, as without spanbreaker
    assert model.calls == 7
    assert rig.marked()
    assert_no_leak()
    rig.assert_nothing_lost()


def test_uninstrument_removes_every_wrapper(rig: Rig) -> None:
    from spanbreaker.instrumentation import uninstrument

    uninstrument()
    assert not hasattr(CodeAgent.run, "__wrapped__")
    assert not hasattr(ScriptedModel.generate, "__wrapped__")
    assert "__init_subclass__" not in vars(Model)
    assert healthy_agent().run("plain") == "2"
    assert rig.spans() == []


def test_streaming_tool_calling_agent_and_managed_tree_stop_on_a_trip(rig: Rig) -> None:
    from .test_tool_calling_agent import web_search

    searches = ScriptedModel([call("web_search", {"query": "q3 revenue"})])
    helper = ToolCallingAgent(tools=[web_search], model=searches, name="researcher", description="Researches.",
                              max_steps=20, verbosity_level=LogLevel.OFF)
    top = CodeAgent(tools=[], model=ScriptedModel([code('print(researcher(task="Find Q3 revenue"))')]),
                    managed_agents=[helper], max_steps=20, verbosity_level=LogLevel.OFF)
    with pytest.raises(spanbreaker.Tripped) as caught:
        for _ in top.run("Report", stream=True):
            pass
    assert caught.value.detector == "tool_repeat"
    assert searches.calls == 5
    assert_no_leak()
    rig.assert_nothing_lost()
    rig.assert_trip_visible("tool_repeat")
    assert all(s.status.status_code is StatusCode.ERROR for s in rig.named(".run"))


def test_a_harness_retrying_after_a_trip_starts_the_retry_in_a_new_trace_or_resets(rig: Rig) -> None:
    """README ("How a trip reaches you"): the breaker is latched per trace, so a harness that retries a tripped run
    with a fresh agent inside the same trace meets the open breaker at the retry's first call; reset() first, or a
    retry in its own trace, gets a fresh breaker (a harness running fresh attempts, as aider's SWE-bench one does)."""
    tracer = rig.provider.get_tracer("harness")
    with tracer.start_as_current_span("solve instance") as root:
        trace_id = root.get_span_context().trace_id
        with pytest.raises(spanbreaker.Tripped):
            looping_agent()[0].run("attempt 1")
        with pytest.raises(spanbreaker.Tripped) as latched:
            healthy_agent().run("attempt 2, same trace")
        assert latched.value.trace_id == f"{trace_id:032x}"
        rig.processor.reset(trace_id)
        assert healthy_agent().run("attempt 3, after reset") == "2"
    with pytest.raises(spanbreaker.Tripped):
        looping_agent()[0].run("a run in its own trace")
    assert healthy_agent().run("the retry, in a trace of its own") == "2"
    rig.assert_nothing_lost()
    assert_no_leak()
