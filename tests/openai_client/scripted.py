"""The scripted OpenAI-compatible model lives in examples/ (the example runs on it); the tests use the same one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from _scripted_openai import Reply, Script, ScriptedModel, tool_results

__all__ = ["Reply", "Script", "ScriptedModel", "tool_results"]
