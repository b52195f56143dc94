"""Every detector proven twice: it trips on the failure it exists for, and stays quiet on the healthy
look-alike. Other detectors are disabled where they would fire on the same scenario, so each test proves the
detector it names (the framework suites run everything at defaults)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace as trace_api

import spanbreaker
from spanbreaker.config import DETECTOR_IDS

from .spans import Harness, attrs, make_harness


def only(detector: str, **overrides: object) -> Harness:
    """A harness where every detector but ``detector`` is disabled."""
    others = DETECTOR_IDS - {detector, "forced"}
    return make_harness(disabled_detectors=frozenset(others), **overrides)


def tripped(h: Harness) -> str | None:
    return h.trips[0].detector if h.trips else None


# ------------------------------------------------------------------------------------------ tool_repeat
def test_tool_repeat_trips_on_identical_call_and_result_before_the_call_runs(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        for n in range(1, 10):
            with harness.step(n):
                harness.llm()
                harness.tool("search", {"query": "otel span processor"}, output="[]")
    assert caught.value.detector == "tool_repeat"
    tools = harness.named("SimpleTool")
    assert len(tools) == 5  # four ran, the fifth was vetoed and exported as blocked
    assert attrs(tools[-1])["spanbreaker.blocked"] is True
    assert "spanbreaker.blocked" not in attrs(tools[0])


def test_tool_repeat_quiet_when_tests_rerun_after_each_edit(harness: Harness) -> None:
    with harness.agent():
        for n in range(1, 25):
            with harness.step(n):
                harness.llm()
                if n % 2:
                    harness.tool("bash", {"command": f"sed -i 's/v{n}/v{n + 1}/' src/module.py"}, output="")
                else:
                    harness.tool("bash", {"command": "python -m pytest tests/test_x.py"}, output="1 failed")
    assert harness.trips == []


def test_tool_repeat_quiet_on_pagination_and_on_changing_results(harness: Harness) -> None:
    with harness.agent():
        for page in range(1, 30):
            harness.tool("list_issues", {"page": page}, output=f"issues {page * 10}..{page * 10 + 9}")
        for attempt in range(10):
            harness.tool("job_status", {"job": "42"}, output=f"progress {attempt * 10}%")
    assert harness.trips == []


@pytest.mark.parametrize(("volatile", "overrides"), [("request_id", {}), ("trace_token", {
    "volatile_arg_keys": frozenset({"trace_token"})})], ids=["default-key", "configured-key"])
def test_tool_repeat_ignores_volatile_argument_keys(volatile: str, overrides: dict[str, Any]) -> None:
    """``volatile_arg_keys``: a client stamping every call with a fresh id (``request_id`` by default, or a key the
    user names: the configured set replaces the default one) still makes the same call; the fifth is vetoed."""
    h = make_harness(**overrides)
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(1, 10):
            with h.step(n):
                h.llm()
                h.tool("search", {"query": "otel span processor", volatile: f"r-{n}"}, output="[]")
    assert caught.value.detector == "tool_repeat" and len(h.named("SimpleTool")) == 5


def test_tool_repeat_reads_a_key_outside_volatile_arg_keys_as_the_call() -> None:
    """The look-alike: the same stamp under a key nobody named volatile makes every call a different one."""
    h = make_harness()
    with h.agent():
        for n in range(1, 10):
            with h.step(n):
                h.llm()
                h.tool("search", {"query": "otel span processor", "trace_token": f"r-{n}"}, output="[]")
    assert h.trips == [] and len(h.named("SimpleTool")) == 9


NO_NEW_OUTPUT = ("[The command has no new output after 30 seconds. You may wait longer to see additional output by "
                 "sending empty command '', send other commands to interact with the current process, send keys to "
                 "interrupt/kill the command, or use the timeout parameter in execute_bash for future commands.]")
"""OpenHands' answer to an empty command while a silent build runs (``openhands/runtime/utils/bash_constants.py``)."""


@pytest.mark.parametrize("answer", [NO_NEW_OUTPUT, '{"job": "42", "status": "running"}', "Index not ready yet"])
def test_tool_repeat_gives_a_wait_on_work_under_way_three_times_the_limit(answer: str) -> None:
    """An agent waiting on a silent build (or polling a job) asks the same and hears the same: polling, not a loop.
    A wait that never ends is still stopped, at three times the limit, the trip saying it was polling."""
    h = make_harness()
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(1, 30):
            with h.step(n):
                h.llm()
                h.tool("execute_bash", {"command": ""}, output=answer)
            if n == 12:
                assert h.trips == []  # eleven repeats: what a build or a job may take
    trip = caught.value
    assert (trip.detector, trip.evidence["polling"], trip.evidence["identical_calls"]) == ("tool_repeat", True, 13)
    assert len(h.named("SimpleTool")) == 13  # twelve ran, the thirteenth was vetoed


