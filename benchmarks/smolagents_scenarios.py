"""Calls saved on real smolagents agents: model + tool calls made before the trip, versus max_steps alone.

Each scenario is a real smolagents agent (CodeAgent, ToolCallingAgent, managed agents) driven by a scripted
model, instrumented by the real OpenInference instrumentor. It runs twice on a fresh SDK provider: once with
spanbreaker enforcing (the run stops at the trip) and once in observe mode, where nothing is stopped and the
run goes on until ``max_steps`` ends it, which is what the same agent costs without a breaker. Calls are
counted from the exported spans: LLM and TOOL spans that actually ran (a blocked span's call never ran).

Run: ``python benchmarks/smolagents_scenarios.py`` (offline, about half a minute).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from _scripted import ScriptedModel, code_reply, tool_replies, tool_reply
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import spanbreaker
from spanbreaker import BreakerConfig
from spanbreaker.instrumentation import uninstrument

MAX_STEPS = 20


@dataclass
class Outcome:
    detector: str
    model_calls: int
    tool_calls: int
    prompt_tokens: int
    """Estimated from the messages actually sent (``input.value``, about four characters a token): the
    scripted model's own token counts are constant and would hide what an inflated prompt costs."""


def _ran(span: Any, kind: str) -> bool:
    attributes = span.attributes or {}
    return attributes.get("openinference.span.kind") == kind and not attributes.get("spanbreaker.blocked")


def measure(run: Callable[[], Any], **config: Any) -> Outcome:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1024))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider, config=BreakerConfig(**config), frameworks=["smolagents"])
    detector = "-"
    try:
        run()
    except spanbreaker.Tripped as trip:
        detector = trip.detector
    finally:
        uninstrument()
    spans = exporter.get_finished_spans()
    if detector == "-":
        detector = next((str(s.attributes.get("spanbreaker.detector")) for s in spans
                         if s.attributes and s.attributes.get("spanbreaker.tripped")), "-")
    llm = [s for s in spans if _ran(s, "LLM")]
    tokens = sum(len(str((s.attributes or {}).get("input.value", ""))) for s in llm) // 4
    return Outcome(detector, len(llm), sum(1 for s in spans if _ran(s, "TOOL")), tokens)


# ------------------------------------------------------------------------------------------- scenarios
def _quiet() -> Any:
    from smolagents.monitoring import LogLevel

    return LogLevel.OFF


