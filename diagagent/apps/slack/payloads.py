"""Signed Slack payloads read into typed models: a button click, a slash command, a message or @mention event.

Signed is not well-formed: a shape these readers do not accept raises Unreadable, which says why and where to answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from diagagent.apps.slack.blocks import APPROVE_ACTION, REJECT_ACTION

SLACK_ID = r"[A-Z0-9]{1,40}"  # U012ABC, C0001, D0001, W..., T...
TS = r"[0-9]{1,12}\.[0-9]{1,9}"
MAX_TEXT_CHARS = 40_000  # Slack truncates a message's text beyond this
MAX_VALUE_CHARS = 2_000  # a button's value (Slack allows 2,000)
BUTTONS = (APPROVE_ACTION, REJECT_ACTION)

SlackId = Annotated[str, StringConstraints(pattern=f"^{SLACK_ID}$")]
Ts = Annotated[str, StringConstraints(pattern=f"^{TS}$")]


class Unreadable(Exception):
    """A payload the handlers cannot act on: `why` (for the user), and whom and where to tell."""

    def __init__(self, why: str, reply_to: ReplyTo) -> None:
        super().__init__(why)
        self.why, self.reply_to = why, reply_to


@dataclass(frozen=True)
class ReplyTo:
    """Where an answer can go: an ephemeral message needs user and channel; else the response_url, if any."""

    user: str | None = None
    channel: str | None = None
    thread_ts: str | None = None
    response_url: str | None = None

    @classmethod
    def of(cls, body: dict[str, Any], user: Any, channel: Any, thread_ts: Any = None) -> ReplyTo:
        url = body.get("response_url")
        return cls(user=_match(user, SLACK_ID), channel=_match(channel, SLACK_ID), thread_ts=_match(thread_ts, TS),
                   response_url=url if isinstance(url, str) and re.match(r"https?://", url) else None)


def _match(value: Any, pattern: str) -> str | None:
    return value if isinstance(value, str) and re.fullmatch(pattern, value) else None


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the payload"
    return f"`{where}`: {error['msg']}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


# --- a click on Approve / Reject --------------------------------------------------------------------------------------

class _Action(_Model):
    action_id: str = Field(max_length=255)
    value: Any = None


class Click(_Model):
    """Who clicked which button on which message (user from Slack's signed payload, never from message text)."""

    user: SlackId
    action_id: str
    entry_value: str  # the ledger id the button carries, checked by the handler
    channel: SlackId
    message_ts: Ts
    thread_ts: Ts


def read_click(body: dict[str, Any]) -> Click:
    """A block_actions payload as a Click on one of our buttons; Unreadable otherwise."""
    container, message = body.get("container"), body.get("message")
    channel = _dig(body, "channel", "id") or _dig(container, "channel_id")
    message_ts = _dig(message, "ts") or _dig(container, "message_ts")
    thread_ts = _dig(message, "thread_ts") or _dig(container, "thread_ts") or message_ts
    reply_to = ReplyTo.of(body, _dig(body, "user", "id"), channel, thread_ts)
    if reply_to.user is None:
        raise Unreadable("I could not tell who clicked (no Slack user id in the click).", reply_to)
    if reply_to.channel is None:
        raise Unreadable("I could not tell which channel the click came from.", reply_to)
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        raise Unreadable("The click carried no button.", reply_to)
    try:
        action = _Action.model_validate(actions[0])
    except ValidationError:
        action = None
    if action is None or action.action_id not in BUTTONS:
        raise Unreadable("That button is not one of mine.", reply_to)
    if _match(message_ts, TS) is None:
        raise Unreadable("I could not tell which message the button is on.", reply_to)
    value = action.value if isinstance(action.value, str) and len(action.value) <= MAX_VALUE_CHARS else ""
    return Click(user=reply_to.user, action_id=action.action_id, entry_value=value, channel=reply_to.channel,
                 message_ts=message_ts, thread_ts=reply_to.thread_ts or message_ts)


# --- /diagagent ---------------------------------------------------------------------------------------------------------

class Command(_Model):
    """`/diagagent ...`: who asked, in which channel, what they wrote, and where a private answer goes."""

    user_id: SlackId
    channel_id: SlackId
    text: str = Field("", max_length=MAX_TEXT_CHARS)
    response_url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$", max_length=2000)]


def read_command(body: dict[str, Any]) -> Command:
    reply_to = ReplyTo.of(body, body.get("user_id"), body.get("channel_id"))
    text = body.get("text")
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        raise Unreadable(f"That command is too long ({len(text):,} characters; at most {MAX_TEXT_CHARS:,}).",
                         reply_to)
    try:
        return Command.model_validate(body)
    except ValidationError as exc:
        raise Unreadable(f"I could not read that command ({_first_problem(exc)}).", reply_to) from None


# --- a message or an @mention ---------------------------------------------------------------------------------------

class Message(_Model):
    """A message event or an @mention: where it is, who wrote it, and its text."""

    channel: SlackId
    ts: Ts
    user: SlackId | None = None
    text: str | None = Field(None, max_length=MAX_TEXT_CHARS)
    thread_ts: Ts | None = None
    channel_type: str | None = Field(None, max_length=40)
    subtype: str | None = Field(None, max_length=100)
    bot_id: str | None = Field(None, max_length=100)


def read_message(event: dict[str, Any]) -> Message:
    reply_to = ReplyTo.of({}, event.get("user"), event.get("channel"), event.get("thread_ts") or event.get("ts"))
    text = event.get("text")
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        raise Unreadable(f"That message is too long for me ({len(text):,} characters; at most "
                         f"{MAX_TEXT_CHARS:,}).", reply_to)
    try:
        return Message.model_validate(event)
    except ValidationError as exc:
        raise Unreadable(f"I could not read that message ({_first_problem(exc)}).", reply_to) from None


__all__ = ["Click", "Command", "Message", "ReplyTo", "Unreadable", "read_click", "read_command", "read_message"]
