"""Ollama's client traced by OpenInference's Ollama instrumentor (``openinference-instrumentation-ollama``):
its model-call spans start with their kind and request, so a plain loop around the client is read and stopped
like one around OpenAI's (:mod:`._start_tier`)."""

from __future__ import annotations

from ._start_tier import StartTierAdapter


class OllamaAdapter(StartTierAdapter):
    name = "ollama"
    framework = "ollama"
    package = "openinference.instrumentation.ollama"
    wrappers = "openinference.instrumentation.ollama._wrappers"
    title = "OpenInference's Ollama instrumentor"
    unguarded = ("a loop around the Ollama client goes unseen: its model calls start unclassified, "
                 "so no budget counts them and no request is read")


ADAPTER = OllamaAdapter()
