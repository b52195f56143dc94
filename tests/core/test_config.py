"""BreakerConfig: immutable, validated at construction, loaded from environment and TOML with clear errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from spanbreaker import BreakerConfig, ConfigError, ToolPolicy


def test_defaults_are_valid_and_immutable() -> None:
    config = BreakerConfig()
    assert config.mode == "enforce"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.tool_repeat_max = 9  # type: ignore[misc]


def test_from_env_reads_every_kind_of_field() -> None:
    config = BreakerConfig.from_env({
        "SPANBREAKER_MODE": "observe", "SPANBREAKER_TOOL_REPEAT_MAX": "5", "SPANBREAKER_MAX_COST_USD": "2.5",
        "SPANBREAKER_ALLOWLIST": "check_job, poll", "SPANBREAKER_TOOLS": '{"fetch": {"repeat_max": 2}}',
        "SPANBREAKER_STATE_URL": "redis://127.0.0.1:6379/0", "SPANBREAKER_DISABLED_DETECTORS": "cost_budget",
    })
    assert config.mode == "observe" and config.tool_repeat_max == 5 and config.max_cost_usd == 2.5
    assert config.allowlist == {"check_job", "poll"} and config.tools["fetch"] == ToolPolicy(repeat_max=2)
    assert config.state == "redis://127.0.0.1:6379/0" and config.disabled_detectors == {"cost_budget"}


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("SPANBREAKER_TOOL_REPEAT_MAX", "abc", "SPANBREAKER_TOOL_REPEAT_MAX='abc': expected an integer >= 1"),
    ("SPANBREAKER_TOOL_REPEAT_MAX", "0", "SPANBREAKER_TOOL_REPEAT_MAX=0: expected an integer >= 1"),
    ("SPANBREAKER_FIXATION_SIMILARITY", "150", "between 50.0 and 100.0"),
    ("SPANBREAKER_MODE", "panic", "SPANBREAKER_MODE='panic': expected 'enforce' or 'observe'"),
    ("SPANBREAKER_TOOLS", "{not json", "SPANBREAKER_TOOLS: expected JSON"),
    ("SPANBREAKER_DISABLED_DETECTORS", "tool_repeat,nope",
     "SPANBREAKER_DISABLED_DETECTORS='tool_repeat,nope': unknown detector id 'nope'; known ids: "),
    ("SPANBREAKER_STATE_URL", "http://x", "expected a redis://"),
])
def test_bad_environment_values_name_the_variable_and_the_range(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        BreakerConfig.from_env({variable: value})
    assert message in str(caught.value)


def test_from_toml_and_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "breaker.toml"
    path.write_text('mode = "observe"\nmax_tokens = 1000\nallowlist = ["poll"]\n[tools.fetch]\nallow_repeat = true\n')
    config = BreakerConfig.from_toml(path)
    assert config.mode == "observe" and config.max_tokens == 1000 and config.is_polling_tool("fetch")
    path.write_text("max_tokens = -3\n")
    with pytest.raises(ConfigError, match="max_tokens=-3: expected an integer >= 1"):
        BreakerConfig.from_toml(path)
    path.write_text("max_tokenz = 3\n")
    with pytest.raises(ConfigError, match="unknown key 'max_tokenz'"):
        BreakerConfig.from_toml(path)
    path.write_text("max_tokens = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        BreakerConfig.from_toml(path)


def test_replace_validates_and_rejects_unknown_fields() -> None:
    with pytest.raises(ConfigError, match="unknown keyword option"):
        BreakerConfig().replace(tool_repeat=3)
    with pytest.raises(ConfigError, match="error_repeat_max=1"):
        BreakerConfig().replace(error_repeat_max=1)
