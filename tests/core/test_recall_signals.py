"""The signals added for recall on real runaways (issue 13 item 3), each proven twice: it trips on the failure
read in a real corpus, and stays quiet on the healthy look-alike. Every other detector is disabled where it
would fire on the same scenario, so each test proves the signal it names."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanbreaker
from spanbreaker import progress
from spanbreaker.config import DETECTOR_IDS
from spanbreaker.conventions import ledger as ledger_module

from .spans import Harness, make_harness


def only(detector: str, **overrides: object) -> Harness:
    others = DETECTOR_IDS - {detector, "forced"}
    return make_harness(disabled_detectors=frozenset(others), **overrides)


# ------------------------------------------------------------------------------------ self_reported_stall
def ledger(in_loop: bool, progress: bool) -> str:
    """A Magentic-One orchestrator's progress ledger, as its model writes it (reasons with braces and quotes)."""
    return "Updated Ledger:\n" + json.dumps({
        "is_request_satisfied": {"reason": "The {C-suite} list is not \"complete\" yet.", "answer": False},
        "is_in_loop": {"reason": "We keep asking WebSurfer for the same page.", "answer": in_loop},
        "is_progress_being_made": {"reason": "No new facts in the last rounds.", "answer": progress},
        "next_speaker": {"reason": "WebSurfer can browse.", "answer": "WebSurfer"},
    }, indent=2)


def orchestrate(h: Harness, rounds: list[tuple[bool, bool]]) -> None:
    """One round: the ledger call, the instruction call, then WebSurfer re-worded each time (no exact repeat)."""
    with h.agent(name="Orchestrator", task="Which executives joined after the IPO?"):
        for n, (in_loop, progress) in enumerate(rounds, 1):
            with h.step(n):
                h.llm(**{"output.value": ledger(in_loop, progress)})
                h.llm(**{"output.value": f"Please search again, variant {n}, for the executives list."})
                h.tool("web_browser", {"instruction": f"search variant {n} for the executives"},
                       output=f"I typed 'executives {n}' into the search bar. Here is a screenshot ...")


def test_self_reported_stall_trips_when_the_ledger_flags_a_loop_round_after_round() -> None:
    h = only("self_reported_stall")
    with pytest.raises(spanbreaker.Tripped) as caught:
        orchestrate(h, [(False, True), (False, True), (True, False), (True, False), (False, False), (True, True)])
    assert caught.value.detector == "self_reported_stall"
    assert caught.value.evidence["consecutive_rounds"] == 3
    assert len(h.named("Step 6")) == 0  # stopped in round 5, before WebSurfer ran again


def test_self_reported_stall_quiet_when_the_orchestrator_recovers_after_a_stall() -> None:
    """Look-alike: two flagged rounds, then a round that moves on, again and again; and a long run whose ledger
    says it progresses every round. Neither reaches three flags in a row."""
    h = only("self_reported_stall")
    orchestrate(h, [(True, False), (False, False), (False, True)] * 6 + [(False, True)] * 20)
    assert h.trips == []


def orchestrate_genai(h: Harness, rounds: list[tuple[bool, bool]]) -> None:
    """The same rounds as an instrumentor of the GenAI conventions records them (AutoGen's own tracing): no step
    spans, and the ledger is the text of a part in ``gen_ai.output.messages``, a JSON string inside JSON."""
    def chat(text: str) -> None:
        with h.tracer.start_as_current_span("chat gpt-4o", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}) as span:
            span.set_attribute("gen_ai.output.messages", json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}]))

    with h.tracer.start_as_current_span("invoke_agent Orchestrator", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Orchestrator"}):
        for n, (in_loop, progress) in enumerate(rounds, 1):
            chat(ledger(in_loop, progress))
            chat(f"Please search again, variant {n}, for the executives list.")
            with h.tracer.start_as_current_span("execute_tool web_browser", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "web_browser",
                    "gen_ai.tool.call.arguments": json.dumps({"instruction": f"search variant {n}"})}) as tool:
                tool.set_attribute("gen_ai.tool.call.result", f"I typed 'executives {n}'. Here is a screenshot ...")


def test_self_reported_stall_reads_the_ledger_in_genai_output_messages() -> None:
    h = only("self_reported_stall")
    with pytest.raises(spanbreaker.Tripped) as caught:
        orchestrate_genai(h, [(False, True), (True, False), (True, False), (True, True), (False, True)])
    assert caught.value.detector == "self_reported_stall"
    assert caught.value.evidence["consecutive_rounds"] == 3
    assert len([s for s in h.spans() if s.name == "execute_tool web_browser"]) == 3  # stopped before round 4's


