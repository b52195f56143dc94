"""A scripted model, standing in for the LLM in the examples and tests of plain tool loops.

It answers the real ``openai``, ``anthropic``, ``groq``, ``mistralai`` and ``google-genai`` clients' HTTP requests in
process (an ``httpx`` or ``httpx2`` transport: no socket, no network): OpenAI's Chat Completions (Groq's and Mistral's
are the same) and Responses endpoints, Anthropic's Messages, Gemini's ``generateContent``. boto3 sends through its own
HTTP stack, which no such transport serves: for Bedrock Runtime's ``converse`` (and, in the tests, Ollama's
``/api/chat``) the model listens on loopback (:meth:`ScriptedModel.serve`, no network beyond it).
The script is a function of the request's messages (or input items, or contents) returning the next reply: tool
calls ``[(name, arguments), ...]`` or a final text. Each reply reports token usage, as a real server does. A Chat
Completions request with ``stream: true`` is answered with the reply's server-sent events (over the transport).
"""

from __future__ import annotations

import contextlib
import http.server
import importlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

Reply = list[tuple[str, dict[str, Any]]] | str
Script = Callable[[list[dict[str, Any]]], Reply]
"""(the messages or input items sent) -> the reply."""
Client = TypeVar("Client")


class ScriptedModel:
    """Serves a client made by :meth:`client`: ``model.client(openai.OpenAI, api_key=..., base_url=...)``."""

    def __init__(self, script: Script, model: str = "gpt-4o-mini",
                 usage: Callable[[int], dict[str, Any]] | None = None) -> None:
        self.script = script
        self.model = model
        self.usage = usage
        """Per call number, what the reply's usage says beyond the default (a prompt cache's counts, say)."""
        self.calls = 0
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    def client(self, factory: Callable[..., Client], *, asynchronous: bool = False,
               libraries: tuple[str, ...] = ("httpx", "httpx2"), **kwargs: Any) -> Client:
        """``factory(http_client=..., **kwargs)`` served by this model, over whichever HTTP library the SDK takes:
        ``httpx`` (openai 2.x), or ``httpx2`` (anthropic 2.x and openai 3.x refuse an ``httpx`` client; google-genai
        takes only ``httpx2`` and says so only when it sends: pass ``libraries=("httpx2",)``)."""
        refused: TypeError | None = None
        for library in libraries:
            try:
                http = importlib.import_module(library)
            except ImportError:
                continue
            transport = http.MockTransport(lambda request, http=http: self._http_reply(http, request))
            made = http.AsyncClient(transport=transport) if asynchronous else http.Client(transport=transport)
            try:
                return factory(http_client=made, **kwargs)
            except TypeError as exc:  # "this SDK uses httpx2"
                refused = exc
        raise refused or ImportError("neither httpx nor httpx2 is installed")

    def _http_reply(self, http: Any, request: Any) -> Any:
        """One HTTP response: the reply's JSON, or its server-sent events when the request asked for a stream."""
        reply = self.respond(request.url.path, request.read())
        if not self.requests[-1].get("stream"):
            return http.Response(200, json=reply)
        return http.Response(200, content=self._events(reply, self.requests[-1]),
                             headers={"content-type": "text/event-stream"})

    def _events(self, completion: dict[str, Any], body: dict[str, Any]) -> bytes:
        """A Chat Completions reply as the stream a server sends for it (``stream: true``): a chunk with the role,
        one per piece of content or per tool call (its name and id, then its arguments in two halves), one with the
        finish reason, then, when asked (``stream_options.include_usage``), one with the usage alone."""
        choice = completion["choices"][0]
        message = choice["message"]
        head = {key: completion[key] for key in ("id", "created", "model")}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**head, "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        text = message.get("content") or ""
        chunks += [chunk({"content": text[i:i + 8]}) for i in range(0, len(text), 8)]
        for index, call in enumerate(message.get("tool_calls") or []):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            chunks.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                                 "function": {"name": call["function"]["name"], "arguments": ""}}]}))
            for part in (arguments[:half], arguments[half:]):
                chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
        chunks.append(chunk({}, choice["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]})
        return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"

    def respond(self, path: str, content: bytes) -> dict[str, Any]:
        """The reply body to one request, by endpoint."""
        body = json.loads(content or b"{}")
        self.calls += 1
        self.requests.append(body)
        if path.endswith("/responses"):
            return self._response(body)
        if path.endswith("/messages") or path.endswith("/invoke"):  # Anthropic, or Claude on Bedrock's invoke_model
            return self._message(body)
        if path.endswith(":generateContent"):
            return self._gemini(body)
        if path.endswith("/converse"):
            return self._converse(body)
        if path == "/api/chat":
            return self._ollama(body)
        return self._completion(body)

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.script(list(body.get("messages") or []))
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(reply, str):
            message["content"], finish = reply, "stop"
        else:
            message["tool_calls"] = [{"id": f"call_{next(self._ids)}", "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(arguments)}}
                                     for name, arguments in reply]
            finish = "tool_calls"
        return {"id": f"chatcmpl-{self.calls}", "object": "chat.completion", "created": 0, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": self._usage({"prompt_tokens": 120 * self.calls, "completion_tokens": 20,
                                      "total_tokens": 120 * self.calls + 20})}

    def _response(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input")
        reply = self.script(list(items) if isinstance(items, list) else [{"role": "user", "content": items}])
        if isinstance(reply, str):
            output: list[dict[str, Any]] = [{
                "type": "message", "id": f"msg_{self.calls}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": reply, "annotations": []}]}]
        else:
            output = []
            for name, arguments in reply:
                number = next(self._ids)
                output.append({"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}",
                               "name": name, "arguments": json.dumps(arguments), "status": "completed"})
        return {"id": f"resp_{self.calls}", "object": "response", "created_at": 0, "model": self.model,
                "status": "completed", "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "usage": {"input_tokens": 120 * self.calls, "output_tokens": 20,
                                       "total_tokens": 120 * self.calls + 20,
                                       "input_tokens_details": {"cached_tokens": 0},
                                       "output_tokens_details": {"reasoning_tokens": 0}}}


    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.script(list(body.get("messages") or []))
        if isinstance(reply, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": reply}]
        else:
            content = [{"type": "tool_use", "id": f"toolu_{next(self._ids)}", "name": name, "input": arguments}
                       for name, arguments in reply]
        return {"id": f"msg_{self.calls}", "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": "end_turn" if isinstance(reply, str) else "tool_use",
                "stop_sequence": None, "usage": self._usage({"input_tokens": 120 * self.calls, "output_tokens": 20})}

    def _usage(self, default: dict[str, Any]) -> dict[str, Any]:
        return default if self.usage is None else {**default, **self.usage(self.calls)}

    def _gemini(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.script(list(body.get("contents") or []))
        if isinstance(reply, str):
            parts: list[dict[str, Any]] = [{"text": reply}]
        else:
            parts = [{"functionCall": {"name": name, "args": arguments}} for name, arguments in reply]
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 120 * self.calls, "candidatesTokenCount": 20,
                                  "totalTokenCount": 120 * self.calls + 20}, "modelVersion": self.model}


    def _converse(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.script(list(body.get("messages") or []))
        if isinstance(reply, str):
            content: list[dict[str, Any]] = [{"text": reply}]
        else:
            content = [{"toolUse": {"toolUseId": f"tooluse_{next(self._ids)}", "name": name, "input": arguments}}
                       for name, arguments in reply]
        return {"output": {"message": {"role": "assistant", "content": content}},
                "stopReason": "end_turn" if isinstance(reply, str) else "tool_use",
                "usage": {"inputTokens": 120 * self.calls, "outputTokens": 20, "totalTokens": 120 * self.calls + 20},
                "metrics": {"latencyMs": 1}}

    def _ollama(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.script(list(body.get("messages") or []))
        message: dict[str, Any] = {"role": "assistant", "content": reply if isinstance(reply, str) else ""}
        if not isinstance(reply, str):  # Ollama's tool calls carry no id, and their arguments as an object
            message["tool_calls"] = [{"function": {"name": name, "arguments": arguments}} for name, arguments in reply]
        return {"model": self.model, "created_at": "2026-11-27T00:00:00Z", "message": message, "done": True,
                "done_reason": "stop", "prompt_eval_count": 120 * self.calls, "eval_count": 20}

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Serve this model over HTTP on loopback while the block runs; yields its base URL (boto3's
        ``endpoint_url``). Bedrock Runtime's ``POST /model/{modelId}/converse`` is answered by :meth:`respond`."""
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                content = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = json.dumps(model.respond(self.path.split("?", 1)[0], content)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


def tool_results(messages: list[dict[str, Any]]) -> int:
    """How many tool results the messages (Chat Completions, Anthropic Messages, Bedrock Converse), input items
    (Responses) or contents (Gemini) carry."""
    count = 0
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if m.get("role") == "tool" or m.get("type") == "function_call_output":
            count += 1
        elif m.get("role") == "user" and isinstance(content, list):  # Anthropic tool_result, Bedrock toolResult
            count += sum(1 for block in content if isinstance(block, dict) and (
                block.get("type") == "tool_result" or "toolResult" in block))
        elif isinstance(m.get("parts"), list):
            count += sum(1 for part in m["parts"] if isinstance(part, dict) and (
                "functionResponse" in part or "function_response" in part))
    return count
