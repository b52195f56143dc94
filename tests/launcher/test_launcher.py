"""``opentelemetry-instrument python app.py`` with an app that never imports spanbreaker.

Every case is a real launcher run in a subprocess (the launcher sets the global tracer provider, which this
pytest process must never do). The runs are independent, so they start together in a pool and each test
reads its own run's outcome: the whole module costs about as much as its slowest run.

The configurator case uses the SDK's own ``_OTelSDKConfigurator`` (what ``opentelemetry-distro`` registers)
through an entry point declared in a throw-away ``.dist-info`` on ``PYTHONPATH``: the launcher discovers it
exactly as it would an installed distro, without installing one into the shared environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..otlp_receiver import SpanStore, start_grpc, start_http
from .runs import Run, Runs

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "examples" / "launcher_app.py"
STACK_APP = Path(__file__).resolve().parent / "stack_app.py"
BIN = Path(sys.executable).parent
LAUNCHER = BIN / "opentelemetry-instrument"
pytestmark = pytest.mark.timeout(400)  # one module fixture runs every launch; a loaded CI box needs the room

SLOW_FRAMEWORKS = "agno,beeai,llama_index,haystack"
"""Instrumentors this app has no use for: disabled in most runs because importing those frameworks costs seconds."""


@dataclass
class Scenario:
    env: dict[str, str] = field(default_factory=dict)
    configurator: bool = True
    args: tuple[str, ...] = (str(APP),)
    shadow_frameworks: bool = False
    """Put broken ``agno`` and ``beeai_framework`` packages first on the path: installed metadata, no module."""
    phoenix: bool = False


def _toml(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def scenarios(tmp: Path, http: str, grpc: str) -> dict[str, Scenario]:
    otlp_http = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                 "OTEL_EXPORTER_OTLP_ENDPOINT": http}
    return {
        "otlp-http": Scenario({**otlp_http, "OTEL_SERVICE_NAME": "sc-otlp-http"}),
        "otlp-grpc": Scenario({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{grpc}", "OTEL_EXPORTER_OTLP_INSECURE": "true",
                               "OTEL_SERVICE_NAME": "sc-otlp-grpc"}),
        "console": Scenario({"OTEL_TRACES_EXPORTER": "console"}),
        "hidden-values": Scenario({**otlp_http, "OTEL_SERVICE_NAME": "sc-hidden-values",
                                   "OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUTS": "true"}),
        "healthy": Scenario({"OTEL_TRACES_EXPORTER": "none", "LAUNCHER_APP_HEALTHY": "1"}),
        "own-provider": Scenario({"LAUNCHER_APP_OWN_PROVIDER": "1", "OTEL_SERVICE_NAME": "sc-own-provider",
                                  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": http + "/v1/traces"}, configurator=False),
        "no-configurator-console": Scenario({"OTEL_TRACES_EXPORTER": "console"}, configurator=False),
        "no-configurator-otlp": Scenario({**otlp_http, "OTEL_SERVICE_NAME": "sc-no-configurator-otlp"},
                                         configurator=False),
        "no-configurator-unset": Scenario({}, configurator=False),
        "no-configurator-missing-exporter": Scenario({"OTEL_TRACES_EXPORTER": "console,zipkin_json",
                                                      "OTEL_METRICS_EXPORTER": "prometheus"}, configurator=False),
        "disabled": Scenario({"OTEL_TRACES_EXPORTER": "none",
                              "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": f"{SLOW_FRAMEWORKS},spanbreaker"}),
        "smolagents-disabled": Scenario({"OTEL_TRACES_EXPORTER": "none",
                                         "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": f"{SLOW_FRAMEWORKS},smolagents"}),
        "sdk-disabled": Scenario({"OTEL_TRACES_EXPORTER": "none", "OTEL_SDK_DISABLED": "true"}),
        "missing-frameworks": Scenario({"OTEL_TRACES_EXPORTER": "none", "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": ""},
                                       shadow_frameworks=True),
        "toml": Scenario({"OTEL_TRACES_EXPORTER": "none",
                          "SPANBREAKER_CONFIG": _toml(tmp, "two.toml", "tool_repeat_max = 2\n")}),
        "toml-and-env": Scenario({"OTEL_TRACES_EXPORTER": "none", "SPANBREAKER_TOOL_REPEAT_MAX": "3",
                                  "SPANBREAKER_CONFIG": _toml(tmp, "two-again.toml", "tool_repeat_max = 2\n")}),
        "bad-env": Scenario({"OTEL_TRACES_EXPORTER": "console", "SPANBREAKER_TOOL_REPEAT_MAX": "lots"}),
        "bad-env-no-configurator": Scenario({"OTEL_TRACES_EXPORTER": "console", "SPANBREAKER_MODE": "explode"},
                                            configurator=False),
        "bad-env-strict": Scenario({"OTEL_TRACES_EXPORTER": "console", "SPANBREAKER_MODE": "explode",
                                    "SPANBREAKER_STRICT": "1"}),
        "agno-setup-tracing": Scenario(
            {"OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "beeai", "STACK_APP_WORKDIR": str(tmp)},
            configurator=False, args=(str(STACK_APP), "agno")),
        "batch-otlp": Scenario({"STACK_APP_GRPC_ENDPOINT": grpc}, configurator=False,
                               args=(str(STACK_APP), "batch-otlp")),
        "phoenix-register": Scenario({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": http + "/v1/traces"}, configurator=False,
                                     args=(str(STACK_APP), "phoenix"), phoenix=True),
    }


def _write_configurator_dist(site: Path) -> None:
    """An entry point for the SDK's configurator, as ``opentelemetry-distro`` declares it."""
    dist = site / "spanbreaker_test_configurator-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spanbreaker-test-configurator\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text(
        "[opentelemetry_configurator]\nsdk_test = opentelemetry.sdk._configuration:_OTelSDKConfigurator\n")


