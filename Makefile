# Two set-up commands for a fresh machine (each creates .venv in the repo root and installs what it needs):
#   make demo   - an offline smolagents CodeAgent falls into a code-repair loop and is tripped
#   make test   - lint, type-check and the default test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: demo test lint unit test-fresh test-crewai test-adk test-autogen test-openai-v2 test-openllmetry test-semantic-kernel test-logfire test-traceloop test-langfuse test-openlit test-python test-browser test-phoenix bench verdicts corpora redis-server chromium clean

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "spanbreaker needs Python >= 3.11; $(PYTHON) is " + sys.version.split()[0] + ": run make with PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q -e '.[smolagents]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q -e '.[dev]'
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(PY) examples/smolagents_code_repair_loop.py

# A real redis-server for the shared-state tests (Debian's package; installed when missing).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server (Debian package)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq redis-server >/dev/null; }

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

unit: $(VENV)/.dev-installed redis-server
	$(PY) -m pytest -q -m "not phoenix and not browser and not fresh_venv"

test: lint unit

# The README's no-code path in fresh virtualenvs: pip install 'spanbreaker[<framework>]' from the index, then
# opentelemetry-instrument, with and without opentelemetry-distro (minutes: one venv per framework from the index). CI runs it.
test-fresh: $(VENV)/.dev-installed
	$(PY) -m pytest -q -m fresh_venv

