"""``spanbreaker open|reset``: a malformed trace id is a usage error that says what a trace id looks like.

Checked by argparse before anything connects to the shared state, so no Redis is needed here.
"""

from __future__ import annotations

import pytest

from spanbreaker.cli import main


@pytest.mark.parametrize("command", ["open", "reset"])
@pytest.mark.parametrize("trace_id", ["nothex", "4bf92f3577b34da6a3ce929d0e0e473", "0" * 32, "g" * 32])
def test_a_malformed_trace_id_is_a_usage_error_naming_the_format(command: str, trace_id: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, trace_id, "--state", "redis://127.0.0.1:1/0"])
    assert exited.value.code == 2
    assert (f"argument TRACE_ID: {trace_id!r} is not a trace id: expected 32 hex digits, not all zero (the W3C "
            "trace id, e.g. 4bf92f3577b34da6a3ce929d0e0e4736)") in capsys.readouterr().err


def test_a_trace_id_may_carry_0x_and_capitals() -> None:
    from spanbreaker.state.cli import trace_id

    assert trace_id("0x4BF92F3577B34DA6A3CE929D0E0E4736") == "4bf92f3577b34da6a3ce929d0e0e4736"
