"""Approve / Reject clicks: the clicking Slack user (from the signed request) decides through the ledger or is refused.

A refusal is an ephemeral message to that user only; the ledger audits every decision and every refusal.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from diagagent.actions import (
    Ledger,
    LedgerEntry,
    LedgerError,
    NotAuthorized,
    PolicyUnchecked,
    approve_and_execute,
)
from diagagent.apps.slack import blocks
from diagagent.apps.slack.incident import IncidentThreads
from diagagent.config import Settings

REJECT_REASON = "rejected from Slack"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Click:
    """Who clicked which button on which message (user from Slack's signed payload, never from message text)."""

    user: str
    entry_value: str
    channel: str
    message_ts: str
    thread_ts: str

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Click:
        container = body.get("container") or {}
        message = body.get("message") or {}
        message_ts = str(message.get("ts") or container.get("message_ts") or "")
        return cls(user=str((body.get("user") or {}).get("id") or ""),
                   entry_value=str((body.get("actions") or [{}])[0].get("value") or ""),
                   channel=str((body.get("channel") or {}).get("id") or container.get("channel_id") or ""),
                   message_ts=message_ts,
                   thread_ts=str(message.get("thread_ts") or container.get("thread_ts") or message_ts))


class ApprovalButtons:
    """The handlers behind the Approve and Reject buttons of a proposal message."""

    def __init__(self, settings: Settings, ledger: Ledger, incidents: IncidentThreads) -> None:
        self.settings = settings
        self.ledger = ledger
        self.incidents = incidents

    def approve(self, click: Click, client: WebClient) -> None:
        entry_id = self._entry_id(click, client)
        if entry_id is None:
            return
        try:
            entry = approve_and_execute(self.ledger, entry_id, click.user, self.settings, reason="approved in Slack")
        except NotAuthorized as exc:
            self._refuse(click, client, f"You cannot approve action #{entry_id}: {exc}.")
            return
        except (LedgerError, PolicyUnchecked) as exc:
            self._refuse(click, client, f"Action #{entry_id} was not approved: {exc}.")
            self._refresh(click, client, entry_id)
            return
        self._show(click, client, entry)
        client.chat_postMessage(channel=click.channel, thread_ts=click.thread_ts, text=blocks.proposal_text(entry),
                                blocks=blocks.outcome_blocks(entry, click.user))

    def reject(self, click: Click, client: WebClient) -> None:
        entry_id = self._entry_id(click, client)
        if entry_id is None:
            return
        try:
            entry = self.ledger.reject(entry_id, click.user, REJECT_REASON)
        except NotAuthorized as exc:
            self._refuse(click, client, f"You cannot reject action #{entry_id}: {exc}.")
            return
        except LedgerError as exc:
            self._refuse(click, client, f"Action #{entry_id} was not rejected: {exc}.")
            self._refresh(click, client, entry_id)
            return
        self._show(click, client, entry)
        client.chat_postMessage(channel=click.channel, thread_ts=click.thread_ts,
                                text=f"{blocks.who(click.user)} rejected action #{entry.id} "
                                     f"({entry.proposal.kind} {blocks.escape(blocks.target(entry.proposal))}).")

    # --- helpers ---------------------------------------------------------------------------------------------

    def _entry_id(self, click: Click, client: WebClient) -> int | None:
        if click.entry_value.isdigit():
            return int(click.entry_value)
        log.warning("a click by %s carried no ledger id (%r)", click.user, click.entry_value[:40])
        self._refuse(click, client, "That button does not name an action in the ledger.")
        return None

    def _refuse(self, click: Click, client: WebClient, why: str) -> None:
        """Tell only the clicking user; their attempt is already in the ledger's audit trail."""
        client.chat_postEphemeral(channel=click.channel, user=click.user, thread_ts=click.thread_ts,
                                  text=f":no_entry: {blocks.escape(why)} Your click is in the audit trail.")

    def _refresh(self, click: Click, client: WebClient, entry_id: int) -> None:
        """Redraw a proposal whose buttons went stale (decided elsewhere: the CLI, another approver, policy)."""
        try:
            self._show(click, client, self.ledger.get(entry_id))
        except LedgerError:
            return

    def _show(self, click: Click, client: WebClient, entry: LedgerEntry) -> None:
        try:
            client.chat_update(channel=click.channel, ts=click.message_ts, text=blocks.proposal_text(entry),
                               blocks=self.incidents.proposal_view(entry))
        except SlackApiError as exc:
            log.warning("could not redraw action #%s: %s", entry.id, exc.response.get("error"))


__all__ = ["ApprovalButtons", "Click"]
