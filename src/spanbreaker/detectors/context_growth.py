"""context_growth: the prompt jumps (a step printed a huge DataFrame) or passes an absolute size.

Checked in ``model_start`` from the size of the messages about to be sent (``input.value``, about four
characters a token), so the inflated call is vetoed before it is paid for, and again in ``model_end`` from
the reported prompt tokens. Steady growth of a long run is not inflation: only a jump of
``context_jump_tokens`` that also multiplies the previous prompt by ``context_jump_ratio`` counts. On real
SWE-bench runs the largest healthy jump was about 40k tokens.

A jump is growth of one conversation. A pipeline that routes or classifies with a short prompt, then answers from a
long document with another, starts a second conversation: its first prompt is not the context the second one grew
from. So when both calls' messages are on their spans and their first message differs (:func:`conversation`), the
second prompt is judged by its absolute size alone. Where the messages are not recorded (token counts only), every
call of the agent is one conversation, as before.
"""

from __future__ import annotations

import re

from ..config import BreakerConfig
from ..signals import ModelCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding

CHARS_PER_TOKEN = 4
CONVERSATION_CHARS = 64
"""Of the first message's text, what tells one conversation from another."""
_FIRST_TEXT = re.compile(r'"(?:content|text)"\s*:\s*"((?:[^"\\]|\\.){1,' + str(CONVERSATION_CHARS) + "})")
"""The first string under a ``content`` or ``text`` key: the first message's text in every serialization seen (OpenAI
and Anthropic requests, LangChain's messages, the GenAI conventions' parts, smolagents' content lists)."""
_NO_DIGITS = str.maketrans("", "", "0123456789")
_OPENING = "context_growth.opening"
"""Slot: the opening of the agent's latest model call (None when its messages were not recorded)."""
_OPENING_BEFORE = "context_growth.opening_before"
"""Slot: the opening of the call before it, what a reported jump of the latest call is judged against."""


def conversation(opening: str) -> str | None:
    """What identifies the conversation a model call's messages belong to: the start of the first message's text,
    digits left out (a system prompt that states the time or a counter is still the same conversation). A prompt
    in plain text is its own first message. None when a request in JSON shows no message text in its opening (the
    Responses API continuing a stored conversation sends only the new items): which conversation is unknown."""
    if opening.startswith(("{", "[")):
        found = _FIRST_TEXT.search(opening)
        if found is None:
            return None
        text = found.group(1)
    else:
        text = opening[:CONVERSATION_CHARS]
    return text.translate(_NO_DIGITS)


def new_conversation(before: str | None, opening: str | None) -> bool:
    """Whether the call whose messages open with ``opening`` starts another conversation than the call before it
    (False when either conversation is unknown)."""
    if before is None or opening is None:
        return False
    first, second = conversation(before), conversation(opening)
    return first is not None and second is not None and first != second


class ContextGrowth(Detector):
    id = "context_growth"

    def __init__(self, config: BreakerConfig) -> None:
        super().__init__(config)
        self._max_prompt = config.max_prompt_tokens
        self._jump = config.context_jump_tokens

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        slots = scope.slots
        before = slots[_OPENING_BEFORE] = slots.get(_OPENING)
        slots[_OPENING] = call.opening
        if call.input_chars <= 0:
            return None
        previous = slots.get("context_chars")
        slots["context_chars"] = call.input_chars
        return self._check(call.input_chars // CHARS_PER_TOKEN,
                           previous // CHARS_PER_TOKEN if previous is not None else None, "estimated",
                           before, call.opening)

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        slots = scope.slots
        if call.opening is not None:  # perhaps known only now (the span's end): the next call is judged against it
            slots[_OPENING] = call.opening
        tokens = call.prompt_tokens
        if tokens is None:
            return None
        previous = slots.get("context_tokens")
        slots["context_tokens"] = tokens
        return self._check(tokens, previous, "reported", slots.get(_OPENING_BEFORE), call.opening)

    def _check(self, tokens: int, previous: int | None, source: str, before: str | None,
               opening: str | None) -> Finding | None:
        """The one threshold: a prompt of ``max_prompt_tokens``, or a jump of ``context_jump_tokens`` that also
        multiplies the previous prompt by ``context_jump_ratio`` in the same conversation (``before`` and
        ``opening``: the two calls' openings)."""
        if tokens < self._max_prompt and (not previous or tokens - previous < self._jump):
            return None  # the common case, decided before anything else
        config = self.config
        if tokens >= self._max_prompt:
            return self.trip(f"prompt of {tokens} tokens ({source}) exceeds {self._max_prompt}",
                             prompt_tokens=tokens, limit=self._max_prompt, source=source)
        jump = tokens - previous if previous else 0
        if previous and tokens >= previous * config.context_jump_ratio and not new_conversation(before, opening):
            return self.trip(
                f"prompt grew by {jump} tokens in one step ({previous} -> {tokens}, {source})",
                prompt_tokens=tokens, previous_prompt_tokens=previous, jump_tokens=jump, limit=self._jump,
                source=source,
            )
        return None
