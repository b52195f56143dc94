"""What a span stands for, as far as the breaker is concerned (its own module: conventions and signals both
need it, and neither may import the other's readers)."""

from __future__ import annotations

from enum import IntEnum


class Kind(IntEnum):
    OTHER = 0
    AGENT = 1
    CHAIN = 2
    LLM = 3
    TOOL = 4

