"""HTTP mode: a small threaded server that checks each POST's size, time and signature, then hands it to the bolt App.

Nothing from an unsigned request is parsed or logged: a bad one gets 400/401/413 and one short log line.
"""

from __future__ import annotations

import io
import json
import logging
import re
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from diagagent.config import Settings

TIMESTAMP = re.compile(r"[0-9]{1,12}")
SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
CONTENT_LENGTH = re.compile(r"[0-9]+")
MEDIA_TYPES = ("application/json", "application/x-www-form-urlencoded")
MAX_FORM_FIELDS = 100  # Slack's slash command sends about a dozen
LINGER_BYTES, LINGER_S = 64 << 10, 0.5  # after a refusal, what is read and dropped so the client sees the answer
BUSY = b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 5\r\nConnection: close\r\n\r\nbusy\n"

log = logging.getLogger(__name__)


class Refused(Exception):
    """A request answered with `status` and `reason` (one short line), before or instead of bolt."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


@dataclass
class ServerStats:
    """Counters for tests and the attack bench: bytes read off sockets, timeouts, connections turned away."""

    bytes_read: int = 0
    timed_out: int = 0
    turned_away: int = 0
    open_connections: int = 0
    _lock: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)
            self._lock.notify_all()

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Until no connection is open (their handler threads finished); False if that took longer."""
        with self._lock:
            return self._lock.wait_for(lambda: self.open_connections == 0, timeout_s)


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each allowed only the time left of the connection's budget; counts what it reads."""

    def __init__(self, sock: socket.socket, budget_s: float, stats: ServerStats) -> None:
        self.sock, self.stats = sock, stats
        self.deadline = time.monotonic() + budget_s

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.stats.add("timed_out")
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(left)
        try:
            n = self.sock.recv_into(buffer)
        except TimeoutError:
            self.stats.add("timed_out")
            raise
        self.stats.add("bytes_read", n)
        return n


