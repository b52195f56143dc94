"""BreakerConfig: every threshold in one immutable object, loaded from code, environment or a TOML file.

Configuration is read once, at construction, and validated there (the OpenTelemetry SDK habit): a bad value
is a :class:`~spanbreaker.errors.ConfigError` naming the variable or key and the accepted range, raised at
start-up, never a silent default.

Precedence, highest first: keyword overrides in code > ``SPANBREAKER_*`` environment variables > the TOML file
named by ``SPANBREAKER_CONFIG`` > the defaults below. :meth:`BreakerConfig.load` applies exactly that order.

Why the defaults are what they are: they were chosen on 500 real SWE-bench agent runs (see BENCHMARKS.md),
where a successful run may re-run tests dozens of times, print 40k-token files and make 130 model calls. The
defaults stay quiet on that healthy work and still stop the loops in the seed articles well before
``max_steps``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import ConfigError

ENV_PREFIX = "SPANBREAKER_"
CONFIG_FILE_ENV = "SPANBREAKER_CONFIG"

Mode = Literal["enforce", "observe"]
MODES = ("enforce", "observe")
Response = Literal["stop", "steer"]
RESPONSES = ("stop", "steer")


def _int(lo: int, hi: int | None = None, doc: str = "") -> Any:
    return {"kind": "int", "lo": lo, "hi": hi, "doc": doc}


def _float(lo: float, hi: float | None = None, doc: str = "") -> Any:
    return {"kind": "float", "lo": lo, "hi": hi, "doc": doc}


@dataclass(frozen=True)
class ToolPolicy:
    """Per-tool overrides. ``None`` means "use the global value"."""

    repeat_max: int | None = None
    streak_max: int | None = None
    allow_repeat: bool = False
    """True for polling tools: identical calls are expected (exempt from tool_repeat / input_fixation)."""

    def __post_init__(self) -> None:
        for name in ("repeat_max", "streak_max"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"{name}={value!r}: expected an integer >= 1")
        if not isinstance(self.allow_repeat, bool):
            raise ConfigError(f"allow_repeat={self.allow_repeat!r}: expected true or false")


@dataclass(frozen=True)
class BreakerConfig:
    """Every threshold of the breaker. Immutable; derive variants with :meth:`replace`."""

    mode: Mode = "enforce"
    """``enforce`` raises :class:`~spanbreaker.Tripped` and blocks calls; ``observe`` only marks spans."""
    response: Response = "stop"
    """``stop`` trips at a loop detector's first finding. ``steer`` fails that tool call first with a
    :class:`~spanbreaker.Steered` error the framework hands to the model (``spanbreaker: ...``, saying what was
    repeated); the next finding of that detector in that agent trips. Budgets and context stop either way."""

    # --- repetition without progress -------------------------------------------------------------------
    tool_repeat_max: int = field(default=4, metadata=_int(1, doc="identical calls with identical results"))
    """Identical (tool, arguments) calls that returned the identical result with nothing changing in
    between. The next identical call is vetoed before it runs."""
    tool_streak_max: int = field(default=10, metadata=_int(2, doc="consecutive unhelpful calls of one tool"))
    """Consecutive calls of one tool (any arguments) whose results were all empty or errors."""
    fixation_similarity: float = field(default=90.0, metadata=_float(50.0, 100.0, doc="rapidfuzz score"))
    """Similarity (0-100, rapidfuzz) above which two argument strings count as the same query."""
    fixation_max: int = field(default=4, metadata=_int(2, doc="near-duplicate queries, same results"))
    """Near-duplicate (paraphrased) calls of one tool that returned near-identical results."""
    cycle_repeats: int = field(default=3, metadata=_int(2, doc="rounds of a 2-4 call sequence"))
    """Rounds of one sequence of 2 to 4 calls, each call with the same arguments and the same result as in the
    round before (an edit undone and redone, the tests answering alternately), before ``tool_cycle`` trips."""
    stall_flag_max: int = field(default=3, metadata=_int(1, doc="consecutive progress ledgers"))
    """Consecutive rounds in which an orchestrating model's own progress ledger (Magentic-One's
    ``is_in_loop`` / ``is_progress_being_made``) says it is looping or not progressing."""
    exploration_window: int = field(default=10, metadata=_int(3, 1000, doc="tool calls"))
    """Consecutive tool calls with neither a new query nor a new result before ``low_exploration`` trips."""

    # --- errors -----------------------------------------------------------------------------------------
    error_repeat_max: int = field(default=4, metadata=_int(2, doc="consecutive steps"))
    """Consecutive steps failing with the same root exception class (the seed's code-repair loop)."""
    format_error_max: int = field(default=10, metadata=_int(2, doc="consecutive steps"))
    """Consecutive steps whose output could not be parsed (AgentParsingError, FormatError, ...)."""
    format_error_types: frozenset[str] = frozenset(
        {"AgentParsingError", "FormatError", "OutputParserException", "JSONDecodeError", "ParsingError",
         "UsageError", "EditRejected", "OutputValidationError"}
    )
    """Errors that say the model's action was malformed, not that the work failed: ``error_loop`` leaves them to
    ``format_loop`` and ``tool_streak``. ``UsageError``, ``EditRejected`` and ``OutputValidationError`` are read from
    tool output text (a command's usage line, an edit the linter rejected, Instructor's re-ask of a structured
    output that failed its schema): an agent fixing its edit's indentation four times is slow, not stuck."""
    validation_failure_max: int = field(default=3, metadata=_int(1, doc="failed validations"))
    """Structured outputs that failed validation in a row: one agent's in a trace, or a session's (a run that
    validates starts the count again)."""

    # --- context ----------------------------------------------------------------------------------------
    context_jump_tokens: int = field(default=50_000, metadata=_int(1, doc="tokens"))
    """Prompt growth between two consecutive model calls of one agent that counts as inflation (in one conversation:
    where both calls' messages are recorded and their first message differs, the second starts a new conversation and
    only ``max_prompt_tokens`` applies)."""
    context_jump_ratio: float = field(default=2.0, metadata=_float(1.0, doc="x previous prompt"))
    max_prompt_tokens: int = field(default=250_000, metadata=_int(1, doc="tokens"))
    """Absolute prompt size of one model call."""
    session_history_tokens: int = field(default=60_000, metadata=_int(1, doc="tokens"))
    """Estimated size of a run's first prompt when it carries session history: the whole prompt, whose length is
    known without reading it (telling the history's own share would mean reading past ``max_attribute_chars``)."""
    session_history_messages: int = field(default=200, metadata=_int(1, doc="messages"))

    # --- budgets per trace ------------------------------------------------------------------------------
    # Every prompt counts in full, cached or not (its price is the cost budget's): the token budget sits above long
    # cached runs too (100 turns of a 50k-token history are 5M tokens), 3x the largest healthy run in the corpora
    # (3.3M, a resolved SWE-bench run), and is the safety net for models without a price.
    max_tokens: int = field(default=10_000_000, metadata=_int(1, doc="tokens per trace"))
    # The call budgets are a safety net for what no loop detector recognises, not a detector: they sit above
    # the longest healthy run seen (a sub-agent harness resolving SWE-bench in 741 model / 809 tool calls,
    # counted per trace over every agent), and a user who knows the agent sets them lower.
    max_model_calls: int = field(default=1000, metadata=_int(1, doc="model calls per trace"))
    max_tool_calls: int = field(default=2000, metadata=_int(1, doc="tool calls per trace"))
    max_tool_calls_per_step: int = field(default=100, metadata=_int(1, doc="tool calls in one step"))
    # The cost budget must hold whatever the model costs: priced at the dearest list price in wide use (o1, Claude
    # Opus 4.1: $15 / $75 per million input / output tokens), the largest healthy run in the corpora (the 3.3M-token
    # SWE-bench run above) costs $50, and 11 of 371 resolved SWE-bench runs pass $25 (benchmarks/budget_headroom.py).
    max_cost_usd: float = field(default=100.0, metadata=_float(0.0, doc="USD per trace"))
    budget_warn_fraction: float = field(default=0.8, metadata=_float(0.0, 1.0, doc="fraction of budget"))

    # --- delegation -------------------------------------------------------------------------------------
    max_delegation_depth: int = field(default=4, metadata=_int(1, doc="nested agents"))
    """Agents nested inside one another (the top-level agent is depth 1)."""
    delegation_revisits: int = field(default=1, metadata=_int(1, doc="re-entries"))
    """Times an agent may re-enter its own call chain (A -> B -> A is one) before the cycle trips."""
    delegation_repeat_max: int = field(default=3, metadata=_int(1, doc="identical delegations"))
    """Identical delegations (same caller, callee and task) that came back with the same answer."""

    # --- breaker ----------------------------------------------------------------------------------------
    half_open_after_s: float = field(default=60.0, metadata=_float(0.0, doc="seconds"))
    """An OPEN trace lets one probe call through after this many seconds (HALF_OPEN)."""
    max_traces: int = field(default=10_000, metadata=_int(1, doc="live traces"))
    trace_ttl_s: float = field(default=3600.0, metadata=_float(1.0, doc="seconds"))
    """Traces whose root never ends are dropped after this idle time (and by LRU past ``max_traces``)."""
    max_attribute_chars: int = field(default=65_536, metadata=_int(256, doc="characters"))
    """Longest attribute value read in full; longer values are fingerprinted by head, tail and length."""

    # --- policy -----------------------------------------------------------------------------------------
    allowlist: frozenset[str] = frozenset()
    """Polling tools: exempt from repetition checks; their streak limit is 3x ``tool_streak_max``. Without it, a call
    of any tool whose answer says the work it looks at is still under way (a command with no new output yet, a job
    ``running`` or ``queued``, "not ready yet"), and the calls repeated around it, get 3x ``tool_repeat_max`` and
    ``exploration_window``, and no ``tool_cycle``."""
    tools: Mapping[str, ToolPolicy] = field(default_factory=dict)
    disabled_detectors: frozenset[str] = frozenset()
    volatile_arg_keys: frozenset[str] = frozenset({"request_id", "timestamp", "ts", "nonce", "idempotency_key"})
    """Tool argument keys ignored when comparing calls (ids, timestamps). Framework envelopes (smolagents'
    ``sanitize_inputs_outputs``) are dropped whatever this holds."""
    state: str | None = None
    """Shared state URL (``redis://...``). None keeps every trace's state in this process."""
    state_staleness_s: float = field(default=0.25, metadata=_float(0.0, 60.0, doc="seconds"))
    """Longest the local view of shared budgets may lag behind the shared store."""
    state_prefix: str = "spanbreaker"
    fleet_max_tokens: int = field(default=0, metadata=_int(0, doc="tokens per fleet key per window, 0 = off"))
    """Fleet rule (shared state only): tokens all traces of one ``fleet_attribute`` value may spend per window."""
    fleet_max_cost_usd: float = field(default=0.0, metadata=_float(0.0, doc="USD per fleet key per window, 0 = off"))
    fleet_window_s: float = field(default=3600.0, metadata=_float(1.0, doc="seconds"))
    """Fixed windows (aligned to the epoch): the fleet counters start afresh at each window boundary."""
    fleet_attribute: str = "service.name"
    """The resource attribute whose value names the fleet a process belongs to."""

    def __post_init__(self) -> None:
        _check_mode("mode", self.mode)
        _check_response("response", self.response)
        for f in dataclasses.fields(self):
            spec = f.metadata
            if not spec:
                continue
            _check_range(f.name, getattr(self, f.name), spec, f.name)
        object.__setattr__(self, "allowlist", frozenset(self.allowlist))
        object.__setattr__(self, "disabled_detectors", frozenset(self.disabled_detectors))
        object.__setattr__(self, "format_error_types", frozenset(self.format_error_types))
        object.__setattr__(self, "volatile_arg_keys", frozenset(self.volatile_arg_keys))
        _check_detectors("disabled_detectors", self.disabled_detectors)
        tools: dict[str, ToolPolicy] = {}
        for name, policy in dict(self.tools).items():
            if isinstance(policy, Mapping):
                policy = _tool_policy(f"tools.{name}", policy)
            if not isinstance(policy, ToolPolicy):
                raise ConfigError(f"tools.{name}={policy!r}: expected a table of ToolPolicy fields")
            tools[str(name)] = policy
        object.__setattr__(self, "tools", tools)
        _check_state("state", self.state)

    # ------------------------------------------------------------------------------------------------
    def replace(self, **changes: Any) -> BreakerConfig:
        """A copy with some fields changed (validated like any other)."""
        _reject_unknown(changes, "keyword")
        return dataclasses.replace(self, **changes)

    def policy_for(self, tool: str) -> ToolPolicy:
        return self.tools.get(tool) or _DEFAULT_POLICY

    def is_polling_tool(self, tool: str) -> bool:
        return tool in self.allowlist or self.policy_for(tool).allow_repeat

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, base: BreakerConfig | None = None) -> BreakerConfig:
        """``base`` (default: defaults) updated from ``SPANBREAKER_<FIELD>`` variables.

        ``SPANBREAKER_STATE_URL`` is accepted for ``state``; ``SPANBREAKER_TOOLS`` takes JSON.
        """
        env = os.environ if environ is None else environ
        _reject_misspelt_variables(env)
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            names = [ENV_PREFIX + f.name.upper()]
            if f.name == "state":
                names.insert(0, ENV_PREFIX + "STATE_URL")
            for var in names:
                raw = env.get(var)
                if raw is None or raw.strip() == "":
                    continue
                changes[f.name] = _parse_env(var, f, raw)
                break
        base = base or cls()
        return _build(base, changes, source="environment")

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], base: BreakerConfig | None = None) -> BreakerConfig:
        """Read a TOML file: top-level keys are field names; ``[tools.<name>]`` tables are ToolPolicy.

        A ``[spanbreaker]`` table, if present, is used instead of the top level (so the settings can live
        in a shared file such as ``pyproject.toml`` under ``[tool.spanbreaker]`` too).
        """
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{CONFIG_FILE_ENV}: config file {str(p)!r} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {str(p)!r}: invalid TOML: {exc}") from None
        if "tool" in data and isinstance(data["tool"], dict) and "spanbreaker" in data["tool"]:
            data = data["tool"]["spanbreaker"]
        elif "spanbreaker" in data and isinstance(data["spanbreaker"], dict):
            data = data["spanbreaker"]
        changes: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for key, value in data.items():
            if key not in fields:
                raise ConfigError(f"config file {str(p)!r}: unknown key {key!r}"
                                  f"{_known(key, fields, 'known keys', always_list=False)}")
            changes[key] = _coerce(f"{p.name}: {key}", fields[key], value)
        return _build(base or cls(), changes, source=f"config file {str(p)!r}")

    @classmethod
    def load(cls, config: BreakerConfig | None = None, environ: Mapping[str, str] | None = None,
             **overrides: Any) -> BreakerConfig:
        """The documented precedence: overrides > environment > TOML file > ``config`` or defaults."""
        env = os.environ if environ is None else environ
        base = config or cls()
        path = env.get(CONFIG_FILE_ENV)
        if path:
            base = cls.from_toml(path, base)
        base = cls.from_env(env, base)
        if overrides:
            base = base.replace(**overrides)
        return base


