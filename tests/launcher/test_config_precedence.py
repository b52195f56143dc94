"""Configuration precedence and start-up failures, in process (no provider is set here, nothing is attached).

Documented order, lowest to highest: defaults < the TOML file named by ``SPANBREAKER_CONFIG`` <
``SPANBREAKER_*`` variables < keyword arguments in code. The launcher runs in ``test_launcher.py`` prove the
first two layers end to end; these tests pin every layer and every way a bad value is reported.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import spanbreaker
from spanbreaker import BreakerConfig, ConfigError
from spanbreaker.autoinstrument import pre_instrument


@pytest.fixture
def toml(tmp_path: Path) -> Path:
    path = tmp_path / "spanbreaker.toml"
    path.write_text('tool_repeat_max = 2\nmax_model_calls = 50\nmode = "observe"\n\n'
                    '[tools.poll]\nallow_repeat = true\n')
    return path


def test_each_layer_overrides_the_one_below(toml: Path) -> None:
    assert BreakerConfig.load(environ={}).tool_repeat_max == 4
    env = {"SPANBREAKER_CONFIG": str(toml)}
    from_file = BreakerConfig.load(environ=env)
    assert (from_file.tool_repeat_max, from_file.max_model_calls, from_file.mode) == (2, 50, "observe")
    assert from_file.is_polling_tool("poll")
    env["SPANBREAKER_TOOL_REPEAT_MAX"] = "3"
    from_env = BreakerConfig.load(environ=env)
    assert (from_env.tool_repeat_max, from_env.max_model_calls) == (3, 50), "env wins only where it is set"
    from_code = BreakerConfig.load(environ=env, tool_repeat_max=7)
    assert (from_code.tool_repeat_max, from_code.max_model_calls, from_code.mode) == (7, 50, "observe")


def test_processor_loads_the_layers_and_keyword_overrides_win(toml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPANBREAKER_CONFIG", str(toml))
    monkeypatch.setenv("SPANBREAKER_TOOL_REPEAT_MAX", "3")
    assert spanbreaker.BreakerSpanProcessor().config.tool_repeat_max == 3
    assert spanbreaker.BreakerSpanProcessor(tool_repeat_max=9).config.tool_repeat_max == 9


def test_an_explicit_config_object_is_used_as_given(toml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code that builds a BreakerConfig itself is not second-guessed by the environment."""
    monkeypatch.setenv("SPANBREAKER_CONFIG", str(toml))
    monkeypatch.setenv("SPANBREAKER_TOOL_REPEAT_MAX", "3")
    assert spanbreaker.BreakerSpanProcessor(BreakerConfig(tool_repeat_max=5)).config.tool_repeat_max == 5