def test_self_reported_stall_quiet_on_genai_ledgers_that_recover() -> None:
    h = only("self_reported_stall")
    orchestrate_genai(h, [(True, False), (False, False), (False, True)] * 6)
    assert h.trips == []


@given(st.text(max_size=200))
@settings(max_examples=60, deadline=None)
def test_ledger_read_the_same_inside_genai_messages(reason: str) -> None:
    """A ledger quoted inside GenAI output messages answers as the ledger itself does, whatever its reasons hold
    (quotes, backslashes, braces, non-ASCII)."""
    for in_loop, made_progress in ((True, True), (False, True), (False, False)):
        text = json.dumps({"is_in_loop": {"reason": reason, "answer": in_loop},
                           "is_progress_being_made": {"reason": reason, "answer": made_progress}})
        wrapped = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])
        assert ledger_module.stalled(wrapped) == ledger_module.stalled(text)


# ------------------------------------------------------------------------- tool errors read from output text
SECRET = "ProjectApollo"
"""Stands for user data inside a tool's output: it must never reach what spanbreaker writes."""


def ag2_failure(n: int, root: str = "ModuleNotFoundError") -> str:
    """AG2's code executor: the failure is only in the text (the span is clean)."""
    return (f"exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\n"
            f"  File \"tmp_code_{n}.py\", line {n}, in <module>\n    import {SECRET}Client\n"
            f"{root}: No module named '{SECRET}Client'\n")


def test_error_loop_sees_an_execution_failure_reported_only_as_text() -> None:
    """A CaptainAgent-style terminal: each step runs new code and the executor answers ``exitcode: 1`` with the
    same root class in its traceback, as text. The step spans end clean; error_loop still counts them."""
    h = only("error_loop")
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent(name="Computer_terminal"):
        for n in range(1, 10):
            with h.step(n):
                h.llm()
                h.tool("execute_code", {"code": f"import client_{n}; client_{n}.run()"}, output=ag2_failure(n))
    assert caught.value.detector == "error_loop"
    assert caught.value.evidence["exception_type"] == "ModuleNotFoundError"
    assert caught.value.evidence["consecutive_steps"] == 4
    written = repr([caught.value.reason, caught.value.evidence, h.trips[0].reason]) + repr(
        [(k, v) for s in h.spans() for k, v in (s.attributes or {}).items() if k.startswith("spanbreaker")])
    assert SECRET not in written  # only the class name comes out of the text


def test_error_loop_quiet_when_text_failures_change_or_a_run_succeeds() -> None:
    """Look-alike: fixing one error and meeting another, and a run that succeeds in between."""
    h = only("error_loop")
    roots = ["ModuleNotFoundError", "NameError", "ModuleNotFoundError", "TypeError", "ModuleNotFoundError"]
    with h.agent(name="Computer_terminal"):
        for n, root in enumerate(roots * 3, 1):
            with h.step(n):
                h.llm()
                output = "exitcode: 0 (execution succeeded)\nCode output: 42" if n % 4 == 0 else ag2_failure(n, root)
                h.tool("execute_code", {"code": f"attempt({n})"}, output=output)
    assert h.trips == []


def test_structured_error_wins_over_the_text() -> None:
    h = only("error_loop")
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent(name="Loop_Agent"):
        for n in range(6):
            h.tool("shell", {"cmd": f"run {n}"}, error=PermissionError("bash: run: command not found"))
    assert caught.value.evidence["exception_type"] == "PermissionError"


def test_tool_streak_counts_command_not_found_with_varied_arguments() -> None:
    """The shell answers every guess with "command not found" as ordinary output."""
    h = only("tool_streak")
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(12):
            h.tool("bash", {"command": f"tool{n} --run"}, output=f"/bin/sh: 1: tool{n}: command not found")
    assert caught.value.detector == "tool_streak"
    assert caught.value.evidence["consecutive_calls"] == 10


def rejected_edit(start: int) -> str:
    return ("Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit "
            f"commmand.\n\nERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your edit would have "
            f"looked if applied\n-------------------------------------------------\n[File: /repo/reproduce.py "
            f"({start + 20} lines total)]\n({start - 1} more lines above)\n{start}:    {SECRET} = 1\n")


