"""The confirmation before an approve or reject: exactly what approval will run, the warnings, and who decides.

Nothing is decided here: the screen returns a Decision (or None), and the app asks the Ledger, which checks again.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events, on
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


CHROME_ROWS = 10  # the dialog's rows besides its body: border, reason, error line, buttons, margins


class ConfirmDecision(ModalScreen[Decision | None]):
    """Asks for an explicit yes; Cancel (or Escape) is focused first, so a stray Enter decides nothing.

    Focus cycles reason -> decide -> Cancel; text typed while a button has focus goes into the reason (Space
    and Enter still press the button), so nothing typed is lost. The body shrinks (and scrolls) on a short
    screen so the reason, its error and the buttons always show.
    """

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
            with VerticalScroll(id="confirm-body", can_focus=False):
                yield Static(self.body, id="confirm-text")
            yield Input(placeholder="Why reject it? (required)" if self.kind == "reject" else "Why? (optional)",
                        id="decision-reason", compact=True, select_on_focus=False)
            yield Static(id="confirm-error")
            with Horizontal(id="confirm-buttons"):
                label = "Approve and run" if self.kind == "approve" else "Reject"
                yield Button(label, id="confirm", variant="success" if self.kind == "approve" else "error",
                             disabled=self.blocked, compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#decision-reason" if self.kind == "reject" else "#cancel").focus()
        self._fit_body()

    def on_resize(self, event: events.Resize) -> None:
        self._fit_body()

    def _fit_body(self) -> None:
        self.query_one("#confirm-body").styles.max_height = max(3, int(self.size.height * 0.9) - CHROME_ROWS)

    def on_key(self, event: events.Key) -> None:
        """A character typed on a button belongs to the reason: move it there instead of losing it."""
        field = self.query_one("#decision-reason", Input)
        if isinstance(self.focused, Button) and event.is_printable and event.character not in (None, " "):
            event.stop()
            event.prevent_default()
            field.focus()
            field.insert_text_at_cursor(event.character)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    def _missing_reason(self) -> bool:
        """A rejection without a reason: say so under the field (visibly, with a bell) and keep the focus there."""
        field = self.query_one("#decision-reason", Input)
        if self.kind != "reject" or field.value.strip():
            return False
        field.focus()
        self.query_one("#confirm-error", Static).update(Text("A rejection needs a reason: type it above.", "bold red"))
        self.query_one("#confirm-error").scroll_visible(animate=False)
        self.app.bell()
        return True

    @on(Button.Pressed, "#confirm")
    def _confirm(self) -> None:
        if self._missing_reason():
            return
        reason = self.query_one("#decision-reason", Input).value.strip()
        self.dismiss(Decision(self.kind, self.entry.id, reason))

    @on(Input.Changed, "#decision-reason")
    def _reason_changed(self, event: Input.Changed) -> None:
        if event.value.strip():
            self.query_one("#confirm-error", Static).update("")

    @on(Input.Submitted, "#decision-reason")
    def _reason_submitted(self) -> None:
        if not self._missing_reason():
            self.query_one("#confirm", Button).focus()


__all__ = ["ConfirmDecision", "Decision", "confirm_text", "plan_text"]
