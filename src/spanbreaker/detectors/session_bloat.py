"""session_bloat: a reused session drags so much history into the prompt that every run pays for it.

Checked at an agent's first model call, before the model is called (or when that call ends, for spans that
carry the messages sent only then: the next call is vetoed): the history messages the framework
inserted (``"from_history": true`` in the LLM input) and the input size.
"""

from __future__ import annotations

from ..signals import ModelCall
from ..tracestate import AgentScope, OpenSpan, TraceState
from .base import Detector, Finding
from .context_growth import CHARS_PER_TOKEN


class SessionBloat(Detector):
    id = "session_bloat"

    def model_start(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        if not call.first_in_scope or call.input_chars == 0:
            return None  # a later call; or the messages sent come with the span's end (pydantic-ai): model_end
        return self._check(call)

    def model_end(self, trace: TraceState, scope: AgentScope, span: OpenSpan, call: ModelCall) -> Finding | None:
        if not (call.first_in_scope and call.input_at_end):
            return None
        return self._check(call)

    def _check(self, call: ModelCall) -> Finding | None:
        if call.history_messages <= 0:
            return None
        config = self.config
        tokens = call.input_chars // CHARS_PER_TOKEN
        if call.history_messages > config.session_history_messages or tokens > config.session_history_tokens:
            # the messages are counted in the prompt's first max_attribute_chars characters (bounded work per span)
            counted = f"at least {call.history_messages}" if call.input_chars > config.max_attribute_chars else (
                str(call.history_messages))
            return self.trip(
                f"first call of a reused session: {counted} history messages in a prompt of ~{tokens} tokens",
                history_messages=call.history_messages, estimated_tokens=tokens,
                limit_messages=config.session_history_messages, limit_tokens=config.session_history_tokens,
            )
        return None