@pytest.mark.parametrize(("env", "says"), [
    ({"SPANBREAKER_TOOL_REPEAT_MAX": "lots"}, "SPANBREAKER_TOOL_REPEAT_MAX='lots': expected an integer >= 1"),
    ({"SPANBREAKER_TOOL_REPEAT_MAX": "0"}, "SPANBREAKER_TOOL_REPEAT_MAX=0: expected an integer >= 1"),
    ({"SPANBREAKER_FIXATION_SIMILARITY": "120"}, "SPANBREAKER_FIXATION_SIMILARITY=120.0: expected a number between"),
    ({"SPANBREAKER_MODE": "explode"}, "SPANBREAKER_MODE='explode': expected 'enforce' or 'observe'"),
    ({"SPANBREAKER_MODE": "enforcing"}, "SPANBREAKER_MODE='enforcing': expected 'enforce' or 'observe'; "
                                        "did you mean 'enforce'?"),
    ({"SPANBREAKER_DISABLED_DETECTORS": "tool_repeat,loop"},
     "SPANBREAKER_DISABLED_DETECTORS='tool_repeat,loop': unknown detector id 'loop'; known ids: call_budget, "),
    ({"SPANBREAKER_DISABLED_DETECTORS": "tool_repaet"},
     "SPANBREAKER_DISABLED_DETECTORS='tool_repaet': unknown detector id 'tool_repaet'; did you mean 'tool_repeat'? "
     "(known ids: call_budget, "),
    ({"SPANBREAKER_TOOLS": "{not json"}, "SPANBREAKER_TOOLS: expected JSON like"),
    ({"SPANBREAKER_TOOLS": '{"web_search": {"repeat": 8}}'},
     "SPANBREAKER_TOOLS.web_search: unknown key 'repeat'; did you mean 'repeat_max'? "
     "(valid keys: allow_repeat, repeat_max, streak_max)"),
    ({"SPANBREAKER_TOOLS": '{"web_search": {"retries": 8}}'},
     "SPANBREAKER_TOOLS.web_search: unknown key 'retries'; valid keys: allow_repeat, repeat_max, streak_max"),
    ({"SPANBREAKER_TOOLS": '{"web_search": {"repeat_max": 0}}'},
     "SPANBREAKER_TOOLS.web_search.repeat_max=0: expected an integer >= 1"),
    ({"SPANBREAKER_TOOLS": '{"poll": {"allow_repeat": "yes"}}'},
     "SPANBREAKER_TOOLS.poll.allow_repeat='yes': expected true or false"),
    ({"SPANBREAKER_STATE_URL": "http://cache:6379"}, "SPANBREAKER_STATE_URL='http://cache:6379': expected a redis://"),
    ({"SPANBREAKER_CONFIG": "does-not-exist.toml"}, "SPANBREAKER_CONFIG: config file 'does-not-exist.toml' does not"),
    ({"SPANBREAKER_TOOL_REPEAT_MAXIMUM": "6"},
     "SPANBREAKER_TOOL_REPEAT_MAXIMUM is not a spanbreaker setting; did you mean SPANBREAKER_TOOL_REPEAT_MAX?"),
])
def test_bad_environment_fails_naming_the_variable(env: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        BreakerConfig.load(environ=env)
    assert str(raised.value).startswith(says), str(raised.value)


def test_variables_that_resemble_no_setting_are_someone_elses() -> None:
    """``SPANBREAKER_SWEBENCH_DATA`` (the benchmark's) and the launcher's strict switch are not typos."""
    env = {"SPANBREAKER_SWEBENCH_DATA": "/data", "SPANBREAKER_STRICT": "1"}
    assert BreakerConfig.load(environ=env) == BreakerConfig()


@pytest.mark.parametrize(("build", "says"), [
    (lambda: BreakerConfig().replace(tool_repeat_maxx=3),
     "unknown keyword option 'tool_repeat_maxx'; did you mean 'tool_repeat_max'?"),
    (lambda: spanbreaker.BreakerSpanProcessor(BreakerConfig(), max_tokenz=5),
     "unknown keyword option 'max_tokenz'; did you mean 'max_tokens'?"),
    (lambda: BreakerConfig().replace(frobnicate=1), "unknown keyword option 'frobnicate'; known: allowlist, "),
    (lambda: BreakerConfig(disabled_detectors=frozenset({"error_lop"})),
     "disabled_detectors: unknown detector id 'error_lop'; did you mean 'error_loop'?"),
    (lambda: BreakerConfig(mode="observed"),  # type: ignore[arg-type]
     "mode='observed': expected 'enforce' or 'observe'; did you mean 'observe'?"),
    (lambda: BreakerConfig(tools={"search": {"repaet_max": 2}}),
     "tools.search: unknown key 'repaet_max'; did you mean 'repeat_max'?"),
])
def test_bad_code_arguments_say_what_was_meant(build: object, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        build()  # type: ignore[operator]
    assert str(raised.value).startswith(says), str(raised.value)


@pytest.mark.parametrize(("text", "named"), [
    ("tool_repeat_maximum = 2\n", "unknown key 'tool_repeat_maximum'; did you mean 'tool_repeat_max'?"),
    ("frobnicate = 2\n", "unknown key 'frobnicate'; known keys: allowlist, "),
    ('disabled_detectors = ["loops"]\n', "bad.toml: disabled_detectors: unknown detector id 'loops'"),
    ("tool_repeat_max = 0\n", "tool_repeat_max"),
    ('tool_repeat_max = "four"\n', "tool_repeat_max"),
    ("[tools.search]\nrepeat_max = 0\n", "search"),
    ("[tools.search]\nrepeats = 2\n", "search: unknown key 'repeats'; did you mean 'repeat_max'"),
    ("tool_repeat_max = \n", "invalid TOML"),
])
def test_bad_config_file_fails_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=named):
        BreakerConfig.load(environ={"SPANBREAKER_CONFIG": str(path)})


def test_launcher_hook_reports_a_bad_value_and_returns(monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """Raising from the hook would end the launcher's start-up: every instrumentor after it would be lost.

    The launcher runs in ``test_launcher.py`` show the application's other instrumentation still working and the
    strict switch refusing to start.
    """
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.delenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", raising=False)
    monkeypatch.delenv("SPANBREAKER_STRICT", raising=False)
    monkeypatch.setenv("SPANBREAKER_MAX_TOKENS", "-5")
    with caplog.at_level(logging.ERROR, logger="spanbreaker"):
        pre_instrument()
    assert "spanbreaker is not attached: SPANBREAKER_MAX_TOKENS=-5: expected an integer >= 1" in caplog.text
    assert "runs WITHOUT the breaker" in caplog.text and "SPANBREAKER_STRICT=1" in caplog.text


@pytest.mark.parametrize("env", [{"OTEL_SDK_DISABLED": "true"},
                                 {"OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "agno, spanbreaker"},
                                 {"OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "*"}])
def test_launcher_hook_does_nothing_when_switched_off(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Switched off means not even the configuration is read: a bad value cannot break an opted-out app."""
    monkeypatch.setenv("SPANBREAKER_MAX_TOKENS", "-5")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    pre_instrument()
