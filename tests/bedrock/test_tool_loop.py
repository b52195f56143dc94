"""A plain tool loop around boto3's ``bedrock-runtime`` client (``converse`` with ``toolConfig``, the application
running the tools), traced by the real OpenInference Bedrock instrumentor through spanbreaker's adapter. The stock
instrumentor starts a ``bedrock.converse`` span with nothing on it and sets its kind and request just after, so
the breaker saw no model call; the adapter makes the span start with them, and the breaker reads the loop from the
request's messages (``toolUse`` blocks, then ``toolResult`` blocks). Real boto3 client, real instrumentor, real SDK;
the model is the only stub: a scripted Bedrock Runtime answering ``POST /model/{modelId}/converse`` on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import boto3
import pytest
from openinference.instrumentation import bedrock as oi_bedrock
from openinference.instrumentation.bedrock import BedrockInstrumentor

import spanbreaker
from spanbreaker.adapters.bedrock import ADAPTER
from spanbreaker.conventions.prompt_calls import PromptCall, last_turn, prompt_of
from spanbreaker.signals import Kind

from ..genai_rig import Rig, make_rig
from ..openai_client.scripted import Reply, ScriptedModel, tool_results

MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "search", "description": "Search the web.", "inputSchema": {
    "json": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}}]}
TURNS = 30
"""The loop's own limit on model turns."""


def bedrock_client(url: str) -> Any:
    """A real boto3 ``bedrock-runtime`` client pointed at the scripted model (dummy credentials, no retries)."""
    from botocore.config import Config

    return boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 1}))


def run_loop(rig: Rig, client: Any, result: Callable[[dict[str, Any], int], str], *, wrap: bool = True) -> int:
    """The application's agent: ``converse`` with a tool until the model answers; returns the tools run."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "find it"}]}]
    ran = 0
    with rig.provider.get_tracer("app").start_as_current_span("research") if wrap else nullcontext():
        for _ in range(TURNS):
            reply = client.converse(modelId=MODEL_ID, messages=messages, toolConfig=TOOL_CONFIG)
            message = reply["output"]["message"]
            uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
            if not uses:
                return ran
            messages.append(message)
            answers = []
            for use in uses:
                ran += 1
                rig.tool_bodies.append(str(use["input"]))
                answers.append({"toolResult": {"toolUseId": use["toolUseId"], "status": "success",
                                               "content": [{"text": result(use["input"], ran)}]}})
            messages.append({"role": "user", "content": answers})
    return ran


@pytest.fixture
def rig() -> Iterator[Rig]:
    made = make_rig()
    ADAPTER.instrument(made.provider, made.processor)
    yield made
    ADAPTER.uninstrument()
    made.provider.shutdown()


def stuck(_messages: list[dict[str, Any]]) -> Reply:
    return [("search", {"query": "acme 2026 guidance"})]


def same_page(_arguments: dict[str, Any], _n: int) -> str:
    return "Acme: guidance will be published in March."


def loop(rig: Rig, model: ScriptedModel, result: Callable[[dict[str, Any], int], str] = same_page,
         wrap: bool = True) -> int:
    with model.serve() as url:
        return run_loop(rig, bedrock_client(url), result, wrap=wrap)


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_a_converse_loop_is_stopped_before_the_sixth_request_is_sent(rig: Rig, wrap: bool) -> None:
    model = ScriptedModel(stuck, model=MODEL_ID)
    with pytest.raises(spanbreaker.Tripped) as raised:
        loop(rig, model, wrap=wrap)
    trip = raised.value
    assert trip.detector == "tool_repeat" and trip.evidence["calls_from_prompt"] is True
    assert model.calls == 5, "the sixth request, which would send the fifth identical result, was never sent"
    assert len(rig.tool_bodies) == 5
    llm = rig.of_kind(Kind.LLM)
    assert len(llm) == 6 and len(rig.ran(Kind.LLM)) == 5
    blocked = rig.blocked()
    assert [s.name for s in blocked] == ["bedrock.converse"]
    assert blocked[0].attributes["spanbreaker.tripped"] is True  # type: ignore[index]
    rig.assert_nothing_lost()


def test_the_spans_start_with_what_the_instrumentor_sets_after(rig: Rig) -> None:
    """The start attributes are the instrumentor's own (its extractor, run for the adapter): kind, model, and the
    request's messages as ``input.value`` (a bare JSON array, tool results included)."""
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) else stuck(messages))
    assert loop(rig, model) == 1
    keys = rig.ledger.keys_at_start(Kind.LLM)
    assert len(keys) == 2 and all({"openinference.span.kind", "llm.model_name", "input.value"} <= k for k in keys)
    attributes = dict(rig.of_kind(Kind.LLM)[1].attributes or {})
    second = attributes["input.value"]
    assert second.startswith("[") and '"toolResult"' in second and '"toolUse"' in second
    expected = [PromptCall("tooluse_1", "search", '{"query": "acme 2026 guidance"}', same_page({}, 1))]
    assert last_turn(prompt_of(attributes)) == (1, expected)  # type: ignore[arg-type]
    flattened = {key: value for key, value in attributes.items() if key != "input.value"}
    assert last_turn(prompt_of(flattened)) == (1, expected), "the flattened messages say the same"  # type: ignore[arg-type]


