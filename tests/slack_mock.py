"""A local mock of Slack's Web API on 127.0.0.1 that records every /api/<method> call, and signed-request helpers.

It also takes the file upload POST (files_upload_v2's step 2) and response_url POSTs, all on loopback.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qsl, urlencode, urlsplit

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

BOT_USER_ID = "UBOT"
TEAM_ID = "T0001"


@dataclass
class ApiCall:
    method: str
    args: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    reply: dict[str, Any] = field(default_factory=dict)  # what the mock answered

    @property
    def ts(self) -> str:
        """The ts Slack gave the message this call posted."""
        return str(self.reply["ts"])

    def blocks(self) -> list[dict[str, Any]]:
        raw = self.args.get("blocks") or []
        return json.loads(raw) if isinstance(raw, str) else list(raw)


def _parse_body(content_type: str, raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    if "json" in content_type:
        return json.loads(raw)
    return dict(parse_qsl(raw.decode(), keep_blank_values=True))


class MockSlack:
    """`with MockSlack() as slack:` then `WebClient(token=..., base_url=slack.api_url)`."""

    def __init__(self) -> None:
        self.calls: list[ApiCall] = []
        self.uploads: dict[str, bytes] = {}  # file id -> bytes POSTed to its upload URL
        self.responses: list[dict[str, Any]] = []  # what was POSTed to a response_url
        self.errors: dict[str, str] = {}  # method -> the Slack error it answers with
        self._ts = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    def response_url(self, name: str = "cmd") -> str:
        return f"{self.base}/response/{name}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- reading what the bot did ------------------------------------------------------------------------

    def mark(self) -> int:
        with self._lock:
            return len(self.calls)

    def since(self, mark: int, method: str | None = None) -> list[ApiCall]:
        """The bot's calls after `mark` (of one method), without bolt's auth.test: bolt authorizes on whichever request
        comes first, so which test sees it depends on the order tests run in."""
        with self._lock:
            calls = self.calls[mark:]
        return [c for c in calls if (method is None and c.method != "auth.test") or c.method == method]

    def wait_for(self, predicate: Callable[[MockSlack], bool], timeout_s: float = 30.0) -> None:
        """Poll until the bot has made the calls the predicate wants (for listeners that run after the ack)."""
        deadline = time.monotonic() + timeout_s
        while not predicate(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"the mock never saw that; calls: {[c.method for c in self.calls]}")
            time.sleep(0.02)

    # --- answering -----------------------------------------------------------------------------------------

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method in self.errors:
            return {"ok": False, "error": self.errors[method]}
        ts = f"1800000000.{next(self._ts):06d}"
        if method == "auth.test":
            return {"ok": True, "user_id": BOT_USER_ID, "bot_id": "BBOT", "team_id": TEAM_ID, "user": "diagagent",
                    "team": "test", "url": "https://test.slack.com/"}
        if method == "chat.postMessage":
            return {"ok": True, "channel": args.get("channel"), "ts": ts,
                    "message": {"ts": ts, "text": args.get("text"), "thread_ts": args.get("thread_ts")}}
        if method == "chat.update":
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts"), "text": args.get("text")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": ts}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._ts):06d}"
            return {"ok": True, "file_id": file_id, "upload_url": f"{self.base}/upload/{file_id}"}
        if method == "files.completeUploadExternal":
            files = json.loads(args.get("files") or "[]")
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}
        return {"ok": True}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                url = urlsplit(self.path)
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if url.path.startswith("/upload/"):
                    with mock._lock:
                        mock.uploads[url.path.rsplit("/", 1)[1]] = raw
                    self._send(200, f"OK - {len(raw)}".encode(), "text/plain")
                    return
                if url.path.startswith("/response/"):
                    with mock._lock:
                        mock.responses.append(json.loads(raw or b"{}"))
                    self._send(200, b"ok", "text/plain")
                    return
                if not url.path.startswith("/api/"):
                    self._send(404, b"{}")
                    return
                method = url.path.removeprefix("/api/")
                args = {**dict(parse_qsl(url.query)), **_parse_body(self.headers.get("content-type", ""), raw)}
                call = ApiCall(method, args, {k.lower(): v for k, v in self.headers.items()})
                with mock._lock:
                    call.reply = mock._answer(method, args)
                    mock.calls.append(call)
                self._send(200, json.dumps(call.reply).encode())

        return Handler


# --- signed requests, as Slack sends them -------------------------------------------------------------------------

def signed_request(secret: str, body: str, content_type: str, *, tamper: bool = False) -> BoltRequest:
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    if tamper:
        signature = signature[:-4] + ("0000" if not signature.endswith("0000") else "1111")
    return BoltRequest(body=body, headers={"content-type": [content_type], "x-slack-signature": [signature],
                                           "x-slack-request-timestamp": [timestamp]})


def signed_headers(secret: str, body: str, content_type: str) -> dict[str, str]:
    request = signed_request(secret, body, content_type)
    return {k: v[0] for k, v in request.headers.items()}


def sign(secret: str, body: bytes, timestamp: str | None = None) -> dict[str, str]:
    """Slack's two signature headers for raw bytes (any bytes: the signature is over what is sent)."""
    timestamp = str(int(time.time())) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


