"""Bench: the attack pass on the Slack HTTP endpoint, replayed against a real server in a child process.

Prints request -> status, the server's peak-RSS growth, its longest new log line, tracebacks and thread count.
`--src DIR` runs the server from another source tree (an export of an older commit) to compare before/after.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
SECRET = "attack-bench-secret"
PATH = "/slack/events"


def serve(jobs: str, state: str) -> None:
    """The child: the bolt App (Web API calls to a loopback mock of Slack) behind make_http_server, as cmd_slack runs it."""
    import inspect
    import logging

    from slack_sdk import WebClient

    from diagagent.apps.slack import build_app, make_http_server
    from diagagent.config import Settings
    from tests.slack_mock import MockSlack

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings(jobs_dir=Path(jobs), state_dir=Path(state), slack_signing_secret=SECRET,
                        llm_base_url=None, approvers=["UAPPROVER"])
    slack = MockSlack().__enter__()
    app = build_app(settings, WebClient(token="xoxb-bench", base_url=slack.api_url))
    if "settings" in inspect.signature(make_http_server).parameters:
        server = make_http_server(app, settings, 0)
    else:  # the signature before the hardening: make_http_server(app, port, path, host="0.0.0.0")
        server = make_http_server(app, 0)
    host, port = server.server_address[:2]
    print(json.dumps({"host": host, "port": port}), flush=True)
    server.serve_forever()


# --- the attacker ------------------------------------------------------------------------------------------------

def signed(body: bytes, timestamp: str | None = None) -> dict[str, str]:
    timestamp = str(int(time.time())) if timestamp is None else timestamp
    digest = hmac.new(SECRET.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


def head(headers: dict[str, str]) -> bytes:
    lines = [f"POST {PATH} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(data: bytes) -> str:
    return data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.") else "no answer"


def exchange(port: int, request: bytes, stream_mb: int = 0, wait_s: float = 60.0) -> tuple[str, str]:
    """Send the request (then `stream_mb` MB more, as a body without end), read the answer; (status, note)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        sock.sendall(request)
        sent = 0
        chunk = b"A" * (1 << 20)
        try:
            for _ in range(stream_mb):
                sock.sendall(chunk)
                sent += 1
            if stream_mb:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        data = b""
        try:
            while part := sock.recv(65536):
                data += part
        except (TimeoutError, ConnectionResetError):
            pass
    note = f"client pushed {sent} of {stream_mb} MB before the server closed" if stream_mb else ""
    return status_of(data), note


def idle(port: int, wait_s: float) -> tuple[str, str]:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False
    waited = time.monotonic() - started
    return ("closed" if closed else "still open"), f"after {waited:.1f} s"


def many_idle(port: int, count: int, pid: int) -> tuple[str, str]:
    socks = []
    try:
        for _ in range(count):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        time.sleep(1.0)
        threads = proc_status(pid)["Threads"]
        busy = 0
        for sock in socks:
            sock.settimeout(0.05)
            try:
                busy += sock.recv(64).startswith(b"HTTP/1.0 503")
            except (TimeoutError, ConnectionResetError):
                pass
    finally:
        for sock in socks:
            sock.close()
    return f"{busy} x 503", f"server threads {threads}"


def proc_status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "Threads"):
            fields[name] = int(value.split()[0])
    return fields


@dataclass
class Row:
    attack: str
    status: str
    note: str
    rss_mb: float
    log_line: int
    traceback: bool


def click(**changes: object) -> bytes:
    payload = {"type": "block_actions", "user": {"id": "UAPPROVER"}, "channel": {"id": "C0001"},
               "container": {"type": "message", "message_ts": "1.1", "channel_id": "C0001"},
               "message": {"ts": "1700000000.000100"}, "response_url": "http://127.0.0.1:9/x",
               "actions": [{"action_id": "approve", "value": "1"}]}
    payload.update(changes)
    return urlencode({"payload": json.dumps(payload)}).encode()


