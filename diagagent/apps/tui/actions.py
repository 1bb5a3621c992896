"""The actions pane: this job's Ledger entries, the selected one's details, and approve / reject buttons.

Deciding opens a confirmation (confirm.py); this pane only says which entry and what, and shows the outcome.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Static

from diagagent.actions import LedgerEntry
from diagagent.apps.tui.table_pane import TablePane
from diagagent.diagnosis import ActionProposal

DecisionKind = Literal["approve", "reject"]
STATE_STYLE = {"pending": "bold yellow", "approved": "cyan", "running": "bold blue", "unknown": "bold magenta",
               "rejected": "dim", "executed": "bold green", "failed": "bold red"}


def target(p: ActionProposal) -> str:
    """The action's object in a few words."""
    if p.kind == "evict":
        return ", ".join(p.nodes[:3]) + (f" +{len(p.nodes) - 3}" if len(p.nodes) > 3 else "")
    if p.kind == "restart":
        return f"from step {p.from_step}" if p.from_step is not None else "from the latest checkpoint"
    if p.kind == "rollback":
        return f"to commit {p.to_commit}"
    return "-"


def entry_detail(e: LedgerEntry) -> Text:
    p = e.proposal
    text = Text.assemble((f"#{e.id} ", "bold"), (p.kind, "bold"), f" {target(p)}  ", (e.state, STATE_STYLE[e.state]))
    text.append(f"\nreason: {p.reason or '-'}")
    if p.evidence:
        text.append(f"\nevidence: {', '.join(p.evidence)}", "dim")
    for warning in dict.fromkeys(p.warnings + e.policy_warnings):
        text.append(f"\nwarning: {warning}", "yellow")
    for violation in e.violations:
        text.append(f"\nblocked: {violation}", "bold red")
    text.append(f"\nproposed by {e.proposed_by}", "dim")
    if e.decided_by:
        verdict = "rejected" if e.state == "rejected" else "approved"
        text.append(f"\n{verdict} by {e.decided_by}" + (f": {e.decision_reason}" if e.decision_reason else ""))
    if e.lease is not None:
        text.append(f"\nexecutor: {e.lease.describe()}", "dim")
    if e.state == "unknown":
        text.append(f"\noutcome unknown: the run was interrupted, so nobody knows what ran; it does not run again "
                    f"until someone finds out and records it (diagagent actions reconcile {e.id})", "bold magenta")
    if e.output:
        text.append(f"\nran ({e.executor or '?'}):\n", "bold")
        text.append(e.output)
    return text


class ActionsPane(TablePane):
    """Ledger entries of this job; `a` / `r` (or the buttons) ask the app to confirm a decision."""

    COLUMNS = ("#", "state", "action", "target", "notes")
    FLEX = "notes"
    CAPS = {"target": 28}  # noqa: RUF012 - read-only
    PLACEHOLDER = "Proposed actions appear here once the diagnosis is ready."
    # not in the footer (it is full at 80 columns): the buttons show these keys
    BINDINGS: ClassVar[list[BindingType]] = [Binding("a", "decide('approve')", "Approve…", show=False),
                                             Binding("r", "decide('reject')", "Reject…", show=False)]

    class Decide(Message):
        def __init__(self, entry: LedgerEntry, kind: DecisionKind) -> None:
            super().__init__()
            self.entry = entry
            self.kind = kind

    def __init__(self) -> None:
        super().__init__("actions")
        self.entries: dict[int, LedgerEntry] = {}

    def compose(self) -> ComposeResult:
        yield from super().compose()
        with Horizontal(id="action-buttons"):
            yield Button("Approve… (a)", id="approve", variant="success", compact=True)
            yield Button("Reject… (r)", id="reject", variant="error", compact=True)
        yield Static(id="action-status")

    def load(self, entries: tuple[LedgerEntry, ...]) -> None:
        self.entries = {e.id: e for e in entries}
        rows = []
        for e in entries:
            notes = len(set(e.proposal.warnings + e.policy_warnings))
            cell = (f"{len(e.violations)} blocking" if e.violations else f"{notes} warning(s)" if notes else "")
            rows.append((str(e.id), (Text(str(e.id)), Text(e.state, STATE_STYLE[e.state]), Text(e.proposal.kind),
                                     Text(target(e.proposal)), Text(cell, "red" if e.violations else "yellow"))))
        self.set_rows(rows)
        if entries:
            selected = self.selected()
            if selected is not None:
                self.show_detail(entry_detail(selected))
        else:
            self.show_detail(Text("No action is proposed for this incident."))

    def selected(self) -> LedgerEntry | None:
        if not self.entries or self.table.cursor_row < 0:
            return None
        key = self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key.value
        return self.entries.get(int(str(key)))

    def row_highlighted(self, key: str) -> None:
        entry = self.entries.get(int(key))
        if entry is not None:
            self.show_detail(entry_detail(entry))

    @on(Button.Pressed, "#approve")
    def _approve_pressed(self) -> None:
        self.action_decide("approve")

    @on(Button.Pressed, "#reject")
    def _reject_pressed(self) -> None:
        self.action_decide("reject")

    def action_decide(self, kind: DecisionKind) -> None:
        entry = self.selected()
        if entry is None:
            self.set_status(Text("No action selected.", "yellow"))
        elif entry.state == "unknown":
            self.set_status(Text(f"Action #{entry.id}'s outcome is unknown: find out what ran, then record it with "
                                 f"`diagagent actions reconcile {entry.id}`.", "bold magenta"))
        elif entry.state != "pending":
            self.set_status(Text(f"Action #{entry.id} is already {entry.state}.", "yellow"))
        else:
            self.post_message(self.Decide(entry, kind))

    def set_status(self, text: Text) -> None:
        self.query_one("#action-status", Static).update(text)


__all__ = ["ActionsPane", "DecisionKind", "entry_detail", "target"]
