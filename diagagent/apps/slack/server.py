"""HTTP mode: a small threaded server that hands Slack's signed POSTs to the bolt App (`/slack/events` by default).

Bolt checks each request's signature; the App acknowledges at once and works after, so one slow diagnosis never
holds up another request. Put it behind your TLS-terminating proxy: Slack only calls https URLs.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from slack_bolt import App
from slack_bolt.request import BoltRequest

MAX_BODY_BYTES = 1 << 20  # Slack's payloads are a few kB


def make_http_server(app: App, port: int, path: str = "/slack/events", host: str = "0.0.0.0") -> ThreadingHTTPServer:
    """A server (not yet serving: call `serve_forever()`) for Events API, slash command and interactivity POSTs."""

    class SlackRequests(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:
            app.logger.debug("http: " + fmt, *args)

        def _reply(self, status: int, body: str = "", headers: dict[str, list[str]] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            for name, values in (headers or {}).items():
                for value in values if name != "content-length" else ():
                    self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._reply(200 if urlsplit(self.path).path == "/healthz" else 404, "ok\n")

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            if url.path != path:
                self._reply(404)
                return
            if length > MAX_BODY_BYTES:
                self._reply(413)
                return
            body = self.rfile.read(length).decode("utf-8", errors="replace")
            headers = {name.lower(): self.headers.get_all(name) or [] for name in self.headers}
            response = app.dispatch(BoltRequest(body=body, query=parse_qs(url.query), headers=headers))
            self._reply(response.status, response.body, response.headers)

    server = ThreadingHTTPServer((host, port), SlackRequests)
    server.daemon_threads = True
    return server


__all__ = ["make_http_server"]
