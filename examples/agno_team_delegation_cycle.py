"""An Agno team falls into a delegation cycle; spanbreaker stops it.

The support lead hands "refund order 1234" to the billing specialist, who answers that the lead must
clarify first; the lead hands the same task back, again and again. Agno has no limit on delegations, so the
team would burn model calls until the lead's script (or your budget) ran out. The breaker sees the same task
going to the same member and coming back with the same answer, and cancels the whole team.

Run offline (a scripted model stands in for the LLM)::

    python examples/agno_team_delegation_cycle.py

With ``OPENAI_API_KEY`` set, the same team runs on ``gpt-4o-mini`` (a real model may or may not loop).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import spanbreaker
from spanbreaker.adapters.agno import trip_record

LEAD_TURNS = 20
"""How often the scripted lead would delegate without the breaker."""
CALLS: dict[str, int] = {}
"""Model calls actually made, per scripted model id."""


def scripted_models() -> tuple[Any, Any]:
    """Offline stand-ins: a lead that always re-delegates, a specialist that always asks back."""
    from agno.metrics import MessageMetrics
    from agno.models.base import Model
    from agno.models.response import ModelResponse

    @dataclass
    class Scripted(Model):
        id: str = "scripted"
        name: str = "Scripted"
        provider: str = "offline"

        def _reply(self) -> ModelResponse:
            CALLS[self.id] = n = CALLS.get(self.id, 0) + 1
            response = ModelResponse(role="assistant")
            response.response_usage = MessageMetrics(input_tokens=400, output_tokens=60, total_tokens=460)
            if self.id == "lead" and n <= LEAD_TURNS:
                response.tool_calls = [{"id": f"call_{n}", "type": "function", "function": {
                    "name": "delegate_task_to_member",
                    "arguments": json.dumps({"member_id": "billing-specialist", "task": "Refund order 1234"})}}]
            elif self.id == "lead":
                response.content = "Escalating to a human."
            else:
                response.content = "I can't refund yet: the lead must confirm the payment id for order 1234."
            return response

        def invoke(self, messages: Any, assistant_message: Any, response_format: Any = None, tools: Any = None,
                   tool_choice: Any = None, run_response: Any = None, compress_tool_results: bool = False
                   ) -> ModelResponse:
            return self._reply()

        async def ainvoke(self, messages: Any, assistant_message: Any, response_format: Any = None,
                          tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                          compress_tool_results: bool = False) -> ModelResponse:
            return self._reply()

        def invoke_stream(self, messages: Any, assistant_message: Any, response_format: Any = None,
                          tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                          compress_tool_results: bool = False) -> Iterator[ModelResponse]:
            yield self._reply()

        async def ainvoke_stream(self, messages: Any, assistant_message: Any, response_format: Any = None,
                                 tools: Any = None, tool_choice: Any = None, run_response: Any = None,
                                 compress_tool_results: bool = False) -> AsyncIterator[ModelResponse]:
            yield self._reply()

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

    return Scripted(id="lead"), Scripted(id="specialist")


def main() -> int:
    processor = spanbreaker.instrument(frameworks=["agno"])  # global provider (created if none)
    assert processor is not None
    from agno.agent import Agent
    from agno.team import Team

    offline = not os.environ.get("OPENAI_API_KEY")
    if offline:
        lead_model, specialist_model = scripted_models()
    else:
        from agno.models.openai import OpenAIChat

        lead_model, specialist_model = OpenAIChat(id="gpt-4o-mini"), OpenAIChat(id="gpt-4o-mini")

    specialist = Agent(name="Billing Specialist", model=specialist_model,
                       instructions="Never refund without a payment id confirmed by the lead.")
    team = Team(name="Support Lead", model=lead_model, members=[specialist],
                instructions="Delegate refunds to the billing specialist until they are done.")
    output = team.run("Customer asks: please refund order 1234.")

    print(f"Team '{team.name}' finished with status {output.status.value}")
    record = trip_record(output, processor)
    if record is None:
        print("The breaker did not trip: no delegation cycle in this run.")
        return 0 if not offline else 1
    print(f"  detector : {record.detector}")
    print(f"  reason   : {record.reason}")
    print(f"  evidence : {json.dumps(record.evidence, sort_keys=True)}")
    print(f"  agent    : {record.agent}   blocked calls: {record.blocked_calls}   trace: {record.trace_id}")
    if offline:
        lead, member = CALLS.get("lead", 0), CALLS.get("specialist", 0)
        print(f"  model calls made: lead {lead}, specialist {member}; without the breaker the lead would have "
              f"delegated {LEAD_TURNS} times ({2 * LEAD_TURNS + 1} calls)")
        return 0 if record.detector == "delegation_repeat" and output.status.value == "CANCELLED" else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
