"""`DiagApp`: the Textual app behind `diagagent chat`, wiring a Session (in worker threads) and the Ledger to panes.

It starts at once: the diagnosis runs in a thread while the analyzer checklist fills in; questions queue behind it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, Input, TabbedContent, TabPane

from diagagent.actions import (
    Actor,
    ExecutionPlan,
    Ledger,
    LedgerEntry,
    LedgerError,
    NotAuthorized,
    PolicyUnchecked,
    TemplateError,
    approve_and_execute,
    plan,
)
from diagagent.actions.ledger import action_key
from diagagent.agent import Session
from diagagent.agent.playbook import summary
from diagagent.agent.session import ToolCallRecord
from diagagent.apps.tui.actions import ActionsPane, DecisionKind
from diagagent.apps.tui.chat import AnswerView, ChatPane, UserMessage
from diagagent.apps.tui.commands import SlashCommand, help_markdown, parse_slash
from diagagent.apps.tui.confirm import ConfirmDecision, Decision
from diagagent.apps.tui.diagnosis_panel import DiagnosisPanel
from diagagent.apps.tui.evidence import EvidencePane
from diagagent.apps.tui.header import JobHeader
from diagagent.apps.tui.incident import Incident, gather, refresh_actions
from diagagent.apps.tui.nodes import NodesPane
from diagagent.apps.tui.timeline import TimelinePane
from diagagent.config import Settings
from diagagent.telemetry import Bundle

PARTS = ("logs", "flows", "stacks", "probes")
WIDE_COLUMNS = 160  # from this width the evidence and node details sit beside their tables (below 160 the text
# column of a half-width table would be a few characters wide)
# how the app gets its Incident (blocking; run in a thread): `gather` by default, fixed data in snapshot tests
IncidentSource = Callable[[Session, Ledger, str], Incident]
# pane id -> the widget that takes focus when the pane is shown
PANE_FOCUS = {"chat": "#prompt", "evidence": "#evidence-table", "nodes": "#nodes-table",
              "timeline": "#timeline-pane", "actions": "#actions-table"}


class SessionEvent(Message):
    """A Session event (analyzer, tool, diagnosis, answer), posted from the worker thread that ran it."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__()
        self.event = event