def detector_ids() -> frozenset[str]:
    """Every detector id, from the one registry (:data:`spanbreaker.detectors.ALL_DETECTORS`), imported on
    first use: the detectors import this module."""
    from .detectors import DETECTOR_IDS

    return DETECTOR_IDS


def __getattr__(name: str) -> frozenset[str]:
    if name == "DETECTOR_IDS":  # its old home: ``from spanbreaker.config import DETECTOR_IDS`` keeps working
        return detector_ids()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_DEFAULT_POLICY = ToolPolicy()
_TOOL_POLICY_KEYS = ("allow_repeat", "repeat_max", "streak_max")
OTHER_VARIABLES = frozenset({CONFIG_FILE_ENV, ENV_PREFIX + "STATE_URL", ENV_PREFIX + "STRICT"})
"""``SPANBREAKER_*`` variables that are not fields: the config file, the state URL alias, the launcher's strict
switch (:mod:`spanbreaker.autoinstrument`)."""


def _did_you_mean(word: Any, choices: Iterable[str]) -> str:
    """"; did you mean 'x'?" when ``word`` is a near miss of one of ``choices`` (difflib's ratio), else ""."""
    close = difflib.get_close_matches(word, sorted(choices), n=1) if isinstance(word, str) else []
    return f"; did you mean {close[0]!r}?" if close else ""


