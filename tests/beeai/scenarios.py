"""The Bee failure modes and their healthy look-alikes, as real BeeAI agents with a scripted model.

Shared by the tests (which assert on the outcome and the spans) and ``benchmarks/beeai_scenarios.py`` (which
prints how many model calls ran before the trip against what ``max_iterations`` alone allows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from beeai_framework.agents import BaseAgent
from beeai_framework.agents.react import ReActAgent
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.agents.tool_calling import ToolCallingAgent
from beeai_framework.agents.types import AgentMeta
from beeai_framework.memory import BaseMemory, SlidingMemory, SlidingMemoryConfig, UnconstrainedMemory
from beeai_framework.tools import AnyTool, StringToolOutput, Tool, ToolRunOptions, tool
from beeai_framework.tools.handoff import HandoffTool
from beeai_framework.tools.types import RetryOptions
from opentelemetry.trace import TracerProvider
from pydantic import BaseModel

import spanbreaker

from .bee import Answer, Call, Move, ScriptedChatModel

AGENT_KINDS = ("tool_calling", "react", "requirement")
MAX_ITERATIONS = 30
"""The iteration cap given to every looping run: high enough that the breaker, not the cap, stops a loop."""
DEFAULT_MAX_ITERATIONS = {"tool_calling": 10, "react": 10, "requirement": 20}
"""BeeAI's own default per agent class (``run()`` without ``max_iterations``), what a handed-off agent gets."""


@dataclass
class Outcome:
    trip: spanbreaker.Tripped | None
    model_calls: int
    """Model calls that ran (the vetoed one excluded), summed over every agent of the run."""
    allowed: int
    """Model calls ``max_iterations`` alone would allow (summed over nested agents)."""
    result: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def make_agent(kind: str, model: ScriptedChatModel, tools: Sequence[AnyTool], *, name: str = "researcher",
               memory: BaseMemory | None = None, handed_off: bool = False) -> BaseAgent[Any]:
    """One of the three BeeAI agent classes, named ``name``.

    ``handed_off``: the agent is the target of a ``HandoffTool``, which clones it. ``ReActAgent.clone`` fails
    on an agent with ``meta`` (beeai-framework 0.1.85: ``ReActAgentInput`` rejects the dumped ``AgentMeta``),
    so such a ReAct agent keeps its default name, ``ReAct``.
    """
    memory = memory if memory is not None else UnconstrainedMemory()
    if kind == "react" and handed_off:
        return ReActAgent(llm=model, tools=list(tools), memory=memory)
    if kind == "tool_calling":
        meta = AgentMeta(name=name, description=f"{name} agent", tools=list(tools))
        return ToolCallingAgent(llm=model, tools=list(tools), memory=memory, meta=meta)
    if kind == "react":
        meta = AgentMeta(name=name, description=f"{name} agent", tools=list(tools))
        return ReActAgent(llm=model, tools=list(tools), memory=memory, meta=meta)
    return RequirementAgent(llm=model, tools=list(tools), memory=memory, name=name, description=f"{name} agent")


def model_for(kind: str, script: Callable[[int], Move] | Sequence[Move]) -> ScriptedChatModel:
    return ScriptedChatModel(script, react=kind == "react")


async def run_agent(agent: BaseAgent[Any], prompt: str, **options: Any) -> tuple[spanbreaker.Tripped | None, Any]:
    try:
        return None, await agent.run(prompt, **options)
    except spanbreaker.Tripped as trip:
        return trip, None


# ------------------------------------------------------------------------------------------------ fixation
SEARCH_RESULT = ("1. Processors - opentelemetry.io/docs/concepts/signals/traces: span processors receive spans "
                 "on start and on end. 2. SDK reference - opentelemetry-python.readthedocs.io")
PARAPHRASES = (
    "python opentelemetry span processor example",
    "python opentelemetry span processor examples",
    "python opentelemetry span-processor example",
    "example python opentelemetry span processor",
    "python open telemetry span processor example",
    "python opentelemetry spanprocessor example",
    "opentelemetry python span processor example",
)


@tool
def web_search(query: str) -> str:
    """Search the web; this index knows one page about span processors."""
    return SEARCH_RESULT


