"""Running the Slack bot: the HTTP server over real sockets, `diagagent slack`'s checks, and the app manifest.

The HTTP tests POST signed requests to the server on 127.0.0.1; its Web API calls go to the local mock.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from pydantic import SecretStr
from slack_sdk import WebClient
from typer.testing import CliRunner

from diagagent.apps.cli import build_app as build_cli
from diagagent.apps.cmd_slack import choose_mode
from diagagent.apps.slack import build_app, make_http_server
from diagagent.apps.slack.app import SLASH_COMMAND
from diagagent.config import Settings
from tests.slack_mock import MockSlack, mention, signed_headers

SECRET = "http-signing-secret"
MANIFEST = Path(__file__).resolve().parent.parent / "docs" / "slack-app-manifest.yaml"
SLACK_ENV = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DIAGAGENT_SLACK_BOT_TOKEN",
             "DIAGAGENT_SLACK_APP_TOKEN", "DIAGAGENT_SLACK_SIGNING_SECRET")


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[tuple[str, MockSlack]]:
    settings = Settings(jobs_dir=tmp_path / "jobs", state_dir=tmp_path / "state", slack_signing_secret=SECRET,
                        llm_base_url=None)
    with MockSlack() as slack:
        app = build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url))
        server = make_http_server(app, settings, 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}", slack
        finally:
            server.shutdown()
            server.server_close()


def post(url: str, body: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_http_mode_verifies_signatures_and_answers_slack(server_url: tuple[str, MockSlack]) -> None:
    base, slack = server_url
    challenge = json.dumps({"token": "t", "challenge": "abc123", "type": "url_verification"})
    status, answer = post(f"{base}/slack/events", challenge, signed_headers(SECRET, challenge, "application/json"))
    assert (status, json.loads(answer)) == (200, {"challenge": "abc123"})
    assert post(f"{base}/slack/events", challenge, signed_headers("wrong", challenge, "application/json"))[0] == 401
    assert post(f"{base}/elsewhere", challenge, signed_headers(SECRET, challenge, "application/json"))[0] == 404
    with urllib.request.urlopen(f"{base}/healthz", timeout=10) as response:
        assert response.status == 200

    body = mention("why did job 7 die?", ts="1700000001.000100")
    status, _ = post(f"{base}/slack/events", body, signed_headers(SECRET, body, "application/json"))
    assert status == 200
    slack.wait_for(lambda mock: bool(mock.since(0, "chat.postMessage")))
    reply = slack.since(0, "chat.postMessage")[0]
    assert reply.args["thread_ts"] == "1700000001.000100"
    assert "can't find job `7`" in reply.args["text"] and "no job bundles" in reply.args["text"]


# --- diagagent slack ----------------------------------------------------------------------------------------------

@pytest.fixture
def no_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SLACK_ENV:
        monkeypatch.delenv(name, raising=False)


def test_slack_command_says_which_secret_is_missing(no_slack_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    result = runner.invoke(build_cli(), ["slack"])
    assert result.exit_code == 2 and "no bot token" in result.output
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-slack-env")
    result = runner.invoke(build_cli(), ["slack", "--socket"])
    assert result.exit_code == 2 and "app-level token" in result.output
    result = runner.invoke(build_cli(), ["slack", "--http"])
    assert result.exit_code == 2 and "signing secret" in result.output


def test_mode_follows_the_flags_then_the_tokens() -> None:
    bot = {"slack_bot_token": SecretStr("xoxb")}
    both = Settings(**bot, slack_app_token=SecretStr("xapp"), slack_signing_secret=SecretStr("s"))
    assert choose_mode(False, False, both) == "socket"
    assert choose_mode(False, True, both) == "http"
    assert choose_mode(False, False, Settings(**bot, slack_signing_secret=SecretStr("s"))) == "http"
    with pytest.raises(typer.Exit):
        choose_mode(True, True, both)


def test_settings_read_slack_variables_and_prefer_their_own(no_slack_env: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-other")
    monkeypatch.setenv("DIAGAGENT_SLACK_BOT_TOKEN", "xoxb-mine")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    cfg = Settings.load()
    assert cfg.slack_bot_token is not None and cfg.slack_bot_token.get_secret_value() == "xoxb-mine"
    assert cfg.slack_app_token is not None and cfg.slack_app_token.get_secret_value() == "xapp-1"
    assert cfg.slack_signing_secret is None


# --- the manifest ---------------------------------------------------------------------------------------------------

def test_manifest_grants_what_the_bot_uses() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    # chat.postMessage/update/postEphemeral, files_upload_v2, the slash command, the events listened to
    assert {"chat:write", "files:write", "commands", "app_mentions:read", "im:history", "channels:history"} <= scopes
    assert {"app_mention", "message.im", "message.channels"} <= events
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [SLASH_COMMAND]
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