def _write_shadows(site: Path) -> None:
    for package in ("agno", "beeai_framework"):
        (site / package).mkdir(parents=True)
        (site / package / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{package}'\", name='{package}')\n")


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "SPANBREAKER_", "LAUNCHER_APP_", "PHOENIX_", "OPENINFERENCE_"))
           and k not in {"OPENAI_API_KEY", "PYTHONPATH"}}
    env.update({
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "AGNO_TELEMETRY": "false",
        "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": SLOW_FRAMEWORKS,
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "PYTHONUNBUFFERED": "1",
        "LAUNCHER_APP_MAX_STEPS": "8",
    })
    return env


def _launch(scenario: Scenario, tmp: Path, name: str) -> Run:
    env = _base_env()
    paths = []
    if scenario.configurator:
        site = tmp / f"site-{name}"
        _write_configurator_dist(site)
        paths.append(str(site))
    if scenario.shadow_frameworks:
        shadows = tmp / f"shadows-{name}"
        _write_shadows(shadows)
        paths.append(str(shadows))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(scenario.env)
    done = subprocess.run([str(LAUNCHER), "python", *scenario.args], env=env, cwd=tmp, capture_output=True,
                          text=True, timeout=120, check=False)
    return Run(done.returncode, done.stdout, done.stderr)


def _phoenix_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("phoenix.otel") is not None
    except ImportError:
        return False


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    tmp = tmp_path_factory.mktemp("launcher")
    store = SpanStore()
    http_server, http = start_http(store)
    grpc_server, grpc = start_grpc(store)
    # The Phoenix register() case needs only arize-phoenix-otel (a dev dependency), not a Phoenix server.
    want_phoenix = _phoenix_installed()
    try:
        todo = {name: sc for name, sc in scenarios(tmp, http, grpc).items() if not sc.phoenix or want_phoenix}
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = {name: pool.submit(_launch, sc, tmp, name) for name, sc in todo.items()}
            yield Runs({name: f.result() for name, f in futures.items()}, store)
    finally:
        http_server.shutdown()
        http_server.server_close()
        grpc_server.stop(grace=None)


def assert_tripped(run: Run, tool_calls: int = 4) -> None:
    summary = run.summary
    assert run.returncode == 0, run.stderr[-3000:]
    assert (summary["outcome"], summary["exception"], summary["detector"]) == ("stopped", "Tripped", "tool_repeat"), (
        summary, run.stderr[-3000:])
    assert summary["tool_calls"] == tool_calls, summary


def assert_not_tripped(run: Run) -> None:
    summary = run.summary
    assert run.returncode == 0, run.stderr[-3000:]
    assert summary["exception"] != "Tripped", summary
    assert "spanbreaker.tripped" not in run.stdout


# ----------------------------------------------------------------------------- attach with no code change
def test_configurator_and_otlp_http_exporter_trip_and_export_the_marks(runs: Runs) -> None:
    assert_tripped(runs["otlp-http"])
    spans = runs.exported("sc-otlp-http")
    names = {s.name for s in spans}
    assert "ToolCallingAgent.run" in names and "SearchTool" in names, names
    tripped = [s for s in spans if s.attributes.get("spanbreaker.tripped") is True]
    assert {s.attributes["spanbreaker.detector"] for s in tripped} == {"tool_repeat"}
    assert len({s.span_id for s in spans}) == len(spans)