# CrewAI in its own venv (.venv/crewai): it pins pydantic, rich and more below the dev tier's and pulls in chromadb,
# lancedb and onnxruntime. Its tests (tests/crewai) are ignored by the default suite; CI runs this tier.
CREWAI_VENV := $(VENV)/crewai
$(CREWAI_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/pip install -q --upgrade pip
	$(CREWAI_VENV)/bin/pip install -q --no-compile -e '.[crewai]' 'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-crewai: $(CREWAI_VENV)/.installed
	$(CREWAI_VENV)/bin/python -m pytest -q -o addopts=-ra tests/crewai

# Google ADK in its own venv (.venv/adk): it pins opentelemetry-api/sdk <=1.44, below the dev tier's 1.45. Its tests
# (tests/adk: stock ADK spans, with OpenInference's ADK instrumentor too, and examples/adk_search_loop.py) are ignored
# by the default suite; CI runs this tier.
ADK_VENV := $(VENV)/adk
$(ADK_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(ADK_VENV)
	$(ADK_VENV)/bin/pip install -q --upgrade pip
	$(ADK_VENV)/bin/pip install -q --no-compile -e '.[google-adk]' 'openinference-instrumentation-google-adk>=1.0,<2' \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-adk: $(ADK_VENV)/.installed
	$(ADK_VENV)/bin/python -m pytest -q -o addopts=-ra tests/adk

# Microsoft AutoGen in its own venv (.venv/autogen): autogen-core pins protobuf ~=5.29, below the dev tier's 7. Its
# tests (tests/autogen, AutoGen's own spans with the adapter; MCP tools from a real stdio server, mcp 1.x: autogen-ext
# 0.7 does not import with mcp 2) are ignored by the default suite; CI runs this tier.
AUTOGEN_VENV := $(VENV)/autogen
$(AUTOGEN_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(AUTOGEN_VENV)
	$(AUTOGEN_VENV)/bin/pip install -q --upgrade pip
	$(AUTOGEN_VENV)/bin/pip install -q --no-compile -e '.[autogen]' 'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24' \
	  'openinference-instrumentation-autogen-agentchat>=0.1.22,<0.2' 'autogen-ext[mcp]>=0.7,<0.8' 'mcp>=1.11,<2'
	touch $@

test-autogen: $(AUTOGEN_VENV)/.installed
	$(AUTOGEN_VENV)/bin/python -m pytest -q -o addopts=-ra tests/autogen

# OpenTelemetry's own OpenAI instrumentation in its own venv (.venv/openai-v2): opentelemetry-instrumentation-openai-v2
# registers the launcher's `openai` entry point, as OpenInference's OpenAI instrumentor in the dev tier does. Its tests
# (tests/openai_v2, a plain tool loop under openai-v2 with and without message content, in process and under
# opentelemetry-instrument) are ignored by the default suite; CI runs this tier.
OPENAI_V2_VENV := $(VENV)/openai-v2
$(OPENAI_V2_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(OPENAI_V2_VENV)
	$(OPENAI_V2_VENV)/bin/pip install -q --upgrade pip
	$(OPENAI_V2_VENV)/bin/pip install -q --no-compile -e '.[openai-v2]' 'pytest>=8' 'pytest-timeout>=2.3' \
	  'pytest-asyncio>=0.24'
	touch $@

test-openai-v2: $(OPENAI_V2_VENV)/.installed
	$(OPENAI_V2_VENV)/bin/python -m pytest -q -o addopts=-ra tests/openai_v2

# OpenLLMetry's OpenAI, Anthropic, LangChain, OpenAI Agents, LlamaIndex, Groq, Ollama, Google Gen AI and Bedrock
# instrumentations (Traceloop's opentelemetry-instrumentation-openai, -anthropic, -langchain, -openai-agents, -llamaindex,
# -groq, -ollama, -google-generativeai and -bedrock) in their own venv
# (.venv/openllmetry): they register the launcher's entry points for those frameworks, as OpenInference's do in the dev
# tier. Its tests (tests/openllmetry: plain tool loops with content tracing on and off, in process and under
# opentelemetry-instrument; LangGraph, OpenAI Agents SDK and LlamaIndex agents) are ignored by the default suite; CI
# runs this tier. LlamaIndex's OpenAI integration holds openai below 3 here.
OPENLLMETRY_VENV := $(VENV)/openllmetry
$(OPENLLMETRY_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(OPENLLMETRY_VENV)
	$(OPENLLMETRY_VENV)/bin/pip install -q --upgrade pip
	$(OPENLLMETRY_VENV)/bin/pip install -q --no-compile \
	  -e '.[openllmetry-openai,openllmetry-anthropic,openllmetry-langchain,openllmetry-openai-agents,openllmetry-llama-index,openllmetry-groq,openllmetry-ollama,openllmetry-google-genai,openllmetry-bedrock]' \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-openllmetry: $(OPENLLMETRY_VENV)/.installed
	$(OPENLLMETRY_VENV)/bin/python -m pytest -q -o addopts=-ra tests/openllmetry

# Microsoft Semantic Kernel in its own venv (.venv/semantic-kernel): it pins pydantic below 2.14 and mcp below 2, below
# the dev tier's. Its tests (tests/sk: a ChatCompletionAgent and a kernel's auto function calling, with its
# diagnostics off, on and sensitive) are ignored by the default suite; CI runs this tier.
SEMANTIC_KERNEL_VENV := $(VENV)/semantic-kernel
$(SEMANTIC_KERNEL_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(SEMANTIC_KERNEL_VENV)
	$(SEMANTIC_KERNEL_VENV)/bin/pip install -q --upgrade pip
	$(SEMANTIC_KERNEL_VENV)/bin/pip install -q --no-compile -e '.[semantic-kernel]' \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-semantic-kernel: $(SEMANTIC_KERNEL_VENV)/.installed
	$(SEMANTIC_KERNEL_VENV)/bin/python -m pytest -q -o addopts=-ra tests/sk

# Pydantic Logfire (logfire.instrument_openai / instrument_anthropic) in its own venv (.venv/logfire): installed beside
# pydantic-ai, the real logfire takes over pydantic-ai's logfire-api calls, so it stays out of the dev tier. Its tests
# (tests/pydantic_logfire: plain OpenAI and Anthropic loops, one process per scenario) are ignored by the default suite; CI runs
# this tier. No extra: an application that uses Logfire has it; spanbreaker needs nothing more.
LOGFIRE_VENV := $(VENV)/logfire
$(LOGFIRE_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(LOGFIRE_VENV)
	$(LOGFIRE_VENV)/bin/pip install -q --upgrade pip
	$(LOGFIRE_VENV)/bin/pip install -q --no-compile -e . 'logfire>=5,<6' 'openai>=1.26' 'anthropic>=0.40' \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-logfire: $(LOGFIRE_VENV)/.installed
	$(LOGFIRE_VENV)/bin/python -m pytest -q -o addopts=-ra tests/pydantic_logfire

# The Traceloop SDK (traceloop-sdk: Traceloop.init(), its @agent / @tool decorators) in its own venv (.venv/traceloop):
# it pulls in every OpenLLMetry instrumentation and a few of OpenTelemetry's own (requests, threading, logging...),
# which pin opentelemetry-instrumentation exactly; the package index here lacks the newest -threading, so those are
# pinned to one release line for pip to settle. Its tests (tests/traceloop_decorators: an agent written with the
# decorators around the OpenAI client, one process per scenario) are ignored by the default suite; CI runs this tier.
# No extra: an application on the Traceloop SDK has it; spanbreaker needs nothing more.
TRACELOOP_VENV := $(VENV)/traceloop
TRACELOOP_LINE := 0.66b1
$(TRACELOOP_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(TRACELOOP_VENV)
	$(TRACELOOP_VENV)/bin/pip install -q --upgrade pip
	$(TRACELOOP_VENV)/bin/pip install -q --no-compile -e . 'traceloop-sdk==0.62.4' 'openai>=1.26' httpx \
	  opentelemetry-instrumentation==$(TRACELOOP_LINE) \
	  $(foreach name,redis requests sqlalchemy threading urllib3 logging,opentelemetry-instrumentation-$(name)==$(TRACELOOP_LINE)) \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-traceloop: $(TRACELOOP_VENV)/.installed
	$(TRACELOOP_VENV)/bin/python -m pytest -q -o addopts=-ra tests/traceloop_decorators

# Langfuse's Python SDK (langfuse: @observe, its OpenAI drop-in) in its own venv (.venv/langfuse). Its tests
# (tests/langfuse_observe: an agent written with @observe around the OpenAI client, one process per scenario; nothing
# sent to a Langfuse server) are ignored by the default suite; CI runs this tier. No extra: an application traced by
# Langfuse has it; spanbreaker needs nothing more.
LANGFUSE_VENV := $(VENV)/langfuse
$(LANGFUSE_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(LANGFUSE_VENV)
	$(LANGFUSE_VENV)/bin/pip install -q --upgrade pip
	$(LANGFUSE_VENV)/bin/pip install -q --no-compile -e . 'langfuse>=3,<6' 'openai>=1.26' \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-langfuse: $(LANGFUSE_VENV)/.installed
	$(LANGFUSE_VENV)/bin/python -m pytest -q -o addopts=-ra tests/langfuse_observe

# OpenLIT (openlit: openlit.init() and its instrumentations) in its own venv (.venv/openlit): it requires a dozen of
# OpenTelemetry's web-framework instrumentations, which pin opentelemetry-instrumentation exactly, so they are pinned
# to one release line (unpinned, pip backtracks for many minutes). Its tests (tests/openlit_init: a loop around the
# OpenAI, Anthropic, Groq, Ollama or Google Gen AI client; smolagents, LangGraph and OpenAI Agents SDK agents traced
# by OpenLIT alone, and with OpenInference's instrumentors too; one process per scenario, nothing sent anywhere) are
# ignored by the default suite; CI runs this tier. No extra: an application traced by OpenLIT has it; spanbreaker needs
# nothing more.
OPENLIT_VENV := $(VENV)/openlit
OPENLIT_LINE := 0.66b1
OPENLIT_INSTRUMENTATIONS := aiohttp-client asgi django falcon fastapi flask httpx pyramid requests starlette tornado \
  urllib urllib3
$(OPENLIT_VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(OPENLIT_VENV)
	$(OPENLIT_VENV)/bin/pip install -q --upgrade pip
	$(OPENLIT_VENV)/bin/pip install -q --no-compile -e . 'openlit==1.45.0' 'openai>=1.92' 'anthropic>=0.42' httpx \
	  'groq>=0.9' 'ollama>=0.4' 'google-genai>=1.0' \
	  'smolagents>=1.20,<2' 'langgraph>=1.0,<2' 'langchain-openai>=0.3' 'openai-agents>=0.20,<0.25' \
	  'openinference-instrumentation-smolagents>=0.1.40,<0.2' 'openinference-instrumentation-langchain>=0.1.80,<0.2' \
	  'openinference-instrumentation-openai-agents>=2.6,<3' \
	  opentelemetry-instrumentation==$(OPENLIT_LINE) opentelemetry-semantic-conventions==$(OPENLIT_LINE) \
	  $(foreach name,$(OPENLIT_INSTRUMENTATIONS),opentelemetry-instrumentation-$(name)==$(OPENLIT_LINE)) \
	  'pytest>=8' 'pytest-timeout>=2.3' 'pytest-asyncio>=0.24'
	touch $@

test-openlit: $(OPENLIT_VENV)/.installed
	$(OPENLIT_VENV)/bin/python -m pytest -q -o addopts=-ra tests/openlit_init

# Another Python (opt-in; 3.11 is the dev tier's): the core, smolagents, Agno, Redis and replay tests in their own venv
# (.venv/py-<version>), e.g. `make test-python OTHER_PYTHON=python3.13`.
OTHER_PYTHON ?= python3.13
OTHER_VENV = $(VENV)/py-$(shell $(OTHER_PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
test-python: redis-server
	test -x $(OTHER_VENV)/bin/python || { $(OTHER_PYTHON) -m venv $(OTHER_VENV) && \
	  $(OTHER_VENV)/bin/pip install -q --upgrade pip && \
	  $(OTHER_VENV)/bin/pip install -q -e '.[smolagents,agno,redis]' 'pytest>=8' 'pytest-timeout>=2.3' \
	    'pytest-asyncio>=0.24' 'hypothesis>=6.100' 'sqlalchemy>=2' 'greenlet>=3' 'pyyaml>=6'; }
	$(OTHER_VENV)/bin/python -m pytest -q tests/core tests/smolagents tests/agno tests/redis tests/replay

test-browser: $(VENV)/.dev-installed chromium
	$(PY) -m pytest -q -m "browser and not phoenix"

# A real Arize Phoenix server, in its own venv under .venv (it pulls in ~160 packages); PHOENIX_BIN overrides.
test-phoenix: $(VENV)/.dev-installed chromium
	test -x $(VENV)/phoenix/bin/phoenix || { $(PYTHON) -m venv $(VENV)/phoenix && \
	  $(VENV)/phoenix/bin/pip install -q 'arize-phoenix==20.26.1'; }
	$(PY) -m pytest -q -m phoenix

# The evaluation corpora (corpora/README.md): clone each public source (or use CORPORA_SRC=dir with existing
# clones named as on GitHub) and convert it into corpora/data/. Then: python benchmarks/detection_corpora.py
CORPORA_SRC ?= .cache/corpora-src
corpora:
	mkdir -p $(CORPORA_SRC) corpora/data
	test -d $(CORPORA_SRC)/vorflux-swe-benchmarks || \
	  git clone -q https://github.com/piyushhhxyz/vorflux-swe-benchmarks $(CORPORA_SRC)/vorflux-swe-benchmarks
	test -d $(CORPORA_SRC)/Agents_Failure_Attribution || \
	  git clone -q https://github.com/ag2ai/Agents_Failure_Attribution $(CORPORA_SRC)/Agents_Failure_Attribution
	$(PYTHON) corpora/convert_vorflux.py $(CORPORA_SRC)/vorflux-swe-benchmarks \
	  corpora/data/vorflux-swebench-verified.otlp.jsonl.gz
	$(PYTHON) corpora/convert_who_and_when.py $(CORPORA_SRC)/Agents_Failure_Attribution \
	  corpora/data/who-and-when.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/CodeR || git clone -q https://github.com/NL2Code/CodeR $(CORPORA_SRC)/CodeR
	$(PYTHON) corpora/convert_coder.py $(CORPORA_SRC)/CodeR corpora/data/coder-swebench-lite.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/aider-swe-bench || \
	  git clone -q https://github.com/paul-gauthier/aider-swe-bench $(CORPORA_SRC)/aider-swe-bench
	$(PYTHON) corpora/convert_aider.py $(CORPORA_SRC)/aider-swe-bench corpora/data/aider-swebench-lite.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/reflexion || git clone -q https://github.com/noahshinn/reflexion $(CORPORA_SRC)/reflexion
	$(PYTHON) corpora/convert_reflexion_hotpotqa.py $(CORPORA_SRC)/reflexion \
	  corpora/data/reflexion-hotpotqa.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/agent-evals || \
	  git clone -q https://github.com/benediktstroebl/agent-evals $(CORPORA_SRC)/agent-evals
	$(PYTHON) corpora/convert_ldb_humaneval.py $(CORPORA_SRC)/agent-evals corpora/data/ldb-humaneval.otlp.jsonl.gz
	$(PYTHON) corpora/convert_step_webarena.py $(CORPORA_SRC)/agent-evals corpora/data/step-webarena.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/agentdojo || git clone -q https://github.com/ethz-spylab/agentdojo $(CORPORA_SRC)/agentdojo
	$(PYTHON) corpora/convert_agentdojo.py $(CORPORA_SRC)/agentdojo corpora/data/agentdojo-benign.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/cyber-task-horizons || \
	  git clone -q https://github.com/sean-peters-au/cyber-task-horizons $(CORPORA_SRC)/cyber-task-horizons
	$(PYTHON) corpora/convert_intercode_ctf.py $(CORPORA_SRC)/cyber-task-horizons corpora/data/intercode-ctf.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/bfcl-vllm-results || \
	  git clone -q https://github.com/bbrowning/bfcl-vllm-results $(CORPORA_SRC)/bfcl-vllm-results
	$(PYTHON) corpora/convert_bfcl_multi_turn.py $(CORPORA_SRC)/bfcl-vllm-results corpora/data/bfcl-multi-turn.otlp.jsonl.gz
	test -d $(CORPORA_SRC)/WorkBench || git clone -q https://github.com/olly-styles/WorkBench $(CORPORA_SRC)/WorkBench
	test -x $(VENV)/corpora-workbench/bin/python || { $(PYTHON) -m venv $(VENV)/corpora-workbench && \
	  $(VENV)/corpora-workbench/bin/pip install -q pandas==2.1.4 numpy==1.26.3; }
	$(VENV)/corpora-workbench/bin/python corpora/convert_workbench.py $(CORPORA_SRC)/WorkBench \
	  corpora/data/workbench.otlp.jsonl.gz

# Replay verdicts of every corpus (the committed ones, `make corpora` and the shared mini-swe-agent file) against
# those pinned in tests/replay/verdicts/; a missing corpus fails. The default suite checks the committed ones.
verdicts: $(VENV)/.dev-installed
	$(PY) -m tests.replay.verdicts --all

bench: $(VENV)/.dev-installed
	$(PY) benchmarks/processor_cost.py
	$(PY) benchmarks/detection_swebench.py
	$(PY) benchmarks/memory.py
	$(PY) benchmarks/replay_throughput.py
	$(PY) benchmarks/replay_sweep.py
	$(PY) benchmarks/smolagents_scenarios.py
	$(PY) benchmarks/agno_scenarios.py
	$(PY) benchmarks/beeai_scenarios.py
	$(PY) benchmarks/genai_scenarios.py
	$(PY) benchmarks/redis_state_cost.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