def _known(word: str, choices: Iterable[str], noun: str, *, always_list: bool = True) -> str:
    """A message's tail: the near miss, then the accepted values (``always_list``, or when nothing is near: a
    long list is only worth reading when there is no better hint)."""
    hint = _did_you_mean(word, choices)
    if always_list or not hint:
        listing = f"{noun}: {', '.join(sorted(choices))}"
        hint += f" ({listing})" if hint else f"; {listing}"
    return hint


def _reject_misspelt_variables(env: Mapping[str, str]) -> None:
    """A ``SPANBREAKER_*`` variable close to a setting's name is a typo, not someone else's variable.

    Left alone it would be ignored and the run guarded by a default the user meant to change. Variables that
    resemble no setting (another tool's ``SPANBREAKER_SOMETHING``) are not ours to judge.
    """
    names = {ENV_PREFIX + f.name.upper() for f in dataclasses.fields(BreakerConfig)} | OTHER_VARIABLES
    for var in env:
        if not var.startswith(ENV_PREFIX) or var in names:
            continue
        close = difflib.get_close_matches(var, sorted(names), n=1, cutoff=0.85)
        if close:
            raise ConfigError(f"{var} is not a spanbreaker setting; did you mean {close[0]}?")


def _check_mode(label: str, value: Any) -> None:
    if value not in MODES:
        raise ConfigError(f"{label}={value!r}: expected 'enforce' or 'observe'{_did_you_mean(value, MODES)}")


