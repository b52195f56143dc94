"""context_growth: the prompt jumps (a step printed a huge DataFrame) or passes an absolute size.

Checked in ``model_start`` from the size of the messages about to be sent (``input.value``, about four
characters a token), so the inflated call is vetoed before it is paid for, and again in ``model_end`` from
the reported prompt tokens. Steady growth of a long run is not inflation: only a jump of
``context_jump_tokens`` that also multiplies the previous prompt by ``context_jump_ratio`` counts. On real
SWE-bench runs the largest healthy jump was about 40k tokens.
"""

from __future__ import annotations

from ..config import BreakerConfig
from ..signals import ModelCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding

CHARS_PER_TOKEN = 4


class ContextGrowth(Detector):
    id = "context_growth"

    def __init__(self, config: BreakerConfig) -> None:
        super().__init__(config)
        self._max_prompt = config.max_prompt_tokens
        self._jump = config.context_jump_tokens

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        if call.input_chars <= 0:
            return None
        previous = scope.slots.get("context_chars")
        scope.slots["context_chars"] = call.input_chars
        return self._check(call.input_chars // CHARS_PER_TOKEN,
                           previous // CHARS_PER_TOKEN if previous is not None else None, "estimated")

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        tokens = call.prompt_tokens
        if tokens is None:
            return None
        previous = scope.slots.get("context_tokens")
        scope.slots["context_tokens"] = tokens
        return self._check(tokens, previous, "reported")

    def _check(self, tokens: int, previous: int | None, source: str) -> Finding | None:
        """The one threshold: a prompt of ``max_prompt_tokens``, or a jump of ``context_jump_tokens`` that also
        multiplies the previous prompt by ``context_jump_ratio``."""
        if tokens < self._max_prompt and (not previous or tokens - previous < self._jump):
            return None  # the common case, decided before anything else
        config = self.config
        if tokens >= self._max_prompt:
            return self.trip(f"prompt of {tokens} tokens ({source}) exceeds {self._max_prompt}",
                             prompt_tokens=tokens, limit=self._max_prompt, source=source)
        jump = tokens - previous if previous else 0
        if previous and tokens >= previous * config.context_jump_ratio:
            return self.trip(
                f"prompt grew by {jump} tokens in one step ({previous} -> {tokens}, {source})",
                prompt_tokens=tokens, previous_prompt_tokens=previous, jump_tokens=jump, limit=self._jump,
                source=source,
            )
        return None
