"""`diagagent actions list|show|approve|reject|reconcile|verify`: the Ledger of proposed actions, the operator's
decisions on them, and the check of its audit trail.

Approving prints what will run and asks first (unless --yes); the approver is the OS user (an admin may act as
another with --as), never telemetry or the environment.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from diagagent.apps.common import console, fail, operator, print_json, settings

if TYPE_CHECKING:
    from diagagent.actions import ExecutionPlan, Ledger, LedgerEntry, PolicyResult
    from diagagent.config import Settings

STATE_STYLE = {"pending": "yellow", "approved": "cyan", "running": "blue", "unknown": "bold magenta",
               "rejected": "dim", "executed": "green", "failed": "red"}
OUTCOMES = ("succeeded", "failed", "not-run")


def _ledger(cfg: Settings) -> Ledger:
    """The configured ledger; anything found tampered with when it was opened is said on stderr (and audited)."""
    from diagagent.actions import Ledger

    ledger = Ledger.from_settings(cfg)
    for alert in ledger.alerts:
        console(stderr=True).print(Text.assemble(("ledger: ", "bold red"), alert), soft_wrap=True)
    return ledger


def _target(entry: LedgerEntry) -> str:
    """The action's object in a few words (escaped: hostnames and paths come from telemetry)."""
    p = entry.proposal
    if p.kind == "evict":
        shown = ", ".join(p.nodes[:4]) + (f" (+{len(p.nodes) - 4} more)" if len(p.nodes) > 4 else "")
        return escape(f"{len(p.nodes)} node(s): {shown}")
    if p.kind == "restart":
        return escape(f"from step {p.from_step}" + (f" ({p.checkpoint_path})" if p.checkpoint_path else ""))
    if p.kind == "rollback":
        return escape(f"to commit {p.to_commit}")
    return "-"


def _state(entry: LedgerEntry) -> str:
    return f"[{STATE_STYLE[entry.state]}]{entry.state}[/]"


def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S") if at is not None else "-"




def _cited(entry: LedgerEntry) -> str:
    """The lines the proposal rests on, as kept in the ledger (file:line host rank, then the line); an entry written
    before lines were kept has only its diagnosis's evidence ids."""
    if entry.cited:
        return "\n".join(escape(f"{c.where}\n  {c.text}") for c in entry.cited)
    if entry.proposal.evidence:
        return escape(f"{', '.join(entry.proposal.evidence)} (ids of the diagnosis run that proposed it; its lines "
                      "were not kept)")
    return "-"


def _describe(entry: LedgerEntry, policy: PolicyResult | None = None) -> None:
    """The entry as a table, then its warnings and what blocks it (`policy`: a fresh check, else the stored one)."""
    out = console()
    table = Table(title=f"action #{entry.id}  job {entry.job_id}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    rows = [("state", _state(entry)), ("kind", entry.proposal.kind), ("target", _target(entry)),
            ("reason", escape(entry.proposal.reason or "-")),
            ("evidence", _cited(entry)),
            ("proposed", escape(f"by {entry.proposed_by} at {_when(entry.created_at)}"))]
    if entry.decided_by:
        verdict = "rejected" if entry.state == "rejected" else "approved"
        rows.append(("decided", escape(f"{verdict} by {entry.decided_by} at {_when(entry.decided_at)}"
                                       + (f": {entry.decision_reason}" if entry.decision_reason else ""))))
    if entry.lease is not None:
        rows.append(("executor", escape(entry.lease.describe())))
    for key, value in rows:
        table.add_row(key, value)
    out.print(table, soft_wrap=True)
    if entry.state == "unknown":
        out.print(f"[bold magenta]outcome unknown:[/] the run was interrupted, so nobody knows what ran. It does not "
                  f"run again: find out (is the node drained? the job requeued?), then record it with "
                  f"[bold]diagagent actions reconcile {entry.id} --outcome succeeded|failed|not-run --note TEXT[/]",
                  soft_wrap=True)
    warnings = policy.warnings if policy is not None else entry.policy_warnings
    for warning in dict.fromkeys(entry.proposal.warnings + warnings):
        out.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
    for violation in policy.violations if policy is not None else entry.violations:
        out.print(f"[red]blocked:[/] {escape(violation)}", soft_wrap=True)


def _confirmed(question: str) -> bool:
    """Ask y/N; no answer (end of input, ^C) is a no."""
    try:
        return typer.confirm(question, default=False)
    except typer.Abort:
        return False


