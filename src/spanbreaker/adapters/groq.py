"""Groq's client traced by OpenInference's Groq instrumentor (``openinference-instrumentation-groq``):
its model-call spans start with their kind and request, so a plain loop around the client is read and stopped
like one around OpenAI's (:mod:`._start_tier`)."""

from __future__ import annotations

from ._start_tier import StartTierAdapter


class GroqAdapter(StartTierAdapter):
    name = "groq"
    framework = "groq"
    package = "openinference.instrumentation.groq"
    wrappers = "openinference.instrumentation.groq._wrappers"
    title = "OpenInference's Groq instrumentor"
    unguarded = ("a loop around the Groq client goes unseen: its model calls start unclassified, "
                 "so no budget counts them and no request is read")


ADAPTER = GroqAdapter()
