"""``spanbreaker replay --sweep KEY=V1,V2,...`` as the README states it (a subprocess), on four real SWE-bench runs:
each value gets its own verdicts in one pass, a value equal to the default reproduces the plain replay exactly,
values that change the outcome give different rows, and the successful-runs column reads the outcome label."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spanbreaker.config import BreakerConfig
from spanbreaker.errors import ConfigError
from spanbreaker.replay.report import usd
from spanbreaker.replay.sweep import SWEEPABLE, Sweep

from .test_cli import in_process, parse_html, run_cli
from .test_replay import SLICE

VERDICT = ("tripped", "detector", "reason", "step", "span_id", "calls_after_trip", "model_calls_after",
           "tool_calls_after", "tokens_after_trip")
PYLINT = "pylint-dev__pylint-8898"


def _lines(stdout: str) -> dict[str, dict[str, Any]]:
    return {line["resource"]["swebench.instance_id"]: line for line in map(json.loads, stdout.splitlines())}


def _row(text: str, label: str) -> list[str]:
    """The cells of the text table row whose first cell is ``label``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in:\n{text}")


@pytest.fixture(scope="module")
def plain() -> dict[str, dict[str, Any]]:
    done = run_cli("replay", SLICE, "--json")
    assert done.returncode == 0, done.stderr
    return _lines(done.stdout)


def test_sweep_gives_each_value_its_verdicts_in_one_pass(plain: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    # The base is NOT the default (fixation_max = 8), so fixation_max=4 is replayed by a processor of its own
    # beside four others in the same pass, and must still reproduce the plain default replay verdict for verdict.
    base = tmp_path / "base.toml"
    base.write_text("fixation_max = 8\n")
    page = tmp_path / "sweep.html"
    done = run_cli("replay", SLICE, "--json", "--config", base, "--sweep", "fixation_max=2,3,4,5",
                   "--sweep", "max_model_calls=10", "--html", page)
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert set(lines) == set(plain)
    configs = ["fixation_max=2", "fixation_max=3", "fixation_max=4", "fixation_max=5", "max_model_calls=10"]
    for run, line in lines.items():
        assert [v["config"] for v in line["sweep"]] == configs
        by_config = {v["config"]: v for v in line["sweep"]}
        assert {k: by_config["fixation_max=4"][k] for k in VERDICT} == {k: plain[run][k] for k in VERDICT}, run
    # values that change the outcome: the fixation loop of the pylint run trips earlier at 2 and 3, not at 5 or 8
    pylint = {v["config"]: (v["detector"], v["step"]) for v in lines[PYLINT]["sweep"]}
    assert pylint == {"fixation_max=2": ("input_fixation", "Step 11"), "fixation_max=3": ("input_fixation", "Step 48"),
                      "fixation_max=4": ("input_fixation", "Step 49"), "fixation_max=5": (None, None),
                      "max_model_calls=10": ("call_budget", "Step 11")}
    assert lines[PYLINT]["tripped"] is False  # the per-trace verdict itself is the base configuration's (8)
    # the table: per value, traces tripped, calls and tokens saved, successful runs tripped (swebench.resolved)
    assert "Threshold sweep over 4 traces" in done.stderr
    rows = parse_html(page.read_text()).configs
    assert list(rows) == ["base", *configs]
    for config in configs:
        verdicts = [next(v for v in line["sweep"] if v["config"] == config) for line in lines.values()]
        tripped = [(v, line) for v, line in zip(verdicts, lines.values(), strict=True) if v["tripped"]]
        cells = rows[config]
        assert cells["traces_tripped"] == str(len(tripped))
        assert cells["calls_saved"] == str(sum(v["calls_after_trip"] for v, _ in tripped))
        assert cells["tokens_saved"] == f"{sum(v['tokens_after_trip'] for v, _ in tripped):,}"
        assert cells["cost_saved"] == usd(sum(v["cost_after_trip_usd"] for v, _ in tripped))
        successes = sum(line["success"] is True for _, line in tripped)
        assert cells["successful_runs_tripped"] == f"{successes} of 2"
    assert rows["fixation_max=5"]["traces_tripped"] == "1" and rows["fixation_max=2"]["traces_tripped"] == "2"
    assert rows["fixation_max=2"]["calls_saved"] != rows["fixation_max=3"]["calls_saved"]
    assert rows["max_model_calls=10"]["successful_runs_tripped"] == "2 of 2"  # a budget that kills successes
    assert rows["base"]["traces_tripped"] == "1"


def test_sweep_text_table_as_the_readme_states_it(plain: dict[str, dict[str, Any]]) -> None:
    done = run_cli("replay", SLICE, "--sweep", "tool_repeat_max=3,4,5,6", "--sweep", "fixation_max=3,4,6")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Threshold sweep over 4 traces" in out
    tripped = [line for line in plain.values() if line["tripped"]]
    default = [str(len(tripped)), str(sum(line["calls_after_trip"] for line in tripped)),
               f"{sum(line['tokens_after_trip'] for line in tripped):,}",
               usd(sum(line["cost_after_trip_usd"] for line in tripped)), "0 of 2"]
    assert default[3] != "$0.00"  # the slice's model (gemini-3-pro-preview) has a price
    # the default values reproduce the plain replay's figures (traces, calls, tokens and cost saved, successes tripped)
    assert _row(out, "tool_repeat_max=4 (base)")[1:6] == _row(out, "fixation_max=4 (base)")[1:6] == default
    assert _row(out, "fixation_max=3")[1:6] != default  # trips the paraphrase loop earlier: more saved
    assert _row(out, "fixation_max=6")[1] == "1"  # no longer trips it
    with pytest.raises(AssertionError):  # a value equal to the base stands for it: no separate base row
        _row(out, "base")


@pytest.mark.parametrize(("spec", "named"), [
    ("bogus=1,2", ["'bogus'", "tool_repeat_max", "fixation_max"]),
    ("tool_repeat_max=4,0", ["tool_repeat_max=0", ">= 1"]),
    ("tool_repeat_max=three", ["tool_repeat_max='three'", "integer"]),
    ("fixation_similarity=101", ["fixation_similarity=101", "between 50.0 and 100.0"]),
    ("tool_repeat_max", ["KEY=VALUE"]),
    ("tool_repeat_max=", ["no values"]),
    ("mode=observe", ["'mode'"]),
])
def test_bad_sweep_exits_2_naming_the_key(spec: str, named: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = in_process(capsys, "replay", SLICE, "--sweep", spec)
    assert status == 2 and out == ""
    for text in named:
        assert text in err, (text, err)


def test_values_equal_to_the_base_share_its_processor() -> None:
    base = BreakerConfig(mode="observe")
    sweep = Sweep(base, ["tool_repeat_max=3,4,4", "fixation_max=4"])
    assert [r.label for r in sweep.rows] == ["tool_repeat_max=3", "tool_repeat_max=4", "fixation_max=4"]
    assert [r.feeder for r in sweep.rows] == [1, 0, 0] and len(sweep.configs) == 2
    assert sweep.configs[1] == base.replace(tool_repeat_max=3)
    assert "tool_repeat_max" in SWEEPABLE and "max_cost_usd" in SWEEPABLE and "mode" not in SWEEPABLE
    with pytest.raises(ConfigError, match="sweepable keys"):
        Sweep(base, ["allowlist=a,b"])
