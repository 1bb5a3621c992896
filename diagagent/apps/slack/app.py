"""The slack-bolt App: an @mention, a DM or `/diagagent 42` starts a diagnosis in a thread; replies there follow up.

`build_app(settings, client=None)` wires the listeners; a test passes a WebClient whose base_url is a local mock.
"""

from __future__ import annotations

import logging
import secrets
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slack_bolt import Ack, App, BoltContext, BoltRequest, BoltResponse, Respond
from slack_bolt.middleware import Middleware
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler
from slack_sdk.webhook import WebhookClient

from diagagent.actions import Ledger
from diagagent.apps.slack import blocks
from diagagent.apps.slack.buttons import ApprovalButtons
from diagagent.apps.slack.incident import IncidentThreads
from diagagent.apps.slack.jobs import JobDirectory, JobLookup, plain_text
from diagagent.apps.slack.payloads import (
    Command,
    Message,
    ReplyTo,
    Unreadable,
    read_click,
    read_command,
    read_message,
)
from diagagent.apps.slack.sessions import (
    DEFAULT_CAPACITY,
    SeenMessages,
    SessionStore,
    ThreadKey,
    ThreadSession,
)
from diagagent.config import Settings

SLASH_COMMAND = "/diagagent"
# where the payload middleware leaves the typed payload for the listeners
CLICK, COMMAND, MESSAGE = "diagagent_click", "diagagent_command", "diagagent_message"
MAX_LOG_CHARS = 300
USAGE = ("Ask me about a training job: `/diagagent 42`, `/diagagent why did job 42 die?`, @mention me in a channel, "
         "or DM me. I answer in a thread; ask follow-up questions there.")

log = logging.getLogger(__name__)


class SetupError(Exception):
    """The Slack settings are missing something; the message says which variable to set."""


class OneLine(logging.Filter):
    """Every record one line of at most `limit` characters: bolt puts request bodies in some of its messages."""

    def __init__(self, limit: int = MAX_LOG_CHARS) -> None:
        super().__init__()
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        message = " ".join(record.getMessage().split())
        if len(message) > self.limit:
            message = f"{message[:self.limit]}… ({len(message)} chars)"
        record.msg, record.args = message, None
        return True