@pytest.mark.parametrize(("tool", "answer"), [
    ("bash", "Running 12 tests\n1 failed: test_parse"),
    ("get_order_details", '{"order_id": "#W4817420", "status": "pending", "items": 3}'),  # waits on nobody
])
def test_tool_repeat_is_not_loosened_by_words_about_running_or_pending(harness: Harness, tool: str,
                                                                        answer: str) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        for n in range(1, 10):
            with harness.step(n):
                harness.llm()
                harness.tool(tool, {"id": "42"}, output=answer)
    assert caught.value.detector == "tool_repeat" and "polling" not in caught.value.evidence


def test_tool_cycle_and_low_exploration_leave_a_wait_that_reads_the_log_alone(harness: Harness) -> None:
    """Waiting on a build by turns: an empty command (no new output), then the log's tail (unchanged)."""
    with harness.agent():
        for n in range(1, 12):
            with harness.step(n):
                harness.llm()
                harness.tool("execute_bash", {"command": ""}, output=NO_NEW_OUTPUT)
                harness.tool("execute_bash", {"command": "tail -n 5 build.log"}, output="[INFO] Compiling 214 files")
    assert harness.trips == []


def test_tool_repeat_trips_on_a_call_raising_the_same_error_again() -> None:
    """A tool that raised and returned nothing is known by its error: the same exception, message included."""
    h = only("tool_repeat")
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(1, 10):
            with h.step(n):
                h.llm()
                h.tool("fetch", {"url": "https://example.invalid/a"}, error=PermissionError("403 Forbidden"))
    assert caught.value.detector == "tool_repeat"


def test_tool_repeat_quiet_when_a_raised_error_says_something_new_each_time() -> None:
    """Look-alike: the same call raising the same class with another message each time (a job still running,
    another missing row) did not return the same thing twice, as two different result texts would not have."""
    h = only("tool_repeat")
    with h.agent():
        for n in range(1, 12):
            with h.step(n):
                h.llm()
                h.tool("job_result", {"job": "42"}, error=LookupError(f"job 42 not finished: {n * 9}% done"))
    assert h.trips == []


def test_tool_repeat_counts_a_model_turn_once_and_trips_when_the_model_asks_again() -> None:
    """The loop is the model seeing the same answer and asking again: five turns, each re-sending a batch of
    three identical calls with the identical error, trip at the fifth turn's first call."""
    h = only("tool_repeat")
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for n in range(1, 10):
            with h.step(n):
                h.llm()
                for _ in range(3):
                    h.tool("bash", {"command": "test -w /data && mkdir -p /data/cache"}, output='{"exitCode": 1}')
    assert tripped(h) == "tool_repeat"
    assert h.trips[0].evidence["identical_calls"] == 5
    assert len(h.named("SimpleTool")) == 13  # four turns of three ran; the fifth turn's first call was vetoed


@pytest.mark.parametrize("with_model_spans", [True, False])
def test_tool_repeat_counts_a_step_as_a_turn_where_no_model_call_is_recorded(with_model_spans: bool) -> None:
    """A trace without model call spans (a converter from tool logs, an instrumentor tracing only tools) still
    has its steps: each is one model turn. Three identical calls in a step count once; a fifth step asking again
    trips, with model call spans or without."""
    h = only("tool_repeat")
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for n in range(1, 10):
            with h.step(n):
                if with_model_spans:
                    h.llm()
                for _ in range(3):
                    h.tool("bash", {"command": "test -w /data && mkdir -p /data/cache"}, output='{"exitCode": 1}')
    assert h.trips[0].evidence["identical_calls"] == 5
    assert len(h.named("SimpleTool")) == 13


def test_tool_repeat_trips_on_tool_calls_alone_under_a_root_chain() -> None:
    """Tool calls alone under the trace's root CHAIN span (CrewAI's ``akickoff`` under the OpenInference wrapper
    records only ``Crew.kickoff`` and the tool spans): the root is the run, not one turn, so each identical call
    counts and the loop trips."""
    h = only("tool_repeat")
    with pytest.raises(spanbreaker.Tripped), h.tracer.start_as_current_span(
            "Crew.kickoff", attributes={"openinference.span.kind": "CHAIN"}):
        for _ in range(8):
            h.tool("search", {"query": "weather in Paris"}, output="no results")
    assert len(h.named("SimpleTool")) == 5


