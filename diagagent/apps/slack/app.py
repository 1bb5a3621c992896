"""The slack-bolt App: an @mention, a DM or `/diagagent 42` starts a diagnosis in a thread; replies there follow up.

`build_app(settings, client=None)` wires the listeners; a test passes a WebClient whose base_url is a local mock.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from diagagent.actions import Ledger
from diagagent.apps.slack import blocks
from diagagent.apps.slack.buttons import ApprovalButtons, Click
from diagagent.apps.slack.incident import IncidentThreads
from diagagent.apps.slack.jobs import JobDirectory, JobLookup, plain_text
from diagagent.apps.slack.sessions import (
    DEFAULT_CAPACITY,
    SeenMessages,
    SessionStore,
    ThreadKey,
    ThreadSession,
)
from diagagent.config import Settings
from diagagent.telemetry import JobStore

SLASH_COMMAND = "/diagagent"
USAGE = ("Ask me about a training job: `/diagagent 42`, `/diagagent why did job 42 die?`, @mention me in a channel, "
         "or DM me. I answer in a thread; ask follow-up questions there.")

log = logging.getLogger(__name__)


class SetupError(Exception):
    """The Slack settings are missing something; the message says which variable to set."""


class SlackBot:
    """The listeners: they find the job a message names and hand the thread to IncidentThreads."""

    def __init__(self, settings: Settings, session_capacity: int = DEFAULT_CAPACITY) -> None:
        self.jobs = JobDirectory(JobStore(settings.jobs_dir, settings.limits))
        self.ledger = Ledger.from_settings(settings)
        self.sessions = SessionStore(session_capacity)
        self.seen = SeenMessages()
        self.incidents = IncidentThreads(settings, self.jobs, self.ledger, self.sessions)
        self.buttons = ApprovalButtons(settings, self.ledger, self.incidents)

    # --- events ----------------------------------------------------------------------------------------------

    def on_mention(self, event: dict[str, Any], client: WebClient) -> None:
        self._converse(client, event)

    def on_message(self, event: dict[str, Any], context: BoltContext, client: WebClient) -> None:
        """DMs always; in channels only a question asked in a thread this bot is diagnosing (no @mention needed)."""
        if event.get("subtype") or event.get("bot_id") or event.get("user") in (None, context.bot_user_id):
            return
        if event.get("channel_type") == "im":
            self._converse(client, event)
            return
        text, thread_ts = event.get("text") or "", event.get("thread_ts")
        mentioned = bool(context.bot_user_id) and f"<@{context.bot_user_id}>" in text  # arrives as app_mention too
        if not thread_ts or mentioned or "?" not in text:
            return
        thread = self.sessions.get((event["channel"], thread_ts))
        if thread is not None and self.seen.first_time(event["channel"], event["ts"]):
            self.incidents.answer(client, thread, plain_text(text))

    def _converse(self, client: WebClient, event: dict[str, Any]) -> None:
        """A message addressed to the bot: a follow-up in a known thread, else a new diagnosis, else a clear reply."""
        channel, ts = event["channel"], event["ts"]
        if not self.seen.first_time(channel, ts):
            return
        key: ThreadKey = (channel, event.get("thread_ts") or ts)
        text = event.get("text") or ""
        lookup = self.jobs.lookup(text)
        thread = self.sessions.get(key)
        if thread is not None and not _switches_job(lookup, thread):
            self.incidents.answer(client, thread, plain_text(text))
        elif lookup.job is not None:
            self.incidents.diagnose(client, key, lookup.job, str(event.get("user") or ""))
        else:
            forgotten = ("I no longer have this thread's conversation (I may have restarted). "
                         if event.get("thread_ts") and thread is None else "")
            client.chat_postMessage(channel=channel, thread_ts=key[1], text=forgotten + self._no_job_reply(lookup))

    def _no_job_reply(self, lookup: JobLookup) -> str:
        refs = self.jobs.refs()
        return blocks.unknown_job_text(lookup.asked, refs) if lookup.asked else blocks.which_job_text(refs)

    # --- the slash command -----------------------------------------------------------------------------------

    def on_command(self, ack: Ack, command: dict[str, Any], client: WebClient, respond: Respond) -> None:
        """`/diagagent 42`: acknowledged at once; the diagnosis goes in a thread under a message in the channel."""
        ack()
        text = command.get("text") or ""
        if not text.strip() or text.strip().lower() in ("help", "-h", "--help"):
            respond(text=f"{USAGE}\n{blocks.known_jobs_text(self.jobs.refs())}")
            return
        lookup = self.jobs.lookup(text)
        if lookup.job is None:
            respond(text=self._no_job_reply(lookup))
            return
        channel = command["channel_id"]
        asked = f"<@{command['user_id']}> asked: {blocks.escape(blocks.clip(plain_text(text), 500))}"
        try:
            root = client.chat_postMessage(channel=channel, text=asked)
        except SlackApiError as exc:
            respond(text=f"I cannot post in this channel ({exc.response.get('error')}): invite me with "
                         "`/invite @diagagent`, or DM me.")
            return
        self.incidents.diagnose(client, (channel, str(root["ts"])), lookup.job, str(command.get("user_id") or ""))

    # --- buttons ---------------------------------------------------------------------------------------------

    def on_approve(self, ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        self.buttons.approve(Click.from_body(body), client)

    def on_reject(self, ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        self.buttons.reject(Click.from_body(body), client)


def _switches_job(lookup: JobLookup, thread: ThreadSession) -> bool:
    """A message in a diagnosed thread starts over only when it says "job X" of another known job."""
    return lookup.explicit and lookup.job is not None and lookup.job.job_id != thread.job.job_id


def bot_client(settings: Settings) -> WebClient:
    """A WebClient with the bot token that retries on connection errors and Slack's rate limits."""
    if settings.slack_bot_token is None or not settings.slack_bot_token.get_secret_value():
        raise SetupError("no bot token: set DIAGAGENT_SLACK_BOT_TOKEN (xoxb-...) or SLACK_BOT_TOKEN")
    return WebClient(token=settings.slack_bot_token.get_secret_value(),
                     retry_handlers=[ConnectionErrorRetryHandler(), RateLimitErrorRetryHandler(max_retry_count=2)])


def build_app(settings: Settings, client: WebClient | None = None, *, process_before_response: bool = False,
              session_capacity: int = DEFAULT_CAPACITY) -> App:
    """The bolt App with every listener. Without `client`, the bot token is checked against Slack (auth.test).

    `process_before_response=True` runs each listener before the HTTP response (tests, synchronous embedding);
    served to Slack, keep the default so that every request is acknowledged at once and the work runs after.
    Without a signing secret (Socket Mode needs none) a random one is set, so no HTTP request can verify.
    """
    given = client is not None
    signing_secret = (settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else "")
    app = App(client=client or bot_client(settings), signing_secret=signing_secret or secrets.token_hex(32),
              token_verification_enabled=not given, process_before_response=process_before_response,
              logger=log)
    bot = SlackBot(settings, session_capacity)
    app.event("app_mention")(bot.on_mention)
    app.event("message")(bot.on_message)
    app.command(SLASH_COMMAND)(bot.on_command)
    app.action(blocks.APPROVE_ACTION)(bot.on_approve)
    app.action(blocks.REJECT_ACTION)(bot.on_reject)
    return app


__all__ = ["SLASH_COMMAND", "SetupError", "SlackBot", "bot_client", "build_app"]