@tool
def faceted_search(query: str, facet: int) -> str:
    """Search one facet (a page of a result set) of the web index."""
    return f"results for facet {facet}: doc-{facet * 7}, doc-{facet * 7 + 1} ({len(query)} chars of query)"


async def fixation(kind: str, healthy: bool, limit: int | None = None) -> Outcome:
    """Paraphrased queries, the same observation (trips) vs faceted search whose results differ (quiet).

    ``limit``: the looping model gives up and answers after that many searches (for observe mode).
    """
    if healthy:
        def script(i: int) -> Move:
            return (Call("faceted_search", {"query": PARAPHRASES[i % 7], "facet": i}) if i < 14
                    else Answer("found 28 documents"))
        tools: list[AnyTool] = [faceted_search]
    else:
        def script(i: int) -> Move:
            if limit is not None and i >= limit:
                return Answer("no better source found")
            return Call("web_search", {"query": PARAPHRASES[i % 7]})
        tools = [web_search]
    model = model_for(kind, script)
    trip, result = await run_agent(make_agent(kind, model, tools), "find span processor examples",
                                   max_iterations=MAX_ITERATIONS)
    return Outcome(trip, model.calls, MAX_ITERATIONS, result)


# ------------------------------------------------------------------------------------------------ echo loop
TREATY = "The treaty of Utrecht was signed in 1713 and ended the War of the Spanish Succession."


@tool
def search(query: str) -> str:
    """Search an encyclopedia."""
    if "source" in query:
        shelf = sum(map(ord, query)) % 97
        return f"document {query}: {len(query) * 31} new facts about the treaty, archive shelf {shelf}"
    return TREATY


@tool
def summarise(text: str) -> str:
    """Summarise a text."""
    if "document" in text:
        return f"summary of {text} with fact {len(text) * 17}"
    return "Summary: signed in 1713; it ended the War of the Spanish Succession in Europe."


ECHO = (
    Call("search", {"query": "facts about the treaty of Utrecht"}),
    Call("summarise", {"text": "The treaty of Utrecht was signed in 1713"}),
    Call("search", {"query": "treaty of Utrecht key facts"}),
    Call("summarise", {"text": "Utrecht 1713 treaty ended the war"}),
)