def test_configurator_and_otlp_grpc_exporter_trip_and_export_the_marks(runs: Runs) -> None:
    assert_tripped(runs["otlp-grpc"])
    spans = runs.exported("sc-otlp-grpc")
    assert spans and {s.transport for s in spans} == {"grpc"}
    assert any(s.attributes.get("spanbreaker.tripped") is True for s in spans)


def test_console_exporter_prints_the_trip(runs: Runs) -> None:
    run = runs["console"]
    assert_tripped(run)
    assert '"spanbreaker.tripped": true' in run.stdout
    assert '"spanbreaker.detector": "tool_repeat"' in run.stdout


def test_values_the_instrumentor_hides_stay_hidden_and_the_loop_still_trips(runs: Runs) -> None:
    """``OPENINFERENCE_HIDE_INPUTS`` / ``..._OUTPUTS`` under the launcher: the exported tool spans carry
    ``__REDACTED__``, and the breaker, shown the values in process, stops the loop at the same call."""
    assert_tripped(runs["hidden-values"])
    spans = runs.exported("sc-hidden-values")
    tools = [s for s in spans if s.name == "SearchTool"]
    assert tools and {s.attributes.get("input.value") for s in tools} == {"__REDACTED__"}
    assert any(s.attributes.get("spanbreaker.detector") == "tool_repeat" for s in spans)


def test_exporter_none_still_trips(runs: Runs) -> None:
    """With ``OTEL_TRACES_EXPORTER=none`` the provider exists without exporters; the breaker needs no exporter.

    (The configuration runs below all use ``none``; this one is the config-file run.)
    """
    assert_tripped(runs["toml"], tool_calls=2)


def test_healthy_look_alike_under_the_launcher_is_not_stopped(runs: Runs) -> None:
    run = runs["healthy"]
    assert_not_tripped(run)
    assert run.summary["outcome"] == "answered" and run.summary["answer"] == "found it"


def test_no_configurator_attaches_when_the_app_sets_its_provider(runs: Runs) -> None:
    """No distro, no configurator: the hook defers; the app's own provider (BatchSpanProcessor to OTLP) gets it."""
    run = runs["own-provider"]
    assert_tripped(run)
    assert run.summary["provider"] == "TracerProvider"
    spans = runs.exported("sc-own-provider")
    assert any(s.attributes.get("spanbreaker.tripped") is True for s in spans)


def test_no_distro_spanbreaker_sets_the_sdk_up_from_the_otel_settings(runs: Runs) -> None:
    """No configurator and no provider of the app's own: the README's no-code path configures the SDK itself."""
    console = runs["no-configurator-console"]
    assert_tripped(console)
    assert console.summary["provider"] == "TracerProvider"
    assert '"spanbreaker.tripped": true' in console.stdout and '"name": "ToolCallingAgent.run"' in console.stdout
    assert_tripped(runs["no-configurator-otlp"])
    spans = runs.exported("sc-no-configurator-otlp")
    assert {"ToolCallingAgent.run", "SearchTool"} <= {s.name for s in spans}
    assert any(s.attributes.get("spanbreaker.tripped") is True for s in spans)


def test_no_distro_and_no_exporter_setting_still_trips_and_exports_nothing(runs: Runs) -> None:
    """Unset ``OTEL_TRACES_EXPORTER`` means what it means to the SDK's configurator: no exporter (the distro's
    ``otlp`` default comes with the distro)."""
    run = runs["no-configurator-unset"]
    assert_tripped(run)
    assert '"spanbreaker.tripped"' not in run.stdout
    assert "Traceback" not in run.stderr and "spanbreaker" not in run.stderr


def test_a_missing_exporter_is_one_hint_and_the_rest_goes_on(runs: Runs) -> None:
    run = runs["no-configurator-missing-exporter"]
    assert_tripped(run)
    assert '"spanbreaker.tripped": true' in run.stdout, "the exporter that is installed still exports"
    hints = [line for line in run.stderr.splitlines() if line.startswith("spanbreaker: OTEL_")]
    assert hints == [
        "spanbreaker: OTEL_TRACES_EXPORTER=console,zipkin_json needs zipkin_json, which is not installed "
        "(pip install opentelemetry-exporter-zipkin-json); traces go to console only",
        "spanbreaker: OTEL_METRICS_EXPORTER=prometheus needs prometheus, which is not installed "
        "(pip install opentelemetry-exporter-prometheus); metrics are not exported"], run.stderr[-2000:]
    assert "Traceback" not in run.stderr


