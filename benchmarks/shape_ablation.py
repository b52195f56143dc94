"""The default verdicts on the same runs recorded in other trace shapes: what another instrumentor would emit.

Every corpus here was converted into one shape (OpenInference attributes, a ``Step N`` CHAIN span per model turn,
token counts on every model call). Instrumentors the breaker was never tuned on differ exactly there: the OpenAI
Agents SDK and pydantic-ai emit no step span, GenAI-convention instrumentors name everything ``gen_ai.*``, some
record no token counts. The runs stay the same, so the verdicts should too. Variants, each applied to every span:

* ``no_steps``: the ``Step N`` spans removed, their children attached to the step's parent;
* ``genai``: OpenInference attributes rewritten to the OpenTelemetry GenAI conventions (``gen_ai.operation.name``,
  ``gen_ai.tool.*``, ``gen_ai.request.model``, ``gen_ai.usage.*``, ``gen_ai.agent.name``) and span names as they
  prescribe (``execute_tool <tool>``, ``chat <model>``, ``invoke_agent <agent>``); a model's and an agent's input
  and output as ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (content capture on); steps keep no kind;
* ``no_tokens``: model calls without token counts;
* ``no_times``: every span at one instant (a log without clocks: the replay walks the tree in recorded order);
* ``short_results``: tool results cut to 1,000 characters (results differing only further on read alike);
* ``structured_errors``: a tool result holding a Python traceback recorded as the tool raising it (status ERROR
  and an ``exception`` event, no result text);
* ``tools_under_llm``: each tool call nested in the model call that asked for it;
* ``no_llm``: no model call spans at all (a converter from tool logs alone).

Per corpus and variant it prints the traces tripped, the successful runs tripped, and how many traces got a
different verdict from the corpus as converted (tripped or not, and by which detector).

    python benchmarks/shape_ablation.py [--variant no_steps --variant genai ...] [PATH ...]

PATH defaults to the shared mini-swe-agent data and ``corpora/data/`` (as ``detection_corpora.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import spanbreaker
from spanbreaker.replay import replay

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = [Path(os.environ.get("SPANBREAKER_SWEBENCH_DATA", ROOT.parent / "shared" / "data")),
                 ROOT / "corpora" / "data"]
KIND = "openinference.span.kind"

Span = dict[str, Any]


def _attributes(span: Span) -> dict[str, Any]:
    """The span's attributes as {key: OTLP AnyValue}."""
    return {item["key"]: item.get("value", {}) for item in span.get("attributes") or []}


def _set_attributes(span: Span, attributes: dict[str, Any]) -> None:
    span["attributes"] = [{"key": key, "value": value} for key, value in attributes.items()]


def _text(value: dict[str, Any]) -> str | None:
    text = value.get("stringValue")
    return text if isinstance(text, str) else None


def _spans(request: dict[str, Any]) -> Iterator[Span]:
    for resource in request.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or []:
            yield from scope.get("spans") or []


def _drop(request: dict[str, Any], dropped: Callable[[Span], bool]) -> None:
    """Remove the spans ``dropped`` selects; their children hang from the nearest ancestor that stays."""
    parents = {span["spanId"]: span.get("parentSpanId") for span in _spans(request) if dropped(span)}
    for resource in request.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or []:
            kept = []
            for span in scope.get("spans") or []:
                if span["spanId"] in parents:
                    continue
                parent = span.get("parentSpanId")
                while parent in parents:
                    parent = parents[parent]
                span["parentSpanId"] = parent or ""
                kept.append(span)
            scope["spans"] = kept


def no_steps(request: dict[str, Any]) -> None:
    """Drop the step spans; their children hang from the step's parent."""
    _drop(request, lambda span: _text(_attributes(span).get(KIND, {})) == "CHAIN"
          and str(span.get("name", "")).startswith("Step "))


_GENAI_KEYS = {"tool.name": "gen_ai.tool.name", "llm.model_name": "gen_ai.request.model",
               "llm.token_count.prompt": "gen_ai.usage.input_tokens",
               "llm.token_count.completion": "gen_ai.usage.output_tokens", "agent.name": "gen_ai.agent.name"}
_OPERATIONS = {"TOOL": "execute_tool", "LLM": "chat", "AGENT": "invoke_agent"}


def _arguments(value: dict[str, Any]) -> dict[str, Any]:
    """The call's own arguments, without the smolagents envelope the converters keep ({"args", "kwargs"})."""
    text = _text(value)
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        return value
    if isinstance(parsed, dict) and set(parsed) <= {"args", "kwargs", "sanitize_inputs_outputs"} and not parsed.get(
            "args") and isinstance(parsed.get("kwargs"), dict):
        return {"stringValue": json.dumps(parsed["kwargs"])}
    return value