def test_rejected_edits_at_varying_lines_are_a_streak_not_an_error_loop() -> None:
    """SWE-agent rejects an edit the linter refuses and leaves the file as it was. Ten rejections in a row at
    varying line numbers: tool_streak trips. A rejected edit is a malformed action (a format error), so
    error_loop leaves it alone: four rejections then an edit that applies is an agent fixing its indentation."""
    h = make_harness()
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent(name="Reproducer"):
        for n in range(1, 14):
            with h.step(n):
                h.llm()
                h.tool("edit", {"args": f"{10 + n}:{12 + n}\n    x = {n}\nend_of_edit"}, output=rejected_edit(10 + n))
    assert caught.value.detector == "tool_streak"
    healthy = make_harness()
    with healthy.agent(name="Reproducer"):
        for n in range(1, 40):
            with healthy.step(n):
                healthy.llm()
                if n % 6:
                    healthy.tool("edit", {"args": f"{n}:{n + 2}\n    y = {n}\nend_of_edit"}, output=rejected_edit(n))
                else:
                    healthy.tool("edit", {"args": f"{n}:{n + 2}\ny = {n}\nend_of_edit"},
                                 output=f"[File: /repo/reproduce.py ({n + 20} lines total)]\n{n}:y = {n}\n")
    assert healthy.trips == []


# ------------------------------------------------------------------ input_fixation: counts are information
SWEEP = ["model_fields", "foreign_object", "one_to_one", "basic", "model_forms", "many_to_one"]


def test_input_fixation_quiet_on_a_test_sweep_whose_counts_differ() -> None:
    """Look-alike: one test command over module after module; every answer is "Ran N tests ... OK" with a
    different N (and a different duration). Different counts are different answers."""
    h = only("input_fixation")
    with h.agent():
        for n, module in enumerate(SWEEP, 1):
            with h.step(n):
                h.llm()
                h.tool("bash", {"command": f"cd /code/project && python tests/runtests.py {module} --verbosity 1"},
                       output=(f"System check identified no issues (0 silenced).\n{'-' * 70}\n"
                               f"Ran {n * 17 + 3} tests in {n * 0.131:.3f}s\n\nOK (skipped={n})\n"))
    assert h.trips == []


def test_input_fixation_trips_when_only_durations_differ() -> None:
    """The failure: paraphrased runs of one check that answer the same counts, only the duration changing."""
    h = only("input_fixation")
    variants = ["pylint --bad-names-rgxs='(foo{1,3})' t.py", "pylint --bad-names-rgxs='(foo{1,3}) ' t.py",
                "pylint --bad-names-rgxs=' (foo{1,3})' t.py", "pylint  --bad-names-rgxs='(foo{1,3})' t.py",
                "pylint --bad-names-rgxs='(foo{1,3})'  t.py"]
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n, command in enumerate(variants, 1):
            with h.step(n):
                h.llm()
                h.tool("bash", {"command": command},
                       output=("************* Module t\nt.py:1:0: C0104: Disallowed name \"foo\" (disallowed-name)\n"
                               f"t.py:2:0: C0104: Disallowed name \"bar\" (disallowed-name)\n\n{'-' * 30}\n"
                               f"Your code has been rated at 0.00/10 (checked in {n * 0.07:.2f}s)\n"))
    assert caught.value.detector == "input_fixation"


def test_input_fixation_quiet_on_edits_acknowledged_alike() -> None:
    """Look-alike: edits of sibling methods in one file, each answered with the same short acknowledgement.
    Edits are changes; a one-line acknowledgement carries no facts to compare."""
    h = only("input_fixation")
    with h.agent():
        for n, method in enumerate(["__rmul__", "__radd__", "__rsub__", "__rsub__ ", "__rtruediv__"], 1):
            with h.step(n):
                h.llm()
                h.tool("edit_file", {"path": "geometry/entity.py", "old": f"def {method}(self, o)",
                                     "new": f"def {method}(self, other)"},
                       output="Successfully edited file: /code/geometry/entity.py (1 replacement made)")
    assert h.trips == []


def test_input_fixation_trips_on_reworded_searches_with_the_same_short_answer() -> None:
    """The failure beside the acknowledgement look-alike above: a reworded search answered with the same short
    text (66 characters, no acknowledgement of a change) is fixation, as the launcher's BeeAI app shows."""
    h = only("input_fixation")
    queries = ["q3 2019 revenue", "revenue q3 2019", "q3 2019 revenues", "revenue for q3 2019", "2019 q3 revenue",
               "q3-2019 revenue"]
    calls = 0
    with pytest.raises(spanbreaker.Tripped) as caught, h.agent():
        for n in range(1, 21):  # the app's cycle of rewordings; its RequirementAgent is stopped at call 13
            with h.step(n):
                h.llm()
                calls += 1
                h.tool("search", {"query": queries[(n - 1) % len(queries)]},
                       output="1. Annual report 2019 - investors page. 2. Press release archive.")
    assert caught.value.detector == "input_fixation"
    assert calls <= 13, calls


