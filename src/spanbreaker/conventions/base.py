"""The shape of a span convention: the attribute keys it owns, and how its spans say what they are.

A convention is a module (OpenInference, the OpenTelemetry GenAI semantic conventions, framework quirks) that
owns its attribute keys in one table, ``KEYS`` (role -> key), as OpenInference keeps its GenAI names apart.
The readers in :mod:`.read` look each figure up under the conventions in a fixed order; a new convention is a
new module here and a line in that order, never a literal key in the engine or a detector.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..kinds import Kind


class Convention(Protocol):
    """What every module in :mod:`spanbreaker.conventions` provides (modules satisfy protocols in mypy)."""

    @property
    def NAME(self) -> str:  # a module constant, read-only
        """The convention's short name."""
        ...

    @property
    def KEYS(self) -> Mapping[str, str]:  # a module constant, read-only
        """Role (``tool_name``, ``input``, ...) -> attribute key, for every key the convention's readers use."""
        ...

    def kind(self, name: str, attributes: Mapping[str, Any]) -> Kind | None:
        """The span's kind when this convention can tell, else None (the next convention is asked)."""
        ...