def _output_messages(value: dict[str, Any]) -> dict[str, Any]:
    """A model's output text as the conventions' output messages (a JSON array of parts)."""
    text = _text(value)
    if text is None:
        return value
    return {"stringValue": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}],
                                        "finish_reason": "stop"}])}


def _input_messages(value: dict[str, Any]) -> dict[str, Any]:
    """An agent's task as the conventions' input messages (a JSON array of one user message)."""
    text = _text(value)
    if text is None:
        return value
    return {"stringValue": json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])}


def genai(request: dict[str, Any]) -> None:
    """OpenInference attributes and names rewritten to the GenAI conventions."""
    for span in _spans(request):
        attributes = _attributes(span)
        kind = _text(attributes.pop(KIND, {}))
        out: dict[str, Any] = {}
        for key, value in attributes.items():
            if key in _GENAI_KEYS:
                out[_GENAI_KEYS[key]] = value
            elif key == "input.value" and kind == "TOOL":
                out["gen_ai.tool.call.arguments"] = _arguments(value)
            elif key == "output.value" and kind == "TOOL":
                out["gen_ai.tool.call.result"] = value
            elif key == "input.value" and kind == "LLM":
                out["gen_ai.input.messages"] = value
            elif key == "output.value" and kind == "LLM":
                out["gen_ai.output.messages"] = _output_messages(value)
            elif key == "input.value" and kind == "AGENT":  # an invoke_agent span's task, content capture on
                out["gen_ai.input.messages"] = _input_messages(value)
            elif key == "output.value" and kind == "AGENT":
                out["gen_ai.output.messages"] = _output_messages(value)
            elif not key.startswith(("llm.", "input.", "output.", "tool.")):
                out[key] = value
        operation = _OPERATIONS.get(kind or "")
        if operation is not None:
            out["gen_ai.operation.name"] = {"stringValue": operation}
            subject = {"TOOL": "gen_ai.tool.name", "LLM": "gen_ai.request.model", "AGENT": "gen_ai.agent.name"}[kind]
            name = _text(out.get(subject, {})) or str(span.get("name", ""))
            span["name"] = f"{operation} {name}"
        _set_attributes(span, out)


def no_tokens(request: dict[str, Any]) -> None:
    for span in _spans(request):
        attributes = _attributes(span)
        if any(key.startswith("llm.token_count.") for key in attributes):
            _set_attributes(span, {k: v for k, v in attributes.items() if not k.startswith("llm.token_count.")})


def no_times(request: dict[str, Any]) -> None:
    """Every span at one instant: a converter from a log without clocks (the replay then walks the tree in the
    recorded order)."""
    for span in _spans(request):
        span["startTimeUnixNano"] = span["endTimeUnixNano"] = "1700000000000000000"


RESULT_CHARS = 1000


def short_results(request: dict[str, Any]) -> None:
    """Tool results cut to their first :data:`RESULT_CHARS` characters (a converter or instrumentor that keeps
    less): results that differ only further on now read alike."""
    for span in _spans(request):
        attributes = _attributes(span)
        if _text(attributes.get(KIND, {})) != "TOOL":
            continue
        text = _text(attributes.get("output.value", {}))
        if text is not None and len(text) > RESULT_CHARS:
            attributes["output.value"] = {"stringValue": text[:RESULT_CHARS]}
            _set_attributes(span, attributes)


_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception))(?::\s*(.*))?$", re.MULTILINE)


def structured_errors(request: dict[str, Any]) -> None:
    """A tool result holding a Python traceback recorded as the tool raising it: no result, status ERROR and an
    ``exception`` event (``exception.type``, ``exception.message``, ``exception.stacktrace``), as
    ``Span.record_exception`` writes it."""
    for span in _spans(request):
        attributes = _attributes(span)
        text = _text(attributes.get("output.value", {}))
        if _text(attributes.get(KIND, {})) != "TOOL" or not text or "Traceback (most recent call last)" not in text:
            continue
        raised = _RAISED.findall(text)
        if not raised:
            continue
        kind, message = raised[-1]
        del attributes["output.value"]
        _set_attributes(span, attributes)
        span["status"] = {"code": 2, "message": f"{kind}: {message}" if message else kind}
        span["events"] = [*(span.get("events") or []), {
            "name": "exception", "timeUnixNano": span.get("endTimeUnixNano", "0"),
            "attributes": [{"key": "exception.type", "value": {"stringValue": kind}},
                           {"key": "exception.message", "value": {"stringValue": message}},
                           {"key": "exception.stacktrace", "value": {"stringValue": text}}]}]