def test_tool_repeat_quiet_on_a_probe_repeated_within_steps_without_model_spans() -> None:
    """Look-alike, no model call spans: the probe six times in one step, then work, then three times: quiet."""
    h = only("tool_repeat")
    probe = {"command": "test -w /data && mkdir -p /data/cache"}
    with h.agent():
        with h.step(1):
            for _ in range(6):
                h.tool("bash", probe, output='{"exitCode": 1}')
        with h.step(2):
            h.tool("read_file", {"path": "src/app.py"}, output="def main(): ...")
        with h.step(3):
            for _ in range(3):
                h.tool("bash", probe, output='{"exitCode": 1}')
    assert h.trips == []


def test_tool_repeat_quiet_on_identical_calls_inside_one_turn() -> None:
    """Look-alike: a platform probe run several times at each hand-off (or a tool's own retries, a duplicated
    parallel batch): six identical calls in one turn, three more two turns later, work in between. The model
    never asked again after seeing the answer more than twice: quiet."""
    h = only("tool_repeat")
    probe = {"command": "test -w /data && mkdir -p /data/cache"}
    with h.agent():
        with h.step(1):
            h.llm()
            for _ in range(6):
                h.tool("bash", probe, output='{"exitCode": 1}')
        with h.step(2):
            h.llm()
            h.tool("read_file", {"path": "src/app.py"}, output="def main(): ...")
        with h.step(3):
            h.llm()
            for _ in range(3):
                h.tool("bash", probe, output='{"exitCode": 1}')
    assert h.trips == []


def test_low_exploration_counts_identical_calls_of_one_turn_once() -> None:
    """Look-alike for low_exploration: a probe run six times at each of two hand-offs is eleven stale calls
    but two decisions: quiet. The same probe asked again over separate turns trips at the window."""
    h = only("low_exploration")
    probe = {"command": "test -w /data && mkdir -p /data/cache"}
    with h.agent():
        for n in range(1, 3):
            with h.step(n):
                h.llm()
                for _ in range(6):
                    h.tool("bash", probe, output='{"exitCode": 1}')
    assert h.trips == []
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for n in range(1, 14):
            with h.step(n):
                h.llm()
                h.tool("bash", probe, output='{"exitCode": 1}')
    assert tripped(h) == "low_exploration"


def test_tool_repeat_exempts_polling_tools_on_the_allowlist() -> None:
    h = make_harness(allowlist=frozenset({"check_job_status"}))
    with h.agent():
        for _ in range(12):
            h.tool("check_job_status", {"job_id": "job-123"}, output="running")
    assert h.trips == []


def test_tool_repeat_per_tool_override() -> None:
    h = make_harness(tools={"fetch": spanbreaker.ToolPolicy(repeat_max=1)})
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for _ in range(3):
            h.tool("fetch", {"url": "https://example.invalid"}, output="403 Forbidden")
    assert len(h.named("SimpleTool")) == 2


def test_graduated_response_warns_before_the_trip(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped), harness.agent():
        for _ in range(5):
            harness.tool("search", {"q": "x"}, output="nothing")
    warned = [s for s in harness.named("SimpleTool") if any(e.name == "spanbreaker.warning" for e in s.events)]
    assert warned and warned[0].start_time < harness.named("SimpleTool")[-1].start_time


# ------------------------------------------------------------------------------------------ tool_streak
def test_tool_streak_trips_on_varied_queries_that_all_come_back_empty() -> None:
    h = only("tool_streak")
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for n in range(12):
            h.tool("search", {"query": f"completely different topic number {n} {'x' * n}"}, output="[]")
    assert tripped(h) == "tool_streak"
    assert h.trips[0].evidence["consecutive_calls"] == 10


def test_tool_streak_quiet_when_results_have_content() -> None:
    h = only("tool_streak")
    with h.agent():
        for n in range(40):
            h.tool("search", {"query": f"topic {n}"}, output="[]" if n % 3 else f"result {n}")
    assert h.trips == []


def test_tool_streak_polling_tool_gets_three_times_the_limit() -> None:
    h = only("tool_streak", allowlist=frozenset({"poll"}))
    with h.agent():
        for _ in range(29):
            h.tool("poll", {"job": "1"}, output="")
    assert h.trips == []
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for _ in range(31):
            h.tool("poll", {"job": "2"}, output="")
    assert tripped(h) == "tool_streak"


# ---------------------------------------------------------------------------------------- input_fixation
PARAPHRASES = [
    "python opentelemetry span processor example",
    "python opentelemetry span processor examples",
    "python opentelemetry span-processor example",
    "example python opentelemetry span processor",
    "python open telemetry span processor example",
    "python opentelemetry spanprocessor example",
    "opentelemetry python span processor example",
]


