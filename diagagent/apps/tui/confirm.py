"""The confirmation before an approve or reject: exactly what approval will run, the warnings, and who decides.

Nothing is decided here: the screen returns a Decision (or None), and the app asks the Ledger, which checks again.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from diagagent.actions import Actor, ExecutionPlan, LedgerEntry
from diagagent.actions.identity import name_key
from diagagent.apps.tui.actions import DecisionKind, target


@dataclass(frozen=True)
class Decision:
    kind: DecisionKind
    entry_id: int
    reason: str = ""


def plan_text(execution: ExecutionPlan | None, plan_error: str) -> Text:
    if plan_error:
        return Text(f"This action cannot run: {plan_error}", "bold red")
    assert execution is not None
    if not execution.commands:
        return Text("Nothing to run: approving records the decision.")
    if execution.runs:
        text = Text(f"Approving runs these {execution.executor} commands, in order (no shell):", "bold")
    else:
        text = Text(f"The executor is dry-run: approving records these {execution.renders} commands and runs "
                    "nothing:", "bold")
    for argv in execution.commands:
        text.append(f"\n  $ {shlex.join(argv)}", "bold cyan")
    if execution.stdin:
        text.append("\n  (with the action as JSON on stdin)", "dim")
    return text


def confirm_text(entry: LedgerEntry, kind: DecisionKind, execution: ExecutionPlan | None, plan_error: str,
                 user: str | Actor, approvers: frozenset[str], admins: frozenset[str] = frozenset()) -> Text:
    """Everything the operator needs to decide, as plain Text (reasons and hosts come from telemetry).

    Whether the ledger will accept the decision is said up front, with the ledger's rules (names casefolded).
    """
    actor = Actor.of(user)
    p = entry.proposal
    text = Text.assemble((f"{kind.capitalize()} action #{entry.id} for job {entry.job_id}: ", "bold"),
                         (f"{p.kind} {target(p)}", "bold"))
    text.append(f"\nreason: {p.reason or '-'}\n\n")
    if kind == "approve":
        text.append_text(plan_text(execution, plan_error))
    else:
        text.append("Rejecting runs nothing. The reason is kept in the audit trail.", "bold")
    for warning in dict.fromkeys(p.warnings + entry.policy_warnings):
        text.append(f"\nwarning: {warning}", "yellow")
    for violation in entry.violations:
        text.append(f"\nblocked: {violation}", "bold red")
    text.append("\n\n")
    if actor.via and name_key(actor.via) not in {name_key(a) for a in admins}:
        text.append(f"You are {actor.via}, not an admin (DIAGAGENT_ADMINS), so you may not act as {actor.name}: the "
                    "ledger will refuse, and the attempt is recorded in the audit trail.", "bold red")
    elif name_key(actor.name) not in {name_key(a) for a in approvers}:
        shown = ", ".join(sorted(approvers)) or "none configured (DIAGAGENT_APPROVERS)"
        text.append(f"You are {actor}, not an approver (approvers: {shown}): the ledger will refuse, and the "
                    "attempt is recorded in the audit trail.", "bold red")
    elif name_key(entry.proposed_by) in actor.people():
        text.append(f"You are {actor} and proposed this action: the ledger will refuse your decision.", "bold red")
    else:
        text.append(f"You are {actor}, an approver.", "green")
    text.append(f"\nProposed by {entry.proposed_by}; whoever proposed an action cannot decide on it.", "dim")
    return text


class ConfirmDecision(ModalScreen[Decision | None]):
    """Asks for an explicit yes; Cancel (or Escape) is focused first, so a stray Enter decides nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, entry: LedgerEntry, kind: DecisionKind, *, execution: ExecutionPlan | None,
                 plan_error: str, user: str | Actor, approvers: frozenset[str],
                 admins: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.entry = entry
        self.kind = kind
        self.body = confirm_text(entry, kind, execution, plan_error, user, approvers, admins)
        self.blocked = kind == "approve" and bool(plan_error)

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes=f"-{self.kind}"):
            with VerticalScroll(id="confirm-body"):
                yield Static(self.body, id="confirm-text")
            yield Input(placeholder="Why reject it? (required)" if self.kind == "reject" else "Why? (optional)",
                        id="decision-reason", compact=True)
            yield Static(id="confirm-error")
            with Horizontal(id="confirm-buttons"):
                label = "Approve and run" if self.kind == "approve" else "Reject"
                yield Button(label, id="confirm", variant="success" if self.kind == "approve" else "error",
                             disabled=self.blocked, compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#decision-reason" if self.kind == "reject" else "#cancel").focus()

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#confirm")
    def _confirm(self) -> None:
        field = self.query_one("#decision-reason", Input)
        reason = field.value.strip()
        if self.kind == "reject" and not reason:
            field.focus()
            self.query_one("#confirm-error", Static).update(Text("A rejection needs a reason.", "bold red"))
            return
        self.dismiss(Decision(self.kind, self.entry.id, reason))

    @on(Input.Submitted, "#decision-reason")
    def _reason_submitted(self) -> None:
        self.query_one("#confirm", Button).focus()


__all__ = ["ConfirmDecision", "Decision", "confirm_text", "plan_text"]
