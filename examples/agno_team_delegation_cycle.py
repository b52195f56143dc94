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
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import spanbreaker
from spanbreaker.adapters.agno import trip_record

LEAD_TURNS = 20
"""How often the scripted lead would delegate without the breaker."""


def scripted_models() -> tuple[Any, Any]:
    """Offline stand-ins: a lead that always re-delegates, a specialist that always asks back."""
    from _scripted_agno import response, scripted_model

    def lead(messages: Any, n: int) -> Any:
        if n > LEAD_TURNS:
            return response("Escalating to a human.")
        return response(tool_calls=[{"id": f"call_{n}", "type": "function", "function": {
            "name": "delegate_task_to_member",
            "arguments": json.dumps({"member_id": "billing-specialist", "task": "Refund order 1234"})}}])

    return scripted_model("lead", lead), scripted_model("specialist", lambda messages, n: response(
        "I can't refund yet: the lead must confirm the payment id for order 1234."))


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
    from _scripted_agno import print_record

    print_record(record)
    if offline:
        from _scripted_agno import CALLS

        lead, member = CALLS.get("lead", 0), CALLS.get("specialist", 0)
        print(f"  model calls made: lead {lead}, specialist {member}; without the breaker the lead would have "
              f"delegated {LEAD_TURNS} times ({2 * LEAD_TURNS + 1} calls)")
        return 0 if record.detector == "delegation_repeat" and output.status.value == "CANCELLED" else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