SEARCH_RESULT = ("1. Processors - opentelemetry.io/docs/concepts/signals/traces: span processors receive spans "
                 "on start and on end. 2. SDK reference - opentelemetry-python.readthedocs.io")


def test_input_fixation_trips_on_paraphrases_with_the_same_result() -> None:
    h = only("input_fixation")
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for query in PARAPHRASES:
            h.tool("web_search", {"query": query}, output=SEARCH_RESULT)
    assert tripped(h) == "input_fixation"


def test_input_fixation_quiet_on_faceted_search_with_differing_results() -> None:
    h = only("input_fixation")
    with h.agent():
        for n, query in enumerate(PARAPHRASES * 3):
            h.tool("web_search", {"query": query, "facet": n}, output=f"results for facet {n}: doc-{n * 7}")
    assert h.trips == []


# --------------------------------------------------------------------------------------- low_exploration
def test_low_exploration_trips_on_an_echo_loop() -> None:
    h = only("low_exploration")
    with pytest.raises(spanbreaker.Tripped), h.agent():
        for n in range(14):
            h.tool("search", {"query": f"facts about the treaty of {('Utrecht', 'Utrecht.')[n % 2]}"},
                   output="The treaty of Utrecht was signed in 1713 and ended the War of the Spanish Succession.")
            h.tool("summarise", {"text": f"The treaty of Utrecht was signed in 1713{'.' * (n % 3)}"},
                   output="Summary: signed in 1713; it ended the War of the Spanish Succession in Europe.")
    assert tripped(h) == "low_exploration"


def test_low_exploration_quiet_when_research_keeps_reaching_new_sources() -> None:
    h = only("low_exploration")
    with h.agent():
        for n in range(40):
            h.tool("search", {"query": f"source {n} on the treaty"}, output=f"document {n}: {n * 31} new facts")
            h.tool("summarise", {"text": f"document {n}"}, output=f"summary of doc {n} with fact {n * 17}")
    assert h.trips == []


# -------------------------------------------------------------------------------------------- error_loop
KEYERROR = ("Code execution failed at line 'print(d[\"missing\"])' due to: InterpreterError: "
            "Could not index {'a': 1} with 'missing': KeyError: 'missing'")


