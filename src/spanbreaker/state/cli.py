"""``spanbreaker open|reset TRACE_ID --state URL``: the fleet kill switch from a shell.

``register(subparsers)`` is called by the main ``spanbreaker`` command; each subcommand sets ``func`` to a
callable taking the parsed namespace and returning an exit code.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from . import open_trace, reset_trace

_TRACE_ID = re.compile(r"[0-9a-f]{32}")


def trace_id(text: str) -> str:
    """An argparse type: a W3C trace id (32 hex digits, not all zero), so a typo is a usage error that says
    what was expected rather than a conversion error from deep inside."""
    value = text.strip().lower()
    if value.startswith("0x"):
        value = value[2:]
    if not _TRACE_ID.fullmatch(value) or not value.strip("0"):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a trace id: expected 32 hex digits, not all zero "
            "(the W3C trace id, e.g. 4bf92f3577b34da6a3ce929d0e0e4736)")
    return value


def register(subparsers: Any) -> None:
    for name, help_text in (("open", "open a trace's breaker in every process sharing the state URL"),
                            ("reset", "close a trace's breaker in every process sharing the state URL")):
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("trace_id", metavar="TRACE_ID", type=trace_id, help="32 hex digits (the W3C trace id)")
        sub.add_argument("--state", default=os.environ.get("SPANBREAKER_STATE_URL"),
                         help="redis:// URL (default: $SPANBREAKER_STATE_URL)")
        sub.add_argument("--prefix", default=os.environ.get("SPANBREAKER_STATE_PREFIX", "spanbreaker"))
        if name == "open":
            sub.add_argument("--reason", default="opened by operator")
        sub.set_defaults(func=_run_open if name == "open" else _run_reset)


def _run_open(args: argparse.Namespace) -> int:
    if not args.state:
        print("spanbreaker open: --state URL (or SPANBREAKER_STATE_URL) is required", file=sys.stderr)
        return 2
    try:
        record = open_trace(args.state, args.trace_id, args.reason, prefix=args.prefix)
    except ValueError as exc:
        print(f"spanbreaker open: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"spanbreaker open: shared state unavailable ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    print(f"opened trace {record.trace_id}: {record.reason}")
    return 0


def _run_reset(args: argparse.Namespace) -> int:
    if not args.state:
        print("spanbreaker reset: --state URL (or SPANBREAKER_STATE_URL) is required", file=sys.stderr)
        return 2
    try:
        reset_trace(args.state, args.trace_id, prefix=args.prefix)
    except ValueError as exc:
        print(f"spanbreaker reset: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"spanbreaker reset: shared state unavailable ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    print(f"reset trace {args.trace_id}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m spanbreaker.state.cli open ...``) for when the main CLI is absent."""
    parser = argparse.ArgumentParser(prog="spanbreaker")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
