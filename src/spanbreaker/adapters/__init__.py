"""Framework adapters: instrumentors, stop paths and instrumentor work-arounds, one module per framework.

Each module defines ``ADAPTER``, an :class:`~spanbreaker.adapters.base.Adapter` (``name``, ``available()``,
``instrument(tracer_provider, processor)``, ``uninstrument()``), and patches frameworks only through a
:class:`~spanbreaker.adapters.base.PatchLog`. Framework imports stay inside those functions so that spanbreaker
imports without any framework installed.
"""

from __future__ import annotations

ADAPTER_MODULES: tuple[str, ...] = (
    "spanbreaker.adapters.smolagents",
    "spanbreaker.adapters.agno",
    "spanbreaker.adapters.beeai",
    "spanbreaker.adapters.langchain",
    "spanbreaker.adapters.openai_agents",
    "spanbreaker.adapters.pydantic_ai",
    "spanbreaker.adapters.llama_index",
    "spanbreaker.adapters.crewai",
    "spanbreaker.adapters.strands",
    "spanbreaker.adapters.litellm",
    "spanbreaker.adapters.bedrock",
    "spanbreaker.adapters.groq",
    "spanbreaker.adapters.ollama",
    "spanbreaker.adapters.mistralai",
    "spanbreaker.adapters.autogen",
    "spanbreaker.adapters.dspy",
    "spanbreaker.adapters.haystack",
    "spanbreaker.adapters.agent_framework",
    "spanbreaker.adapters.google_adk",
    "spanbreaker.adapters.semantic_kernel",
    "spanbreaker.adapters.openai_v2",
    "spanbreaker.adapters.openllmetry_openai",
    "spanbreaker.adapters.openllmetry_langchain",
    "spanbreaker.adapters.openllmetry_anthropic",
    "spanbreaker.adapters.openllmetry_openai_agents",
    "spanbreaker.adapters.openllmetry_llama_index",
    "spanbreaker.adapters.openllmetry_groq",
    "spanbreaker.adapters.openllmetry_ollama",
    "spanbreaker.adapters.openllmetry_google_genai",
    "spanbreaker.adapters.openllmetry_bedrock",
    "spanbreaker.adapters.traceloop_sdk",
    "spanbreaker.adapters.langfuse",
    "spanbreaker.adapters.openlit_openai",
    "spanbreaker.adapters.openlit_anthropic",
    "spanbreaker.adapters.openlit_groq",
    "spanbreaker.adapters.openlit_ollama",
    "spanbreaker.adapters.openlit_google_genai",
    "spanbreaker.adapters.openinference",
)
SHARED_MODULES: frozenset[str] = frozenset({"spanbreaker.adapters.openinference"})
"""Adapters of what several frameworks' instrumentors share (OpenInference's tracer): instrumented along with any
framework, whichever ``frameworks`` a caller names."""
