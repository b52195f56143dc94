"""A run's outcome label, read from its resource attributes: did the run succeed?

Why the replay reads it: a trip on a run that succeeded would have killed a success. With the label beside each
verdict (and "successful runs tripped" in the summary and the threshold sweep), a reader tuning thresholds sees
the cost of a trip as well as its savings.

The label keys are one table, first match wins. ``eval.success`` is the generic key for any corpus (a converter
or an evaluation harness sets it); corpus-specific keys sit beside it. To read another key, add a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OUTCOME_LABELS: dict[str, tuple[str, str]] = {
    "eval.success": ("success", "failure"),
    "swebench.resolved": ("resolved", "unresolved"),
}
"""Resource attribute -> the words for its true and false values."""

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


@dataclass(frozen=True)
class Outcome:
    key: str
    """The resource attribute the label came from."""
    success: bool

    @property
    def word(self) -> str:
        yes, no = OUTCOME_LABELS.get(self.key, ("success", "failure"))
        return yes if self.success else no


def _as_bool(value: Any) -> bool | None:
    """Booleans as recorded; also ``"true"``/``"false"`` and 1/0 (Jaeger tags and some converters write those)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        text = value.strip().lower()
        return True if text in _TRUE else False if text in _FALSE else None
    return None


def outcome(resource: Mapping[str, Any]) -> Outcome | None:
    """The run's label, or None when the resource carries none (or a value that is not a yes/no)."""
    for key in OUTCOME_LABELS:
        if key in resource:
            success = _as_bool(resource[key])
            if success is not None:
                return Outcome(key, success)
    return None