def attacks(port: int, pid: int, mb: int, idle_s: float) -> list[tuple[str, object]]:
    form = "application/x-www-form-urlencoded"
    junk = b'{"type": "event_callback", "x": "' + b"J" * ((1 << 20) - 64) + b'"}'
    ts_body = b'{"type": "url_verification", "challenge": "c"}'

    def post(body: bytes, content_type: str, extra: dict[str, str]) -> tuple[str, str]:
        headers = {"Content-Type": content_type, "Content-Length": str(len(body)), **extra}
        return exchange(port, head(headers) + body)

    return [
        (f"Content-Length: -1, then {mb} MB", lambda: exchange(
            port, head({"Content-Type": "application/json", "Content-Length": "-1", **signed(b"")}), mb)),
        ("Content-Length: 2 GB declared", lambda: exchange(
            port, head({"Content-Type": "application/json", "Content-Length": str(2 << 30), **signed(b"")}))),
        ("Content-Length: abc", lambda: exchange(
            port, head({"Content-Type": "application/json", "Content-Length": "abc", **signed(b"")}))),
        ("no Content-Length", lambda: exchange(port, head({"Content-Type": "application/json", **signed(b"")}))),
        ("unsigned 1 MiB body", lambda: post(junk, "application/json", {})),
        ("unsigned malformed JSON", lambda: post(b"{" * 5000, "application/json", {})),
        ("X-Slack-Request-Timestamp: abc", lambda: post(ts_body, "application/json", signed(ts_body, "abc"))),
        ("signed: bad JSON in payload", lambda: post(b"payload=%7B%22ty", form, signed(b"payload=%7B%22ty"))),
        ("signed click: empty actions", lambda: post(click(actions=[]), form, signed(click(actions=[])))),
        ("signed click: user is a string", lambda: post(click(user="U1"), form, signed(click(user="U1")))),
        ("signed click: 5,000-digit id", lambda: post(
            click(actions=[{"action_id": "approve", "value": "9" * 5000}]), form,
            signed(click(actions=[{"action_id": "approve", "value": "9" * 5000}])))),
        (f"idle connection (wait {idle_s:.0f} s)", lambda: idle(port, idle_s)),
        ("400 idle connections", lambda: many_idle(port, 400, pid)),
    ]


def run(src: Path, mb: int, idle_s: float) -> tuple[dict[str, object], list[Row]]:
    with tempfile.TemporaryDirectory(prefix="attack-slack-") as tmp:
        log_path = Path(tmp) / "server.log"
        env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
        with log_path.open("wb") as log:
            child = subprocess.Popen([sys.executable, __file__, "--serve", f"{tmp}/jobs", f"{tmp}/state"], cwd=src,
                                     stdout=subprocess.PIPE, stderr=log, env=env)
        try:
            bound = json.loads(child.stdout.readline())  # type: ignore[union-attr]
            rows = []
            for name, attack in attacks(int(bound["port"]), child.pid, mb, idle_s):
                before, seen = proc_status(child.pid), log_path.stat().st_size
                status, note = attack()  # type: ignore[operator]
                time.sleep(0.5)  # let the server finish logging
                after = proc_status(child.pid)
                with log_path.open("rb") as f:
                    f.seek(seen)
                    new = f.read().decode("utf-8", "replace")
                longest = max((len(line) for line in new.splitlines()), default=0)
                rows.append(Row(name, status, note, (after["VmHWM"] - before["VmHWM"]) / 1024, longest,
                                "Traceback" in new))
            return bound, rows
        finally:
            child.terminate()
            child.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--src", type=Path, default=ROOT, help="source tree to run the server from (default: this)")
    parser.add_argument("--mb", type=int, default=64, help="MB streamed after Content-Length: -1")
    parser.add_argument("--idle-s", type=float, default=15.0, help="how long the idle client waits")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", nargs=2, metavar=("JOBS", "STATE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        return
    bound, rows = run(args.src.resolve(), args.mb, args.idle_s)
    if args.json:
        print(json.dumps({"bound": bound, "rows": [r.__dict__ for r in rows]}, indent=2))
        return
    print(f"server from {args.src} listening on {bound['host']} (default bind)")
    print(f"| {'request':<34} | {'status':<12} | {'peak RSS +MB':>12} | {'longest log line':>16} | traceback | note")
    print(f"|{'-' * 36}|{'-' * 14}|{'-' * 14}|{'-' * 18}|-----------|------")
    for r in rows:
        print(f"| {r.attack:<34} | {r.status:<12} | {r.rss_mb:>12.1f} | {r.log_line:>16,} | "
              f"{'yes' if r.traceback else 'no':<9} | {r.note}")


if __name__ == "__main__":
    main()