def test_the_same_call_with_new_results_is_quiet(rig: Rig) -> None:
    """Pagination: the same request each time, a new page each time: progress, runs to its end."""
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 10 else stuck(messages))
    assert loop(rig, model, lambda arguments, n: f"Latest headline number {n}: {'ab' * n}", wrap=False) == 10
    rig.assert_quiet()
    rig.assert_nothing_lost()


def test_different_queries_with_one_answer_are_quiet(rig: Rig) -> None:
    model = ScriptedModel(lambda messages: "done" if tool_results(messages) >= 8 else [
        ("search", {"query": f"acme guidance, angle {tool_results(messages)}"})])
    assert loop(rig, model) == 8
    rig.assert_quiet()


def test_model_calls_count_against_the_budget_when_they_start() -> None:
    """``max_model_calls=3``: the fourth ``converse`` is vetoed before it is sent (the scripted model counts)."""
    made = make_rig(max_model_calls=3)
    ADAPTER.instrument(made.provider, made.processor)
    model = ScriptedModel(lambda messages: [("search", {"query": f"q{tool_results(messages)}"})])
    try:
        with pytest.raises(spanbreaker.Tripped) as raised:
            loop(made, model, lambda arguments, n: f"page {n}")
    finally:
        ADAPTER.uninstrument()
        made.provider.shutdown()
    assert raised.value.detector == "call_budget" and model.calls == 3


def test_the_stock_instrumentor_starts_the_span_bare_and_the_loop_runs_to_its_limit() -> None:
    """The gap the adapter closes (conformance, openinference-instrumentation-bedrock 0.1.61): without it the
    ``bedrock.converse`` span carries nothing when it starts (kind, model and request come just after), so the
    breaker sees no model call and the same looping app runs to its own limit of 30 turns."""
    made = make_rig()
    BedrockInstrumentor().instrument(tracer_provider=made.provider)
    model = ScriptedModel(stuck, model=MODEL_ID)
    try:
        assert loop(made, model) == TURNS
    finally:
        BedrockInstrumentor().uninstrument()
        made.provider.shutdown()
    assert model.calls == TURNS
    starts = [(name, keys) for name, _, keys in made.ledger.started.values() if name == "bedrock.converse"]
    assert len(starts) == TURNS and all(keys == frozenset() for _, keys in starts), "a span carried something"
    assert all(s.attributes.get("openinference.span.kind") == "LLM"  # type: ignore[union-attr]
               for s in made.spans() if s.name == "bedrock.converse"), "the kind comes, but only after the start"
    made.assert_quiet()