def _one_line(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def _where(exc: BaseException | None) -> str:
    """` at file.py:line` of the innermost frame, for a one-line log."""
    frames = traceback.extract_tb(exc.__traceback__) if exc is not None else []
    return f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""


def content_length(values: list[str] | None, cap: int) -> int:
    """The declared body size, or Refused: missing, repeated, not a plain number, or over `cap`."""
    if not values or not values[0].strip():
        raise Refused(400, "no Content-Length (a body of known size is required)")
    if len(set(values)) > 1:
        raise Refused(400, "more than one Content-Length")
    value = values[0].strip()
    if not CONTENT_LENGTH.fullmatch(value):
        raise Refused(400, f"Content-Length {_one_line(value, 20)!r} is not a size in bytes")
    if len(value) > 18 or int(value) > cap:
        raise Refused(413, f"Content-Length {_one_line(value, 20)} is over the limit of {cap} bytes")
    return int(value)


def check_signature_headers(timestamp: str | None, signature: str | None) -> None:
    """Refused(400) unless both of Slack's signature headers have Slack's shape (checked before the body is read)."""
    if timestamp is None or not TIMESTAMP.fullmatch(timestamp.strip()):
        raise Refused(400, "X-Slack-Request-Timestamp is missing or not a whole number of seconds")
    if signature is None or not SIGNATURE.fullmatch(signature.strip()):
        raise Refused(400, "X-Slack-Signature is missing or not v0= and 64 hex digits")


def read_body(text: str, content_type: str) -> None:
    """Refused(400/415) unless the signed body parses the way bolt will parse it, into an object."""
    media_type = content_type.split(";")[0].strip().lower()
    if media_type not in MEDIA_TYPES:
        raise Refused(415, f"Content-Type {_one_line(media_type, 40)!r} is not one Slack sends "
                           "(application/json or application/x-www-form-urlencoded)")
    if media_type == "application/json" or text.startswith("{"):  # as bolt decides
        _json_object(text, "the JSON body")
        return
    try:
        fields = parse_qsl(text, keep_blank_values=True, strict_parsing=True, errors="strict",
                           max_num_fields=MAX_FORM_FIELDS)
    except ValueError as exc:
        raise Refused(400, f"the form body is not valid form encoding ({_one_line(str(exc), 60)})") from None
    if "payload" in text:  # bolt reads the `payload` field as JSON whenever the body mentions it
        payload = dict(fields).get("payload")
        if payload is not None:
            _json_object(payload, "the form field `payload`")


def _json_object(text: str, what: str) -> None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise Refused(400, f"{what} is not valid JSON ({_one_line(str(exc), 60)})") from None
    if not isinstance(value, dict):
        raise Refused(400, f"{what} is JSON but not an object")


class SlackHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer with at most `max_connections` open at once: one more is answered 503 and closed."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int) -> None:
        self.stats = ServerStats()
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.stats.add("turned_away")
            try:
                request.settimeout(1.0)
                request.sendall(BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self.stats.add("open_connections")
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release()

    def _release(self) -> None:
        self._slots.release()
        self.stats.add("open_connections", -1)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, not socketserver's traceback on stderr: a request must never print one."""
        exc = sys.exc_info()[1]
        level = logging.INFO if isinstance(exc, (ConnectionError, TimeoutError)) else logging.ERROR
        log.log(level, "slack http: %s: %s%s", type(exc).__name__, _one_line(str(exc)), _where(exc))


def make_http_server(app: App, settings: Settings, port: int = 3000, path: str = "/slack/events",
                     host: str | None = None) -> SlackHTTPServer:
    """A server (not yet serving: call `serve_forever()`) for Events API, slash command and interactivity POSTs.

    Listens on `host`, else `settings.slack_http_host` (127.0.0.1 by default). Limits come from the settings:
    `slack_max_body_bytes`, `slack_read_timeout_s` (the whole request must arrive within it) and
    `slack_max_connections`. Put it behind your TLS-terminating proxy: Slack only calls https URLs.
    """
    if settings.slack_signing_secret is None or not settings.slack_signing_secret.get_secret_value():
        raise ValueError("HTTP mode needs the signing secret (DIAGAGENT_SLACK_SIGNING_SECRET)")
    verifier = SignatureVerifier(settings.slack_signing_secret.get_secret_value())
    cap, budget_s = settings.slack_max_body_bytes, settings.slack_read_timeout_s

    class SlackRequests(BaseHTTPRequestHandler):
        server: SlackHTTPServer

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # replaced by a reader that keeps to the time budget and counts bytes
            self.rfile = io.BufferedReader(_DeadlineReader(self.connection, budget_s, self.server.stats))

        def log_message(self, format: str, *args: object) -> None:
            log.debug("slack http: %s", _one_line(format % args))

        def log_error(self, format: str, *args: object) -> None:
            log.info("slack http: %s", _one_line(format % args))

        def _reply(self, status: int, body: str = "", headers: dict[str, list[str]] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            for name, values in (headers or {}).items():
                for value in values if name.lower() not in ("content-length", "connection") else ():
                    self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            self.end_headers()
            self.connection.settimeout(budget_s)  # the reply gets its own time
            self.wfile.write(data)
            self.close_connection = True

        def _refuse(self, refused: Refused, size: str) -> None:
            log.warning("slack http: %s %s -> %d (%s bytes): %s", self.command, _one_line(urlsplit(self.path).path, 60),
                        refused.status, size, refused.reason)
            self._reply(refused.status, refused.reason + "\n")
            self._linger()

        def _linger(self) -> None:
            """Close gently: a body left unread would make the close a reset, which can lose the answer in transit.
            At most LINGER_BYTES within LINGER_S are read and dropped; the rest of a huge body never is."""
            try:
                self.connection.shutdown(socket.SHUT_WR)
                self.connection.settimeout(LINGER_S)
                deadline, left = time.monotonic() + LINGER_S, LINGER_BYTES
                while left > 0 and time.monotonic() < deadline and (chunk := self.connection.recv(min(left, 8192))):
                    left -= len(chunk)
                    self.server.stats.add("bytes_read", len(chunk))
            except OSError:
                pass

        def do_GET(self) -> None:
            self._reply(200 if urlsplit(self.path).path == "/healthz" else 404, "ok\n")

        def do_POST(self) -> None:
            declared = self.headers.get_all("content-length")
            size = _one_line(declared[0], 20) if declared else "?"
            try:
                self._reply(*self._dispatch(declared))
            except Refused as refused:
                self._refuse(refused, size)
            except TimeoutError:
                self._refuse(Refused(408, "the body did not arrive in time"), size)

        def _dispatch(self, declared: list[str] | None) -> tuple[int, str, dict[str, list[str]]]:
            url = urlsplit(self.path)
            if url.path != path:
                raise Refused(404, "not the Slack request path")
            if self.headers.get("transfer-encoding"):
                raise Refused(400, "Transfer-Encoding is not accepted; send a Content-Length")
            length = content_length(declared, cap)
            timestamp = self.headers.get("x-slack-request-timestamp")
            signature = self.headers.get("x-slack-signature")
            check_signature_headers(timestamp, signature)
            raw = self.rfile.read(length)
            if len(raw) < length:
                raise Refused(400, f"the body ended after {len(raw)} of {length} bytes")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise Refused(400, f"the body is not UTF-8 (byte {exc.start})") from None
            if not verifier.is_valid(text, str(timestamp).strip(), str(signature).strip()):
                raise Refused(401, "the signature does not match the body, or the request is over 5 minutes old")
            read_body(text, self.headers.get("content-type", ""))
            headers = {name.lower(): self.headers.get_all(name) or [] for name in self.headers}
            try:
                request = BoltRequest(body=text, query=parse_qs(url.query), headers=headers)
            except Exception as exc:  # noqa: BLE001 - bolt reading a signed payload of a shape Slack never sends
                raise Refused(400, f"the payload's shape cannot be read ({type(exc).__name__}{_where(exc)})") from None
            try:
                response = app.dispatch(request)
            except Exception as exc:  # noqa: BLE001 - bolt's own handling fails on some signed shapes Slack never sends
                raise Refused(400, f"the payload's shape cannot be read ({type(exc).__name__}{_where(exc)})") from None
            return response.status, response.body, response.headers

    return SlackHTTPServer((host or settings.slack_http_host, port), SlackRequests, settings.slack_max_connections)


__all__ = ["Refused", "ServerStats", "SlackHTTPServer", "make_http_server"]