@dataclass
class RawReply:
    """What came back on a raw connection: the status (None: no HTTP answer) and the body."""

    status: int | None
    body: bytes
    closed: bool  # the server closed the connection (rather than the client giving up waiting)


def raw_http(port: int, head: bytes, body: bytes = b"", *, wait_s: float = 10.0) -> RawReply:
    """Send bytes as they are (a request head, perhaps no body yet) and read until the server closes."""
    data, closed = b"", False
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        sock.sendall(head + body)
        try:
            while chunk := sock.recv(65536):
                data += chunk
            closed = True
        except TimeoutError:
            pass
        except ConnectionResetError:
            closed = True
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else None
    return RawReply(status, data.partition(b"\r\n\r\n")[2], closed)


def post_head(path: str, headers: dict[str, str]) -> bytes:
    """A POST request head, headers exactly as given (no Content-Length unless given)."""
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@contextmanager
def serving(app: App, settings: object, **server_args: object) -> Iterator[object]:
    """The app's HTTP server (make_http_server) on an ephemeral loopback port, in a thread, shut down after."""
    from diagagent.apps.slack import make_http_server

    server = make_http_server(app, settings, 0, **server_args)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


_event_ids = itertools.count(1)


def event_body(event: dict[str, Any]) -> str:
    """An Events API callback around one event."""
    return json.dumps({"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0001", "type": "event_callback",
                       "event_id": f"Ev{next(_event_ids):06d}", "event_time": int(time.time()),
                       "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
                       "event": event})


def mention(text: str, ts: str, channel: str = "C0001", user: str = "UASKER",
            thread_ts: str | None = None) -> str:
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER_ID}> {text}", "ts": ts, "channel": channel,
             "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event_body(event)


def message(text: str, ts: str, channel: str = "C0001", user: str = "UASKER", thread_ts: str | None = None,
            channel_type: str = "channel") -> str:
    event = {"type": "message", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts,
             "channel_type": channel_type}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event_body(event)


def slash_command(text: str, response_url: str, channel: str = "C0001", user: str = "UASKER") -> str:
    return urlencode({"token": "legacy", "team_id": TEAM_ID, "channel_id": channel, "user_id": user,
                      "command": "/diagagent", "text": text, "response_url": response_url, "trigger_id": "1.2.3"})


def button_click(action_id: str, value: str, user: str, message_ts: str, thread_ts: str, response_url: str,
                 channel: str = "C0001") -> str:
    payload = {"type": "block_actions", "team": {"id": TEAM_ID}, "user": {"id": user}, "api_app_id": "A0001",
               "channel": {"id": channel}, "trigger_id": "1.2.3", "response_url": response_url,
               "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                             "thread_ts": thread_ts},
               "message": {"ts": message_ts, "thread_ts": thread_ts, "type": "message"},
               "actions": [{"action_id": action_id, "block_id": f"proposal-{value}", "value": value,
                            "type": "button", "action_ts": str(time.time())}]}
    return urlencode({"payload": json.dumps(payload)})
