"""Mistral AI's client traced by OpenInference's Mistral AI instrumentor (``openinference-instrumentation-mistralai``):
its model-call spans start with their kind and request, so a plain loop around the client is read and stopped
like one around OpenAI's (:mod:`._start_tier`)."""

from __future__ import annotations

from ._start_tier import StartTierAdapter


class MistralAIAdapter(StartTierAdapter):
    name = "mistralai"
    framework = "mistralai.client"  # "mistralai" is a namespace package: no import hook fires for it
    package = "openinference.instrumentation.mistralai"
    wrappers = "openinference.instrumentation.mistralai._chat_wrapper"
    title = "OpenInference's Mistral AI instrumentor"
    unguarded = ("a loop around the Mistral client goes unseen: its model calls start unclassified, "
                 "so no budget counts them and no request is read")


ADAPTER = MistralAIAdapter()