def clip(text: str, limit: int = 120) -> str:
    """A log-safe excerpt of untrusted text: one line, at most `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


def tell(client: WebClient, to: ReplyTo, text: str) -> bool:
    """A private answer: an ephemeral message when the user and channel are known, else via the response_url."""
    if to.user and to.channel:
        try:
            client.chat_postEphemeral(channel=to.channel, user=to.user, thread_ts=to.thread_ts, text=text)
            return True
        except SlackApiError as exc:
            log.warning("slack: could not answer %s privately: %s", to.user, exc.response.get("error"))
    if to.response_url:
        try:
            sent = WebhookClient(to.response_url, timeout=10).send(text=text, response_type="ephemeral",
                                                                    replace_original=False)
            return sent.status_code == 200
        except (SlackClientError, OSError, ValueError) as exc:
            log.warning("slack: could not answer through the response_url: %s", type(exc).__name__)
    return False


class SlackBot:
    """The listeners: they find the job a message names and hand the thread to IncidentThreads."""

    def __init__(self, settings: Settings, session_capacity: int = DEFAULT_CAPACITY) -> None:
        self.jobs = JobDirectory(settings.jobs())
        self.ledger = Ledger.from_settings(settings)
        self.sessions = SessionStore(session_capacity)
        self.seen = SeenMessages()
        self.incidents = IncidentThreads(settings, self.jobs, self.ledger, self.sessions)
        self.buttons = ApprovalButtons(settings, self.ledger, self.incidents)

    # --- every request: the payload read into a typed model first ----------------------------------------------

    def read_payload(self, body: dict[str, Any], context: BoltContext, client: WebClient,
                     next_: Callable[[], Any]) -> BoltResponse | None:
        """A click, a command or a message the listeners can act on (left in `context`), or a private answer why not."""
        event = body.get("event")
        try:
            if body.get("type") == "block_actions":
                context[CLICK] = read_click(body)
            if "command" in body:
                context[COMMAND] = read_command(body)
            if body.get("type") == "event_callback" and isinstance(event, dict) \
                    and event.get("type") in ("app_mention", "message"):
                context[MESSAGE] = read_message(event)
        except Unreadable as exc:
            return self._unreadable(exc, body, client)
        return next_()

    def _unreadable(self, exc: Unreadable, body: dict[str, Any], client: WebClient) -> BoltResponse:
        kind = "command" if "command" in body else str(body.get("type"))[:40]
        if kind == "command":  # the answer to a slash command's POST is shown to its user only
            log.info("slack: unreadable command: %s", clip(exc.why))
            return BoltResponse(status=200, body={"response_type": "ephemeral", "text": blocks.escape(exc.why)})
        told = tell(client, exc.reply_to, f":warning: {blocks.escape(exc.why)} Nothing was done.")
        log.info("slack: unreadable %s payload (%s): %s", kind, "answered" if told else "nowhere to answer",
                 clip(exc.why))
        return BoltResponse(status=200, body="")

    def on_error(self, error: Exception, body: dict[str, Any]) -> BoltResponse:
        """One log line. A failure in bolt's own reading of a signed payload Slack never sends is a 400; a failure in
        our listeners is a bug (500, with where it happened)."""
        package = str(Path(__file__).resolve().parents[2])  # .../diagagent
        frames = traceback.extract_tb(error.__traceback__)
        ours = [f for f in frames if str(Path(f.filename).resolve()).startswith(package)]
        last = (ours or frames)[-1] if frames else None
        where = f" at {last.filename.rsplit('/', 1)[-1]}:{last.lineno}" if last else ""
        kind = str(body.get("type") or ("command" if "command" in body else "?"))[:40]
        if ours:
            log.error("slack: a listener failed on a %s payload: %s: %s%s", kind, type(error).__name__,
                      clip(str(error)), where)
            return BoltResponse(status=500, body="")
        log.warning("slack: refused a %s payload bolt cannot read: %s: %s%s", kind, type(error).__name__,
                    clip(str(error)), where)
        return BoltResponse(status=400, body={"error": "malformed payload"})

    # --- events ----------------------------------------------------------------------------------------------

    def on_mention(self, context: BoltContext, client: WebClient) -> None:
        self._converse(client, context[MESSAGE])

    def on_message(self, context: BoltContext, client: WebClient) -> None:
        """DMs always; in channels only a question asked in a thread this bot is diagnosing (no @mention needed)."""
        event: Message = context[MESSAGE]
        if event.subtype or event.bot_id or event.user in (None, context.bot_user_id):
            return
        if event.channel_type == "im":
            self._converse(client, event)
            return
        text, thread_ts = event.text or "", event.thread_ts
        mentioned = bool(context.bot_user_id) and f"<@{context.bot_user_id}>" in text  # arrives as app_mention too
        if not thread_ts or mentioned or "?" not in text:
            return
        thread = self.sessions.get((event.channel, thread_ts))
        if thread is not None and self.seen.first_time(event.channel, event.ts):
            self.incidents.answer(client, thread, plain_text(text))

    def _converse(self, client: WebClient, event: Message) -> None:
        """A message addressed to the bot: a follow-up in a known thread, else a new diagnosis, else a clear reply."""
        if not self.seen.first_time(event.channel, event.ts):
            return
        key: ThreadKey = (event.channel, event.thread_ts or event.ts)
        text = event.text or ""
        lookup = self.jobs.lookup(text)
        thread = self.sessions.get(key)
        if thread is not None and not _switches_job(lookup, thread):
            self.incidents.answer(client, thread, plain_text(text))
        elif lookup.job is not None:
            self.incidents.diagnose(client, key, lookup.job, event.user or "")
        else:
            forgotten = ("I no longer have this thread's conversation (I may have restarted). "
                         if event.thread_ts and thread is None else "")
            client.chat_postMessage(channel=event.channel, thread_ts=key[1],
                                    text=forgotten + self._no_job_reply(lookup))

    def _no_job_reply(self, lookup: JobLookup) -> str:
        refs = self.jobs.refs()
        return blocks.unknown_job_text(lookup.asked, refs) if lookup.asked else blocks.which_job_text(refs)

    # --- the slash command -----------------------------------------------------------------------------------

    def on_command(self, ack: Ack, context: BoltContext, client: WebClient, respond: Respond) -> None:
        """`/diagagent 42`: acknowledged at once; the diagnosis goes in a thread under a message in the channel."""
        ack()
        command: Command = context[COMMAND]
        text = command.text
        if not text.strip() or text.strip().lower() in ("help", "-h", "--help"):
            respond(text=f"{USAGE}\n{blocks.known_jobs_text(self.jobs.refs())}")
            return
        lookup = self.jobs.lookup(text)
        if lookup.job is None:
            respond(text=self._no_job_reply(lookup))
            return
        channel = command.channel_id
        asked = f"<@{command.user_id}> asked: {blocks.escape(blocks.clip(plain_text(text), 500))}"
        try:
            root = client.chat_postMessage(channel=channel, text=asked)
        except SlackApiError as exc:
            respond(text=f"I cannot post in this channel ({exc.response.get('error')}): invite me with "
                         "`/invite @diagagent`, or DM me.")
            return
        self.incidents.diagnose(client, (channel, str(root["ts"])), lookup.job, command.user_id)

    # --- buttons ---------------------------------------------------------------------------------------------

    def on_approve(self, ack: Ack, context: BoltContext, client: WebClient) -> None:
        ack()
        self.buttons.approve(context[CLICK], client)

    def on_reject(self, ack: Ack, context: BoltContext, client: WebClient) -> None:
        ack()
        self.buttons.reject(context[CLICK], client)


class PayloadCheck(Middleware):
    """The first of our middleware, a class so that bolt hands it the request as is: for a function middleware, listener
    or error handler bolt first builds every keyword argument, indexing into the payload (`actions[0]`, ...)."""

    def __init__(self, bot: SlackBot) -> None:
        self.bot = bot

    def process(self, *, req: BoltRequest, resp: BoltResponse,
                next: Callable[[], BoltResponse]) -> BoltResponse | None:
        return self.bot.read_payload(req.body, req.context, req.context.client, next)


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
    if not any(isinstance(f, OneLine) for f in log.filters):
        log.addFilter(OneLine())  # before the App: bolt's own loggers copy this logger's filters
    app = App(client=client or bot_client(settings), signing_secret=signing_secret or secrets.token_hex(32),
              token_verification_enabled=not given, process_before_response=process_before_response,
              logger=log)
    bot = SlackBot(settings, session_capacity)
    app.use(PayloadCheck(bot))
    app.error(bot.on_error)
    app.event("app_mention")(bot.on_mention)
    app.event("message")(bot.on_message)
    app.command(SLASH_COMMAND)(bot.on_command)
    app.action(blocks.APPROVE_ACTION)(bot.on_approve)
    app.action(blocks.REJECT_ACTION)(bot.on_reject)
    return app


__all__ = ["SLASH_COMMAND", "OneLine", "SetupError", "SlackBot", "bot_client", "build_app", "tell"]
