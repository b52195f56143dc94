"""Tool errors that only the output text tells: the call "succeeded" as a span, its answer says it failed.

Many tools report failure as ordinary output instead of raising: AG2's code executor answers
``exitcode: 1 (execution failed)`` with the traceback as text, a shell answers ``bash: foo: command not
found``, SWE-agent's commands answer ``Usage: edit <start_line>:<end_line>`` or reject an edit with "Your
proposed edit has introduced new syntax error(s)", Instructor answers a structured output that failed its schema
with ``Validation Error found:``. Without reading them ``error_loop`` and ``tool_streak`` see
a run of clean calls. Only the head of the output is read, only for these fixed markers, and the error is
named by a fixed label (or, for a failed execution, the root exception class the text names): nothing the
tool or the user wrote becomes an error name. A structured failure (exception event, span status) wins.
"""

from __future__ import annotations

import re

NAME = "tool_text"

HEAD_CHARS = 128
"""The markers open the output (measured on every corpus: all within its first 128 characters); nothing past
this is read. Per tool span this costs two bounded ``find`` calls and three ``startswith``."""
FLAGGED = "ToolError"
"""A result its own message format marks as failed, without saying how (Anthropic's ``is_error``, Bedrock
Converse's ``status: "error"``): the text may still name the failure, and then its label wins."""
EXECUTION_FAILED = "ExecutionFailed"
"""A code executor's own verdict (AG2: ``exitcode: 1 (execution failed)``); refined to the root class."""

OUTPUT_INVALID = "OutputValidationError"
"""The model's structured output failed its schema, as Instructor re-asks in tool mode: the tool result of the
model's own call reads ``Validation Error found:`` then the errors and "Recall the function correctly, fix the
errors" (pydantic-ai's structured retries are named so where its messages are read: ``prompt_calls``). A malformed
action, not failed work (``format_error_types``): a run of them is ``tool_streak``'s."""
_REASK = ("Validation Error found:", "Validation Errors found:")
STRUCTURED_REASKS = (*_REASK, "Correct your JSON ONLY RESPONSE")
"""How Instructor's re-ask opens when it is a user message rather than a tool result (JSON modes: "Correct your JSON
ONLY RESPONSE, based on the following errors:"; Anthropic's JSON mode and tool modes answered with text: "Validation
Error(s) found:"): read by :mod:`.prompt_calls` as the model's structured output failing its schema."""

_EXECUTION = re.compile(r"exitcode: [1-9]\d{0,3} \(execution failed\)")
_NOT_FOUND = re.compile(r"^(?:[^\s:]{1,128}: ){0,3}[^\s:]{1,128}: command not found$", re.M)


def text_error(output: str) -> str | None:
    """The label of the failure ``output`` reports in its head, or None when it reports none."""
    if output.startswith("exitcode: "):
        return EXECUTION_FAILED if _EXECUTION.match(output) is not None else None
    if output.startswith("Usage: "):
        return "UsageError"
    if output.startswith("Validation Error") and output.startswith(_REASK):
        return OUTPUT_INVALID
    if output.find("introduced new syntax error(s)", 0, HEAD_CHARS) >= 0:
        return "EditRejected"
    if output.find("command not found", 0, HEAD_CHARS) >= 0 and _NOT_FOUND.search(output, 0, HEAD_CHARS):
        return "CommandNotFound"
    return None


_WAITING = re.compile(
    r"no new output"  # OpenHands: "[The command has no new output after 30 seconds. You may wait longer ...]"
    r"|\bstill (?:running|in progress|pending|queued|processing|executing|building)\b"
    r"|\b(?:not|n't) (?:yet )?(?:finished|complete|completed|done|ready)\b"
    r"""|["']?\b(?:status|state)["']?\s*[:=]\s*["']?(?:running|queued|in[ _-]progress|processing|starting)\b""",
    re.IGNORECASE)
"""Fixed phrases only. A bare ``pending`` status is left out: an order or a payment is "pending" until someone acts,
and fetching it again changes nothing (a retail agent's loop); "still pending" says a wait."""


def waiting(sample: str) -> bool:
    """Whether a result (its sample: head and tail) says the work it looks at is still under way: a command still
    running with no new output yet, a job running or queued, a resource not ready yet. The same call answered so
    again and again is an agent polling, not a loop; the detectors of repetition give it room (three times their
    limit, as a polling tool on the allowlist gets from ``tool_streak``) and a wait that never ends is still stopped.
    Read only where a repetition is about to count, never per call."""
    return _WAITING.search(sample) is not None