def _check_response(label: str, value: Any) -> None:
    if value not in RESPONSES:
        raise ConfigError(f"{label}={value!r}: expected 'stop' or 'steer'{_did_you_mean(value, RESPONSES)}")


def _check_detectors(label: str, ids: Iterable[str]) -> None:
    if not ids:
        return
    known = detector_ids()
    for detector in sorted(set(ids) - known):
        raise ConfigError(f"{label}: unknown detector id {detector!r}{_known(detector, known, 'known ids')}")


def _check_state(label: str, value: Any) -> None:
    if value is not None and not str(value).startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"{label}={value!r}: expected a redis://, rediss:// or unix:// URL")


def _tool_policy(label: str, policy: Mapping[str, Any]) -> ToolPolicy:
    for key in policy:
        if key not in _TOOL_POLICY_KEYS:
            raise ConfigError(f"{label}: unknown key {key!r}{_known(key, _TOOL_POLICY_KEYS, 'valid keys')}")
    try:
        return ToolPolicy(**policy)
    except ConfigError as exc:
        raise ConfigError(f"{label}.{exc}") from None


def _check_range(name: str, value: Any, spec: Mapping[str, Any], label: str) -> None:
    kind, lo, hi = spec["kind"], spec["lo"], spec["hi"]
    rng = f">= {lo}" if hi is None else f"between {lo} and {hi}"
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        noun = "an integer"
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        noun = "a number"
    if not ok or value < lo or (hi is not None and value > hi):
        raise ConfigError(f"{label}={value!r}: expected {noun} {rng} ({spec['doc']})")


