"""Build OTLP/JSON traces with OpenInference attributes from recorded agent runs.

Why one builder: every corpus converter must produce the same trace shape the shared mini-swe-agent data set
uses (an AGENT root, ``Step N`` CHAIN spans, LLM and TOOL spans, outcome labels as resource attributes), so
the benchmark reads every corpus the same way and a difference between corpora is the agents', not the
converters'. Each converter only walks its source format and calls these methods.

Label schema (resource attributes, the same in every corpus):

* ``eval.corpus`` - the corpus name; ``eval.task_id`` - the task (SWE-bench instance, question id, ...);
* ``eval.success`` (bool) - the benchmark's own verdict on the run (resolved / correct);
* ``eval.end_reason`` - how the run ended, as recorded: ``submitted``, ``final_answer``, ``step_limit``,
  ``time_limit``, ``cost_limit``, ``context_limit``, ``no_agent_selected``, ``unknown``;
* ``eval.budget_exhausted`` (bool) - the run was stopped by a step, time, cost or context limit;
* ``dataset.timestamps`` (``recorded`` or ``synthetic``) and ``dataset.token_counts`` (``recorded`` or
  ``estimated_chars_div_4``) say what is real in the trace.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

CAP = 8192
"""Characters kept of an input or output value (as in the shared data set): enough for every comparison the
detectors make, and it keeps a corpus at a few MB."""

BUDGET_END_REASONS = frozenset({"step_limit", "time_limit", "cost_limit", "context_limit"})
END_REASONS = BUDGET_END_REASONS | {"submitted", "final_answer", "no_agent_selected", "unknown"}

_OK, _ERROR = {"code": 1}, 2


def attr(key: str, value: Any) -> dict[str, Any]:
    """One OTLP/JSON attribute."""
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def estimate_tokens(chars: int) -> int:
    """Characters / 4, the estimate the shared data set and the seed articles use."""
    return chars // 4


class TraceBuilder:
    """One run's spans. Times are nanoseconds since the epoch; span ids are derived from the run id, so a
    converter run twice writes byte-identical files."""

    def __init__(self, run_id: str, agent_name: str, task: str, start_ns: int) -> None:
        self.run_id = run_id
        self.trace_id = hashlib.sha256(run_id.encode()).hexdigest()[:32]
        self._n = 0
        self.spans: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self.root_id = self._id()
        self.root_start = start_ns
        self.end_ns = start_ns
        self.agent_name = agent_name
        self.task = task
        self.steps = 0

    def _id(self) -> str:
        self._n += 1
        return hashlib.sha256(f"{self.run_id}/{self._n}".encode()).hexdigest()[:16]

    def _span(self, name: str, kind: str, parent: str, start: int, end: int, attributes: list[dict[str, Any]],
              error: tuple[str, str] | None = None) -> str:
        span_id = self._id()
        end = max(end, start + 1)
        span: dict[str, Any] = {
            "traceId": self.trace_id, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
            "attributes": [attr("openinference.span.kind", kind), *attributes], "status": dict(_OK),
        }
        if error is not None:
            exc_type, message = error
            span["status"] = {"code": _ERROR, "message": f"{exc_type}: {message[:200]}"}
            span["events"] = [{"timeUnixNano": str(end - 1), "name": "exception",
                               "attributes": [attr("exception.type", exc_type),
                                              attr("exception.message", message[:1024])]}]
        self.spans.append(span)
        self._by_id[span_id] = span
        self.end_ns = max(self.end_ns, end)
        return span_id

    def set_output(self, span_id: str, output: str) -> None:
        """Set a span's ``output.value`` once known (an agent's last reply)."""
        span = self._by_id[span_id]
        span["attributes"] = [a for a in span["attributes"] if a["key"] != "output.value"]
        span["attributes"].append(attr("output.value", output[:CAP]))

    def extend(self, span_id: str, end: int) -> None:
        """Move a span's end later (a step whose last child came after the step was opened)."""
        span = self._by_id[span_id]
        span["endTimeUnixNano"] = str(max(int(span["endTimeUnixNano"]), end))
        self.end_ns = max(self.end_ns, end)

    def step(self, start: int, end: int, error: tuple[str, str] | None = None, parent: str | None = None) -> str:
        """A ``Step N`` CHAIN span: one model turn and the tool calls it asked for."""
        self.steps += 1
        return self._span(f"Step {self.steps}", "CHAIN", parent or self.root_id, start, end, [], error)

    def llm(self, parent: str, start: int, end: int, model: str, prompt_tokens: int | None, completion_tokens: int,
            output: str, name: str = "Model.generate", input_text: str | None = None) -> str:
        """An LLM span. ``prompt_tokens=None`` leaves the prompt count out (a corpus that cannot know it)."""
        attributes = [attr("llm.model_name", model), attr("llm.token_count.completion", completion_tokens),
                      attr("llm.token_count.total", (prompt_tokens or 0) + completion_tokens),
                      attr("output.value", output[:CAP])]
        if prompt_tokens is not None:
            attributes.append(attr("llm.token_count.prompt", prompt_tokens))
        if input_text is not None:
            attributes.append(attr("input.value", input_text[:CAP]))
        return self._span(name, "LLM", parent, start, end, attributes)

    def tool(self, parent: str, start: int, end: int, tool_name: str, arguments: dict[str, Any], output: str,
             error: tuple[str, str] | None = None) -> str:
        """A TOOL span shaped like OpenInference's smolagents instrumentor: ``{"args": [], "kwargs": ...}``."""
        attributes = [attr("tool.name", tool_name),
                      attr("input.value", json.dumps({"args": [], "kwargs": arguments}, ensure_ascii=False)[:CAP]),
                      attr("input.mime_type", "application/json"), attr("output.value", output[:CAP])]
        return self._span(tool_name, "TOOL", parent, start, end, attributes, error)

    def agent(self, parent: str, start: int, end: int, name: str, task: str, output: str) -> str:
        """A nested AGENT span (a delegation to another agent of a multi-agent system)."""
        attributes = [attr("agent.name", name), attr("input.value", task[:CAP]), attr("output.value", output[:CAP])]
        return self._span(f"{name}.run", "AGENT", parent, start, end, attributes)

    def request(self, service: str, labels: dict[str, Any], output: str = "") -> dict[str, Any]:
        """The finished trace as one OTLP/JSON ``ExportTraceServiceRequest``."""
        end_reason = labels.get("eval.end_reason", "unknown")
        if end_reason not in END_REASONS:
            raise ValueError(f"{self.run_id}: end reason {end_reason!r} is not one of {sorted(END_REASONS)}")
        root = {"traceId": self.trace_id, "spanId": self.root_id, "name": f"{self.agent_name}.run", "kind": 1,
                "startTimeUnixNano": str(self.root_start), "endTimeUnixNano": str(self.end_ns + 1000),
                "attributes": [attr("openinference.span.kind", "AGENT"), attr("agent.name", self.agent_name),
                               attr("input.value", self.task[:CAP]), attr("output.value", output[:CAP])],
                "status": dict(_OK)}
        resource = [attr("service.name", service), attr("eval.budget_exhausted", end_reason in BUDGET_END_REASONS)]
        resource += [attr(k, v) for k, v in labels.items()]
        return {"resourceSpans": [{"resource": {"attributes": resource},
                                   "scopeSpans": [{"scope": {"name": f"spanbreaker.corpora.{service}"},
                                                   "spans": [root, *self.spans]}]}]}