# ------------------------------------------------------------------------------------------------ tool_cycle
def oscillate(h: Harness, rounds: int) -> None:
    """An edit, the tests, the edit undone, the tests: every test run answers differently from the one before
    (so each looks like news), and the round comes back identical."""
    with h.agent():
        n = 0
        for _ in range(rounds):
            for edit, answer in (("use_cache = True", "1 failed, 41 passed"),
                                 ("use_cache = False", "2 failed, 40 passed")):
                n += 1
                with h.step(n):
                    h.llm()
                    h.tool("edit", {"path": "src/app.py", "line": 12, "text": edit},
                           output=f"[File: src/app.py] 12: {edit}")
                n += 1
                with h.step(n):
                    h.llm()
                    h.tool("bash", {"command": "python -m pytest tests"}, output=answer)


def test_tool_cycle_trips_on_an_edit_undone_and_redone_with_the_tests_alternating() -> None:
    h = only("tool_cycle")
    with pytest.raises(spanbreaker.Tripped) as caught:
        oscillate(h, 6)
    assert caught.value.detector == "tool_cycle"
    assert caught.value.evidence["period"] == 4 and caught.value.evidence["rounds"] == 3
    assert len(h.named("SimpleTool")) == 12  # tripped as the third round ended
    repeat_only = only("tool_repeat")
    oscillate(repeat_only, 6)  # every test run changed its answer: tool_repeat never sees a repeat
    assert repeat_only.trips == []


def test_tool_cycle_quiet_on_scrolling_polling_retesting_sweeps_and_a_long_run() -> None:
    """Look-alikes: scrolling a file (each page differs), polling a job (its progress moves; and a poller on
    the allowlist), re-running the tests after each different edit, a test sweep whose counts differ, and two
    calls alternating many times inside one model turn (a batch)."""
    h = only("tool_cycle", allowlist=frozenset({"job_status"}))
    with h.agent():
        for n in range(1, 13):
            with h.step(n):
                h.llm()
                h.tool("open", {"path": "src/app.py"}, output="[File: src/app.py (900 lines total)]")
                h.tool("scroll_down", {}, output=f"lines {n * 100}-{n * 100 + 99}: ...")
        for n in range(1, 13):
            with h.step(100 + n):
                h.llm()
                h.tool("sleep", {"seconds": 5}, output="")
                h.tool("job_progress", {"job": "42"}, output=f"running, {n * 8}% done")
                h.tool("job_status", {"job": "42"}, output="running")
        for n in range(1, 13):
            with h.step(200 + n):
                h.llm()
                h.tool("edit", {"path": "src/app.py", "line": n, "text": f"x = {n}"}, output=f"12: x = {n}")
                h.tool("bash", {"command": "python -m pytest tests"}, output="1 failed, 41 passed")
        for n, module in enumerate(SWEEP * 2, 1):
            with h.step(300 + n):
                h.llm()
                h.tool("bash", {"command": "cd /code"}, output="")
                h.tool("bash", {"command": f"python tests/runtests.py {module}"}, output=f"Ran {n * 7} tests OK")
        with h.step(400):
            h.llm()
            for _ in range(8):
                h.tool("bash", {"command": "test -w /memory"}, output='{"exitCode": 1}')
                h.tool("bash", {"command": "mkdir -p /memory/sessions"}, output='{"exitCode": 0}')
    assert h.trips == []


def test_tool_cycle_steers_first_under_response_steer() -> None:
    """A loop detector: under ``response="steer"`` its first finding fails the agent's next call of that tool
    with the message, and the run is not stopped there."""
    h = only("tool_cycle", response="steer")
    with pytest.raises(spanbreaker.Steered) as steered:
        oscillate(h, 6)
    assert str(steered.value).startswith("spanbreaker: ")
    assert h.trips == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["successfully", "Successfully ", " edited", " written", "replacement", "s made",
                                 " made", "file ", "changes ", " created", " saved", " applied", "\u017f", "\u212a",
                                 "K", "x", " ", ".", "-", "\n", "SUCCESSFULLY EDITED"]), max_size=20),
       st.integers(0, 300))
def test_the_change_acknowledgement_prefilter_answers_as_the_regex(parts: list[str], pad: int) -> None:
    """Results are tested for a change acknowledgement without the case-insensitive regex when their ASCII head
    lacks every word it needs; the answer is always the regex's, on the head it reads (256 characters)."""
    text = "y" * pad + "".join(parts)
    assert progress._acknowledges_change(text) == (progress._CHANGE_ACK.search(text, 0, 256) is not None)