async def echo_loop(kind: str, healthy: bool) -> Outcome:
    """search -> summarise -> search over the same facts (trips) vs research reaching new sources (quiet)."""
    if healthy:
        def script(i: int) -> Move:
            if i >= 20:
                return Answer("a report from 10 sources")
            n = i // 2
            return (Call("search", {"query": f"source {n} on the treaty"}) if i % 2 == 0
                    else Call("summarise", {"text": f"document {n}: archive record {n * 13}"}))
    else:
        def script(i: int) -> Move:
            # Each round starts one call later: the same facts echoed in a shifting order, never the exact
            # round again (that closed loop is tool_cycle's, proven in tests/core/test_recall_signals.py).
            return ECHO[(i + i // len(ECHO)) % len(ECHO)]
    model = model_for(kind, script)
    trip, result = await run_agent(make_agent(kind, model, [search, summarise]), "research the treaty of Utrecht",
                                   max_iterations=MAX_ITERATIONS)
    return Outcome(trip, model.calls, MAX_ITERATIONS, result)


# ---------------------------------------------------------------------------------------------- retry storm
class ApiInput(BaseModel):
    city: str


class WeatherApi(Tool[ApiInput, ToolRunOptions, StringToolOutput]):
    """A weather API tool whose every run retries ``retries`` times (its own retry options).

    ``failures(attempt_number)`` decides whether an attempt fails. The backoff factor is set below BeeAI's
    integer schema (``model_construct``) so that retries take milliseconds, not seconds, in tests.
    """

    name = "weather_api"
    description = "Current weather for a city."

    def __init__(self, fails: Callable[[int], bool], retries: int = 5) -> None:
        super().__init__()
        self._fails = fails
        self._retries = retries
        self.attempts = 0

    @property
    def input_schema(self) -> type[ApiInput]:
        return ApiInput

    def _create_emitter(self) -> Any:
        from beeai_framework.emitter import Emitter

        return Emitter.root().child(namespace=["tool", "weather_api"], creator=self)

    def run(self, input: Any, options: ToolRunOptions | None = None) -> Any:
        if options is None:
            retry = RetryOptions.model_construct(max_retries=self._retries, factor=0.001)
            options = ToolRunOptions(retry_options=retry)
        return super().run(input, options)

    async def _run(self, input: ApiInput, options: ToolRunOptions | None, context: Any) -> StringToolOutput:
        self.attempts += 1
        await asyncio.sleep(0)
        if self._fails(self.attempts):
            raise ConnectionError("weather upstream timed out after 30s")
        return StringToolOutput(f"{input.city}: 14C, light rain (reading {self.attempts})")


async def retry_storm(kind: str, healthy: bool) -> Outcome:
    """A tool failing the same way on every attempt, retried (trips) vs failing once then succeeding (quiet)."""
    api = WeatherApi((lambda attempt: attempt == 1) if healthy else (lambda attempt: True))
    cities = ("Paris", "Oslo", "Lima", "Pune", "Kyiv", "Quito", "Rome", "Bern")
    if healthy:
        def script(i: int) -> Move:
            return (Call("weather_api", {"city": cities[i]}) if i < len(cities)
                                                 else Answer("weather for 8 cities"))
    else:
        script = lambda i: Call("weather_api", {"city": "Paris"})  # noqa: E731
    model = model_for(kind, script)
    trip, result = await run_agent(make_agent(kind, model, [api]), "weather report",
                                   max_iterations=MAX_ITERATIONS)
    allowed = MAX_ITERATIONS
    return Outcome(trip, model.calls, allowed, result, {"attempts": api.attempts})


# ------------------------------------------------------------------------------------------ memory inflation
PAGE_CHARS = 8_000


def report_page(n: int) -> str:
    """A long pasted document (about 2k tokens)."""
    return " ".join(f"row {row} of the quarterly table, page {n}: revenue {row * 7 + n}" for row in range(160))


async def memory_inflation(kind: str, healthy: bool, tracer_provider: TracerProvider, turns: int = 12) -> Outcome:
    """A chat session of many turns in one trace; each turn the user pastes a long report page.

    ``UnconstrainedMemory`` keeps every page, so the prompt grows without bound (trips on the prompt size);
    ``SlidingMemory`` keeps the last few messages (quiet).
    """
    memory: BaseMemory = SlidingMemory(SlidingMemoryConfig(size=4)) if healthy else UnconstrainedMemory()
    model = model_for(kind, lambda i: Answer(f"page {i} summarised: revenue is up"))
    agent = make_agent(kind, model, [], name="analyst", memory=memory)
    tracer = tracer_provider.get_tracer("tests.beeai")
    trip: spanbreaker.Tripped | None = None
    done = 0
    with tracer.start_as_current_span("chat session"):
        for turn in range(turns):
            trip, _ = await run_agent(agent, f"summarise this report page:\n{report_page(turn)}",
                                      max_iterations=MAX_ITERATIONS)
            if trip is not None:
                break
            done += 1
    return Outcome(trip, model.calls, turns, extra={"turns": done, "prompt_tokens": model.prompt_tokens})


# ------------------------------------------------------------------------------------------- nested agents
async def nested(kind: str, healthy: bool, delegations: int = 12, sub_steps: int = 4) -> Outcome:
    """An orchestrator handing tasks to a researcher agent (handoff). Each nested run starts a fresh
    ``max_iterations``; the breaker's budgets sum over the whole trace."""
    def sub_script(i: int) -> Move:
        step = i % (sub_steps + 1)
        if step < sub_steps:
            return Call("search", {"query": f"source {i} for the sub-task"})
        return Answer(f"finding {i}: archive record {i * 11}")

    sub_model = model_for(kind, sub_script)
    researcher = make_agent(kind, sub_model, [search], name="researcher", handed_off=True)
    handoff = HandoffTool(researcher, name="researcher", description="Delegate a research task.")
    count = 3 if healthy else delegations

    def top_script(i: int) -> Move:
        return Call("researcher", {"task": f"research topic {i}: the treaty clause {i * 3}"}) if i < count \
            else Answer("orchestrated report")

    top_model = model_for(kind, top_script)
    orchestrator = make_agent(kind, top_model, [handoff], name="orchestrator")
    trip, result = await run_agent(orchestrator, "write a report on the treaty", max_iterations=MAX_ITERATIONS)
    allowed = MAX_ITERATIONS * (1 + DEFAULT_MAX_ITERATIONS[kind])
    return Outcome(trip, top_model.calls + sub_model.calls, allowed, result,
                   {"delegations": top_model.calls, "nested_model_calls": sub_model.calls})


# ------------------------------------------------------------------------------------------------ workflows
WORKFLOW_ROUNDS = 15
"""Review rounds the looping workflow allows itself before giving up (BeeAI's Workflow has no cap of its own)."""


class Draft(BaseModel):
    """The state of the research-and-review workflow."""

    topic: str
    rounds: int = 0
    notes: list[str] = field(default_factory=list)
    report: str = ""


async def workflow_revision_loop(kind: str, healthy: bool) -> Outcome:
    """A ``Workflow`` whose review step keeps sending the research step back: each round a fresh agent searches
    once and answers. Looping: the search finds the same page every round (trips). Healthy look-alike: each
    round searches a new facet and finds new documents, then the review accepts (quiet)."""
    from beeai_framework.workflows import Workflow

    def script(i: int) -> Move:
        if i % 2:  # the looping rounds bring back the same notes, the healthy ones new notes
            return Answer(f"notes of round {i // 2}" if healthy else "no better source found")
        if healthy:
            return Call("faceted_search", {"query": PARAPHRASES[0], "facet": i // 2})
        return Call("web_search", {"query": PARAPHRASES[(i // 2) % 7]})

    model = model_for(kind, script)
    writer = model_for(kind, [Answer("the report")])
    tools: list[AnyTool] = [faceted_search if healthy else web_search]

    async def research(state: Draft) -> str:
        agent = make_agent(kind, model, tools)
        output = await agent.run(f"research {state.topic}", max_iterations=5)
        state.notes.append(output.last_message.text)
        state.rounds += 1
        return "review"

    async def review(state: Draft) -> str:
        done = state.rounds >= (6 if healthy else WORKFLOW_ROUNDS)
        return "write" if done else "research"

    async def write(state: Draft) -> str:
        output = await make_agent(kind, writer, [], name="writer").run("write the report", max_iterations=5)
        state.report = output.last_message.text
        return Workflow.END

    workflow = Workflow(Draft, name="ResearchReview")
    workflow.add_step("research", research)
    workflow.add_step("review", review)
    workflow.add_step("write", write)
    try:
        run = await workflow.run(Draft(topic="span processors"))
        trip, result = None, run.state
    except spanbreaker.Tripped as caught:
        trip, result = caught, None
    return Outcome(trip, model.calls + writer.calls, 2 * WORKFLOW_ROUNDS + 1, result,
                   {"writer_calls": writer.calls})


AGENT_WORKFLOW_KINDS = ("tool_calling", "requirement")
"""The agent classes ``AgentWorkflow`` accepts (it clones each agent; a ReActAgent with meta cannot be cloned)."""


async def agent_workflow(kind: str, healthy: bool) -> Outcome:
    """An ``AgentWorkflow`` (researcher, then writer): the researcher fixates on paraphrased searches returning
    the same page (trips), or searches facets whose results differ, then answers (quiet)."""
    from beeai_framework.workflows.agent import AgentWorkflow, AgentWorkflowInput

    def script(i: int) -> Move:
        if healthy:
            return Call("faceted_search", {"query": PARAPHRASES[i % 7], "facet": i}) if i < 8 else Answer("8 facets")
        return Call("web_search", {"query": PARAPHRASES[i % 7]})

    model = model_for(kind, script)
    writer = model_for(kind, [Answer("the report")])
    workflow = AgentWorkflow(name="Pipeline")
    workflow.add_agent(make_agent(kind, model, [faceted_search if healthy else web_search]))  # type: ignore[arg-type]
    workflow.add_agent(make_agent(kind, writer, [], name="writer"))  # type: ignore[arg-type]
    try:
        run = await workflow.run([AgentWorkflowInput(prompt="research span processors"),
                                  AgentWorkflowInput(prompt="write the report")])
        trip, result = None, run.state
    except spanbreaker.Tripped as caught:
        trip, result = caught, None
    return Outcome(trip, model.calls + writer.calls, 20, result, {"writer_calls": writer.calls})  # 20: its cap
