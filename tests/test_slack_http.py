"""The HTTP endpoint under attack: sizes, times, headers and bodies it must refuse before bolt parses anything.

Raw bytes over real loopback sockets to the real server and bolt App; Slack's Web API is the local mock.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from diagagent.apps.slack import build_app, make_http_server
from diagagent.config import Settings
from tests.slack_mock import MockSlack, mention, post_head, raw_http, serving, sign

SECRET = "hardening-secret"
PATH = "/slack/events"
MARKER = "GARBAGE-MARKER"
MAX_LOG_LINE = 300


def _settings(tmp_path: Path, **limits: Any) -> Settings:
    return Settings(jobs_dir=tmp_path / "jobs", state_dir=tmp_path / "state", slack_signing_secret=SECRET,
                    llm_base_url=None, **limits)


@pytest.fixture
def slack() -> Iterator[MockSlack]:
    with MockSlack() as mock:
        yield mock


def _server(tmp_path: Path, slack: MockSlack, **limits: Any) -> Any:
    settings = _settings(tmp_path, **limits)
    app = build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url), process_before_response=True)
    return serving(app, settings)


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """One server for the request tests (shutting one down takes serve_forever's half-second poll)."""
    with MockSlack() as slack, _server(tmp_path_factory.mktemp("http"), slack, slack_max_body_bytes=4096) as server:
        yield server.server_address[1]


def log_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    fmt = logging.Formatter("%(levelname)s %(name)s: %(message)s")
    return [fmt.format(r) for r in caplog.records]


def assert_short_logs(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Every log line is one short line without the body; nothing printed a traceback."""
    lines = log_lines(caplog)
    assert all(len(line) < MAX_LOG_LINE and "\n" not in line for line in lines), lines
    assert not any(MARKER in line for line in lines)
    assert "Traceback" not in capsys.readouterr().err
    return lines


# --- bind address -----------------------------------------------------------------------------------------------

def test_it_listens_on_loopback_unless_told_otherwise(tmp_path: Path, slack: MockSlack) -> None:
    settings = _settings(tmp_path)
    assert settings.slack_http_host == "127.0.0.1"
    app = build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url))
    server = make_http_server(app, settings, 0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


# --- Content-Length: answered before a byte of the body is read -------------------------------------------------

@pytest.mark.parametrize(("length", "status"), [
    ("-1", 400), ("abc", 400), ("1e3", 400), (" ", 400), (None, 400), ("4097", 413), ("1073741824", 413),
    ("99999999999999999999999999", 413),
])
def test_a_bad_content_length_is_answered_before_the_body_is_sent(port: int, length: str | None, status: int,
                                                                  caplog: pytest.LogCaptureFixture,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    headers = {"Content-Type": "application/json", **sign(SECRET, b"{}")}
    if length is not None:
        headers["Content-Length"] = length
    reply = raw_http(port, post_head(PATH, headers))  # the head only: the body is never sent
    assert (reply.status, reply.closed) == (status, True)
    lines = assert_short_logs(caplog, capsys)
    assert any(f"-> {status}" in line and "Content-Length" in line for line in lines)


def test_the_body_limit_is_a_setting(port: int) -> None:
    body = b'{"type": "url_verification", "challenge": "' + b"x" * 5000 + b'"}'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **sign(SECRET, body)}
    assert raw_http(port, post_head(PATH, headers)).status == 413  # the cap in the fixture is 4,096 bytes


def test_a_chunked_body_is_refused(port: int) -> None:
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked", **sign(SECRET, b"{}")}
    assert raw_http(port, post_head(PATH, headers)).status == 400


# --- headers and bodies that are not Slack's ----------------------------------------------------------------------

@pytest.mark.parametrize("timestamp", ["abc", "", "1e9", "-5", "99999999999999999999999", "1700000000.5"])
def test_a_bad_timestamp_header_is_400(port: int, timestamp: str, caplog: pytest.LogCaptureFixture,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    body = b'{"type": "url_verification", "challenge": "c"}'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **sign(SECRET, body, timestamp)}
    reply = raw_http(port, post_head(PATH, headers), body)
    assert reply.status == 400 and b"X-Slack-Request-Timestamp" in reply.body
    assert_short_logs(caplog, capsys)


@pytest.mark.parametrize("signature", [None, "", "v1=" + "0" * 64, "v0=" + "z" * 64, "v0=" + "0" * 5000],
                         ids=["missing", "empty", "v1", "not-hex", "long"])
def test_a_malformed_signature_header_is_400(port: int, signature: str | None) -> None:
    body = b'{"type": "url_verification", "challenge": "c"}'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **sign(SECRET, body)}
    if signature is None:
        del headers["X-Slack-Signature"]
    else:
        headers["X-Slack-Signature"] = signature
    reply = raw_http(port, post_head(PATH, headers), body)
    assert reply.status == 400 and b"X-Slack-Signature" in reply.body


GARBAGE = [
    b"{" * 3000 + MARKER.encode(),
    b"payload=" + b"%7B" * 2000 + MARKER.encode(),
    b"\xff\xfe" + MARKER.encode() * 500,
    (MARKER + "=") .encode() * 600,
]


@pytest.mark.parametrize("body", GARBAGE, ids=["braces", "form", "not-utf8", "fields"])
@pytest.mark.parametrize("content_type", ["application/json", "application/x-www-form-urlencoded"])
def test_unsigned_garbage_is_400_and_one_short_log_line(port: int, body: bytes, content_type: str,
                                                        caplog: pytest.LogCaptureFixture,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    body = body[:4000]
    reply = raw_http(port, post_head(PATH, {"Content-Type": content_type, "Content-Length": str(len(body))}), body)
    assert reply.status == 400
    lines = assert_short_logs(caplog, capsys)
    assert len([line for line in lines if "-> 400" in line]) == 1


@pytest.mark.parametrize(("body", "content_type", "why"), [
    (b"payload=%7B%22type%22%3A", "application/x-www-form-urlencoded", b"payload"),  # bad JSON in payload
    (b"payload=" + json.dumps([1, 2]).encode(), "application/x-www-form-urlencoded", b"payload"),
    (b"a=1&&b", "application/x-www-form-urlencoded", b"form"),  # bad form encoding
    (b"text=%FF%FE", "application/x-www-form-urlencoded", b"form"),  # percent-encoded bytes that are not UTF-8
    (b"\xff\xfe{}", "application/json", b"UTF-8"),
    (b"[1, 2]", "application/json", b"JSON"),
    (b"[" * 2000 + b"]" * 2000, "application/json", b"JSON"),  # nesting deeper than the parser goes
    (b'{"type": "event_callback",}', "application/json", b"JSON"),
    (b'{"type": "url_verification"}', "text/plain", b"Content-Type"),
], ids=["payload-json", "payload-list", "form", "form-not-utf8", "not-utf8", "json-list", "json-deep", "json-comma",
        "text-plain"])
def test_signed_but_unreadable_bodies_are_400(port: int, body: bytes, content_type: str, why: bytes,
                                              caplog: pytest.LogCaptureFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    headers = {"Content-Type": content_type, "Content-Length": str(len(body)), **sign(SECRET, body)}
    reply = raw_http(port, post_head(PATH, headers), body)
    assert reply.status in (400, 415) and why in reply.body
    assert_short_logs(caplog, capsys)


def test_a_wrong_signature_is_still_401_and_a_good_one_still_works(tmp_path: Path, slack: MockSlack) -> None:
    body = mention("why did job 7 die?", ts="1700000001.000100").encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **sign("other", body)}
    with _server(tmp_path, slack) as server:
        port = server.server_address[1]
        assert raw_http(port, post_head(PATH, headers), body).status == 401
        headers.update(sign(SECRET, body))
        assert raw_http(port, post_head(PATH, headers), body).status == 200
    assert "can't find job `7`" in slack.since(0, "chat.postMessage")[0].args["text"]


# --- time and connections -----------------------------------------------------------------------------------------

def test_an_idle_connection_is_closed_after_the_timeout(tmp_path: Path, slack: MockSlack,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with _server(tmp_path, slack, slack_read_timeout_s=0.2) as server:
        port = server.server_address[1]
        idle = raw_http(port, b"")  # connects and says nothing
        assert (idle.status, idle.closed) == (None, True)
        body = b'{"type": "url_verification", "challenge": "c"}'
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **sign(SECRET, body)}
        slow = raw_http(port, post_head(PATH, headers), body[:10])  # then stalls mid-body
        assert (slow.status, slow.closed) == (408, True)
        assert server.stats.timed_out == 2
    assert "Traceback" not in capsys.readouterr().err


def test_connections_beyond_the_limit_are_turned_away(tmp_path: Path, slack: MockSlack) -> None:
    with _server(tmp_path, slack, slack_max_connections=2, slack_read_timeout_s=30) as server:
        port = server.server_address[1]
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        try:
            reply = raw_http(port, b"GET /healthz HTTP/1.0\r\n\r\n")
            assert reply.status == 503 and server.stats.turned_away == 1
            assert server.stats.open_connections == 2
        finally:
            for sock in idle:
                sock.close()
        server.stats.wait_idle()  # the two handler threads see the close and give their slots back
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
            assert response.status == 200


def test_many_idle_connections_hold_at_most_the_limit_in_threads(tmp_path: Path, slack: MockSlack) -> None:
    with _server(tmp_path, slack, slack_max_connections=4, slack_read_timeout_s=30) as server:
        port = server.server_address[1]
        before = threading.active_count()
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(40)]
        try:
            turned_away = sum(raw_http_status_on(sock) == 503 for sock in idle)
            assert turned_away == 36 and threading.active_count() - before <= 4
        finally:
            for sock in idle:
                sock.close()


def raw_http_status_on(sock: socket.socket) -> int | None:
    """The status the server sent unasked on an open connection (a 503 when it turned it away), else None."""
    sock.settimeout(0.5)
    try:
        data = sock.recv(64)
    except TimeoutError:
        return None
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else None