def code_repair_loop() -> None:
    from smolagents import CodeAgent

    model = ScriptedModel([code_reply(f'print({{"q1": 120}}["{k}"])') for k in "abcdefgh"])
    CodeAgent(tools=[], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Sum the quarters")


def code_repair_through_tool() -> None:
    from smolagents import CodeAgent, tool

    @tool
    def fetch_row(key: str) -> str:
        """Reads one row.

        Args:
            key: the row key
        """
        return {"q1": "120"}[key]

    model = ScriptedModel([code_reply(f'print(fetch_row(key="{k}"))') for k in "abcdefgh"])
    CodeAgent(tools=[fetch_row], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Read")


def _search_tools() -> tuple[Any, Any]:
    from smolagents import tool

    @tool
    def web_search(query: str) -> str:
        """Searches the web.

        Args:
            query: what to look for
        """
        return ""

    @tool
    def kb_search(query: str) -> str:
        """Searches the knowledge base.

        Args:
            query: what to look for
        """
        return ("Article 1142: OpenTelemetry span processors receive on_start and on_end callbacks for every "
                "span; exporters are wrapped by batch or simple processors.")

    return web_search, kb_search


def search_storm() -> None:
    from smolagents import ToolCallingAgent

    web_search, _ = _search_tools()
    model = ScriptedModel([tool_reply("web_search", {"query": "acme 2026 revenue guidance"})])
    ToolCallingAgent(tools=[web_search], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Find")


def parallel_search_storm() -> None:
    from smolagents import ToolCallingAgent

    web_search, _ = _search_tools()
    model = ScriptedModel([tool_replies([("web_search", {"query": "acme 2026 revenue guidance"})] * 3)])
    ToolCallingAgent(tools=[web_search], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Find")


def paraphrase_fixation() -> None:
    from smolagents import ToolCallingAgent

    _, kb_search = _search_tools()
    words = ["otel", "span", "processor", "callbacks"]
    queries = [" ".join(words[i:] + words[:i]) for i in range(4)] + ["otel span processors callbacks"]
    model = ScriptedModel([tool_reply("kb_search", {"query": q}) for q in queries])
    ToolCallingAgent(tools=[kb_search], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("How?")


def empty_result_streak() -> None:
    from smolagents import ToolCallingAgent

    web_search, _ = _search_tools()
    model = ScriptedModel([tool_reply("web_search", {"query": f"acme revenue guidance variant {i}"})
                           for i in range(MAX_STEPS + 1)])
    ToolCallingAgent(tools=[web_search], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Find")


def tool_loop_in_one_step() -> None:
    from smolagents import CodeAgent, tool

    @tool
    def lookup(i: int) -> str:
        """Looks one record up.

        Args:
            i: record number
        """
        return f"record {i}"

    model = ScriptedModel([code_reply("for i in range(500):\n    lookup(i=i)"), code_reply('final_answer("ok")')])
    CodeAgent(tools=[lookup], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Look up all")


def format_loop() -> None:
    from smolagents import CodeAgent
    from smolagents.models import ChatMessage, MessageRole, TokenUsage

    reply = ChatMessage(role=MessageRole.ASSISTANT, content="The answer is probably 42.",
                        token_usage=TokenUsage(input_tokens=400, output_tokens=40))
    CodeAgent(tools=[], model=ScriptedModel([reply]), max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Answer")


def context_inflation() -> None:
    from smolagents import CodeAgent

    frame = "| id | name | value | comment |\\n" + "| 1 | widget | 3.14 | nothing to see here |\\n" * 9000
    model = ScriptedModel([code_reply(f'print("{frame}")'), code_reply('print("looking at the table")')])
    CodeAgent(tools=[], model=model, max_steps=MAX_STEPS, max_print_outputs_length=2_000_000,
              verbosity_level=_quiet()).run("Show the table")


def managed_cycle() -> None:
    from smolagents import CodeAgent, ToolCallingAgent

    def orchestrator(model: ScriptedModel, managed: list[Any]) -> CodeAgent:
        return CodeAgent(tools=[], model=model, managed_agents=managed, name="orchestrator", description="Plans.",
                         max_steps=MAX_STEPS, verbosity_level=_quiet())

    def specialist(model: ScriptedModel, managed: list[Any]) -> ToolCallingAgent:
        return ToolCallingAgent(tools=[], model=model, managed_agents=managed, name="specialist",
                                description="Researches.", max_steps=MAX_STEPS, verbosity_level=_quiet())

    agent: Any = orchestrator(ScriptedModel([code_reply('final_answer("plan")')]), [])
    done = tool_reply("final_answer", {"answer": "figures"})
    for _ in range(3):  # without a breaker the cycle runs as deep as the object graph goes
        agent = specialist(ScriptedModel([tool_reply("orchestrator", {"task": "Plan it first."}), done]), [agent])
        agent = orchestrator(ScriptedModel([code_reply('print(specialist(task="Collect figures."))'),
                                            code_reply('final_answer("report")')]), [agent])
    agent.run("Write the report")


def excessive_depth() -> None:
    from smolagents import CodeAgent, ToolCallingAgent

    agent: Any = ToolCallingAgent(tools=[], model=ScriptedModel([tool_reply("final_answer", {"answer": "x"})]),
                                  name="level7", description="Level 7.", verbosity_level=_quiet())
    for i in range(6, 1, -1):
        script = [tool_reply(f"level{i + 1}", {"task": "deeper"}), tool_reply("final_answer", {"answer": "x"})]
        agent = ToolCallingAgent(tools=[], model=ScriptedModel(script),
                                 managed_agents=[agent], name=f"level{i}", description=f"Level {i}.",
                                 max_steps=MAX_STEPS, verbosity_level=_quiet())
    model = ScriptedModel([code_reply('print(level2(task="deeper"))'), code_reply('final_answer("x")')])
    CodeAgent(tools=[], model=model, managed_agents=[agent], max_steps=MAX_STEPS, verbosity_level=_quiet()).run("Dig")


def token_budget() -> None:
    from smolagents import ToolCallingAgent, tool

    @tool
    def list_issues(page: int) -> str:
        """Lists issues, one page at a time.

        Args:
            page: page number
        """
        return "\n".join(f"issue #{page * 10 + i}: crash in header variant {page}-{i}" for i in range(10))

    model = ScriptedModel([tool_reply("list_issues", {"page": p}) for p in range(1, MAX_STEPS + 2)])
    ToolCallingAgent(tools=[list_issues], model=model, max_steps=MAX_STEPS, verbosity_level=_quiet()).run("List")


SCENARIOS: list[tuple[str, Callable[[], None], dict[str, Any]]] = [
    ("CodeAgent code-repair loop (KeyError)", code_repair_loop, {}),
    ("CodeAgent code-repair loop via a tool", code_repair_through_tool, {}),
    ("ToolCallingAgent search storm", search_storm, {}),
    ("ToolCallingAgent parallel search storm", parallel_search_storm, {}),
    ("ToolCallingAgent paraphrased queries", paraphrase_fixation, {}),
    ("ToolCallingAgent empty results streak", empty_result_streak, {}),
    ("CodeAgent 500 tool calls in one step", tool_loop_in_one_step, {}),
    ("CodeAgent unparsable output", format_loop, {}),
    ("CodeAgent prints a huge DataFrame", context_inflation, {}),
    ("managed agents delegation cycle", managed_cycle, {}),
    ("managed agents 7 levels deep", excessive_depth, {}),
    ("paging run, token budget 4,000", token_budget, {"max_tokens": 4_000}),
]


def main() -> None:
    print(f"smolagents scenarios, max_steps={MAX_STEPS}; calls = model + tool calls that actually ran")
    header = f"| {'scenario':<42} | {'detector':<16} | {'calls to trip':>13} | {'max_steps alone':>15} | " \
             f"{'calls saved':>11} | {'prompt tokens saved (est.)':>26} |"
    print(header)
    print("|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|")
    for name, run, config in SCENARIOS:
        tripped = measure(run, **config)
        unchecked = measure(run, mode="observe", **config)
        made = tripped.model_calls + tripped.tool_calls
        alone = unchecked.model_calls + unchecked.tool_calls
        print(f"| {name:<42} | {tripped.detector:<16} | {made:>5} ({tripped.model_calls:>2}+{tripped.tool_calls:<3}) | "
              f"{alone:>5} ({unchecked.model_calls:>2}+{unchecked.tool_calls:<3})  | {alone - made:>11} | "
              f"{unchecked.prompt_tokens - tripped.prompt_tokens:>26,} |")


if __name__ == "__main__":
    main()
