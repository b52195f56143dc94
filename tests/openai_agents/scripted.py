"""The examples' scripted model for the OpenAI Agents SDK (``examples/_scripted_openai_agents.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from _scripted_openai_agents import ScriptedModel, tool_results

__all__ = ["ScriptedModel", "tool_results"]