def test_error_loop_trips_on_the_same_root_exception_step_after_step(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        for n in range(1, 10):
            harness.failed_step(n, KEYERROR)
    assert caught.value.detector == "error_loop"
    assert caught.value.evidence["exception_type"] == "KeyError"
    assert len(harness.named("Step 4")) == 1 and not harness.named("Step 6")


def test_error_loop_quiet_when_each_fix_meets_a_different_error(harness: Harness) -> None:
    errors = ["KeyError: 'a'", "TypeError: bad operand", "KeyError: 'b'", "ValueError: x", "NameError: y",
              "KeyError: 'c'", "IndexError: z", "AttributeError: q"]
    with harness.agent():
        for n, error in enumerate(errors, 1):
            harness.failed_step(n, f"Code execution failed due to: {error}")
    assert harness.trips == []


def test_error_loop_on_tool_errors_directly_under_an_agent() -> None:
    h = only("error_loop")
    with pytest.raises(spanbreaker.Tripped), h.agent(name="Loop_Agent"):
        for n in range(5):
            h.tool("fetch", {"url": f"https://example.invalid/{n}"}, error=PermissionError("403 Forbidden"))
    assert tripped(h) == "error_loop"


def test_error_loop_without_steps_counts_a_model_turn_once() -> None:
    """No step spans (the OpenAI Agents SDK, pydantic-ai, LangGraph): the calls one model turn asked for are one
    decision. Four parallel reads failing alike in one turn are one failed step; the next turn's success ends it."""
    h = only("error_loop")
    with h.agent(name="Reader"):
        for turn in range(3):
            h.llm()
            for n in range(4):
                h.tool("read_file", {"path": f"missing_{turn}_{n}.txt"}, error=FileNotFoundError("no such file"))
            h.llm()
            h.tool("list_dir", {"path": f"src/{turn}"}, output=f"a.py b.py {turn}")
    assert h.trips == []


def test_error_loop_without_steps_counts_each_retry_of_one_call() -> None:
    """The same call failing again within one turn is the framework retrying it (BeeAI's ``retry_options``): each
    attempt is a step, so a retry storm trips as a loop of turns would."""
    h = only("error_loop")
    with pytest.raises(spanbreaker.Tripped), h.agent(name="Weather"):
        h.llm()
        for _attempt in range(6):
            h.tool("weather_api", {"city": "Paris"}, error=ConnectionError("connection refused"))
    assert tripped(h) == "error_loop" and h.trips[0].evidence["consecutive_steps"] == 4
    attempts = h.named("SimpleTool")  # four failed, the fifth vetoed before it ran
    assert [bool(s.attributes.get("spanbreaker.blocked")) for s in attempts] == [False] * 4 + [True]


def test_error_loop_without_steps_trips_on_model_turns_failing_alike() -> None:
    """The same error class turn after turn, one call each, is the loop: the fourth turn trips. A turn's last call
    decides it, as a step's does (an earlier failure in a turn that ends clean is not counted)."""
    h = only("error_loop")
    with pytest.raises(spanbreaker.Tripped), h.agent(name="Fetcher"):
        for turn in range(6):
            h.llm()
            if turn == 0:
                h.tool("fetch", {"url": "https://example.invalid/first"}, error=PermissionError("403 Forbidden"))
                h.tool("fetch", {"url": "https://example.invalid/other"}, output="fetched")
                continue
            h.tool("fetch", {"url": f"https://example.invalid/{turn}"}, error=PermissionError("403 Forbidden"))
    assert tripped(h) == "error_loop"
    assert h.trips[0].evidence["consecutive_steps"] == 4
    ran = [s for s in h.spans() if s.name == "ScriptedModel.generate" and not s.attributes.get("spanbreaker.blocked")]
    assert len(ran) == 5  # turn 0 (its failure ended clean), then turns 1-4; turn 5's model call is the one blocked


def test_error_loop_counts_across_runs_of_an_agent_a_team_calls_turn_after_turn() -> None:
    """A team's member runs once per turn (AutoGen's round robin: each turn an ``invoke_agent`` run of its own, under
    no agent span of the team's): its code failing alike turn after turn is the multi-agent code-repair loop, and a new
    run does not end the streak. (A chat traced as one trace, one run per user message, looks the same in the spans:
    BENCHMARKS.md, session 26, on why its failed lookups are counted in a row too.)"""
    h = only("error_loop")
    with pytest.raises(spanbreaker.Tripped), h.tracer.start_as_current_span("RoundRobinGroupChat.run"):
        for turn in range(6):
            with h.agent(name="executor", task=f"run the code of turn {turn}"):
                h.llm()
                h.tool("run_code", {"code": f"print(rows[{turn}])"}, error=NameError("name 'rows' is not defined"))
    assert tripped(h) == "error_loop" and h.trips[0].evidence["consecutive_steps"] == 4


# ------------------------------------------------------------------------------------------- format_loop
def test_format_loop_trips_on_unparsable_output_step_after_step(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        for n in range(1, 12):
            harness.failed_step(n, "Your code snippet is invalid: no <code> block",
                                etype="smolagents.utils.AgentParsingError")
    assert caught.value.detector == "format_loop"


def test_format_loop_quiet_when_the_model_recovers(harness: Harness) -> None:
    with harness.agent():
        for n in range(1, 30):
            if n % 5 < 3:
                harness.failed_step(n, "no code block", etype="FormatError")
            else:
                with harness.step(n):
                    harness.llm()
    assert harness.trips == []


# ---------------------------------------------------------------------------------------- context_growth
def messages(chars: int) -> str:
    return json.dumps([{"role": "user", "content": "x" * chars}])


def test_context_growth_vetoes_the_inflated_call_before_it_is_sent(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        for n in range(1, 4):
            with harness.step(n):
                harness.llm(prompt=2000 * n, input_value=messages(8000 * n))
        with harness.step(4):  # a step printed a huge DataFrame into the context
            harness.llm(prompt=260_000, input_value=messages(1_000_000))
    assert caught.value.detector == "context_growth"
    assert attrs(harness.named("ScriptedModel.generate")[-1])["spanbreaker.blocked"] is True


def chat(system: str, chars: int) -> str:
    return json.dumps([{"role": "system", "content": system}, {"role": "user", "content": "x" * chars}])


def test_context_growth_quiet_when_a_short_call_is_followed_by_another_conversation(harness: Harness) -> None:
    """A pipeline routes with a short prompt, then answers from a long document with another prompt: the second
    prompt did not grow from the first, so only its absolute size counts."""
    with harness.agent():
        for n in range(1, 4):
            with harness.step(n):
                harness.llm(input_value=chat("Classify the question: finance, legal or other.", 200))
                harness.llm(input_value=chat("Answer from the report below.\n" + "Revenue grew. " * 20_000, 200))
    assert harness.trips == []


@pytest.mark.parametrize("second", ["You are a careful analyst. The time is 10:42:07.",
                                    "You are a careful analyst. The time is 10:41:55."])
def test_context_growth_trips_when_the_same_conversation_jumps(harness: Harness, second: str) -> None:
    """The same first message (a clock in it aside) is the same conversation: a huge tool output it carries next
    is the jump the detector exists for."""
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        with harness.step(1):
            harness.llm(input_value=chat("You are a careful analyst. The time is 10:41:55.", 2000))
        with harness.step(2):
            harness.llm(input_value=chat(second, 400_000))
    assert caught.value.detector == "context_growth"


def test_context_growth_trips_on_a_stored_conversation_that_sends_only_the_new_items(harness: Harness) -> None:
    """The Responses API continuing a stored conversation (``previous_response_id``) sends the new items only: no
    first message to tell the conversation by, so the jump counts as before."""
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent():
        with harness.step(1):
            harness.llm(input_value=json.dumps({"input": "Summarise data.csv", "model": "gpt-4o"}))
        with harness.step(2):
            harness.llm(input_value=json.dumps({"input": [{"type": "function_call_output", "call_id": "call_1",
                                                           "output": "row,value\n" * 40_000}],
                                                "previous_response_id": "resp_1", "model": "gpt-4o"}))
    assert caught.value.detector == "context_growth"


def test_context_growth_quiet_on_steady_growth_over_a_long_run(harness: Harness) -> None:
    with harness.agent():
        for n in range(1, 31):
            with harness.step(n):
                harness.llm(prompt=3000 + 1500 * n, input_value=messages(12_000 + 6000 * n))
    assert harness.trips == []


# --------------------------------------------------------------------------------------------- budgets
def test_token_budget_sums_every_agent_in_the_trace() -> None:
    h = make_harness(max_tokens=5000)
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent(name="manager"):
        for n in range(10):
            with h.agent(name="worker", task=f"part {n}"):
                h.llm(prompt=900, completion=100)
    assert caught.value.detector == "token_budget"
    assert caught.value.evidence["tokens"] >= 5000


def test_call_budget_vetoes_the_call_past_the_budget() -> None:
    h = make_harness(max_model_calls=5)
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(10):
            with h.step(n):
                h.llm(prompt=10 + n)
    assert caught.value.detector == "call_budget"
    assert len(h.named("ScriptedModel.generate")) == 6


def test_call_budget_per_step_catches_a_tool_loop_inside_one_code_step() -> None:
    h = make_harness(max_tool_calls_per_step=20)
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent(), h.step(1):
        for n in range(100):
            h.tool("lookup", {"id": n}, output=f"row {n}")
    assert caught.value.detector == "call_budget"


def test_cost_budget_from_reported_cost_and_from_the_price_table() -> None:
    h = make_harness(max_cost_usd=0.05)
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for _ in range(20):
            h.llm(prompt=1000, completion=100, **{"llm.cost.total": 0.01})
    assert caught.value.detector == "cost_budget"
    priced = make_harness(max_cost_usd=0.05)
    with pytest.raises(spanbreaker.Tripped) as caught, priced.agent():
        for _ in range(20):
            priced.llm(prompt=10_000, completion=1000, model="gpt-4o")  # about $0.035 a call
    assert caught.value.detector == "cost_budget"


@pytest.mark.parametrize(("detector", "budget", "used"), [
    ("call_budget", {"max_model_calls": 10}, "calls"),
    ("token_budget", {"max_tokens": 1000}, "tokens"),
    ("cost_budget", {"max_cost_usd": 2.5}, "cost_usd"),
])
@pytest.mark.parametrize("fraction", [0.8, 0.5])
def test_budgets_warn_at_their_fraction_before_they_trip(detector: str, budget: dict[str, Any], used: str,
                                                         fraction: float) -> None:
    """``budget_warn_fraction``: one ``spanbreaker.warning`` event once a budget is that far used, then the trip.
    Each call is a tenth of every budget (one call, 100 tokens, $0.25 reported: exact in binary)."""
    h = make_harness(budget_warn_fraction=fraction, **budget)
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(30):
            with h.step(n):
                h.llm(prompt=90, completion=10, **{"llm.cost.total": 0.25})
    assert caught.value.detector == detector
    events = [(event.name, dict(event.attributes or {})) for span in h.spans() for event in span.events
              if (event.attributes or {}).get("spanbreaker.detector") == detector]
    warnings = [attributes for name, attributes in events if name == "spanbreaker.warning"]
    assert len(warnings) == 1
    limit = next(iter(budget.values()))
    assert warnings[0][f"spanbreaker.evidence.{used}"] == limit * fraction
    assert caught.value.evidence[used] >= limit


def test_budgets_quiet_on_a_legitimately_long_run(harness: Harness) -> None:
    with harness.agent():
        for n in range(1, 131):  # the longest successful SWE-bench run had 132 model calls
            with harness.step(n):
                harness.llm(prompt=20_000, completion=400, model="gpt-4o-mini")
                harness.tool("bash", {"command": f"cat file_{n}.py"}, output=f"contents {n}")
    assert harness.trips == []


# ------------------------------------------------------------------------------------------ delegation
def test_delegation_depth_trips_on_excessive_nesting(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="a1"), harness.agent(name="a2"), \
            harness.agent(name="a3"), harness.agent(name="a4"), harness.agent(name="a5"):
        harness.llm()
    assert caught.value.detector == "delegation_depth"


def test_delegation_cycle_trips_when_an_agent_reenters_its_chain(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="orchestrator"), \
            harness.agent(name="specialist"), harness.agent(name="orchestrator"):
        harness.llm()
    assert caught.value.detector == "delegation_cycle"


def test_an_agent_span_directly_inside_its_own_is_one_agent_not_a_cycle(harness: Harness) -> None:
    """The application's span named after the agent (``analyst.run``, an agent by its name) around the framework's
    ``invoke_agent analyst``, or two instrumentors' agent spans for one run: the same agent, directly nested, is
    not a re-entry (it tripped delegation_cycle at the first call). Through one of its steps it still is."""
    with harness.agent(name="analyst"), harness.agent(name="analyst"), harness.agent(name="analyst"):
        harness.llm()
        harness.tool("search", {"q": "a"}, "one")
    assert harness.trips == []
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="analyst"), harness.step(1), \
            harness.agent(name="analyst"):
        harness.llm()
    assert caught.value.detector == "delegation_cycle"


def test_normal_orchestrator_specialist_answer_is_quiet(harness: Harness) -> None:
    with harness.agent(name="orchestrator"):
        harness.llm()
        for specialist in ("researcher", "writer"):
            with harness.agent(name=specialist, task=f"{specialist} task") as span:
                harness.llm()
                span.set_attribute("output.value", f"{specialist} done")
        harness.llm()
    assert harness.trips == []


def test_a_tool_span_inside_the_same_tools_span_of_another_convention_is_one_call(harness: Harness) -> None:
    """Two instrumentors around one call (OpenInference's AutoGen tool span around autogen-core's GenAI
    ``execute_tool`` span): the outer span, which carries the arguments, counts; the inner one is the same call.
    A different tool inside still counts on its own, and so does a tool span of the same convention inside its
    tool's span (BeeAI's retry attempts: each a new execution)."""
    processor, tracer = harness.processor, harness.tracer
    with harness.agent(name="assistant"):
        for query in ("a", "b", "c"):
            outer = {"openinference.span.kind": "TOOL", "tool.name": "search", "input.value": json.dumps({"q": query})}
            inner = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                     "gen_ai.tool.call.arguments": json.dumps({"q": query})}
            with tracer.start_as_current_span("assistant.search", attributes=outer), \
                    tracer.start_as_current_span("execute_tool search", attributes=inner):
                pass
        trace = processor.engine.trace(trace_api.get_current_span().get_span_context().trace_id)
        assert trace is not None and trace.totals.tool_calls == 3
        with tracer.start_as_current_span("assistant.search", attributes={
                "openinference.span.kind": "TOOL", "tool.name": "search", "input.value": "{}"}):
            harness.tool("fetch", {"url": "u"}, "page")
        assert trace.totals.tool_calls == 5
        with tracer.start_as_current_span("assistant.search", attributes={
                "openinference.span.kind": "TOOL", "tool.name": "search", "input.value": "{}"}):
            harness.tool("search", {}, "retried")
        assert trace.totals.tool_calls == 7
    assert harness.trips == []


def test_delegation_repeat_trips_on_the_same_task_and_the_same_answer(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="leader"):
        for _ in range(6):
            harness.llm()
            with harness.agent(name="researcher", task="find the revenue figure") as span:
                harness.llm()
                span.set_attribute("output.value", "I could not find it")
    assert caught.value.detector == "delegation_repeat"


def test_delegation_repeat_quiet_when_the_answers_change(harness: Harness) -> None:
    with harness.agent(name="leader"):
        for n in range(8):
            harness.llm()
            with harness.agent(name="researcher", task="next chapter") as span:
                harness.llm()
                span.set_attribute("output.value", f"chapter {n}")
    assert harness.trips == []


# ---------------------------------------------------------------------------------- validation_failures
def test_validation_failures_trips_on_repeated_invalid_structured_output(harness: Harness) -> None:
    with harness.agent(name="team"):
        for n in range(3):
            with harness.agent(name="extractor", task=f"doc {n}") as span:
                harness.llm()
                span.set_attribute("spanbreaker.validation_failed", True)
    assert tripped(harness) == "validation_failures"


def test_validation_failures_counted_per_session_across_traces(harness: Harness) -> None:
    for _ in range(3):
        with harness.agent(name="extractor", **{"session.id": "s-1"}) as span:
            harness.llm()
            span.set_attribute("spanbreaker.validation_failed", True)
    assert tripped(harness) == "validation_failures"


def test_validation_failures_quiet_on_a_long_session_whose_output_fails_now_and_then(harness: Harness) -> None:
    """A chat session lives for hours: two failures, a valid answer, two failures, ... is never a retry loop."""
    for n in range(12):
        with harness.agent(name="extractor", **{"session.id": "s-3"}) as span:
            harness.llm()
            if n % 3 < 2:
                span.set_attribute("spanbreaker.validation_failed", True)
            else:
                span.set_attribute("output.value", '{"city": "Paris"}')
    assert harness.trips == []


def test_validation_failures_in_a_row_are_counted_per_agent_within_a_trace(harness: Harness) -> None:
    """Another agent's valid output between two failures of the extractor does not break the extractor's run."""
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="team"):
        for n in range(3):
            with harness.agent(name="extractor", task=f"doc {n}") as span:
                harness.llm()
                span.set_attribute("spanbreaker.validation_failed", True)
            with harness.agent(name="summariser", task=f"doc {n}") as span:  # the third is refused at its start
                harness.llm()
                span.set_attribute("output.value", "fine")
    assert (caught.value.detector, caught.value.evidence["agent"]) == ("validation_failures", "extractor")


