"""The README's no-code path exactly as a new user takes it: a fresh virtualenv, ``pip install
'spanbreaker[<framework>]'``, then ``opentelemetry-instrument python app.py`` with the ``OTEL_*`` settings they pass.

Nothing from the development environment leaks in: spanbreaker is built into a wheel from this checkout (what
PyPI would serve) and installed with the framework's extra into a new venv per framework, alongside nothing but
what that extra pulls in. No ``opentelemetry-distro`` at first (the README does not ask for one): spanbreaker
sets the SDK up itself. Then the distro is added, as users who already use it have it, with its defaults (OTLP for
traces, metrics and logs), which must not kill the launcher.

The apps never import spanbreaker. The venvs are built in parallel, once per module; each framework's runs then go
in parallel too. The whole module costs about as much as the slowest framework's install and runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ..otlp_receiver import ReceivedSpan, SpanStore, start_grpc, start_http
from .runs import Run, Runs

ROOT = Path(__file__).resolve().parents[2]
APPS = {
    "smolagents": ROOT / "examples" / "launcher_app.py",
    "agno": Path(__file__).resolve().parent / "apps" / "agno_app.py",
    "beeai": Path(__file__).resolve().parent / "apps" / "beeai_app.py",
    "langgraph": Path(__file__).resolve().parent / "apps" / "langgraph_app.py",
    "llama-index": Path(__file__).resolve().parent / "apps" / "llama_index_app.py",
    "openai-agents": Path(__file__).resolve().parent / "apps" / "openai_agents_app.py",
    "pydantic-ai": Path(__file__).resolve().parent / "apps" / "pydantic_ai_app.py",
    "strands": Path(__file__).resolve().parent / "apps" / "strands_app.py",
    "agent-framework": Path(__file__).resolve().parent / "apps" / "agent_framework_app.py",
    "openai": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "anthropic": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "litellm": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "google-genai": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "bedrock": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "groq": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "mistralai": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "ollama": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-groq": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-ollama": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-google-genai": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-bedrock": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "semantic-kernel": Path(__file__).resolve().parent / "apps" / "semantic_kernel_app.py",
    "dspy": Path(__file__).resolve().parent / "apps" / "dspy_app.py",
    "haystack": Path(__file__).resolve().parent / "apps" / "haystack_app.py",
    "openai-v2": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-openai": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-langchain": Path(__file__).resolve().parent / "apps" / "langgraph_app.py",
    "openllmetry-anthropic": Path(__file__).resolve().parent / "apps" / "client_loop_app.py",
    "openllmetry-openai-agents": Path(__file__).resolve().parent / "apps" / "openai_agents_app.py",
    "openllmetry-llama-index": Path(__file__).resolve().parent / "apps" / "llama_index_app.py",
}
DETECTOR = {"smolagents": "tool_repeat", "agno": "tool_repeat", "beeai": "input_fixation", "langgraph": "tool_repeat",
            "llama-index": "tool_repeat", "openai-agents": "tool_repeat", "pydantic-ai": "tool_repeat",
            "strands": "tool_repeat", "agent-framework": "tool_repeat", "openai": "tool_repeat",
            "anthropic": "tool_repeat", "litellm": "tool_repeat", "google-genai": "tool_repeat",
            "bedrock": "tool_repeat", "dspy": "tool_repeat", "haystack": "tool_repeat", "openai-v2": "tool_repeat",
            "openllmetry-openai": "tool_repeat", "openllmetry-langchain": "tool_repeat",
            "openllmetry-anthropic": "tool_repeat", "openllmetry-openai-agents": "tool_repeat",
            "openllmetry-llama-index": "tool_repeat", "groq": "tool_repeat", "mistralai": "tool_repeat",
            "ollama": "tool_repeat", "openllmetry-groq": "tool_repeat", "openllmetry-ollama": "tool_repeat",
            "openllmetry-google-genai": "tool_repeat", "openllmetry-bedrock": "tool_repeat",
            "semantic-kernel": "tool_repeat"}
MAX_STEPS = {"smolagents": 8, "agno": 8, "beeai": 20, "langgraph": 8, "llama-index": 20, "openai-agents": 20,
             "pydantic-ai": 20, "strands": 20, "agent-framework": 20, "openai": 20, "anthropic": 20,
             "litellm": 20, "google-genai": 20, "bedrock": 20, "dspy": 20, "haystack": 20, "openai-v2": 20,
             "openllmetry-openai": 20, "openllmetry-langchain": 8,
             "openllmetry-anthropic": 20, "openllmetry-openai-agents": 20, "openllmetry-llama-index": 20,
             "groq": 20, "mistralai": 20, "ollama": 20, "openllmetry-groq": 20, "openllmetry-ollama": 20,
             "openllmetry-google-genai": 20, "openllmetry-bedrock": 20, "semantic-kernel": 20}
EXCEPTION = {"llama-index": "LlamaIndexTripped", "openllmetry-llama-index": "LlamaIndexTripped"}
"""What the caller catches, where not ``Tripped`` itself (LlamaIndex: a ``Tripped`` that is also an ``Exception``,
so the workflow's step machinery carries it out)."""
SETTINGS = {"openai": {"LAUNCHER_APP_CLIENT": "openai"},
            "anthropic": {"LAUNCHER_APP_CLIENT": "anthropic", "LAUNCHER_APP_SPAN": "none"},
            "litellm": {"LAUNCHER_APP_CLIENT": "litellm"},
            "google-genai": {"LAUNCHER_APP_CLIENT": "google-genai", "LAUNCHER_APP_SPAN": "none"},
            "bedrock": {"LAUNCHER_APP_CLIENT": "bedrock", "LAUNCHER_APP_SPAN": "none"},
            "groq": {"LAUNCHER_APP_CLIENT": "groq", "LAUNCHER_APP_SPAN": "none"},
            "mistralai": {"LAUNCHER_APP_CLIENT": "mistralai"},
            "ollama": {"LAUNCHER_APP_CLIENT": "ollama", "LAUNCHER_APP_SPAN": "none"},
            "openllmetry-groq": {"LAUNCHER_APP_CLIENT": "groq", "LAUNCHER_APP_SPAN": "none"},
            "openllmetry-ollama": {"LAUNCHER_APP_CLIENT": "ollama", "LAUNCHER_APP_SPAN": "none"},
            "openllmetry-google-genai": {"LAUNCHER_APP_CLIENT": "google-genai", "LAUNCHER_APP_SPAN": "none"},
            "openllmetry-bedrock": {"LAUNCHER_APP_CLIENT": "bedrock", "LAUNCHER_APP_SPAN": "none"},
            "openai-v2": {"LAUNCHER_APP_CLIENT": "openai"},
            "openllmetry-openai": {"LAUNCHER_APP_CLIENT": "openai", "LAUNCHER_APP_SPAN": "none"},
            "openllmetry-anthropic": {"LAUNCHER_APP_CLIENT": "anthropic", "LAUNCHER_APP_SPAN": "none"}}
"""For the plain client loops, which client the app drives (``openai-v2``: the OpenAI client, traced by OpenTelemetry's
own instrumentor on its defaults, no message content; ``openllmetry-openai``: by OpenLLMetry's, no span around the
loop). Agent Framework runs on its defaults (sensitive data off:
its adapter shows the breaker the tool calls in process)."""
pytestmark = [pytest.mark.fresh_venv, pytest.mark.timeout(1500)]
"""Opt-in (``make test-fresh``, which CI runs): a venv per framework from the index takes minutes, then the launches."""


def _check(command: list[str], **kwargs: Any) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


def _wheel(tmp: Path) -> Path:
    """spanbreaker as PyPI would serve it, built from a copy of the checkout (the build writes next to its input)."""
    tree = tmp / "checkout"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    _check([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(tree)])
    (wheel,) = (tmp / "dist").glob("spanbreaker-*.whl")
    return wheel


def _venv(tmp: Path, framework: str, wheel: Path) -> Path:
    """``python -m venv`` and ``pip install 'spanbreaker[<framework>]'`` (the wheel standing in for the name)."""
    venv = tmp / f"venv-{framework}"
    _check([sys.executable, "-m", "venv", str(venv)])
    _check([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"])  # as `make` does
    _check([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{wheel}[{framework}]"])
    return venv


def _env(venv: Path, extra: dict[str, str]) -> dict[str, str]:
    """A shell with the venv activated and nothing of ours: no OTEL_/SPANBREAKER_ settings, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "SPANBREAKER_", "LAUNCHER_APP_", "VIRTUAL_ENV"))
           and k not in {"PYTHONPATH", "OPENAI_API_KEY", "PYTHONHOME"}}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(sys.executable).parent]
    env.update({"PATH": os.pathsep.join([str(venv / "bin"), *path]), "VIRTUAL_ENV": str(venv),
                "PYTHONUNBUFFERED": "1", "AGNO_TELEMETRY": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    env.update(extra)
    return env


def _launch(venv: Path, framework: str, cwd: Path, settings: dict[str, str]) -> Run:
    env = _env(venv, {"LAUNCHER_APP_MAX_STEPS": str(MAX_STEPS[framework]), **SETTINGS.get(framework, {}),
                      **settings})
    done = subprocess.run(["opentelemetry-instrument", "python", str(APPS[framework])], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=240, check=False)
    return Run(done.returncode, done.stdout, done.stderr)


def _scenarios(framework: str, http: str, grpc: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(runs without a distro, runs after ``pip install opentelemetry-distro``) for one framework."""
    grpc_endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{grpc}", "OTEL_EXPORTER_OTLP_INSECURE": "true"}
    plain = {
        "console": {"OTEL_TRACES_EXPORTER": "console"},
        "otlp": {"OTEL_TRACES_EXPORTER": "otlp", **grpc_endpoint, "OTEL_SERVICE_NAME": f"fresh-{framework}-otlp"},
    }
    distro = {"distro": {**grpc_endpoint, "OTEL_SERVICE_NAME": f"fresh-{framework}-distro"}}
    if framework == "smolagents":
        plain["otlp-http"] = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                              "OTEL_EXPORTER_OTLP_ENDPOINT": http, "OTEL_SERVICE_NAME": "fresh-smolagents-otlp-http"}
        plain["none"] = {"OTEL_TRACES_EXPORTER": "none"}
        plain["bad-setting"] = {"OTEL_TRACES_EXPORTER": "console", "SPANBREAKER_MODE": "explode"}
        distro["distro-console"] = {**grpc_endpoint, "OTEL_TRACES_EXPORTER": "console"}
        distro["distro-bad-setting"] = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none",
                                        "OTEL_LOGS_EXPORTER": "none", "SPANBREAKER_MODE": "explode"}
    return plain, distro


def _framework(tmp: Path, framework: str, wheel: Path, http: str, grpc: str) -> dict[str, Run]:
    venv = _venv(tmp, framework, wheel)
    plain, distro = _scenarios(framework, http, grpc)
    cwd = tmp / f"cwd-{framework}"
    cwd.mkdir()

    def launch_all(scenarios: dict[str, dict[str, str]]) -> dict[str, Run]:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {name: pool.submit(_launch, venv, framework, cwd, env) for name, env in scenarios.items()}
            return {f"{framework}-{name}": future.result() for name, future in futures.items()}

    results = launch_all(plain)
    _check([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "opentelemetry-distro"])
    results.update(launch_all(distro))
    return results


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    tmp = tmp_path_factory.mktemp("fresh")
    store = SpanStore()
    http_server, http = start_http(store)
    grpc_server, grpc = start_grpc(store)
    try:
        wheel = _wheel(tmp)
        with ThreadPoolExecutor(max_workers=len(APPS)) as pool:
            futures = [pool.submit(_framework, tmp, framework, wheel, http, grpc) for framework in APPS]
            results: dict[str, Run] = {}
            for future in futures:
                results.update(future.result())
        yield Runs(results, store)
    finally:
        http_server.shutdown()
        http_server.server_close()
        grpc_server.stop(grace=None)


def assert_tripped(run: Run, framework: str) -> None:
    summary = run.summary
    assert run.returncode == 0, run.stderr[-3000:]
    assert (summary["outcome"], summary["exception"], summary["detector"]) == (
        "stopped", EXCEPTION.get(framework, "Tripped"), DETECTOR[framework]), (summary, run.stderr[-3000:])
    assert summary["provider"] == "TracerProvider"
    assert "Failed to auto initialize" not in run.stderr and "Traceback" not in run.stderr, run.stderr[-3000:]


AGENT_KIND = {"llama-index": ("openinference.span.kind", "CHAIN"), "dspy": ("openinference.span.kind", "CHAIN"),
              "haystack": ("openinference.span.kind", "CHAIN"),
              "pydantic-ai": ("gen_ai.operation.name", "invoke_agent"),
              "strands": ("gen_ai.operation.name", "invoke_agent"),
              "agent-framework": ("gen_ai.operation.name", "invoke_agent"),
              "anthropic": ("openinference.span.kind", "LLM"), "google-genai": ("openinference.span.kind", "LLM"),
              "bedrock": ("openinference.span.kind", "LLM"), "groq": ("openinference.span.kind", "LLM"),
              "ollama": ("openinference.span.kind", "LLM"), "openllmetry-openai": ("gen_ai.operation.name", "chat"),
              "openllmetry-langchain": ("gen_ai.operation.name", "execute_tool"),
              "openllmetry-anthropic": ("gen_ai.operation.name", "chat"),
              "openllmetry-groq": ("gen_ai.operation.name", "chat"), "openllmetry-ollama": ("llm.request.type", "chat"),
              "openllmetry-google-genai": ("gen_ai.operation.name", "generate_content"),
              "openllmetry-bedrock": ("gen_ai.operation.name", "chat"),
              "semantic-kernel": ("gen_ai.operation.name", "execute_tool"),
              "openllmetry-openai-agents": ("gen_ai.operation.name", "invoke_agent"),
              "openllmetry-llama-index": ("traceloop.span.kind", "workflow")}
"""The attribute and value of the framework's agent spans, where not OpenInference's AGENT kind (the LlamaIndex
instrumentor marks a workflow agent's run and steps CHAIN, the DSPy one every module, ``ReAct.forward`` too, the
Haystack one every component, ``Agent.run`` too; pydantic-ai's, Strands' and Agent Framework's own spans follow the
GenAI conventions, as do OpenLLMetry's OpenAI Agents spans). The Anthropic, Gemini, Bedrock, Groq, Ollama and
OpenLLMetry OpenAI, Anthropic, Groq, Ollama, Google Gen AI and Bedrock apps run their loops with no span around them:
model calls alone. Semantic Kernel on its default diagnostics makes no agent span: its tool calls, by their GenAI
operation. OpenLLMetry's LangChain and LlamaIndex spans carry no agent kind: its tool calls, by their GenAI operation;
its workflow run, by its Traceloop kind."""


def assert_tripped_spans(spans: list[ReceivedSpan], framework: str = "smolagents") -> None:
    assert spans, "nothing reached the receiver"
    assert any(s.attributes.get("spanbreaker.tripped") is True for s in spans)
    key, kind = AGENT_KIND.get(framework, ("openinference.span.kind", "AGENT"))
    assert any(s.attributes.get(key) == kind for s in spans), {s.name for s in spans}


frameworks = pytest.mark.parametrize("framework", list(APPS))


# ----------------------------------------------------------------------------- no distro: spanbreaker sets the SDK up
@frameworks
def test_console_exporter_traces_trips_and_prints_the_marks(runs: Runs, framework: str) -> None:
    run = runs[f"{framework}-console"]
    assert_tripped(run, framework)
    assert '"spanbreaker.tripped": true' in run.stdout
    assert f'"spanbreaker.detector": "{DETECTOR[framework]}"' in run.stdout


@frameworks
def test_otlp_exporter_trips_and_exports_the_marks(runs: Runs, framework: str) -> None:
    assert_tripped(runs[f"{framework}-otlp"], framework)
    spans = runs.exported(f"fresh-{framework}-otlp")
    assert_tripped_spans(spans, framework)
    assert {s.transport for s in spans} == {"grpc"}


def test_otlp_over_http_trips_and_exports_the_marks(runs: Runs) -> None:
    assert_tripped(runs["smolagents-otlp-http"], "smolagents")
    spans = runs.exported("fresh-smolagents-otlp-http")
    assert_tripped_spans(spans)
    assert {s.transport for s in spans} != {"grpc"}


def test_exporter_none_trips_and_exports_nothing(runs: Runs) -> None:
    run = runs["smolagents-none"]
    assert_tripped(run, "smolagents")
    assert '"spanbreaker.tripped"' not in run.stdout


# ----------------------------------------------------------------------------- with opentelemetry-distro
@frameworks
def test_distro_defaults_start_and_trip(runs: Runs, framework: str) -> None:
    """The distro's defaults ask for OTLP traces, metrics and logs: the extra brought the exporters."""
    assert_tripped(runs[f"{framework}-distro"], framework)
    assert_tripped_spans(runs.exported(f"fresh-{framework}-distro"), framework)


def test_distro_with_console_exporter_trips(runs: Runs) -> None:
    run = runs["smolagents-distro-console"]
    assert_tripped(run, "smolagents")
    assert '"spanbreaker.tripped": true' in run.stdout


# ----------------------------------------------------------------------------- a bad spanbreaker setting
@pytest.mark.parametrize("name", ["smolagents-bad-setting", "smolagents-distro-bad-setting"])
def test_bad_setting_is_named_and_the_rest_of_opentelemetry_keeps_working(runs: Runs, name: str) -> None:
    run = runs[name]
    assert ("spanbreaker is not attached: SPANBREAKER_MODE='explode': expected 'enforce' or 'observe'. "
            "The application runs WITHOUT the breaker") in run.stderr, run.stderr[-3000:]
    assert run.returncode == 0 and "Failed to auto initialize" not in run.stderr
    summary = run.summary
    assert summary["exception"] is None and summary["tool_calls"] == MAX_STEPS["smolagents"], summary
    assert '"name": "ToolCallingAgent.run"' in run.stdout, "the smolagents instrumentor's spans are still exported"
    assert "spanbreaker.tripped" not in run.stdout


