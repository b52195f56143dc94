"""The plain-text table the scenario benchmarks print (one row per scenario, columns padded to fit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def print_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    """Print ``rows`` (dicts sharing their keys, in order) under a header of those keys."""
    header = list(rows[0])
    widths = [max(len(str(r[h])) for r in [dict(zip(header, header, strict=True)), *rows]) for h in header]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(row[h]).ljust(w) for h, w in zip(header, widths, strict=True)))
