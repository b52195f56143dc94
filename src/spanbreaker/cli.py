"""The ``spanbreaker`` command: one entry point, one subcommand per job.

Subcommands register themselves (``register(subparsers)``) and set ``func``: a callable taking the parsed
namespace and returning the exit status. Commands whose module is not installed are simply absent.
Exit status: 0 clean, 1 the command ran but something was skipped or failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .replay.cli import register as register_replay_commands

try:
    from .state.cli import register as register_state_commands
except ImportError:  # the state package is optional
    register_state_commands = None  # type: ignore[assignment]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spanbreaker",
        description="Per-trace circuit breakers for AI agents, fed by OpenTelemetry spans.",
    )
    parser.add_argument("--version", action="version", version=f"spanbreaker {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    register_replay_commands(subparsers)
    if register_state_commands is not None:
        register_state_commands(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args))
    except BrokenPipeError:  # ``spanbreaker replay ... --json | head``: the reader left; not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("spanbreaker: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
