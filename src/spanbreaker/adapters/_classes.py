"""Class-hierarchy helpers shared by the adapters (no framework imports here)."""

from __future__ import annotations

from collections.abc import Iterator


def subclasses(cls: type) -> Iterator[type]:
    """Every subclass of ``cls`` at any depth, each once: custom models defined by users are found too."""
    seen: set[type] = set()
    stack: list[type] = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        if sub in seen:
            continue
        seen.add(sub)
        yield sub
        stack.extend(sub.__subclasses__())
