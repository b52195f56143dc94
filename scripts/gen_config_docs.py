"""Generate docs/configuration.md from BreakerConfig itself, so the documented table cannot drift from the code.

    python scripts/gen_config_docs.py          # rewrite docs/configuration.md
    python scripts/gen_config_docs.py --check  # exit 1 if the committed file is stale (CI, tests)

Defaults and accepted ranges come from the dataclass fields and their metadata; the meaning of each field
comes from its attribute docstring in ``config.py`` (read with ``ast``), with the short texts below for the
few fields that have none.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import re
import sys
from pathlib import Path
from typing import Any

from spanbreaker import config as config_module
from spanbreaker.config import CONFIG_FILE_ENV, DETECTOR_IDS, ENV_PREFIX, BreakerConfig

OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"

FALLBACK_MEANING = {
    "format_error_types": "Exception class names that count as an unparsable model output for ``format_loop``.",
    "context_jump_ratio": "Prompt growth, as a multiple of the previous prompt of the same agent, that counts as "
                          "inflation (together with ``context_jump_tokens``).",
    "session_history_messages": "Messages in the session history sent with a run's first model call "
                                "(``session_bloat``).",
    "max_tokens": "Tokens (prompt + completion) one trace may spend (``token_budget``).",
    "max_model_calls": "Model calls one trace may make (``call_budget``).",
    "max_tool_calls": "Tool calls one trace may make (``call_budget``).",
    "max_tool_calls_per_step": "Tool calls one agent step may make (``call_budget``).",
    "max_cost_usd": "Estimated model cost in US dollars one trace may spend (``cost_budget``, genai-prices).",
    "budget_warn_fraction": "Fraction of a budget at which a ``spanbreaker.warning`` event is recorded.",
    "max_traces": "Live traces tracked at once; the least recently used is dropped beyond this.",
    "tools": "Per-tool overrides: ``repeat_max``, ``streak_max``, ``allow_repeat``.",
    "disabled_detectors": "Detector ids that never trip.",
    "volatile_arg_keys": "Tool argument keys ignored when comparing calls (ids, timestamps).",
    "state_prefix": "Key prefix in the shared state store.",
    "fleet_max_cost_usd": "Fleet rule (shared state only): estimated US dollars all traces of one "
                          "``fleet_attribute`` value may spend per window.",
}

LIST_FIELDS = ("allowlist", "disabled_detectors", "format_error_types", "volatile_arg_keys")


def field_docstrings() -> dict[str, str]:
    """Attribute docstrings: the string literal right after each field of BreakerConfig."""
    tree = ast.parse(inspect.getsource(config_module))
    docs: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "BreakerConfig":
            body = node.body
            for current, following in itertools.pairwise(body):
                if (isinstance(current, ast.AnnAssign) and isinstance(current.target, ast.Name)
                        and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                        and isinstance(following.value.value, str)):
                    docs[current.target.id] = " ".join(following.value.value.split())
    return docs


def env_var(name: str) -> str:
    if name == "state":
        return f"`{ENV_PREFIX}STATE_URL` (or `{ENV_PREFIX}STATE`)"
    return f"`{ENV_PREFIX}{name.upper()}`"


def default_text(field: dataclasses.Field[Any], value: Any) -> str:
    if isinstance(value, frozenset):
        return ", ".join(f"`{v}`" for v in sorted(value)) if value else "(none)"
    if isinstance(value, dict):
        return "(none)"
    if value is None:
        return "(none)"
    if isinstance(value, float) and value.is_integer():
        return f"`{value:g}`" if abs(value) < 1e6 else f"`{value:,.0f}`"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"`{value:_}`".replace("_", " ") if value >= 10_000 else f"`{value}`"
    return f"`{value}`"


def accepted_text(field: dataclasses.Field[Any]) -> str:
    spec = field.metadata
    if spec:
        noun = "integer" if spec["kind"] == "int" else "number"
        rng = f"≥ {spec['lo']}" if spec["hi"] is None else f"{spec['lo']} to {spec['hi']}"
        unit = f" ({spec['doc']})" if spec.get("doc") else ""
        return f"{noun} {rng}{unit}"
    if field.name == "mode":
        return "`enforce` or `observe`"
    if field.name == "tools":
        return 'JSON / TOML table: `{"poll": {"allow_repeat": true}}`'
    if field.name == "disabled_detectors":
        return "comma-separated detector ids"
    if field.name in LIST_FIELDS:
        return "comma-separated names (TOML: list)"
    if field.name == "state":
        return "`redis://`, `rediss://` or `unix://` URL"
    return "string"


def cell(text: str) -> str:
    """Markdown table cell: reST roles and double backticks become plain code spans."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("|", "\\|").replace("``", "`")


def render() -> str:
    defaults = BreakerConfig()
    docs = field_docstrings()
    lines = [
        "# Configuration",
        "",
        "<!-- Generated by scripts/gen_config_docs.py from BreakerConfig; do not edit by hand. -->",
        "",
        "Every threshold lives in one immutable `spanbreaker.BreakerConfig`. It is read once, when the processor",
        "is built, and validated there: a bad value raises `spanbreaker.ConfigError` naming the variable or key and",
        "the accepted range, at start-up, never a silent default.",
        "",
        "## Where settings come from",
        "",
        "Precedence, highest first:",
        "",
        "1. keyword arguments in code: `BreakerSpanProcessor(tool_repeat_max=6)`, `BreakerConfig.load(...,"
        " tool_repeat_max=6)`, `config.replace(...)`;",
        f"2. `{ENV_PREFIX}*` environment variables (table below);",
        f"3. the TOML file named by `{CONFIG_FILE_ENV}` (top-level keys, or a `[spanbreaker]` /"
        " `[tool.spanbreaker]` table; `[tools.<name>]` tables for per-tool policy);",
        "4. the defaults below.",
        "",
        "A `BreakerConfig` object passed explicitly (`BreakerSpanProcessor(config)`,"
        " `spanbreaker.instrument(config=...)`) is used as given: the environment and the file are read only when"
        " no config is passed.",
        "",
        "A setting that holds names (`format_error_types`, `volatile_arg_keys`, `allowlist`, `disabled_detectors`)"
        " takes the value given as a whole: it replaces the default names rather than adding to them. To add one,"
        " list the defaults with it.",
        "",
        "Under `opentelemetry-instrument`, the breaker is switched off by `OTEL_SDK_DISABLED=true` or by naming",
        "`spanbreaker` (or `*`) in `OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`; naming a framework there (`smolagents`,",
        "`agno`, `beeai`) stops spanbreaker from instrumenting it too. A bad value makes the launcher log",
        "`spanbreaker is not attached: <variable>=...: expected ...` and the application runs without the breaker",
        "(its other OpenTelemetry instrumentation is unaffected); `SPANBREAKER_STRICT=1` makes it refuse to start",
        "instead (exit status 78). A `SPANBREAKER_*` variable one typo away from a setting's name is an error too,",
        "with \"did you mean\".",
        "",
        "```toml",
        "# spanbreaker.toml  (SPANBREAKER_CONFIG=spanbreaker.toml)",
        'mode = "enforce"',
        "tool_repeat_max = 4",
        "max_model_calls = 200",
        'disabled_detectors = ["low_exploration"]',
        "",
        "[tools.wait_for_job]",
        "allow_repeat = true",
        "```",
        "",
        "## Settings",
        "",
        "| Setting (TOML key) | Environment variable | Default | Accepted | Meaning |",
        "|---|---|---|---|---|",
    ]
    for field in dataclasses.fields(BreakerConfig):
        meaning = docs.get(field.name) or FALLBACK_MEANING.get(field.name, "")
        lines.append(
            f"| `{field.name}` | {env_var(field.name)} | {cell(default_text(field, getattr(defaults, field.name)))} | "
            f"{cell(accepted_text(field))} | {cell(meaning)} |"
        )
    lines += [
        "",
        "## Detector ids",
        "",
        "For `disabled_detectors` (and the `spanbreaker.detector` span attribute): "
        + ", ".join(f"`{d}`" for d in sorted(DETECTOR_IDS - {'forced'})) + ". `forced` marks a trace opened by"
        " `force_open()` and cannot be disabled.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if docs/configuration.md is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.name} is out of date: run python scripts/gen_config_docs.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
