"""Recorded LLM conversations: record the agent's exchanges with any OpenAI-compatible endpoint, and replay them.

Re-record: `python -m tests.llm_record SCENARIO [--base-url URL --model NAME]` (no --base-url: the scripted stub).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "llm"
CASE = REPO / "evals" / "cases" / "megatron-ecc-watchdog-cascade"
QUESTION = "which node failed, and why not sw-gpu-022?"


def _draft_submission(request: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's submission: the draft's conclusion, cited by the draft's evidence ids."""
    ids = {c["id"]: c["function"]["name"] for m in request["messages"] for c in m.get("tool_calls") or []}
    draft = next(json.loads(m["content"]) for m in reversed(request["messages"])
                 if m["role"] == "tool" and ids.get(m.get("tool_call_id")) == "draft_diagnosis")
    node = draft["faulty_nodes"][0]
    return {"tool_calls": [{"name": "DiagnosisSubmission", "arguments": {
        "category": draft["category"], "fault": draft["fault"], "confidence": 0.85, "stage": draft["stage"],
        "root_cause": f"uncorrectable ECC error on {node['host']}", "iteration": draft["iteration"],
        "faulty_nodes": [{"host": node["host"], "score": 0.9, "reason": "Xid 48"}],
        "evidence": [e["id"] for e in draft["evidence"][:3]]}}]}


DRAFT = {"tool_calls": [{"name": "overview", "arguments": {}}, {"name": "draft_diagnosis", "arguments": {}}]}
# What the scripted stub plays for each scenario; a real endpoint plays itself.
SCENARIOS: dict[str, list[Any]] = {
    "submit": [DRAFT, {"tool_calls": [{"name": "log_events", "arguments": {"top": 3, "role": "cause"}}]},
               _draft_submission, {"content": "host-3: Xid 48 (uncorrectable ECC). host-2 only timed out."}],
    "malformed": [{"tool_calls": [{"name": "log_events", "arguments": '{"top": 3, "role": "cause"'}]}, DRAFT,
                  {"tool_calls": [{"name": "DiagnosisSubmission", "arguments": {
                      "category": "hardware", "root_cause": "ECC", "confidence": "high"}}]},
                  _draft_submission],
    "no_submission": [DRAFT, {"content": "The faulty node is probably host-3: its GPU reported Xid 48."}],
}
ASKS = {"submit": QUESTION}


def _settings(base_url: str, model: str, api_key: str | None, max_steps: int = 8, **extra: Any) -> Any:
    from diagagent.config import Settings

    return Settings.load(llm_base_url=base_url, llm_model=model, llm_api_key=api_key or "not-needed",
                         llm_max_steps=max_steps, redact="on", **extra)


def run_session(base_url: str, model: str, scenario: str, api_key: str | None = None, **extra: Any) -> Any:
    """The agent on the scenario's case against `base_url`: diagnose, then the scenario's question if it has one."""
    from diagagent.agent import Session
    from diagagent.telemetry import Bundle

    with Bundle.open(CASE) as bundle:
        session = Session(bundle, _settings(base_url, model, api_key, **extra))
        session.diagnose()
        if scenario in ASKS:
            session.ask(ASKS[scenario])
    return session


