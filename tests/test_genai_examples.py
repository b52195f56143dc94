"""The OpenAI Agents SDK, pydantic-ai, Strands Agents and Microsoft Agent Framework examples, the plain tool loop's
(around the OpenAI client, around LiteLLM, and around Bedrock's converse) and Instructor's retry loop, run as a user
would run them: a fresh process, offline."""

from __future__ import annotations

from .examples_runner import assert_examples

EXPECTED = {
    "openai_agents_handoff_loop.py": ("spanbreaker tripped: [tool_repeat] order_status", "AGENT Support",
                                      "order_status ran 4 times", "TOOL order_status (blocked: never ran)"),
    "pydantic_ai_search_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 4 times",
                                   "(blocked: never ran)"),
    "strands_search_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 4 times",
                               "execute_tool web_search (blocked: never ran)", "invoke_agent analyst"),
    "openai_tool_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 5 times",
                            "LLM ChatCompletion (blocked: never ran)", "'calls_from_prompt': True"),
    "openai_tool_loop.py --litellm": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 5 times",
                                      "LLM completion (blocked: never ran)"),
    "openai_tool_loop.py --bedrock": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 5 times",
                                      "LLM bedrock.converse (blocked: never ran)"),
    "instructor_retry_loop.py": ("spanbreaker tripped: [tool_streak] Invoice called 10 times in a row",
                                 "model calls made: 10", "LLM ChatCompletion (blocked: never ran)"),
    "agent_framework_search_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 4 times",
                                       "execute_tool web_search (blocked: never ran)", "invoke_agent analyst",
                                       "tool arguments or results on the exported spans: none"),
}


def test_examples_trip_as_expected_and_exit_zero() -> None:
    assert_examples(EXPECTED)


HIDDEN = {
    "openai_tool_loop.py": EXPECTED["openai_tool_loop.py"],
    "openai_tool_loop.py --litellm": EXPECTED["openai_tool_loop.py --litellm"],
    "openai_tool_loop.py --bedrock": EXPECTED["openai_tool_loop.py --bedrock"],
    "instructor_retry_loop.py": EXPECTED["instructor_retry_loop.py"],
    "openai_agents_handoff_loop.py": EXPECTED["openai_agents_handoff_loop.py"],
    "llama_index_search_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "searches run: 4"),
    "dspy_search_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 4 times"),
    "haystack_search_loop.py": ("spanbreaker tripped: [tool_repeat] web_search", "web_search ran 4 times"),
    "beeai_fixation_spiral.py": ("spanbreaker tripped: [input_fixation] web_search",),
}
"""Examples whose spans come from OpenInference instrumentors, run with the instrumentors hiding every input and
output (``OPENINFERENCE_HIDE_INPUTS`` / ``..._OUTPUTS``): tool calls and prompts are shown to the breaker in process
(``adapters/openinference.py``), and each trips as it does with the values on its spans."""


def test_examples_trip_alike_with_openinference_hiding_values() -> None:
    assert_examples(HIDDEN, environment={"OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUTS": "true"})


DEFERRED = """
import sys
import spanbreaker
from opentelemetry.sdk.trace import TracerProvider
processor = spanbreaker.instrument(tracer_provider=TracerProvider())
print("imported before use:", "agents" in sys.modules, "pydantic_ai" in sys.modules, "strands" in sys.modules)
from pydantic_ai import Agent, UsageLimits
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel
agent = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[ToolCallPart("search", {"q": "x"})])))
@agent.tool_plain
def search(q: str) -> str:
    return "same"
try:
    agent.run_sync("go", usage_limits=UsageLimits(request_limit=30))
except spanbreaker.Tripped as trip:
    print("tripped:", trip.detector)
"""


def test_frameworks_are_instrumented_when_the_application_imports_them() -> None:
    """``instrument()`` does not import the OpenAI Agents SDK, pydantic-ai or Strands (seconds each) for an
    application that has them installed but has not imported them; importing one later instruments it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "imported before use: False False False" in done.stdout, done.stdout
    assert "tripped: tool_repeat" in done.stdout, done.stdout + done.stderr