def tools_under_llm(request: dict[str, Any]) -> None:
    """Each tool call nested in the model call that asked for it (the last model call before it under the same
    parent), that call's end moved to the tool's end: instrumentors that trace the tool loop inside the model
    call."""
    for resource in request.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or []:
            spans = scope.get("spans") or []
            last_llm: dict[str, Span] = {}
            for span in sorted(spans, key=lambda s: int(s.get("startTimeUnixNano") or 0)):
                kind = _text(_attributes(span).get(KIND, {}))
                parent = span.get("parentSpanId") or ""
                if kind == "LLM":
                    last_llm[parent] = span
                elif kind == "TOOL" and parent in last_llm:
                    model = last_llm[parent]
                    span["parentSpanId"] = model["spanId"]
                    model["endTimeUnixNano"] = str(max(int(model["endTimeUnixNano"]), int(span["endTimeUnixNano"])))


def no_llm(request: dict[str, Any]) -> None:
    """No model call spans at all (a converter from tool logs alone): their children hang from their parent."""
    _drop(request, lambda span: _text(_attributes(span).get(KIND, {})) == "LLM")


VARIANTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "no_steps": no_steps, "genai": genai, "no_tokens": no_tokens, "no_times": no_times,
    "short_results": short_results, "structured_errors": structured_errors, "tools_under_llm": tools_under_llm,
    "no_llm": no_llm}


def _files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz"))))
        elif path.exists():
            found.append(path)
    return found


def rewrite(source: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """``source`` (OTLP/JSON lines, plain or gzip) with ``change`` applied to each request, as gzip at ``target``."""
    opener = gzip.open if source.name.endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as lines, gzip.open(target, "wt", encoding="utf-8") as out:
        for line in lines:
            if not line.strip():
                continue
            request = json.loads(line)
            change(request)
            out.write(json.dumps(request, separators=(",", ":")) + "\n")


def _verdicts(path: Path) -> dict[tuple[str, str], tuple[str | None, bool | None, str]]:
    """(source file name, line) -> (detector or None, success label, corpus)."""
    found = {}
    for result in replay(path):
        source = result.source.rsplit(":", 1)
        corpus = str(result.resource.get("eval.corpus") or result.resource.get("service.name") or Path(
            source[0]).name.split(".")[0])
        key = (Path(source[0]).name, source[1] if len(source) > 1 else "")
        found[key] = (result.detector if result.tripped else None, result.success, corpus)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    args = parser.parse_args()
    files = _files(args.paths or DEFAULT_PATHS)
    if not files:
        sys.exit("no trace files found (see corpora/README.md)")
    variants = args.variant or list(VARIANTS)
    print(f"spanbreaker {spanbreaker.__version__}, default configuration, {len(files)} files")
    with tempfile.TemporaryDirectory() as work:
        baseline: dict[tuple[str, str], tuple[str | None, bool | None, str]] = {}
        for file in files:
            baseline.update(_verdicts(file))
        results = {"as converted": baseline}
        for variant in variants:
            merged: dict[tuple[str, str], tuple[str | None, bool | None, str]] = {}
            for file in files:
                target = Path(work) / file.name.replace(".jsonl", f".{variant}.jsonl").removesuffix(".gz")
                target = target.with_name(target.name + ".gz")
                rewrite(file, target, VARIANTS[variant])
                merged.update({(file.name, line): verdict for (_, line), verdict in _verdicts(target).items()})
            results[variant] = merged
    corpora = sorted({corpus for _, _, corpus in baseline.values()})
    print(f"{'corpus':<44}{'shape':<19}{'runs':>6}{'tripped':>9}{'successes tripped':>19}{'verdicts changed':>18}")
    for corpus in corpora:
        keys = [key for key, (_, _, name) in baseline.items() if name == corpus]
        successes = sum(1 for key in keys if baseline[key][1])
        for shape, verdicts in results.items():
            tripped = sum(1 for key in keys if verdicts.get(key, (None,))[0] is not None)
            false = sum(1 for key in keys if verdicts.get(key, (None,))[0] is not None and baseline[key][1])
            changed = Counter(f"{baseline[key][0]}->{verdicts.get(key, ('missing',))[0]}" for key in keys
                              if verdicts.get(key, ("missing",))[0] != baseline[key][0])
            print(f"{corpus:<44}{shape:<19}{len(keys):>6}{tripped:>9}{f'{false} of {successes}':>19}"
                  f"{sum(changed.values()):>18}" + (f"  {dict(changed)}" if changed else ""))


if __name__ == "__main__":
    main()
