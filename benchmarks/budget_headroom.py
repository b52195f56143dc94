"""How far the default budgets sit above the runs of every corpus: the largest run by tokens, model calls, tool calls
and cost, among the successful runs and among all, beside each default and its headroom (default / largest).

A budget is a safety net for what no detector recognises, so its default must sit above healthy runs of every agent
design: a successful run past it would be stopped short of success. Figures come from the recorded spans alone, read
the way the breaker reads them (``fill_model_result`` and ``call_cost``, so a call's cost is the one the breaker would
count: the span's reported cost, else its tokens priced by genai-prices), counted over every span of a trace as the
budgets are (a trace's agents together). Model calls counted once per call, as the engine does (an LLM span inside
another LLM span is the same call seen by a lower layer). A cost depends on the model that made the run, so each run
is also priced at the dearest list price in wide use (``at list price``): the cost default must hold that too.

    python benchmarks/budget_headroom.py [PATH ...]

PATH defaults to the shared mini-swe-agent data plus ``corpora/data/`` (see ``detection_corpora.py``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from detection_corpora import DEFAULT_PATHS, labels

import spanbreaker
from spanbreaker.conventions.read import fill_model_result
from spanbreaker.pricing import call_cost, wait_loaded
from spanbreaker.replay import Problem, RecordedTrace
from spanbreaker.replay.readers import read_traces
from spanbreaker.signals import Kind, ModelCall, classify

FIGURES = ("tokens", "model calls", "tool calls", "cost USD", "at list price")
DEAREST_PER_MILLION = (15.0, 75.0)
"""The dearest list price in wide use, USD per million input / output tokens (o1, Claude Opus 4.1): the cost budget's
default must hold a healthy run whatever model made it, so each run is also priced as if this one had."""


@dataclass
class Largest:
    """Per figure, the largest value seen and the task it was seen in."""

    values: dict[str, tuple[float, str]] = field(default_factory=dict)

    def add(self, task: str, figures: dict[str, float]) -> None:
        for name, value in figures.items():
            if value > self.values.get(name, (-1.0, ""))[0]:
                self.values[name] = (value, task)


def figures(trace: RecordedTrace) -> dict[str, float]:
    """A trace's tokens, model calls, tool calls and cost, as the breaker's budgets count them."""
    kinds = {span.span_id: classify(span.name, span.attributes) for span in trace.spans}
    tokens, models, tools, cost, prompt, completion = 0, 0, 0, 0.0, 0, 0
    for span in trace.spans:
        kind = kinds[span.span_id]
        if kind is Kind.TOOL:
            tools += 1
        elif kind is Kind.LLM and kinds.get(span.parent_id or 0) is not Kind.LLM:
            models += 1
            call = ModelCall(None)
            fill_model_result(call, span.attributes, 4096)
            tokens += call.tokens
            cost += call_cost(call)
            prompt += call.prompt_tokens or 0
            completion += call.completion_tokens or 0
    at_list_price = (prompt * DEAREST_PER_MILLION[0] + completion * DEAREST_PER_MILLION[1]) / 1e6
    return {"tokens": tokens, "model calls": models, "tool calls": tools, "cost USD": cost,
            "at list price": at_list_price}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    paths = args.paths or [str(p) for p in DEFAULT_PATHS if p.exists()]
    wait_loaded(30.0)
    problems: list[Problem] = []
    successful: dict[str, Largest] = {}
    every: dict[str, Largest] = {}
    config = spanbreaker.BreakerConfig()
    limits = sorted({25.0, 50.0, config.max_cost_usd})
    """Cost budgets to count successful runs against: the default, the earlier default ($25), and $50 between."""
    over: dict[str, list[int]] = {}
    """Per corpus, successful runs: all, then those priced at the dearest list price at or over each of ``limits``."""
    for trace in read_traces(paths, problems.append):
        corpus, task, success, _end, _budget = labels(trace)
        counted = figures(trace)
        every.setdefault(corpus, Largest()).add(task, counted)
        if success is True:
            successful.setdefault(corpus, Largest()).add(task, counted)
            runs = over.setdefault(corpus, [0] * (1 + len(limits)))
            runs[0] += 1
            for index, limit in enumerate(limits, 1):
                runs[index] += counted["at list price"] >= limit
    defaults = {"tokens": config.max_tokens, "model calls": config.max_model_calls,
                "tool calls": config.max_tool_calls, "cost USD": config.max_cost_usd,
                "at list price": config.max_cost_usd}

    def shown(value: float, name: str) -> str:
        return f"${value:,.2f}" if name in ("cost USD", "at list price") else f"{value:,.0f}"

    print(f"{'corpus':<36} " + " ".join(f"{name + ' (ok / all)':>28}" for name in FIGURES))
    for corpus in sorted(every):
        cells = []
        for name in FIGURES:
            ok = successful.get(corpus, Largest()).values.get(name, (0.0, ""))[0]
            cells.append(f"{shown(ok, name) + ' / ' + shown(every[corpus].values[name][0], name):>28}")
        print(f"{corpus:<36} " + " ".join(cells))
    print()
    for name in FIGURES:
        value, task, corpus = max(((largest.values.get(name, (0.0, ""))[0], largest.values.get(name, (0.0, ""))[1],
                                    corpus) for corpus, largest in successful.items()), default=(0.0, "", "-"))
        headroom = f"{defaults[name] / value:.1f}x" if value else "-"
        print(f"{name:<12} default {shown(defaults[name], name):>12}; largest successful run {shown(value, name):>12} "
              f"({corpus}, {task}): headroom {headroom}")
    print(f"\nsuccessful runs priced at ${DEAREST_PER_MILLION[0]:g} / ${DEAREST_PER_MILLION[1]:g} per million input / "
          f"output tokens, at or over a cost budget of {' / '.join(f'${limit:g}' for limit in limits)}:")
    for corpus, runs in sorted(over.items()):
        print(f"  {corpus:<34} {' / '.join(str(n) for n in runs[1:])} of {runs[0]}")
    for problem in problems[:10]:
        print(f"input problem: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
