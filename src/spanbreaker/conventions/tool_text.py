"""Tool errors that only the output text tells: the call "succeeded" as a span, its answer says it failed.

Many tools report failure as ordinary output instead of raising: AG2's code executor answers
``exitcode: 1 (execution failed)`` with the traceback as text, a shell answers ``bash: foo: command not
found``, SWE-agent's commands answer ``Usage: edit <start_line>:<end_line>`` or reject an edit with "Your
proposed edit has introduced new syntax error(s)". Without reading them ``error_loop`` and ``tool_streak`` see
a run of clean calls. Only the head of the output is read, only for these fixed markers, and the error is
named by a fixed label (or, for a failed execution, the root exception class the text names): nothing the
tool or the user wrote becomes an error name. A structured failure (exception event, span status) wins.
"""

from __future__ import annotations

import re

NAME = "tool_text"

HEAD_CHARS = 512
"""The markers open the output (or its first lines): nothing past this is read."""
EXECUTION_FAILED = "ExecutionFailed"
"""A code executor's own verdict (AG2: ``exitcode: 1 (execution failed)``); refined to the root class."""

_MARKERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"exitcode: [1-9]\d{0,3} \(execution failed\)"), EXECUTION_FAILED),
    (re.compile(r"^(?:[^\s:]{1,128}: ){0,3}[^\s:]{1,128}: command not found$", re.M), "CommandNotFound"),
    (re.compile(r"^Usage: \S", re.M), "UsageError"),
    (re.compile(r"introduced new syntax error\(s\)"), "EditRejected"),
)
_QUICK = ("exitcode", "command not found", "Usage: ", "syntax error")
"""Substrings one of which every marker contains: most outputs are decided by these plain ``in`` tests."""


def text_error(output: str) -> str | None:
    """The label of the failure ``output`` reports in its head, or None when it reports none."""
    head = output[:HEAD_CHARS]
    for quick in _QUICK:
        if quick in head:
            break
    else:
        return None
    for pattern, label in _MARKERS:
        if pattern.search(head) is not None:
            return label
    return None