def _print_plan(execution: ExecutionPlan) -> None:
    out = console()
    if not execution.commands:
        out.print("nothing to run: approving records the decision")
        return
    if execution.runs:
        out.print(f"approving runs these {execution.executor} commands, in order (no shell):")
    else:
        out.print(f"executor is dry-run: approving records these {execution.renders} commands and runs nothing:")
    for argv in execution.commands:
        out.print(f"  $ {shlex.join(argv)}", soft_wrap=True, markup=False, highlight=False)
    if execution.stdin:
        out.print("  (with the action as JSON on stdin)")


def register(app: typer.Typer) -> None:
    actions = typer.Typer(help="Proposed actions in the Ledger: list, show, approve, reject.", no_args_is_help=True)
    app.add_typer(actions, name="actions")

    @actions.command("list")
    def list_entries(
        job: str | None = typer.Option(None, "--job", help="Only this job's actions."),
        state: str | None = typer.Option(None, "--state", help=" | ".join(STATE_STYLE)),
        json_out: bool = typer.Option(False, "--json", help="Print the entries as JSON."),
    ) -> None:
        """List proposed actions, oldest first."""
        if state is not None and state not in STATE_STYLE:
            fail(f"unknown state {state!r}; one of: {', '.join(STATE_STYLE)}")
        entries = _ledger(settings()).list(job_id=job, state=state)  # type: ignore[arg-type]
        if json_out:
            print_json([e.model_dump(mode="json") for e in entries])
            return
        if not entries:
            console().print("no actions" + (f" for job {job}" if job else "") + (f" in state {state}" if state else ""))
            return
        table = Table(title="actions", title_justify="left")
        for col in ("id", "job", "state", "kind", "target", "proposed by", "decided by", "created"):
            table.add_column(col, justify="right" if col == "id" else "left")
        for e in entries:
            table.add_row(str(e.id), escape(e.job_id), _state(e), e.proposal.kind, _target(e), escape(e.proposed_by),
                          escape(e.decided_by or "-"), _when(e.created_at))
        console().print(table)

    @actions.command("show")
    def show_entry(
        entry_id: int = typer.Argument(..., metavar="ID"),
        json_out: bool = typer.Option(False, "--json", help="Print the entry and its audit trail as JSON."),
    ) -> None:
        """Show one action: what it does, the lines it rests on, its policy notes, what approving it would run (while
        pending) or what ran, and its audit trail."""
        from diagagent.actions import TemplateError, UnknownEntry, plan

        cfg = settings()
        ledger = _ledger(cfg)
        try:
            entry = ledger.get(entry_id)
        except UnknownEntry as exc:
            fail(str(exc))
        trail = ledger.audit(entry_id)
        execution, cannot = None, None
        if entry.state == "pending":
            try:
                execution = plan(entry, cfg)
            except TemplateError as exc:
                cannot = f"cannot run under the {cfg.executor} executor: {exc}"
        if json_out:
            print_json({"entry": entry.model_dump(mode="json"), "audit": [a.model_dump(mode="json") for a in trail],
                        "would_run": execution.model_dump(mode="json") if execution else None,
                        **({"cannot_run": cannot} if cannot else {})})
            return
        _describe(entry)
        out = console()
        if execution is not None:
            _print_plan(execution)
        if cannot:
            out.print(Text.assemble(("blocked: ", "red"), cannot), soft_wrap=True)
        if entry.commands or entry.output:
            out.print(f"[bold]ran[/] ({entry.executor}):")
            out.print(entry.output, markup=False, highlight=False, soft_wrap=True)
        table = Table(title="audit", title_justify="left")
        for col in ("#", "at", "who", "event", "state", "reason"):
            table.add_column(col, overflow="fold")
        for a in trail:
            moved = a.state_after if a.state_before == a.state_after else f"{a.state_before or '-'} -> {a.state_after}"
            table.add_row(str(a.seq), _when(a.at), escape(a.actor), a.event, moved or "-", escape(a.reason))
        out.print(table)

    @actions.command("approve")
    def approve_entry(
        entry_id: int = typer.Argument(..., metavar="ID"),
        as_user: str | None = typer.Option(None, "--as", help="Approve as this user (only for DIAGAGENT_ADMINS; "
                                                             "default: the OS user)."),
        reason: str = typer.Option("", "--reason", help="Why; kept in the audit trail."),
        yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    ) -> None:
        """Approve an action and run it with the configured executor (dry-run by default)."""
        from diagagent.actions import (
            LedgerError,
            NotAuthorized,
            PolicyUnchecked,
            TemplateError,
            UnknownEntry,
            approve_and_execute,
            current_policy,
            plan,
        )

        cfg = settings()
        ledger = _ledger(cfg)
        by = operator(as_user)
        try:
            entry = ledger.get(entry_id)
            policy = current_policy(entry, cfg) if entry.state == "pending" else None
            checked_ok = policy.ok if policy is not None else entry.policy_checked and not entry.violations
            # anything else is refused by approve_and_execute below, with the refusal audited
            if entry.state == "pending" and ledger.refusal(by, entry.proposed_by, entry.id) is None and checked_ok:
                _describe(entry, policy)
                try:
                    _print_plan(plan(entry, cfg))
                except TemplateError as exc:
                    fail(f"action #{entry_id} cannot run under the {cfg.executor} executor: {exc}", code=1)
                if not yes and not _confirmed(f"approve action #{entry_id} as {by}?"):
                    fail("not approved", code=1)
            done = approve_and_execute(ledger, entry_id, by, cfg, reason)
        except UnknownEntry as exc:
            fail(str(exc))
        except NotAuthorized as exc:
            fail(f"approval refused: {exc} (the attempt is in the audit trail)", code=1)
        except (LedgerError, PolicyUnchecked) as exc:
            fail(f"approval refused: {exc}", code=1)
        out = console()
        out.print(f"action #{done.id}: {_state(done)}")
        if done.state == "unknown":
            _describe(done)
        if done.output:
            out.print(done.output, markup=False, highlight=False, soft_wrap=True)
        if done.state != "executed":
            raise typer.Exit(1)

    @actions.command("reject")
    def reject_entry(
        entry_id: int = typer.Argument(..., metavar="ID"),
        reason: str = typer.Option(..., "--reason", help="Why; kept in the audit trail."),
        as_user: str | None = typer.Option(None, "--as", help="Reject as this user (only for DIAGAGENT_ADMINS; "
                                                             "default: the OS user)."),
    ) -> None:
        """Reject a pending action; nothing runs."""
        from diagagent.actions import LedgerError, UnknownEntry

        ledger = _ledger(settings())
        try:
            done = ledger.reject(entry_id, operator(as_user), reason)
        except UnknownEntry as exc:
            fail(str(exc))
        except LedgerError as exc:
            fail(f"rejection refused: {exc}", code=1)
        console().print(f"action #{done.id}: {_state(done)}")

    @actions.command("reconcile")
    def reconcile_entry(
        entry_id: int = typer.Argument(..., metavar="ID"),
        outcome: str = typer.Option(..., "--outcome", help="What you found: succeeded | failed | not-run."),
        note: str = typer.Option(..., "--note", help="How you know (kept in the audit trail)."),
        as_user: str | None = typer.Option(None, "--as", help="Reconcile as this user (only for DIAGAGENT_ADMINS; "
                                                             "default: the OS user)."),
    ) -> None:
        """Record what happened to an action whose run was interrupted (state unknown); nothing runs.

        succeeded -> executed, failed -> failed, not-run -> pending again (it needs a new approval to run).
        """
        from diagagent.actions import LedgerError, UnknownEntry

        if outcome not in OUTCOMES:
            fail(f"unknown outcome {outcome!r}; one of: {', '.join(OUTCOMES)}")
        if not note.strip():
            fail("--note: say what you found, and how (it is kept in the audit trail)")
        ledger = _ledger(settings())
        try:
            done = ledger.reconcile(entry_id, operator(as_user), outcome, note)  # type: ignore[arg-type]
        except UnknownEntry as exc:
            fail(str(exc))
        except LedgerError as exc:
            fail(f"reconciliation refused: {exc}", code=1)
        console().print(f"action #{done.id}: {_state(done)}" + (" (approve it again to run it)"
                                                                if done.state == "pending" else ""))

    @actions.command("verify")
    def verify_trail(
        json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    ) -> None:
        """Check the audit trail's hash chain, the entries against it, and the triggers; exit 1 on any finding.

        Triggers found missing or altered are recreated (and that is recorded); nothing else is changed.
        """
        from diagagent.actions import LedgerError, verify_ledger

        cfg = settings()
        try:
            report = verify_ledger(cfg.state_dir / "ledger.sqlite")
        except LedgerError as exc:
            fail(str(exc))
        if json_out:
            print_json({**report.model_dump(mode="json"), "ok": report.ok})
        else:
            out = console()
            for finding in report.findings:
                out.print(Text.assemble(("problem: ", "bold red"), finding), soft_wrap=True)
            if report.recreated:
                out.print(f"recreated trigger(s): {', '.join(report.recreated)}")
            verdict = "intact" if report.ok else f"NOT intact ({len(report.findings)} problem(s))"
            out.print(Text(f"audit trail {verdict}: {report.rows} row(s), head #{report.head_seq} "
                           f"{report.head_hash[:16]}, {report.path}"), soft_wrap=True)
        if not report.ok:
            raise typer.Exit(1)


__all__ = ["register"]
