"""``spanbreaker replay --sweep KEY=V1,V2,...``: several values of a threshold judged in one pass.

Why: a user tuning a threshold asks "what happens at 3, 4, 5, 6?". Re-running the replay once per value reads
and parses the file each time; the sweep reads it once and feeds every trace to one processor per
configuration (:func:`~spanbreaker.replay.runner.replay_many`).

How several ``--sweep`` options combine: one key at a time, each value applied to the base configuration
(``--config``, environment, defaults), not a grid. ``--sweep a=1,2 --sweep b=5,6`` replays four configurations
(a=1, a=2, b=5, b=6, each with everything else at the base), so the cost grows with the number of values, not
their product. For a combination, put it in the ``--config`` file and sweep the other key.

Keys are the numeric fields of :class:`~spanbreaker.config.BreakerConfig`; every value goes through
``BreakerConfig`` and is validated as a config file's would be.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import BreakerConfig
from ..errors import ConfigError
from .report import Summary
from .runner import TraceResult

_DEFAULTS = BreakerConfig()
SWEEPABLE: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(BreakerConfig)
    if type(getattr(_DEFAULTS, f.name)) in (int, float)
)
"""The keys ``--sweep`` accepts: every numeric threshold (integers and numbers)."""


@dataclass
class SweepRow:
    """One configuration of the sweep and its totals over every trace replayed."""

    label: str
    """``key=value`` as given, or ``base`` for the base configuration's own row."""
    config: BreakerConfig
    feeder: int
    """Index of the feeder (distinct configuration) whose verdicts this row counts."""
    is_base: bool = False
    """True when this configuration is the base one (its verdicts are the report's per-trace verdicts)."""
    summary: Summary = field(default_factory=Summary)


def _value(key: str, text: str, base: BreakerConfig) -> BreakerConfig:
    """``base`` with ``key`` set from ``text``, validated by BreakerConfig (its message names key and range)."""
    kind = type(getattr(base, key))
    parsed: Any
    try:
        parsed = kind(text)
    except ValueError:
        parsed = text  # BreakerConfig rejects it with the expected type and range
    try:
        config = base.replace(**{key: parsed})
    except ConfigError as exc:
        raise ConfigError(f"--sweep: {exc}") from None
    if isinstance(parsed, str):  # pragma: no cover - every numeric field is range-checked today
        raise ConfigError(f"--sweep: {key}={text!r}: expected a number")
    return config


def parse(specs: Iterable[str], base: BreakerConfig) -> list[tuple[str, BreakerConfig]]:
    """(label, configuration) per value of every ``KEY=V1,V2,...`` spec, each value applied to ``base``."""
    points: list[tuple[str, BreakerConfig]] = []
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--sweep {spec!r}: expected KEY=VALUE[,VALUE...], e.g. tool_repeat_max=3,4,5,6")
        if key not in SWEEPABLE:
            raise ConfigError(f"--sweep: unknown key {key!r}; sweepable keys: {', '.join(SWEEPABLE)}")
        texts = [v.strip() for v in values.split(",") if v.strip()]
        if not texts:
            raise ConfigError(f"--sweep {spec!r}: no values after '='")
        for text in texts:
            label = f"{key}={text}"
            if all(label != known for known, _ in points):
                points.append((label, _value(key, text, base)))
    return points


class Sweep:
    """The sweep's configurations and running totals. Without ``--sweep`` it holds the base alone, no rows."""

    def __init__(self, base: BreakerConfig, specs: Iterable[str] = ()) -> None:
        self.configs: list[BreakerConfig] = [base]
        """Distinct configurations, base first: one feeder each (a value equal to the base shares its feeder)."""
        self.rows: list[SweepRow] = []
        for label, config in parse(specs, base):
            index = next((i for i, known in enumerate(self.configs) if known == config), None)
            if index is None:
                index = len(self.configs)
                self.configs.append(config)
            self.rows.append(SweepRow(label, config, index, is_base=index == 0))
        if self.rows and not any(row.is_base for row in self.rows):
            self.rows.insert(0, SweepRow("base", base, 0, is_base=True))

    def add(self, results: Sequence[TraceResult]) -> None:
        """Count one trace's verdicts (one per configuration, in :attr:`configs` order)."""
        for row in self.rows:
            row.summary.add(results[row.feeder])

    def verdicts(self, results: Sequence[TraceResult]) -> list[dict[str, Any]]:
        """The ``sweep`` field of a ``--json`` line: this trace's verdict under every swept value."""
        return [{"config": row.label, **results[row.feeder].verdict_json()} for row in self.rows
                if row.label != "base"]