def test_an_instrumentor_the_application_switched_on_first_is_patched_in_place() -> None:
    """``BedrockInstrumentor().instrument()`` before ``spanbreaker.instrument()``, a client created in between and
    one after: both are stopped (the first re-wrapped in place, the second built from the patched factory)."""
    made = make_rig()
    BedrockInstrumentor().instrument(tracer_provider=made.provider)
    try:
        with ScriptedModel(stuck, model=MODEL_ID).serve() as first_url:
            early = bedrock_client(first_url)
            stock, stock_invoke = vars(early)["converse"], vars(early)["invoke_model"]
            ADAPTER.instrument(made.provider, made.processor)
            assert vars(early)["converse"] is not stock and vars(early)["invoke_model"] is not stock_invoke
            with pytest.raises(spanbreaker.Tripped):
                run_loop(made, early, same_page)
            with pytest.raises(spanbreaker.Tripped):  # the same early client on invoke_model, in a new trace
                run_invoke_loop(made, early, same_page)
        model = ScriptedModel(stuck, model=MODEL_ID)
        with pytest.raises(spanbreaker.Tripped):
            loop(made, model)
        assert model.calls == 5
        ADAPTER.uninstrument()
        assert vars(early)["converse"] is stock, "the early client has the instrumentor's wrapper back"
        assert vars(early)["invoke_model"] is stock_invoke
        assert BedrockInstrumentor().is_instrumented_by_opentelemetry, "the application's instrumentor stays on"
    finally:
        ADAPTER.uninstrument()
        BedrockInstrumentor().uninstrument()
        made.provider.shutdown()


def test_an_instrumentor_the_application_switches_on_after_spanbreaker_is_the_adapters() -> None:
    """``spanbreaker.instrument()`` first (it switches the instrumentor on), then the application's own
    ``BedrockInstrumentor().instrument()``: a no-op on an instrumentor already on; the loop is stopped."""
    made = make_rig()
    ADAPTER.instrument(made.provider, made.processor)
    BedrockInstrumentor().instrument(tracer_provider=made.provider)
    model = ScriptedModel(stuck, model=MODEL_ID)
    try:
        with pytest.raises(spanbreaker.Tripped):
            loop(made, model)
    finally:
        ADAPTER.uninstrument()
        BedrockInstrumentor().uninstrument()
        made.provider.shutdown()
    assert model.calls == 5


def test_uninstrument_puts_the_instrumentor_back() -> None:
    stock = oi_bedrock._model_converse_wrapper
    made = make_rig()
    ADAPTER.instrument(made.provider, made.processor)
    assert oi_bedrock._model_converse_wrapper is not stock
    ADAPTER.uninstrument()
    assert oi_bedrock._model_converse_wrapper is stock and not BedrockInstrumentor().is_instrumented_by_opentelemetry
    made.provider.shutdown()


LAUNCHER_ORDER = """
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
import spanbreaker
trace.set_tracer_provider(TracerProvider())
spanbreaker.instrument(frameworks=["bedrock"])          # the launcher's pre-instrument hook: botocore not imported
assert "botocore" not in sys.modules
from openinference.instrumentation.bedrock import BedrockInstrumentor   # imports botocore half-way through
BedrockInstrumentor().instrument()                      # the launcher's entry point, right after
from tests.bedrock.test_tool_loop import MODEL_ID, TOOL_CONFIG, bedrock_client
from tests.openai_client.scripted import ScriptedModel
model = ScriptedModel(lambda messages: [("search", {"query": "acme"})])
messages = [{"role": "user", "content": [{"text": "find it"}]}]
try:
    with model.serve() as url:
        client = bedrock_client(url)
        for _ in range(20):
            message = client.converse(modelId=MODEL_ID, messages=messages, toolConfig=TOOL_CONFIG)["output"]["message"]
            messages.append(message)
            messages.append({"role": "user", "content": [{"toolResult": {
                "toolUseId": b["toolUse"]["toolUseId"], "content": [{"text": "same"}]}} for b in message["content"]]})
except spanbreaker.Tripped as trip:
    print("tripped", trip.detector, model.calls)
"""


