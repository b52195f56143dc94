"""How early a plain tool loop around the Groq, Mistral, Ollama, Google Gen AI or Bedrock client is stopped, with
spanbreaker's adapter for the client's instrumentor off (the instrumentor's spans alone, the breaker attached) and on.

OpenInference's Groq, Mistral AI and Ollama instrumentors run in the dev tier; OpenLLMetry's Groq, Ollama, Google Gen AI
and Bedrock ones in the OpenLLMetry tier (content tracing on and off). Each tier runs the instrumentors it has::

    python benchmarks/client_loop_scenarios.py                              # OpenInference's (dev tier)
    .venv/openllmetry/bin/python benchmarks/client_loop_scenarios.py        # OpenLLMetry's

The loops are the tests' (``tests/clients/apps.py``): the scripted model asks for the same search every turn and gets
the same page, at most 30 turns, with one span of the application's around the loop or none (each model call a trace
of its own); and a budget row, ``max_model_calls=3``, the model asking a new query each turn. Printed: the model
requests that reached the model, and what stopped the loop.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.clients.apps import APPS, run_loop, same_page, stuck
from tests.genai_rig import make_rig
from tests.openai_client.scripted import ScriptedModel, tool_results

INSTRUMENTORS: list[tuple[str, str, str, str]] = [
    # (label, client, instrumentor "module:class", spanbreaker adapter module)
    ("OpenInference Groq", "groq", "openinference.instrumentation.groq:GroqInstrumentor", "groq"),
    ("OpenInference Mistral AI", "mistralai", "openinference.instrumentation.mistralai:MistralAIInstrumentor",
     "mistralai"),
    ("OpenInference Ollama", "ollama", "openinference.instrumentation.ollama:OllamaInstrumentor", "ollama"),
    ("OpenLLMetry Groq", "groq", "opentelemetry.instrumentation.groq:GroqInstrumentor", "openllmetry_groq"),
    ("OpenLLMetry Ollama", "ollama", "opentelemetry.instrumentation.ollama:OllamaInstrumentor", "openllmetry_ollama"),
    ("OpenLLMetry Google Gen AI", "google-genai",
     "opentelemetry.instrumentation.google_generativeai:GoogleGenerativeAiInstrumentor", "openllmetry_google_genai"),
    ("OpenLLMetry Bedrock", "bedrock", "opentelemetry.instrumentation.bedrock:BedrockInstrumentor",
     "openllmetry_bedrock"),
]


def installed(path: str) -> bool:
    module = path.split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def scenario(client: str, instrumentor_path: str, adapter_name: str, with_adapter: bool, wrap: bool,
             budget: bool) -> tuple[int, str]:
    module, name = instrumentor_path.split(":")
    instrumentor = getattr(importlib.import_module(module), name)()
    adapter = importlib.import_module(f"spanbreaker.adapters.{adapter_name}").ADAPTER
    # The client's own methods, put back afterwards: some instrumentors' ``uninstrument`` leaves their wrappers (and
    # the adapter's composed one) in place, and the next scenario would run through them (as the tests do too).
    methods = [(getattr(importlib.import_module(c.module), c.owner), c.method) for c in getattr(adapter, "clients", ())]
    plain = [(owner, method, vars(owner)[method]) for owner, method in methods]
    rig = make_rig(**({"max_model_calls": 3} if budget else {}))
    if with_adapter:
        adapter.instrument(rig.provider, rig.processor)
    instrumentor.instrument(tracer_provider=rig.provider)
    app = APPS[client]
    script: Callable[[list[Any]], Any] = (
        (lambda messages: [("search", {"query": f"q{tool_results(messages)}"})]) if budget else stuck)
    model = ScriptedModel(script, model=app.model)
    try:
        run_loop(rig, app, model, (lambda arguments, n: f"page {n}") if budget else same_page, wrap=wrap)
        outcome = "ran to its limit"
    except BaseException as exc:
        outcome = str(getattr(exc, "detector", None) or type(exc).__name__)
    finally:
        instrumentor.uninstrument()
        adapter.uninstrument()
        for owner, method, function in plain:
            setattr(owner, method, function)
        rig.provider.shutdown()
    return model.calls, outcome


def main() -> None:
    print(f"{'instrumentor':<28}{'content':>8}  {'run':<24}{'adapter off: requests / stop':>32}"
          f"{'on: requests / stop':>28}")
    for label, client, instrumentor_path, adapter_name in INSTRUMENTORS:
        if not installed(instrumentor_path):
            continue
        contents = ("true", "false") if instrumentor_path.startswith("opentelemetry.") else ("-",)
        for content in contents:
            os.environ["TRACELOOP_TRACE_CONTENT"] = content if content != "-" else "true"
            for run, wrap, budget in (("loop, in a span", True, False), ("loop, no span", False, False),
                                      ("max_model_calls=3", True, True)):
                off, on = (" / ".join(map(str, scenario(client, instrumentor_path, adapter_name, with_adapter, wrap,
                                                        budget))) for with_adapter in (False, True))
                print(f"{label:<28}{content:>8}  {run:<24}{off:>32}{on:>28}", flush=True)


if __name__ == "__main__":
    main()
