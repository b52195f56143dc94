"""Framework-neutral signals: what the detectors see of a span, whatever convention it was written in.

The signals are data (a tool call, a model call, a step's end, an agent run) plus the keys and value coercers
their readers share. Reading them from span attributes is :mod:`spanbreaker.conventions.read`'s job; which
convention says what is in :mod:`spanbreaker.conventions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .conventions import classify
from .fingerprint import digest
from .kinds import Kind

__all__ = ["AgentRun", "Kind", "ModelCall", "StepEnd", "ToolCall", "as_count", "as_float", "as_int", "as_str",
           "classify", "delegation_key", "pick", "text_key"]
"""``Kind`` and ``classify`` are re-exported: replay and the benchmarks import them from here."""


# ----------------------------------------------------------------------------------------------- readers
def as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value == value and 0 <= value < 1e18 else None
    if isinstance(value, str) and 0 < len(value) < 19 and value.isdigit():
        return int(value)
    return None


def as_count(value: Any) -> int | None:
    """:func:`as_int`, with the common cases (absent, a plain non-negative int) decided inline."""
    if value is None:
        return None
    if type(value) is int:
        return value if value >= 0 else None
    return as_int(value)


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        f = float(value)
        return f if f == f and 0.0 <= f < 1e15 else None
    if isinstance(value, str) and 0 < len(value) < 32:
        try:
            f = float(value)
        except ValueError:
            return None
        return f if f == f and 0.0 <= f < 1e15 else None
    return None


def pick(attributes: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` present (not None) in ``attributes``."""
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return value
    return None


# ----------------------------------------------------------------------------------------------- signals
@dataclass(slots=True)
class ToolCall:
    """A tool span: what was asked at start, what came back at end.

    Keys are Python hashes of the recorded text (bounded by ``cap``: longer text is digested first). They
    only ever meet keys made in the same process, and a hash is a fraction of the cost of a digest (evidence
    carries a stable digest instead: :func:`args_fingerprint`). The text forms that near-duplicate
    comparison needs are derived by the tool history (:mod:`spanbreaker.progress`) on first need, since most
    calls are never compared fuzzily.
    """

    name: str
    key: int
    """Hash of (tool name, canonical arguments)."""
    raw_args: str | None
    """The recorded arguments when short enough to be a query ('' for none), else None (a script, a
    document: never compared fuzzily). Never exported."""
    result_key: int = 0
    result_sample: str = ""
    """Head and tail of the raw result, folded for comparison only when one needs it (:mod:`spanbreaker.progress`)."""
    empty: bool = False
    error: str | None = None
    """Root exception class name when the call failed."""
    args_known: bool = True
    """The arguments were recorded. When not (yet) on the span at start, ``key`` means nothing until the span
    ends with them; a call whose arguments are never recorded is never compared with another."""
    result_known: bool = True
    """The result was recorded (or the call failed). An unrecorded result is unknown, never identical or empty."""
    keyed_at_end: bool = False
    """The arguments arrived only when the span ended: repetition is decided then, and the next call vetoed."""
    # Set only when shared state is on (:mod:`spanbreaker.state.calls`).
    shared_key: int = 0
    """Stable digest of (agent, tool, arguments): the same in every process."""
    shared_repeats: int = 0
    """Identical calls with identical results the trace made before this one in every process, nothing changed
    since, as last read back from the shared state (0 when unknown or stale)."""


def text_key(text: str, cap: int) -> int:
    """A comparison key for ``text`` that reads at most ``cap`` characters of it (see :class:`ToolCall`)."""
    return hash(text) if len(text) <= cap else hash(digest(text, cap))


def delegation_key(callee: str, task_key: int) -> int:
    """The key of a delegation (callee, task) in the caller's history."""
    return hash((callee, task_key))


OPENING_CHARS = 512
"""Of the messages a model call sends, what :attr:`ModelCall.opening` keeps: enough to reach the first message's
text past any serializer's preamble (LangChain's is 125 characters), little enough to keep per agent."""


@dataclass(slots=True)
class ModelCall:
    model: str | None
    provider: str | None = None
    input_chars: int = 0
    history_messages: int = 0
    opening: str | None = None
    """The head of the messages sent (their first :data:`OPENING_CHARS` characters), None when they are not known:
    which conversation the call continues, read by ``context_growth`` only when a prompt jumps."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    """Of the prompt's tokens, those read from and written to the provider's prompt cache (priced at its rates)."""
    cost_usd: float | None = None
    tokens: int = 0
    """Tokens the call used: the reported total, else prompt + completion (set with the result)."""
    input_at_end: bool = False
    """The messages sent were not on the span at start, only at its end: size checks are decided then."""
    first_in_scope: bool = False
    """The agent's first model call, the one ``session_bloat`` judges (set by the engine, from the agent's tool
    history: :attr:`~spanbreaker.progress.ToolHistory.model_seen`)."""
    stalled: bool | None = None
    """The model's own progress ledger in its output says it is looping or not progressing (True), says neither
    (False); None when the output holds no ledger (see :mod:`spanbreaker.conventions.ledger`)."""


@dataclass(slots=True)
class StepEnd:
    error: str | None
    """Root exception class of the step's error, ``None`` for a clean step."""


@dataclass(slots=True)
class AgentRun:
    name: str
    task_key: int
    """Key of the task text (see :class:`ToolCall` for keys)."""
    task_known: bool = True
    """The task was recorded at start (else read again at the end; a delegation with an unknown task or
    output is never compared with another)."""
    output_known: bool = True
    output_key: int = 0
    output_text: str | None = None
    error: str | None = None
    session: str | None = None
    validation_failed: bool = False
    session_failures: int = 0