def test_validation_quiet_when_outputs_validate(harness: Harness) -> None:
    for _ in range(6):
        with harness.agent(name="extractor", **{"session.id": "s-2"}) as span:
            harness.llm()
            span.set_attribute("output.value", '{"city": "Paris"}')
    assert harness.trips == []


# --------------------------------------------------------------------------------------- session_bloat
def history_input(messages_from_history: int) -> str:
    history = [{"role": "user", "content": f"old message {n}", "from_history": True}
               for n in range(messages_from_history)]
    return json.dumps([{"role": "system", "content": "sys"}, *history, {"role": "user", "content": "new"}])


def test_session_bloat_stops_the_run_at_the_first_model_call(harness: Harness) -> None:
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="Assistant"):
        harness.llm(input_value=history_input(400))
    assert caught.value.detector == "session_bloat"
    assert attrs(harness.named("ScriptedModel.generate")[0])["spanbreaker.blocked"] is True


def test_a_few_huge_history_messages_trip_session_bloat_by_size(harness: Harness) -> None:
    """The size limit alone: ten history messages, far under the message limit, re-send ~75k tokens."""
    history = [{"role": "user", "content": "log line\n" * 3_000, "from_history": True} for _ in range(10)]
    prompt = json.dumps([{"role": "system", "content": "sys"}, *history, {"role": "user", "content": "new"}])
    with pytest.raises(spanbreaker.Tripped) as caught, harness.agent(name="Assistant"):
        harness.llm(input_value=prompt)
    assert caught.value.detector == "session_bloat"
    # the messages are counted in the prompt's first max_attribute_chars characters (bounded work per span): two here
    assert caught.value.evidence["history_messages"] == 2
    assert caught.value.reason.startswith(
        "first call of a reused session: at least 2 history messages in a prompt of ~")
    assert caught.value.evidence["estimated_tokens"] > caught.value.evidence["limit_tokens"] == 60_000


def test_a_large_first_prompt_without_history_is_not_session_bloat(harness: Harness) -> None:
    """The same size sent as the run's own task (a document to read), nothing from a session's history: not
    bloat, and under ``max_prompt_tokens``."""
    prompt = json.dumps([{"role": "system", "content": "sys"},
                         {"role": "user", "content": "log line\n" * 30_000, "from_history": False}])
    with harness.agent(name="Assistant"):
        harness.llm(input_value=prompt)
        harness.llm(input_value=prompt)
    assert harness.trips == []


def test_session_within_bounds_is_quiet(harness: Harness) -> None:
    for run in range(5):
        with harness.agent(name="Assistant"):
            harness.llm(input_value=history_input(8 * run))
            harness.llm(input_value=history_input(8 * run))
    assert harness.trips == []
