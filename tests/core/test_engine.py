"""The engine without the SDK: ids, names, attributes, events and status in, verdicts out; span conventions as
plug-ins; one detector registry; the adapters' shared undo log; shared state's threads make no spans."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Status, StatusCode

from spanbreaker import BreakerConfig, ConfigError
from spanbreaker.adapters.base import PatchLog, SharedPatches
from spanbreaker.conventions import CONVENTIONS, classify, frameworks, genai, openinference
from spanbreaker.conventions.read import agent_start, fill_model_result, model_start, tool_start
from spanbreaker.detectors import ALL_DETECTORS, DETECTOR_IDS
from spanbreaker.engine import BreakerEngine
from spanbreaker.kinds import Kind
from spanbreaker.signals import ModelCall
from spanbreaker.state.quiet import quiet
from spanbreaker.verdict import Action, Verdict

TRACE, AGENT = 0xABC, 1
OK = Status(StatusCode.OK)
AGENT_ATTRS = {"openinference.span.kind": "AGENT", "input.value": "find the bug"}


def _tool_attrs(query: str) -> dict[str, Any]:
    return {"openinference.span.kind": "TOOL", "tool.name": "search", "input.value": json.dumps({"q": query})}


def _loop(engine: BreakerEngine, calls: int, warnings: list[Verdict] | None = None) -> Verdict | None:
    """An agent that calls the same search with the same answer; the first verdict that is not a warning."""
    assert engine.start(TRACE, AGENT, None, False, "CodeAgent.run", AGENT_ATTRS, "agent-handle") is None
    for span_id in range(10, 10 + calls):
        for verdict in (engine.start(TRACE, span_id, AGENT, False, "SearchTool", _tool_attrs("same"),
                                     f"tool-{span_id}"),
                        engine.end(TRACE, span_id, {"output.value": "nothing useful"}, (), OK)):
            if verdict is not None and verdict.action is Action.WARN:
                (warnings if warnings is not None else []).append(verdict)
            elif verdict is not None:
                return verdict
    return None


def test_the_engine_is_fed_plain_data_and_answers_a_loop_with_a_block_verdict() -> None:
    engine = BreakerEngine(BreakerConfig())
    warnings: list[Verdict] = []
    verdict = _loop(engine, 8, warnings)
    assert verdict is not None and verdict.action is Action.BLOCK and verdict.new_trip
    assert verdict.record is not None and verdict.record.detector == "tool_repeat"
    blocked_id = verdict.mark_ids[0]
    assert verdict.block == f"tool-{blocked_id}" and verdict.marks[0] == verdict.block  # the handle fed at start
    assert AGENT in verdict.mark_ids and "agent-handle" in verdict.marks  # its open ancestors are marked too
    # the warning came one call earlier, as its own verdict, to be marked on that call's span
    assert [w.detector for w in warnings] == ["tool_repeat"] and warnings[0].mark_ids == (blocked_id - 1,)
    assert engine.trip_record(f"{TRACE:032x}") is verdict.record
    assert engine.stats.trips == 1 and engine.stats.blocked == 1
    # the breaker is latched: the next call meets it open (a block that is not a new trip)
    again = engine.start(TRACE, 99, AGENT, False, "SearchTool", _tool_attrs("other"), "tool-99")
    assert again is not None and again.action is Action.BLOCK and not again.new_trip and again.mark_ids == ()


def test_observe_mode_trips_without_blocking_and_steer_sits_below_a_trip() -> None:
    engine = BreakerEngine(BreakerConfig(mode="observe"))
    verdict = _loop(engine, 8)
    assert verdict is not None and verdict.action is Action.TRIP and verdict.block is None
    assert Action.WARN < Action.STEER < Action.TRIP < Action.BLOCK  # steer sits between a warning and a stop


def test_end_of_the_root_forgets_the_trace_and_bad_input_never_raises() -> None:
    engine = BreakerEngine(BreakerConfig())
    assert engine.start(TRACE, AGENT, None, False, "CodeAgent.run", AGENT_ATTRS, None) is None
    assert engine.start(TRACE, 2, AGENT, False, 12345, {"openinference.span.kind": ["odd"]}, None) is None  # type: ignore[arg-type]
    assert engine.end(TRACE, 2, {"output.value": object()}, [object()], object()) is None
    assert engine.end(TRACE, AGENT, {}, (), OK) is None
    assert engine.trace(TRACE) is None and engine.stats.internal_errors == 0


def test_genai_semconv_spans_are_classified_and_read_without_openinference_keys() -> None:
    assert classify("chat gpt-4o", {"gen_ai.operation.name": "chat"}) is Kind.LLM
    assert classify("execute_tool search", {}) is Kind.TOOL
    assert classify("invoke_agent planner", {}) is Kind.AGENT
    call = tool_start("execute_tool search", {"gen_ai.tool.call.arguments": '{"q": "x"}'}, frozenset(), 4096)
    assert call.name == "search" and call.raw_args == '{"q": "x"}'
    assert agent_start("invoke_agent planner", {"gen_ai.conversation.id": "s1"}, 4096).session == "s1"
    model = model_start("chat", {"gen_ai.request.model": "gpt-4o"}, 4096)
    fill_model_result(model, {"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5}, 4096)
    assert isinstance(model, ModelCall) and model.model == "gpt-4o" and model.tokens == 15


def test_session_history_is_counted_only_when_the_engine_asks() -> None:
    """Counting re-sent history scans the prompt (up to ``cap`` characters): the engine asks for it at an agent's
    first model call alone, the one ``session_bloat`` judges; the count is the same either way it is read."""
    history = json.dumps([{"role": "user", "content": f"old {n}", "from_history": True} for n in range(5)])
    messages = json.dumps([{"role": "user", "content": f"old {n}"} for n in range(5)]
                          + [{"role": "assistant", "content": "answer"}, {"role": "user", "content": "new"}])
    assert model_start("Agent.invoke", {"input.value": history}, 65_536).history_messages == 5
    assert model_start("Agent.invoke", {"input.value": history}, 65_536, history=False).history_messages == 0
    assert model_start("chat m", {"gen_ai.input.messages": messages}, 65_536).history_messages == 6
    assert model_start("chat m", {"gen_ai.input.messages": messages}, 65_536, history=False).history_messages == 0
    at_end = model_start("chat m", {}, 65_536)
    at_end.first_in_scope = True  # session_bloat marks an agent's first call whose messages come at its end
    fill_model_result(at_end, {"gen_ai.input.messages": messages}, 65_536)
    later = model_start("chat m", {}, 65_536)
    fill_model_result(later, {"gen_ai.input.messages": messages}, 65_536)
    assert (at_end.history_messages, later.history_messages) == (6, 0)
    assert at_end.input_chars == later.input_chars == len(messages)


def test_framework_quirks_live_in_their_convention_module() -> None:
    assert classify("Step 3", {}) is Kind.CHAIN and classify("CodeAgent.run", {}) is Kind.AGENT
    assert classify("OpenAIChat.invoke", {}) is Kind.LLM  # Agno's LLM span after its kind was evicted
    assert "AgentExecutionError" in frameworks.WRAPPER_ERRORS
    # each convention owns its keys in one table, and no two conventions claim the same key
    keys = [key for convention in CONVENTIONS for key in convention.KEYS.values()]
    assert len(keys) == len(set(keys))
    assert openinference.SPAN_KIND in openinference.KEYS.values() and genai.OPERATION in genai.KEYS.values()


def test_one_detector_registry_is_what_configuration_validates_against() -> None:
    assert {cls.id for cls in ALL_DETECTORS} | {"forced"} == DETECTOR_IDS
    with pytest.raises(ConfigError, match="no_such_detector"):
        BreakerConfig(disabled_detectors=frozenset({"no_such_detector"}))


def test_patch_log_restores_exactly_what_was_there() -> None:
    class Base:
        def hook(self) -> str:
            return "base"

    class Child(Base):
        def own(self) -> str:
            return "own"

    log = PatchLog()
    log.patch(Child, "own", lambda self: "patched")
    log.patch(Child, "hook", lambda self: "patched")  # inherited: undo must delete it, not copy Base's onto Child
    log.wrap(Child, "own", lambda wrapped, instance, args, kwargs: "wrapped " + wrapped(*args, **kwargs))
    assert Child().own() == "wrapped patched" and Child().hook() == "patched"
    log.undo()
    assert Child().own() == "own" and "hook" not in vars(Child) and Child().hook() == "base"
    assert not log


def test_shared_patches_are_applied_once_while_either_adapter_holds_them() -> None:
    """Two adapters (one per instrumentor of a framework) need the same patches: wrapped once, not twice, and put
    back only when the last one is undone; a release whose internals differ raises and leaves nothing behind."""

    class Framework:
        def run(self) -> str:
            return "ran"

    shared = SharedPatches(lambda patches: patches.wrap(
        Framework, "run", lambda wrapped, instance, args, kwargs: "shown " + wrapped(*args, **kwargs)))
    first, second = PatchLog(), PatchLog()
    shared.hold("first", first)
    shared.hold("second", second)
    assert Framework().run() == "shown ran"
    first.undo()
    assert Framework().run() == "shown ran"
    second.undo()
    assert Framework().run() == "ran" and "run" in vars(Framework)

    def broken(patches: PatchLog) -> None:
        patches.patch(Framework, "run", lambda self: "half")
        raise RuntimeError("another release")

    failing, log = SharedPatches(broken), PatchLog()
    with pytest.raises(RuntimeError):
        failing.hold("first", log)
    assert Framework().run() == "ran" and not log


def test_shared_state_threads_run_with_instrumentation_suppressed() -> None:
    seen: list[bool] = []
    thread = threading.Thread(target=quiet(lambda: seen.append(is_instrumentation_enabled())))
    thread.start()
    thread.join()
    assert seen == [False] and is_instrumentation_enabled()
