"""The Strands example's scripted model (``examples/_scripted_strands.py``), the only stub in these tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from _scripted_strands import Reply, Scripted, tool_results

__all__ = ["Reply", "Scripted", "tool_results"]