def test_the_launchers_order_the_instrumentor_importing_botocore_itself() -> None:
    """Under ``opentelemetry-instrument`` spanbreaker's hook runs first and waits for botocore's import, which the
    instrumentor's module makes at its top, half-initialised: the adapter stands aside, the launcher switches the
    instrumentor on, and the first client created patches the factory its wrapper then builds from."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root), os.environ.get("PYTHONPATH",
                                                                                                     "")])}
    done = subprocess.run([sys.executable, "-c", LAUNCHER_ORDER], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "tripped tool_repeat 5", done.stdout[-2000:] + done.stderr[-2000:]


# ------------------------------------------------------------------------------------------------ invoke_model
INVOKE_TOOLS = [{"name": "search", "description": "Search the web.", "input_schema": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}]


def run_invoke_loop(rig: Rig, client: Any, result: Callable[[dict[str, Any], int], str], *, wrap: bool = True) -> int:
    """The same agent on ``invoke_model`` with Claude's own body (Anthropic's Messages: ``tool_use`` blocks, then
    ``tool_result`` blocks); returns the tools run."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find it"}]
    ran = 0
    with rig.provider.get_tracer("app").start_as_current_span("research") if wrap else nullcontext():
        for _ in range(TURNS):
            body = json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 512, "messages": messages,
                               "tools": INVOKE_TOOLS})
            reply = json.loads(client.invoke_model(modelId=MODEL_ID, body=body)["body"].read())
            uses = [block for block in reply["content"] if block.get("type") == "tool_use"]
            if not uses:
                return ran
            messages.append({"role": "assistant", "content": reply["content"]})
            answers = []
            for use in uses:
                ran += 1
                rig.tool_bodies.append(str(use["input"]))
                answers.append({"type": "tool_result", "tool_use_id": use["id"], "content": result(use["input"], ran)})
            messages.append({"role": "user", "content": answers})
    return ran


def invoke_loop(rig: Rig, model: ScriptedModel, result: Callable[[dict[str, Any], int], str] = same_page,
                wrap: bool = True) -> int:
    with model.serve() as url:
        return run_invoke_loop(rig, bedrock_client(url), result, wrap=wrap)


@pytest.mark.parametrize("wrap", [True, False], ids=["in-a-span", "no-span"])
def test_an_invoke_model_loop_is_stopped_before_the_sixth_request_is_sent(rig: Rig, wrap: bool) -> None:
    """Claude on ``invoke_model``: the span starts with the instrumentor's reading of the body, the loop is read
    from its Anthropic messages, and the sixth request is vetoed (stock: its span started bare, 30 of 30 ran)."""
    model = ScriptedModel(stuck, model=MODEL_ID)
    with pytest.raises(spanbreaker.Tripped) as raised:
        invoke_loop(rig, model, wrap=wrap)
    assert raised.value.detector == "tool_repeat" and raised.value.evidence["calls_from_prompt"] is True
    assert model.calls == 5 and len(rig.tool_bodies) == 5
    assert [s.name for s in rig.blocked()] == ["bedrock.invoke_model"]
    rig.assert_nothing_lost()


def test_an_invoke_model_run_of_different_queries_is_quiet(rig: Rig) -> None:
    model = ScriptedModel(lambda messages: [("search", {"query": f"q{tool_results(messages)}"})]
                          if tool_results(messages) < 6 else "Done.", model=MODEL_ID)
    assert invoke_loop(rig, model, wrap=False) == 6
    rig.assert_quiet()
    rig.assert_nothing_lost()


def test_the_stock_instrumentor_starts_invoke_model_spans_bare() -> None:
    """What the adapter is for, pinned: without it the span has nothing at start and the loop runs to its end."""
    made = make_rig()
    BedrockInstrumentor().instrument(tracer_provider=made.provider)
    model = ScriptedModel(stuck, model=MODEL_ID)
    try:
        assert invoke_loop(made, model) == TURNS
    finally:
        BedrockInstrumentor().uninstrument()
        made.provider.shutdown()
    starts = [keys for name, _, keys in made.ledger.started.values() if name == "bedrock.invoke_model"]
    assert len(starts) == TURNS and all(keys == frozenset() for keys in starts), "a span carried something"
    made.assert_quiet()