class DiagApp(App[None]):
    """One incident: header, diagnosis, and Chat | Evidence | Nodes | Timeline | Actions."""

    CSS_PATH = "tui.tcss"
    TITLE = "diagagent"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (WIDE_COLUMNS, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help"),
        Binding("f2", "show_pane('chat')", "Chat"),
        Binding("f3", "show_pane('evidence')", "Evidence"),
        Binding("f4", "show_pane('nodes')", "Nodes"),
        Binding("f5", "show_pane('timeline')", "Timeline"),
        Binding("f6", "show_pane('actions')", "Actions"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, bundle: Bundle, settings: Settings, *, user: str | Actor, proposer: str | None = None,
                 use_llm: bool | None = None, ledger: Ledger | None = None,
                 incident_source: IncidentSource = gather) -> None:
        """`user` decides (an Actor when an admin acts as someone); `proposer`, who asked for this diagnosis, is
        recorded as proposing its actions (default: the human behind `user`), so they cannot approve them."""
        super().__init__()
        self.incident_source = incident_source
        self.bundle = bundle
        self.settings = settings
        self.actor = Actor.of(user)
        self.user = str(self.actor)
        self.proposer = proposer or self.actor.via or self.actor.name
        self.ledger = ledger or Ledger.from_settings(settings)
        self.session = Session(bundle, settings, on_event=self._from_session, use_llm=use_llm)
        self.session.ctx.ledger = self.ledger  # answers say each proposal's state in this app's ledger
        self.incident: Incident | None = None
        # the tool calls that led to the diagnosis, recorded in the session's thread as they end
        self.investigation: list[ToolCallRecord] = []
        self._diagnosis_emitted = False

    # --- layout ------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield JobHeader(self.bundle.job, self.session.mode, self.user)
        yield DiagnosisPanel({p for p in PARTS if self.bundle.has(p)})
        with TabbedContent(initial="chat", id="panes"):
            with TabPane("Chat", id="chat"):
                yield ChatPane()
            with TabPane("Evidence", id="evidence"):
                yield EvidencePane(self.bundle.lines_around)
            with TabPane("Nodes", id="nodes"):
                yield NodesPane()
            with TabPane("Timeline", id="timeline"):
                yield TimelinePane()
            with TabPane("Actions", id="actions"):
                yield ActionsPane()
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#prompt", Input).focus()
        view = AnswerView("Diagnosis")
        await self.query_one(ChatPane).add(view)
        self.diagnose(view)

    # --- the session -------------------------------------------------------------------------------------

    def _from_session(self, event: dict[str, Any]) -> None:
        """Runs in the session's worker thread: record, then hand the event to the UI without waiting for it."""
        if event.get("type") == "tool_end" and not self._diagnosis_emitted:
            self.investigation.append(ToolCallRecord(tool=event["tool"], args=event.get("args", {}),
                                                     result=event.get("result", "")))
        elif event.get("type") == "diagnosis":
            self._diagnosis_emitted = True
        try:
            self.post_message(SessionEvent(event))
        except RuntimeError:  # the app closed while the thread was still working
            pass

    @on(SessionEvent)
    def _session_event(self, message: SessionEvent) -> None:
        event, panel = message.event, self.query_one(DiagnosisPanel)
        kind = event.get("type")
        if kind == "analyzer_start":
            panel.analyzer_started(str(event.get("name")))
        elif kind == "analyzer_end":
            panel.analyzer_ended(str(event.get("name")), event.get("seconds"), bool(event.get("ok", True)))
        elif kind == "tool_start":
            panel.tool_started(str(event.get("tool")))

    @work(group="diagnosis", exclusive=True)
    async def diagnose(self, view: AnswerView) -> None:
        try:
            incident = await asyncio.to_thread(self.incident_source, self.session, self.ledger,
                                              self.proposer)
        except Exception as exc:  # noqa: BLE001 - shown to the operator, never fatal to the app
            message = f"{type(exc).__name__}: {exc}"
            self.query_one(DiagnosisPanel).failed(message)
            await view.show_error(f"The diagnosis failed: {message}")
            return
        await self.show_incident(incident, view)

    async def show_incident(self, incident: Incident, view: AnswerView) -> None:
        self.incident = incident
        d = incident.diagnosis
        self.query_one(DiagnosisPanel).show(d)
        by_key = {action_key(e.proposal): e for e in incident.actions}
        await view.show(summary(d, [by_key.get(action_key(p)) for p in d.proposals]), self.investigation)
        self.query_one(EvidencePane).load(d.evidence)
        self.query_one(NodesPane).load(incident.nodes)
        await self.query_one(TimelinePane).load(incident.timeline, incident.timeline_note)
        actions = self.query_one(ActionsPane)
        actions.load(incident.actions)
        if incident.ledger_note:
            actions.set_status(Text(incident.ledger_note, "bold red"))
        self._label_tabs(incident)

    def _label_tabs(self, incident: Incident) -> None:
        tabs = self.query_one(TabbedContent)
        tabs.get_tab("evidence").label = f"Evidence {len(incident.diagnosis.evidence)}"
        tabs.get_tab("nodes").label = f"Nodes {len(incident.nodes)}"
        pending = sum(e.state == "pending" for e in incident.actions)
        tabs.get_tab("actions").label = f"Actions {pending}/{len(incident.actions)}" if incident.actions else "Actions"

    # --- chat --------------------------------------------------------------------------------------------

    @on(Input.Submitted, "#prompt")
    async def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.clear()
        if not text:
            return
        slash = parse_slash(text)
        if slash is not None:
            await self.run_slash(*slash)
            return
        asked, view = UserMessage(text), AnswerView("diagagent")
        await self.query_one(ChatPane).add(asked, view)
        self.ask(asked, view)

    @work(group="ask")
    async def ask(self, asked: UserMessage, view: AnswerView) -> None:
        try:
            answer = await asyncio.to_thread(self.session.ask, asked.question)
        except Exception as exc:  # noqa: BLE001
            await view.show_error(f"No answer: {type(exc).__name__}: {exc}")
            return
        await view.show(answer.markdown, answer.tool_calls)
        self.call_after_refresh(asked.scroll_visible, top=True, animate=False)

    async def run_slash(self, command: SlashCommand | None, word: str) -> None:
        if command is None:
            view = AnswerView("diagagent")
            await self.query_one(ChatPane).add(UserMessage(f"/{word}"), view)
            await view.show(f"Unknown command `/{word}`. Type `/help` for the commands.", [])
        elif command.pane is None:
            await self.action_help()
        else:
            self.action_show_pane(command.pane)

    async def action_help(self) -> None:
        self.action_show_pane("chat")
        view = AnswerView("help")
        await self.query_one(ChatPane).add(view)
        await view.show(help_markdown(), [])
        self.call_after_refresh(view.scroll_visible, top=True, animate=False)

    def action_show_pane(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane
        self.query_one(PANE_FOCUS[pane]).focus()

    # --- actions -----------------------------------------------------------------------------------------

    @on(ActionsPane.Decide)
    def _decide_requested(self, message: ActionsPane.Decide) -> None:
        self.decide(message.entry, message.kind)

    @work(group="decision", exclusive=True)
    async def decide(self, entry: LedgerEntry, kind: DecisionKind) -> None:
        """Show exactly what will happen, wait for an explicit yes, then ask the Ledger (which may refuse)."""
        pane = self.query_one(ActionsPane)
        execution: ExecutionPlan | None = None
        plan_error = ""
        if kind == "approve":
            try:
                execution = await asyncio.to_thread(plan, entry, self.settings)
            except (TemplateError, ValueError, OSError) as exc:  # a bad or missing tools/actions.yaml too
                plan_error = f"it cannot run under the {self.settings.executor} executor: {exc}"
        screen = ConfirmDecision(entry, kind, execution=execution, plan_error=plan_error, user=self.actor,
                                 approvers=self.ledger.approvers, admins=self.ledger.admins)
        decision = await self.push_screen_wait(screen)
        if decision is None:
            pane.set_status(Text("Cancelled: nothing was decided.", "dim"))
            return
        try:
            status = await self.apply_decision(decision)
            entries = await asyncio.to_thread(refresh_actions, self.ledger, entry.job_id)
        except Exception as exc:  # noqa: BLE001 - e.g. the ledger file is unreadable: say so, keep the app
            pane.set_status(Text(f"The ledger failed: {type(exc).__name__}: {exc}", "bold red"))
            return
        pane.load(entries)
        pane.set_status(status)
        if self.incident is not None:
            self.incident = replace(self.incident, actions=entries)
            self._label_tabs(self.incident)

    async def apply_decision(self, decision: Decision) -> Text:
        verb = "approval" if decision.kind == "approve" else "rejection"
        try:
            if decision.kind == "approve":
                done = await asyncio.to_thread(approve_and_execute, self.ledger, decision.entry_id, self.actor,
                                               self.settings, decision.reason)
            else:
                done = await asyncio.to_thread(self.ledger.reject, decision.entry_id, self.actor, decision.reason)
        except NotAuthorized as exc:  # said in the status line only: a toast would cover it
            return Text(f"{verb.capitalize()} refused: {exc} (the attempt is in the audit trail)", "bold red")
        except (LedgerError, PolicyUnchecked) as exc:
            return Text(f"{verb.capitalize()} refused: {exc}", "bold red")
        if done.state == "failed":
            return Text(f"Action #{done.id} approved by {self.user} but failed: see what ran above.", "bold red")
        if done.state == "unknown":
            return Text(f"Action #{done.id} approved by {self.user}, but its run was interrupted: the outcome is "
                        f"unknown (diagagent actions reconcile {done.id}).", "bold magenta")
        dry = done.state == "executed" and done.executor == "dry-run"
        return Text(f"Action #{done.id} {done.state} by {self.user}"
                    + (" (dry run: the commands were recorded, nothing ran)." if dry else "."), "bold green")


__all__ = ["DiagApp", "SessionEvent"]
