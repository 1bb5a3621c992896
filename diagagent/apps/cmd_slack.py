"""`diagagent slack [--socket | --http --port N]`: run the Slack bot, over Socket Mode or as an HTTP endpoint.

Tokens come from the settings: DIAGAGENT_SLACK_*, or Slack's usual SLACK_BOT_TOKEN / SLACK_APP_TOKEN /
SLACK_SIGNING_SECRET (never from the command line).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

import typer

from diagagent.apps.common import console, fail, settings

if TYPE_CHECKING:
    from diagagent.config import Settings

Mode = Literal["socket", "http"]


def choose_mode(socket: bool, http: bool, cfg: Settings) -> Mode:
    """--socket or --http as asked; with neither, Socket Mode when an app token is set, else HTTP."""
    if socket and http:
        fail("choose one of --socket and --http")
    mode: Mode = "socket" if socket or (not http and cfg.slack_app_token is not None) else "http"
    if cfg.slack_bot_token is None:
        fail("no bot token: set DIAGAGENT_SLACK_BOT_TOKEN (or SLACK_BOT_TOKEN) to the app's xoxb-... token")
    if mode == "socket" and cfg.slack_app_token is None:
        fail("Socket Mode needs an app-level token (xapp-..., scope connections:write): set "
             "DIAGAGENT_SLACK_APP_TOKEN (or SLACK_APP_TOKEN), or run with --http")
    if mode == "http" and cfg.slack_signing_secret is None:
        fail("HTTP mode needs the app's signing secret to verify requests: set DIAGAGENT_SLACK_SIGNING_SECRET "
             "(or SLACK_SIGNING_SECRET), or use Socket Mode with an app token")
    return mode


def register(app: typer.Typer) -> None:
    @app.command()
    def slack(
        socket: bool = typer.Option(False, "--socket", help="Socket Mode: connect out to Slack with the app token."),
        http: bool = typer.Option(False, "--http", help="HTTP mode: serve Slack's requests (signing secret)."),
        port: int = typer.Option(3000, "--port", help="HTTP mode: the port to listen on."),
        host: str | None = typer.Option(None, "--host", help="HTTP mode: the address to listen on (default "
                                        "127.0.0.1, or DIAGAGENT_SLACK_HTTP_HOST; 0.0.0.0 for every interface)."),
        path: str = typer.Option("/slack/events", "--path", help="HTTP mode: the request URL path."),
    ) -> None:
        """Run the Slack bot: @mention it, DM it, or /diagagent 42; it answers in a thread with approval buttons."""
        try:
            from slack_bolt.error import BoltError
            from slack_sdk.errors import SlackClientError
        except ModuleNotFoundError as exc:
            fail(f"the Slack bot needs {exc.name}, which is not installed: pip install 'diagagent[slack]'")

        from diagagent.apps.slack.app import SetupError, build_app

        cfg = settings()
        mode = choose_mode(socket, http, cfg)
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        try:
            bolt_app = build_app(cfg)  # checks the bot token with Slack (auth.test)
        except (SetupError, BoltError, SlackClientError, OSError) as exc:
            fail(f"cannot start the Slack bot: {exc}")
        if not cfg.approvers:
            console(stderr=True).print("[yellow]no approvers configured (DIAGAGENT_APPROVERS): every Approve click "
                                       "will be refused[/]")
        if mode == "socket":
            from slack_bolt.adapter.socket_mode import SocketModeHandler

            app_token = cfg.slack_app_token.get_secret_value() if cfg.slack_app_token else ""  # set: choose_mode
            try:
                SocketModeHandler(bolt_app, app_token).start()
            except KeyboardInterrupt:
                pass
            return
        from diagagent.apps.slack.server import make_http_server

        try:
            server = make_http_server(bolt_app, cfg, port, path, host)
        except OSError as exc:
            fail(f"cannot listen on {host or cfg.slack_http_host}:{port}: {exc}")
        bound, bound_port = server.server_address[:2]
        console(stderr=True).print(f"serving Slack requests on http://{bound}:{bound_port}{path}")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