class _Server:
    """A loopback HTTP server answering POST .../chat/completions with `self.reply(request) -> (status, bytes)`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                server.requests.append(body)
                status, data = server.reply(body, dict(self.headers))
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def reply(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


class RecordingProxy(_Server):
    """Forwards each request to `target` and keeps the request and the response exactly as the server sent it."""

    def __init__(self, target: str, api_key: str | None) -> None:
        super().__init__()
        self.target = target.rstrip("/")
        self.api_key = api_key
        self.exchanges: list[dict[str, Any]] = []

    def reply(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        forward = urllib.request.Request(f"{self.target}/chat/completions", data=json.dumps(request).encode(),
                                         headers={"content-type": "application/json",
                                                  "authorization": f"Bearer {self.api_key or 'not-needed'}"})
        try:
            with urllib.request.urlopen(forward, timeout=600) as got:
                status, data = got.status, got.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        self.exchanges.append({"request": request, "status": status, "response": json.loads(data or b"{}")})
        return status, data


class Replay(_Server):
    """Answers with the recorded responses in order; `drift` lists where a live request left the recording."""

    def __init__(self, recording: dict[str, Any]) -> None:
        super().__init__()
        self.exchanges = recording["exchanges"]
        self.drift: list[str] = []

    def reply(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        n = len(self.requests) - 1
        if n >= len(self.exchanges):
            self.drift.append(f"request {n + 1}: the recording has only {len(self.exchanges)}")
            return 500, b'{"error": {"message": "replay exhausted"}}'
        recorded = expand(self.exchanges, n)
        if _shape(request) != _shape(recorded):
            self.drift.append(f"request {n + 1}: {_shape(request)} != recorded {_shape(recorded)}")
        return self.exchanges[n].get("status", 200), json.dumps(self.exchanges[n]["response"]).encode()


def _shape(request: dict[str, Any]) -> list[str]:
    """Roles and tool calls of a request's messages: what must match for a replay to be the same conversation."""
    out = []
    for m in request["messages"]:
        calls = ",".join(f"{c['function']['name']}#{c['id']}" for c in m.get("tool_calls") or [])
        out.append(f"{m['role']}:{calls or m.get('tool_call_id') or ''}")
    return out


def compact(exchanges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each request keeps only the messages it added (the earlier ones are in the previous request) and the tools
    by name; `expand` rebuilds the whole request."""
    out, seen = [], 0
    for ex in exchanges:
        req = dict(ex["request"])
        messages = req.pop("messages")
        req["tools"] = [t["function"]["name"] for t in req.get("tools", [])]
        out.append({"request": {**req, "messages_before": seen, "messages_added": messages[seen:]},
                    "status": ex["status"], "response": ex["response"]})
        seen = len(messages)
    return out


def expand(exchanges: list[dict[str, Any]], n: int) -> dict[str, Any]:
    messages: list[Any] = []
    for ex in exchanges[: n + 1]:
        messages = messages[: ex["request"]["messages_before"]] + ex["request"]["messages_added"]
    req = {k: v for k, v in exchanges[n]["request"].items() if k not in ("messages_before", "messages_added")}
    return {**req, "messages": messages}


def outcome(session: Any) -> dict[str, Any]:
    """What a replay must reproduce: who diagnosed, which hosts, the fallback note, the answers' modes."""
    d = session.diagnosis
    return {"faulty_hosts": d.faulty_hosts, "fault": d.fault, "llm_unavailable": d.llm_unavailable,
            "submitted": d.llm_unavailable is None, "llm_calls": session.usage.llm_calls,
            "answers": [a.markdown for a in session.answers]}


def record(scenario: str, base_url: str | None, model: str, api_key: str | None, out_dir: Path) -> Path:
    from tests.openai_stub import OpenAIStub

    stub = OpenAIStub(SCENARIOS[scenario]) if base_url is None else None
    if stub is not None:
        stub.__enter__()
    try:
        target = base_url or stub.base_url  # type: ignore[union-attr]
        with RecordingProxy(target, api_key) as proxy:
            session = run_session(proxy.base_url, model, scenario, api_key)
    finally:
        if stub is not None:
            stub.__exit__(None, None, None)
    data = {"scenario": scenario, "case": CASE.relative_to(REPO).as_posix(), "model": model,
            "recorded_from": "the scripted stub (tests/openai_stub.py)" if base_url is None else base_url,
            "settings": {"redact": "on", "llm_max_steps": 8}, "question": ASKS.get(scenario),
            "expect": outcome(session), "exchanges": compact(proxy.exchanges)}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{scenario}.json"
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", nargs="*", default=list(SCENARIOS), help=f"of {', '.join(SCENARIOS)}")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the scripted stub)")
    parser.add_argument("--model", default="stub-model")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the variable holding the key")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    args = parser.parse_args(argv)
    for name in args.scenario:
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
        path = record(name, args.base_url, args.model, os.environ.get(args.api_key_env), args.out)
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
