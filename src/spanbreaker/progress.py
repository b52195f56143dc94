"""Progress tracking: did anything change since the agent last made this call?

This is what makes spanbreaker usable on real runs. A coding agent re-runs its tests after every edit and
gets the same failure many times: that is work, not a loop, because an edit happened in between. So a
repetition only counts while *nothing changed*:

* exact tier: a call changes the world (advances ``change_seq``) when its (tool, arguments) key is new in
  this agent's history, or when it returned a different result than the last time it was made. An identical
  call with an identical result and no change since its previous occurrence extends its streak, once per
  model turn: a loop is the model seeing the same result and asking again. Identical calls inside one turn
  (a parallel batch, a tool's own retries, a platform hook run at every hand-off) are one decision, made
  before any of their results was seen. A scope that shows no model call counts every call.
* near-duplicate tier: a call is "new" unless an earlier call of the same tool had similar arguments *and* a
  similar result (rapidfuzz on bounded, normalised text; word order ignored for arguments). A run of calls
  that are not new is an agent going round in circles (``low_exploration``); the paraphrases of one query
  within that run are fixation.
  A short or empty result carries no information to compare (an edit command prints nothing), so such calls
  are compared by their exact arguments only: ten different edits are ten changes, not one paraphrased query.
  A result counts as similar only if it also brings no new word (numbers aside) and the same counts (standalone
  integers: "Ran 12 tests", "line 41"; durations, times and ids aside): a parameter sweep whose outputs differ in
  one test name or one test count is exploration, a paraphrase that returns the same facts is not.
  Arguments that differ in a number (page 12, page 13) are different calls, never paraphrases.
  Likewise only query-sized arguments are compared fuzzily; long ones (a script written to a new file) are
  different actions when they differ at all.

Everything is bounded: at most :data:`MAX_KEYS` keys and :data:`RECENT` recent calls per agent scope.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Final

from rapidfuzz.fuzz import ratio
from rapidfuzz.process import extract, extractOne

from .conventions.frameworks import ARGS_ENVELOPE
from .conventions.tool_text import waiting
from .fingerprint import SIMILARITY_CHARS, similarity_text
from .signals import ToolCall

MAX_KEYS = 256
RECENT = 16
WAIT_WINDOW = 4
"""Answers looked at for a wait on work under way (:meth:`ToolHistory.polling`): a round of polling (an empty
command, the log's tail) is a few calls."""
INFORMATIVE_CHARS = 64
"""Results shorter than this (normalised) are compared by exact arguments only."""
_CHANGE_ACK = re.compile(
    r"\b(?:successfully (?:edited|updated|modified|wrote|written|created|replaced|applied|saved|deleted)"
    r"|replacements? made|(?:file|changes?) (?:created|updated|written|saved|applied))\b", re.IGNORECASE)
"""A result acknowledging a change it made ("Successfully edited file ... (1 replacement made)"). Calls so
answered changed something, so two alike are two changes, never a paraphrased question: sibling edits in one
file answered the same way are progress (a resolved vorflux run), while a reworded search answered with the
same short text is fixation. Read from the head of the result only."""
_ACK_WORDS = ("successfully", "replacement", "created", "updated", "written", "saved", "applied")
"""Words :data:`_CHANGE_ACK` cannot match without (one of them is in every alternative)."""


def _acknowledges_change(result: str) -> bool:
    """:data:`_CHANGE_ACK` on the head of a result. An ASCII head without any of :data:`_ACK_WORDS` is answered
    without the regex (most results; a case-insensitive alternation tries every position). A head with other
    characters always goes to the regex: under its case folding the long s (U+017F) is an "s" and the Kelvin sign
    (U+212A) a "k"."""
    head = result[:256]
    if head.isascii():
        lowered = head.lower()
        for word in _ACK_WORDS:
            if word in lowered:
                break
        else:
            return False
    return _CHANGE_ACK.search(head) is not None


_M64 = (1 << 64) - 1
_M32 = (1 << 32) - 1
_STREAK_1 = 1 << 64
_TURN_SHIFT = 96
_MARK_SHIFT = 128
"""A key's history is one int: its result key (bits 0-63), its streak (bits 64-95), the model turn of its last
counted call (bits 96-127) and the change_seq when the streak began (from bit 128). An int is no GC-tracked
object and a third of the memory of a list of four (a long run keeps :data:`MAX_KEYS` of them per agent)."""


_NUMBER_WORD = re.compile(r"(?<!\S)\S*\d\S*")
"""A word holding a digit, matched from the word's start only (no retry at every character)."""
_COUNT = re.compile(r"(?:(?<=\\n)|(?<![\w.:/-]))\d+(?![\w.:/-])")
"""A standalone integer in a raw result ("Ran 12 tests", "line 41", "3 failed"): a count or a position, which
informs. Digits inside decimals, times, dates, paths, ids and hex (``0.02s``, ``12:30:05``, ``a3f9``) do not count:
they change on every call."""
_NOT_DIGITS = bytes(b for b in range(256) if not 48 <= b <= 57)


def _numbers(text: str) -> tuple[str, ...]:
    """Words of the arguments that carry digits: page 12 and page 13, file1 and file2 are different calls."""
    return tuple(_NUMBER_WORD.findall(text))


def _words(text: str) -> tuple[str, ...]:
    """Words of a (bounded) result, ignoring any with digits: timings and ids change on every call."""
    return tuple(_NUMBER_WORD.sub(" ", text).split())


_Entry = tuple[str, int, int, "str | None", str, "bytes | None", int]
"""A call in the recent window, as a plain tuple: (tool name, key, result key, raw arguments, result sample, digits,
run). A tuple of strings, ints and bytes is untracked by the collector (an instance of a class, a named tuple
included, never is), so a live trace holds no GC-tracked object per remembered call. ``raw arguments``: the
recorded arguments when query-sized, else None (see :attr:`ToolCall.raw_args`). ``digits``: the ASCII digits of
those arguments (None when not query-sized), a necessary condition for two calls to carry the same numbers, found
without folding the text. ``run``: the exploration run the call belonged to. Texts derived for near-duplicate
comparison are kept in the scope's :class:`_Texts`."""
_NAME: Final = 0
_KEY: Final = 1
_RESULT_KEY: Final = 2
_RAW: Final = 3
_SAMPLE: Final = 4
_DIGITS: Final = 5
_RUN: Final = 6


class _Texts:
    """The texts near-duplicate comparison derives from calls, each computed once per call key (arguments) or
    result key (results) while calls with that key are in the window. Most calls are never compared fuzzily, so
    a scope makes this only at its first fuzzy comparison. Values are strings and tuples of strings: untracked by
    the collector, like the dicts holding only them."""

    __slots__ = ("counts", "queries", "results", "sorted", "words")

    def __init__(self) -> None:
        self.queries: dict[int, tuple[str, tuple[str, ...]] | None] = {}
        self.sorted: dict[int, str] = {}
        self.results: dict[int, str] = {}
        self.words: dict[int, tuple[str, ...]] = {}
        self.counts: dict[int, tuple[str, ...]] = {}

    def trim(self) -> None:
        """Forget every text once the caches hold far more keys than the window has calls (they are remade on
        need): bounded without bookkeeping per entry."""
        if len(self.queries) + len(self.results) > 8 * RECENT:
            for cache in (self.queries, self.sorted, self.results, self.words, self.counts):
                cache.clear()

    def query(self, call: _Entry) -> tuple[str, tuple[str, ...]] | None:
        """The normalised arguments and the words in them carrying digits, when they are short enough to be
        compared fuzzily (a search query); None for a script or a document. One lookup per earlier call in the
        paraphrase scan, which reads both."""
        key = call[_KEY]
        found = self.queries.get(key, _UNSEEN)
        if found is _UNSEEN:
            raw = call[_RAW]
            text = None if raw is None else ARGS_ENVELOPE.sub("", similarity_text(raw), count=1)
            found = None if text is None or len(text) >= SIMILARITY_CHARS else (text, _numbers(text))
            self.queries[key] = found
        return found  # type: ignore[return-value]

    def args_sorted(self, call: _Entry, text: str) -> str:
        """The argument words (``text``, from :meth:`query`) in sorted order: comparing these is rapidfuzz's
        token_sort_ratio without re-sorting every earlier call's words at every comparison."""
        ordered = self.sorted.get(call[_KEY])
        if ordered is None:
            ordered = self.sorted[call[_KEY]] = " ".join(sorted(text.split()))
        return ordered

    def result_text(self, call: _Entry) -> str:
        """Normalised, truncated result."""
        text = self.results.get(call[_RESULT_KEY])
        if text is None:
            text = self.results[call[_RESULT_KEY]] = similarity_text(call[_SAMPLE])
        return text

    def result_words(self, call: _Entry) -> tuple[str, ...]:
        words = self.words.get(call[_RESULT_KEY])
        if words is None:
            words = self.words[call[_RESULT_KEY]] = _words(self.result_text(call))
        return words

    def result_counts(self, call: _Entry) -> tuple[str, ...]:
        counts = self.counts.get(call[_RESULT_KEY])
        if counts is None:
            counts = self.counts[call[_RESULT_KEY]] = tuple(_COUNT.findall(call[_SAMPLE]))
        return counts

    def same_result(self, call: _Entry, prev: _Entry, cutoff: float) -> bool:
        """``call`` returned what ``prev`` did: the same result key, or a similar text bringing no new word and the
        same counts. One rule for a repeat of the same call and for a paraphrase: a test run whose failure count
        moved is progress, whichever words asked for it."""
        if prev[_RESULT_KEY] == call[_RESULT_KEY]:
            return True
        if not ratio(self.result_text(prev), self.result_text(call), score_cutoff=cutoff) > 0:
            return False
        if not frozenset(self.result_words(call)).issubset(self.result_words(prev)):
            return False
        return self.result_counts(call) == self.result_counts(prev)


_UNSEEN = object()
"""Not in a cache yet (None is a cached answer there)."""
_NO_INDEXES: frozenset[int] = frozenset()
"""No earlier call paraphrases this one (shared, never mutated)."""


class _ToolWindow:
    """One tool's calls among the scope's recent ones, oldest first, and how many carry each digit string."""

    __slots__ = ("digits", "entries")

    def __init__(self) -> None:
        self.entries: list[_Entry] = []
        self.digits: dict[bytes, int] = {}


class ToolHistory:
    """One agent scope's call history. The processor holds the trace lock around every method.

    After :meth:`record`, the attributes ``new``, ``stale_run``, ``paraphrases`` and ``unhelpful_streak`` say
    what recording that call found (kept here rather than in an object per call: the detectors read them
    right away, under the same lock).
    """

    __slots__ = ("_echo", "_keys", "_recent", "_run", "_streak_tool", "_texts", "_windows", "change_seq",
                 "model_seen", "new", "paraphrases", "similarity", "stale_run", "turn", "unhelpful_streak")

    def __init__(self, similarity: float) -> None:
        self.similarity = similarity
        self.change_seq = 0
        self.turn = 0
        """Model calls started in this scope (:meth:`model_turn`), or steps while no model call was seen
        (:meth:`step_turn`); 0 while there was neither."""
        self.model_seen = False
        """A model call started in this scope (:meth:`model_turn`)."""
        self._keys: dict[object, int] = {}
        """Key -> packed history (see :data:`_MARK_SHIFT`), least recently used first."""
        self._recent: deque[_Entry] = deque()
        """The scope's last :data:`RECENT` calls, any tool, oldest first."""
        self._windows: dict[str, _ToolWindow] = {}
        """The same calls, per tool."""
        self._texts: _Texts | None = None
        """Texts derived for fuzzy comparison, made at the scope's first one."""
        self._run = 0
        self._streak_tool = ""
        self._echo = False
        """The call being recorded repeats one of this model turn exactly (same arguments, same result)."""
        self.new = True
        """The last call was a new query or brought new information (near-duplicate tier)."""
        self.stale_run = 0
        """Consecutive calls, the last one included, that were not new."""
        self.paraphrases = 0
        """Calls in the current stale run with similar-but-not-identical arguments and a similar result."""
        self.unhelpful_streak = 0
        """Consecutive calls of the last call's tool whose results were empty or errors (that one included)."""

    @property
    def counted(self) -> bool:
        """The call just recorded was a new decision, not an identical call within the same model turn."""
        return not self._echo

    def model_turn(self) -> None:
        """A model call started in this scope: the next identical call is a new decision."""
        self.turn += 1
        self.model_seen = True

    def step_turn(self) -> None:
        """A step started in this scope. Where no model call is recorded (a converter from tool logs alone, an
        instrumentor tracing only tools) a step stands for one model turn, so identical calls the model asked for
        together in one step count once, as they do under a model call; once a model call was seen, steps say
        nothing more (a framework's CHAIN span may wrap one tool call, not a turn)."""
        if not self.model_seen:
            self.turn += 1

    def streak(self, key: object) -> int:
        """Identical calls with identical results since anything last changed, the one just recorded included
        (for a call decided when it ended: its model turn is the current one)."""
        history = self._keys.get(key)
        if history is None or history >> _MARK_SHIFT != self.change_seq:
            return 0
        return (history >> 64) & _M32

    def polling(self, key: object = None) -> bool:
        """Whether the agent is waiting on work under way: one of its last :data:`WAIT_WINDOW` answers, or the latest
        answer of the call ``key``, says the work it looks at is still running, pending or not ready
        (:func:`~spanbreaker.conventions.tool_text.waiting`). Calls repeated meanwhile (the same empty command, the
        same log tail read again) are polls, which the repetition detectors give room. Read only where a repetition
        is about to count: it scans a few results' samples."""
        recent = self._recent
        newest = len(recent) - 1
        for index in range(newest, max(newest - WAIT_WINDOW, -1), -1):
            if waiting(recent[index][_SAMPLE]):
                return True
        if key is not None:
            for index in range(newest - WAIT_WINDOW, -1, -1):
                if recent[index][_KEY] == key:
                    return waiting(recent[index][_SAMPLE])
        return False

    def repeats_without_progress(self, key: object) -> int:
        """How many identical calls with identical results ran since anything last changed, counted once per
        model turn; 0 when the next call of ``key`` would not count (nothing changed, but no model call
        either since the last one counted)."""
        history = self._keys.get(key)
        if history is None or history >> _MARK_SHIFT != self.change_seq:
            return 0
        if self.turn and (history >> _TURN_SHIFT) & _M32 == self.turn & _M32:
            return 0
        return (history >> 64) & _M32

    def record(self, call: ToolCall) -> None:
        self._echo = False
        if not (call.args_known and call.result_known):
            self._record_unknown(call)
            return
        new_key = self._record_exact(call)
        raw = call.raw_args
        # The ASCII digits of the arguments, in one C pass (no regex): see _Entry.
        digits = None if raw is None else raw.encode("utf-8", "surrogatepass").translate(None, _NOT_DIGITS)
        name = call.name
        entry: _Entry = (name, call.key, call.result_key, raw, call.result_sample, digits, 0)
        window = self._windows.get(name)
        new, paraphrases = (True, 0) if window is None else self._near_duplicates(entry, new_key, window)
        if new:
            self._run += 1
            self.stale_run = 0
        elif not self._echo:  # an identical call in the same model turn is not another decision
            self.stale_run += 1
        self.new, self.paraphrases = new, paraphrases
        entry = (name, call.key, call.result_key, raw, call.result_sample, digits, self._run)
        recent = self._recent  # remember the entry: in the scope's window and its tool's
        if len(recent) >= RECENT:
            self._forget(recent.popleft())
        recent.append(entry)
        if window is None or not window.entries:  # none yet, or emptied by _forget just now
            window = self._windows.get(name)
            if window is None:
                window = self._windows[name] = _ToolWindow()
        window.entries.append(entry)
        if digits is not None:
            window.digits[digits] = window.digits.get(digits, 0) + 1
        unhelpful = call.empty or call.error is not None
        if name == self._streak_tool and unhelpful:
            self.unhelpful_streak += 1
        else:
            self._streak_tool = name
            self.unhelpful_streak = 1 if unhelpful else 0

    def _record_unknown(self, call: ToolCall) -> None:
        """A call whose arguments or result were never recorded: nothing can say it repeated an earlier one, nor
        that nothing changed, so it counts as a change (``change_seq``) and as new; it joins no window, where it
        would be compared as if its text were empty."""
        self.change_seq += 1
        self._run += 1
        self.new, self.stale_run, self.paraphrases = True, 0, 0
        if call.error is not None and call.name == self._streak_tool:
            self.unhelpful_streak += 1
        else:
            self._streak_tool = call.name
            self.unhelpful_streak = 1 if call.error is not None else 0

    def _forget(self, old: _Entry) -> None:
        """``old`` left the recent window: it is the oldest entry of its tool's window too."""
        name, digits = old[_NAME], old[_DIGITS]
        window = self._windows[name]
        del window.entries[0]
        if digits is not None:
            left = window.digits[digits] - 1
            if left:
                window.digits[digits] = left
            else:
                del window.digits[digits]
        if not window.entries:
            del self._windows[name]

    def _record_exact(self, call: ToolCall) -> bool:
        """Returns True when the key was not in the history. Then no recent call has it either: a key in the
        recent window was used within the last :data:`RECENT` calls, so the LRU (:data:`MAX_KEYS`) still holds it.
        """
        keys = self._keys
        key = call.key
        result = call.result_key & _M64
        history = keys.pop(key, None)  # re-inserted below: the dict's order is least recently used first
        if history is None:
            self.change_seq += 1
            keys[key] = result | _STREAK_1 | (self.turn & _M32) << _TURN_SHIFT | self.change_seq << _MARK_SHIFT
            if len(keys) > MAX_KEYS:
                del keys[next(iter(keys))]
            return True
        same = history & _M64 == result
        if same and history >> _MARK_SHIFT == self.change_seq:
            turn = self.turn & _M32
            if not turn or (history >> _TURN_SHIFT) & _M32 != turn:
                streak = min((history >> 64) & _M32, _M32 - 1) + 1
                keys[key] = (history & _M64) | streak << 64 | turn << _TURN_SHIFT | self.change_seq << _MARK_SHIFT
            else:
                keys[key] = history
                self._echo = True
            return False
        if not same:
            self.change_seq += 1
        keys[key] = result | _STREAK_1 | (self.turn & _M32) << _TURN_SHIFT | self.change_seq << _MARK_SHIFT
        return False

    def _comparing(self) -> _Texts:
        texts = self._texts
        if texts is None:
            texts = self._texts = _Texts()
        else:
            texts.trim()
        return texts

    def _near_duplicates(self, call: _Entry, new_key: bool, window: _ToolWindow) -> tuple[bool, int]:
        earlier = window.entries
        if not earlier:
            return True, 0
        cutoff = self.similarity
        digits = call[_DIGITS]
        # Paraphrases need the same numbers, so the same digits (when no earlier call of this tool has them, the
        # common case, the arguments are never folded), and an earlier call that answered alike (most calls answer
        # something new: their arguments are not compared either).
        similar_args: set[int] | frozenset[int] = _NO_INDEXES
        if digits is not None and digits in window.digits and self._result_may_repeat(call, digits, earlier):
            similar_args = self._paraphrased(call, digits, earlier)
        key = call[_KEY]
        if not similar_args:
            # Only an earlier call with the same key can make this one not new, and no paraphrase is counted
            # (that needs a different key): the loop below reduced to its exact-key case, stopping at the first.
            if new_key:
                return True, 0  # no recent call has this key (see _record_exact)
            result_key = call[_RESULT_KEY]
            texts: _Texts | None = None
            for prev in earlier:
                if prev[_KEY] != key:
                    continue
                if prev[_RESULT_KEY] == result_key:
                    return False, 0
                if texts is None:
                    texts = self._comparing()
                if texts.same_result(call, prev, cutoff):
                    return False, 0
            return True, 0
        texts = self._comparing()
        new = True
        paraphrases = 0
        for index, prev in enumerate(earlier):
            if prev[_KEY] != key and index not in similar_args:
                continue
            if not texts.same_result(call, prev, cutoff):
                continue
            new = False
            if prev[_RUN] == self._run and prev[_KEY] != key:
                paraphrases += 1
        return new, paraphrases

    def _result_may_repeat(self, call: _Entry, digits: bytes, earlier: list[_Entry]) -> bool:
        """Whether an earlier call that :meth:`_paraphrased` could find (the same digits, another key) answered
        close enough to this call's result for :meth:`_Texts.same_result`: the same result key, or a similar text
        (one batched rapidfuzz pass). A necessary condition only, checked before the arguments are compared: a
        paraphrase changes nothing unless it answered alike (the call is then judged by its own key's earlier calls
        alone), and most calls answer something new, so their arguments are never folded nor compared."""
        texts = self._comparing()
        result = texts.result_text(call)
        if len(result) < INFORMATIVE_CHARS:
            return False  # _paraphrased would compare nothing: an uninformative result
        key, result_key = call[_KEY], call[_RESULT_KEY]
        answers: list[str] = []
        for prev in earlier:
            if prev[_DIGITS] != digits or prev[_KEY] == key:
                continue
            if prev[_RESULT_KEY] == result_key:
                return True
            answers.append(texts.result_text(prev))
        return bool(answers) and extractOne(result, answers, scorer=ratio, score_cutoff=self.similarity) is not None

    def _paraphrased(self, call: _Entry, digits: bytes, earlier: list[_Entry]) -> set[int] | frozenset[int]:
        """Indexes of earlier calls whose arguments paraphrase this call's: character edits ("span-processor")
        or reordered words ("example python ..."), never a different number. One batched rapidfuzz pass per
        scorer: the comparison loop runs in C, not per pair in Python.

        Only calls with an informative result are compared this way (folding the result is done on this first
        need): a short result says nothing about whether two differently worded calls asked the same thing.
        """
        texts = self._comparing()
        query = texts.query(call)
        if query is None:
            return _NO_INDEXES
        text, numbers = query
        key = call[_KEY]
        choices: list[str | None] | None = None
        informative = False
        queries = texts.queries
        for index, prev in enumerate(earlier):
            if prev[_DIGITS] != digits or prev[_KEY] == key:
                continue
            earlier_query: Any = queries.get(prev[_KEY], _UNSEEN)  # query()'s cached case inline: a call less
            if earlier_query is _UNSEEN:
                earlier_query = texts.query(prev)
            if earlier_query is None or earlier_query[1] != numbers:
                continue
            if choices is None:
                choices = [None] * len(earlier)
            choices[index] = earlier_query[0]
            informative = informative or bool(earlier_query[0])
        if choices is None or not informative or len(texts.result_text(call)) < INFORMATIVE_CHARS or (
                _acknowledges_change(call[_SAMPLE])):
            return _NO_INDEXES
        cutoff = self.similarity
        found = {index for _, _, index in extract(text, choices, scorer=ratio, score_cutoff=cutoff, limit=None)}
        reordered = [texts.args_sorted(prev, choice) if choice is not None else None
                     for prev, choice in zip(earlier, choices, strict=True)]
        found.update(index for _, _, index in extract(texts.args_sorted(call, text), reordered, scorer=ratio,
                                                      score_cutoff=cutoff, limit=None))
        return found