# ----------------------------------------------------------------------------- switches the user already has
def test_disabled_instrumentations_spanbreaker_leaves_the_loop_alone(runs: Runs) -> None:
    run = runs["disabled"]
    assert_not_tripped(run)
    assert run.summary["tool_calls"] == 8  # every step, up to max_steps


def test_disabling_a_framework_keeps_spanbreaker_from_instrumenting_it_too(runs: Runs) -> None:
    """``smolagents`` in the list turns off the launcher's instrumentor and spanbreaker's adapter alike."""
    run = runs["smolagents-disabled"]
    assert_not_tripped(run)
    assert run.summary["tool_calls"] == 8


def test_sdk_disabled_is_honoured(runs: Runs) -> None:
    run = runs["sdk-disabled"]
    assert_not_tripped(run)
    assert run.summary["tool_calls"] == 8


def test_missing_frameworks_do_not_abort_start_up(runs: Runs) -> None:
    """agno and beeai have installed metadata but no importable module: skipped, smolagents still guarded."""
    run = runs["missing-frameworks"]
    assert_tripped(run)
    assert "Failed to auto initialize" not in run.stderr


# ----------------------------------------------------------------------------- configuration precedence
def test_config_file_applies(runs: Runs) -> None:
    assert_tripped(runs["toml"], tool_calls=2)


def test_environment_overrides_the_config_file(runs: Runs) -> None:
    assert_tripped(runs["toml-and-env"], tool_calls=3)


def test_bad_setting_leaves_the_rest_of_opentelemetry_working_and_says_so(runs: Runs) -> None:
    """The hook reports and returns: the instrumentors after it still run, the app's spans are exported; the agent
    runs unguarded, as the message says."""
    for name, says in (("bad-env", "SPANBREAKER_TOOL_REPEAT_MAX='lots': expected an integer >= 1"),
                       ("bad-env-no-configurator", "SPANBREAKER_MODE='explode': expected 'enforce' or 'observe'")):
        run = runs[name]
        assert f"spanbreaker is not attached: {says}" in run.stderr, run.stderr[-2000:]
        assert "runs WITHOUT the breaker" in run.stderr and "SPANBREAKER_STRICT=1" in run.stderr
        assert "Failed to auto initialize" not in run.stderr
        assert_not_tripped(run)
        assert run.summary["tool_calls"] == 8
        assert '"name": "ToolCallingAgent.run"' in run.stdout, "the smolagents instrumentor still exported its spans"


def test_strict_switch_refuses_to_start_with_a_bad_setting(runs: Runs) -> None:
    run = runs["bad-env-strict"]
    assert run.returncode == 78, (run.returncode, run.stderr[-2000:])
    assert run.stderr.splitlines()[:2] == [
        "spanbreaker: SPANBREAKER_MODE='explode': expected 'enforce' or 'observe'",
        "spanbreaker: SPANBREAKER_STRICT is set: refusing to start without the breaker"]
    assert '"outcome"' not in run.stdout, "the application never ran"


# ----------------------------------------------------------------------------- existing stacks
def test_coexists_with_agno_setup_tracing(runs: Runs) -> None:
    """Agno's ``setup_tracing`` builds and sets its own provider with a database exporter: the breaker joins it."""
    run = runs["agno-setup-tracing"]
    assert_tripped(run)
    report = run.line("stack")
    assert report["stack_spans"] > 0
    assert report["stack_tripped"] >= 1, "the trip marks reached Agno's own span store"


def test_coexists_with_a_batch_span_processor_to_an_otlp_collector(runs: Runs) -> None:
    run = runs["batch-otlp"]
    assert_tripped(run)
    spans = runs.exported("stack-batch-otlp")
    assert spans and {s.transport for s in spans} == {"grpc"}
    assert sum(s.attributes.get("spanbreaker.blocked") is True for s in spans) == 1


def test_coexists_with_phoenix_register(runs: Runs) -> None:
    assert _phoenix_installed(), "arize-phoenix-otel is missing: the dev extra installs it"
    run = runs["phoenix-register"]
    assert_tripped(run)
    spans = [s for s in runs.store.spans if s.resource.get("openinference.project.name") == "spanbreaker-launcher"]
    assert any(s.attributes.get("spanbreaker.tripped") is True for s in spans)