def write_jsonl_gz(path: str | Path, requests: Iterable[dict[str, Any]]) -> int:
    """One request per line, gzip with a fixed mtime (reproducible bytes). Returns the number written."""
    n = 0
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for request in requests:
            gz.write(json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
            n += 1
    return n


def git_show(repo: str, path: str) -> str:
    """A file of the source repository's HEAD (a clone or a bare mirror: no work tree needed)."""
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout


def git_files(repo: str, folder: str) -> list[str]:
    """Every file under ``folder`` at the source repository's HEAD."""
    return subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", folder],
                          capture_output=True, text=True, check=True).stdout.splitlines()


def git_files_at(repo: str, rev: str, folder: str) -> list[str]:
    """Every file under ``folder`` at commit ``rev`` of the source repository (a converter pinned to a commit)."""
    return subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev, folder],
                          capture_output=True, text=True, check=True).stdout.splitlines()


def git_read_all(repo: str, rev: str, paths: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    """Each file at commit ``rev``, in the order asked, through one ``git cat-file --batch`` (thousands of
    ``git show`` calls are slow)."""
    proc = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for path in paths:
            proc.stdin.write(f"{rev}:{path}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3:
                raise RuntimeError(f"{path}: not found at {rev}")
            body = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            yield path, body
    finally:
        proc.stdin.close()
        proc.wait()


def cli(convert: Callable[[str], Iterable[dict[str, Any]]], usage: str, argv: list[str]) -> int:
    """``convert.py SOURCE_REPO OUT.otlp.jsonl.gz``: the converters' shared command line."""
    if len(argv) != 2:
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    n = write_jsonl_gz(argv[1], convert(argv[0]))
    print(f"{n} traces written to {argv[1]}")
    return 0
