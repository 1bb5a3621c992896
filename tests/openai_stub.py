"""A local OpenAI-compatible chat server on loopback that replays a scripted conversation, for tests.

The real openai / langchain-openai clients talk to it over HTTP; it records every request it gets.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]  # {"content": str} or {"tool_calls": [{"name": str, "arguments": dict | str}]} (a str is sent
# as it is: a model's malformed JSON)
Script = list[Reply | Callable[[dict[str, Any]], Reply]]


class OpenAIStub:
    """`with OpenAIStub(script) as stub:` then point a client at `stub.base_url`."""

    def __init__(self, script: Script, repeat_last: bool = False) -> None:
        self.script = list(script)
        self.repeat_last = repeat_last
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            if not self.script:
                return {"content": "(stub script exhausted)"}
            step = self.script[0] if (self.repeat_last and len(self.script) == 1) else self.script.pop(0)
        return step(request) if callable(step) else step

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                reply = stub._next(request)
                message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
                if reply.get("tool_calls"):
                    message["tool_calls"] = [
                        {"id": f"call_{len(stub.requests)}_{i}", "type": "function",
                         "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(
                             c.get("arguments"), str) else json.dumps(c.get("arguments", {}))}}
                        for i, c in enumerate(reply["tool_calls"])]
                body = json.dumps({
                    "id": f"chatcmpl-{len(stub.requests)}", "object": "chat.completion", "created": 0,
                    "model": request.get("model", "stub"),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}],
                    "usage": {"prompt_tokens": 100 + len(json.dumps(request)) // 4,
                              "completion_tokens": 20, "total_tokens": 120 + len(json.dumps(request)) // 4},
                }).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