def _reject_unknown(changes: Mapping[str, Any], source: str) -> None:
    known = {f.name for f in dataclasses.fields(BreakerConfig)}
    for name in sorted(set(changes) - known):
        raise ConfigError(f"unknown {source} option {name!r}{_known(name, known, 'known', always_list=False)}")


def _build(base: BreakerConfig, changes: dict[str, Any], source: str) -> BreakerConfig:
    try:
        return dataclasses.replace(base, **changes)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _split(raw: str) -> frozenset[str]:
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


def _parse_env(var: str, f: dataclasses.Field[Any], raw: str) -> Any:
    spec = f.metadata
    text = raw.strip()
    if spec:
        try:
            value: Any = int(text) if spec["kind"] == "int" else float(text)
        except ValueError:
            noun = "an integer" if spec["kind"] == "int" else "a number"
            rng = f">= {spec['lo']}" if spec["hi"] is None else f"between {spec['lo']} and {spec['hi']}"
            raise ConfigError(f"{var}={raw!r}: expected {noun} {rng} ({spec['doc']})") from None
        _check_range(f.name, value, spec, var)
        return value
    if f.name == "mode":
        _check_mode(var, text)
        return text
    if f.name == "response":
        _check_response(var, text)
        return text
    if f.name == "tools":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{var}: expected JSON like {{\"poll\": {{\"allow_repeat\": true}}}}: {exc}") from None
        return _coerce(var, f, data)
    if f.name in ("allowlist", "disabled_detectors", "format_error_types", "volatile_arg_keys"):
        return _coerce(f"{var}={raw!r}", f, _split(text))
    if f.name == "state":
        _check_state(var, text)
    return text


def _coerce(label: str, f: dataclasses.Field[Any], value: Any) -> Any:
    spec = f.metadata
    if spec:
        _check_range(f.name, value, spec, label)
        return value
    if f.name in ("allowlist", "disabled_detectors", "format_error_types", "volatile_arg_keys"):
        if isinstance(value, str):
            value = _split(value)
        if not (isinstance(value, Iterable) and all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{label}={value!r}: expected a list of strings")
        if f.name == "disabled_detectors":
            _check_detectors(label, value)
        return frozenset(value)
    if f.name == "tools":
        if not isinstance(value, Mapping):
            raise ConfigError(f"{label}={value!r}: expected a table of tool name -> policy")
        policies = {}
        for tool, policy in value.items():
            if not isinstance(policy, Mapping):
                raise ConfigError(f"{label}.{tool}={policy!r}: expected a table "
                                  f"(valid keys: {', '.join(_TOOL_POLICY_KEYS)})")
            policies[tool] = _tool_policy(f"{label}.{tool}", policy)
        return policies
    if f.name == "mode":
        _check_mode(label, value)
    if f.name == "state":
        _check_state(label, value)
    if f.name == "response":
        _check_response(label, value)
    if f.name in ("state", "state_prefix", "fleet_attribute", "mode") and value is not None and not isinstance(
            value, str):
        raise ConfigError(f"{label}={value!r}: expected a string")
    return value
