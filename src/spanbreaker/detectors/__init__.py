"""The one detector registry: every detector, one module per id. ``build_detectors`` gives the enabled ones for a
config; :data:`DETECTOR_IDS` is what configuration validates ``disabled_detectors`` against. A new detector is a
module and a line in :data:`ALL_DETECTORS`, nothing else."""

from __future__ import annotations

from ..config import BreakerConfig
from .base import Detector, Finding
from .call_budget import CallBudget
from .context_growth import ContextGrowth
from .cost_budget import CostBudget
from .delegation_cycle import DelegationCycle
from .delegation_depth import DelegationDepth
from .delegation_repeat import DelegationRepeat
from .error_loop import ErrorLoop
from .format_loop import FormatLoop
from .input_fixation import InputFixation
from .low_exploration import LowExploration
from .self_reported_stall import SelfReportedStall
from .session_bloat import SessionBloat
from .token_budget import TokenBudget
from .tool_cycle import ToolCycle
from .tool_repeat import ToolRepeat
from .tool_streak import ToolStreak
from .validation_failures import ValidationFailures

ALL_DETECTORS: tuple[type[Detector], ...] = (
    # Order matters only for which id is reported when two detectors fire on the same span:
    # the most specific explanation first, budgets last.
    DelegationCycle, DelegationDepth, DelegationRepeat, SessionBloat, ContextGrowth, ToolRepeat, ToolCycle,
    InputFixation, ToolStreak, LowExploration, ErrorLoop, SelfReportedStall, FormatLoop, ValidationFailures, CallBudget,
    TokenBudget, CostBudget,
)


FORCED = "forced"
"""The id of a trip opened from outside (``force_open``, the kill switch): no detector class behind it."""
DETECTOR_IDS = frozenset({cls.id for cls in ALL_DETECTORS} | {FORCED})


def build_detectors(config: BreakerConfig) -> list[Detector]:
    return [cls(config) for cls in ALL_DETECTORS if cls.id not in config.disabled_detectors]


__all__ = ["ALL_DETECTORS", "DETECTOR_IDS", "FORCED", "Detector", "Finding", "build_detectors"]
