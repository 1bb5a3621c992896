"""Approve / Reject clicks: the clicking Slack user (from the signed request) decides through the ledger or is refused.

A refusal is an ephemeral message to that user only, saying the click is in the audit trail only when a row was written.
"""

from __future__ import annotations

import logging
import re

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
from diagagent.apps.slack.payloads import Click
from diagagent.config import Settings

REJECT_REASON = "rejected from Slack"
ENTRY_ID = re.compile(r"[0-9]{1,12}")  # a ledger id as our buttons carry it; ASCII digits only

log = logging.getLogger(__name__)


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
        trail = len(self.ledger.audit(entry_id))
        try:
            entry = approve_and_execute(self.ledger, entry_id, click.user, self.settings, reason="approved in Slack")
        except NotAuthorized as exc:
            self._refuse(click, client, f"You cannot approve action #{entry_id}: {exc}.", entry_id, trail)
            return
        except (LedgerError, PolicyUnchecked) as exc:
            self._refuse(click, client, f"Action #{entry_id} was not approved: {exc}.", entry_id, trail)
            self._refresh(click, client, entry_id)
            return
        self._show(click, client, entry)
        client.chat_postMessage(channel=click.channel, thread_ts=click.thread_ts, text=blocks.proposal_text(entry),
                                blocks=blocks.outcome_blocks(entry, click.user))

    def reject(self, click: Click, client: WebClient) -> None:
        entry_id = self._entry_id(click, client)
        if entry_id is None:
            return
        trail = len(self.ledger.audit(entry_id))
        try:
            entry = self.ledger.reject(entry_id, click.user, REJECT_REASON)
        except NotAuthorized as exc:
            self._refuse(click, client, f"You cannot reject action #{entry_id}: {exc}.", entry_id, trail)
            return
        except LedgerError as exc:
            self._refuse(click, client, f"Action #{entry_id} was not rejected: {exc}.", entry_id, trail)
            self._refresh(click, client, entry_id)
            return
        self._show(click, client, entry)
        client.chat_postMessage(channel=click.channel, thread_ts=click.thread_ts,
                                text=f"{blocks.who(click.user)} rejected action #{entry.id} "
                                     f"({entry.proposal.kind} {blocks.escape(blocks.target(entry.proposal))}).")

    # --- helpers ---------------------------------------------------------------------------------------------

    def _entry_id(self, click: Click, client: WebClient) -> int | None:
        if ENTRY_ID.fullmatch(click.entry_value):
            return int(click.entry_value)
        log.warning("a click by %s carried no ledger id (%r)", click.user, click.entry_value[:40])
        self._refuse(click, client, "That button does not name an action in the ledger. Nothing was done.")
        return None

    def _refuse(self, click: Click, client: WebClient, why: str, entry_id: int | None = None,
                trail: int | None = None) -> None:
        """Tell only the clicking user; that the click is in the audit trail only if the ledger wrote a row for it."""
        audited = entry_id is not None and trail is not None and len(self.ledger.audit(entry_id)) > trail
        note = " Your click is in the audit trail." if audited else ""
        try:
            client.chat_postEphemeral(channel=click.channel, user=click.user, thread_ts=click.thread_ts,
                                      text=f":no_entry: {blocks.escape(why)}{note}")
        except SlackApiError as exc:
            log.warning("could not tell %s why their click was refused: %s", click.user, exc.response.get("error"))

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


__all__ = ["ApprovalButtons"]
