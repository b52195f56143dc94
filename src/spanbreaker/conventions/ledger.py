"""The agent's own stall flag: a progress ledger an orchestrating model writes every round.

Magentic-One's orchestrator (AutoGen's ``MagenticOneGroupChat`` keeps the same prompt) answers, each round, a
JSON ledger such as ``{"is_in_loop": {"reason": "...", "answer": true}, "is_progress_being_made": {"reason":
"...", "answer": false}, ...}`` before it picks the next speaker. The model judging itself stuck is a signal no
span shape gives: the calls it makes around it are all different (re-worded instructions to a web surfer),
so no repetition detector sees them. Only the two answers are read, never the reasons (model-written text).
"""

from __future__ import annotations

import re

NAME = "ledger"

MARKER = "is_in_loop"
"""The key that marks a model output as a progress ledger (searched for first, in a bounded head), quoted as JSON
in OpenInference's ``output.value`` or quoted again inside the GenAI conventions' ``gen_ai.output.messages`` (the
ledger is the text of a message part there: ``[{"role": "assistant", "parts": [{"type": "text", "content":
"{\\"is_in_loop\\": ...}"}]}]``)."""
IN_LOOP = f'"{MARKER}"'
_ESCAPED_IN_LOOP = f'\\"{MARKER}\\"'

LEDGER_CHARS = 2048
"""How far into a model output the key is looked for: the ledger opens the output and the key follows one short
reason (at most 436 characters in on 758 Who&When ledgers). A bounded ``find`` per model span, no copy."""
_ANSWER = r'"{key}"\s*:\s*(?:\{{(?:[^"]|"(?:[^"\\]|\\.)*"){{0,4096}}?"answer"\s*:\s*)?(true|false)\b'
"""``"key": true`` or ``"key": {..., "answer": true}``; the object's other strings (reasons) are skipped whole,
so braces or quotes inside them do not end it."""
_LOOPING = re.compile(_ANSWER.format(key="is_in_loop"))
_PROGRESS = re.compile(_ANSWER.format(key="is_progress_being_made"))


def stalled(output: str) -> bool | None:
    """True when the ledger in ``output`` says the run is in a loop or makes no progress, False when it says
    neither, None when ``output`` holds no ledger (the common case: one bounded ``find``, no regex). ``output``
    is a model's output text, or the GenAI conventions' output messages holding it as a JSON string."""
    at = output.find(IN_LOOP, 0, LEDGER_CHARS)
    if at >= 0:
        head = output[:at + 8 * LEDGER_CHARS]
    else:
        at = output.find(_ESCAPED_IN_LOOP, 0, LEDGER_CHARS)
        if at < 0:
            return None
        head = _unescaped(output[at:at + 9 * LEDGER_CHARS])
    looping = _LOOPING.search(head)
    progress = _PROGRESS.search(head)
    if looping is None and progress is None:
        return None
    return bool((looping is not None and looping.group(1) == "true")
                or (progress is not None and progress.group(1) == "false"))


def _unescaped(text: str) -> str:
    """A JSON string's content as the text it encodes, as far as the ledger's regexes look: escaped quotes and
    backslashes (a bounded slice, possibly cut mid-string: no JSON decode)."""
    return text.replace("\\\\", "\x00").replace('\\"', '"').replace("\x00", "\\")
