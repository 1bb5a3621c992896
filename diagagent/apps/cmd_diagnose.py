"""`diagagent diagnose PATH|JOB_ID`: the whole diagnosis as a rich report (or JSON), with live progress.

Proposals go to the Ledger as pending, proposed by the OS user; only another's `diagagent actions approve ID` runs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from diagagent.apps.cmd_actions import STATE_STYLE
from diagagent.apps.common import (
    SAVE_HELP,
    STATUS_HELP,
    TARGETS_HELP,
    console,
    fail,
    open_bundle,
    os_user,
    print_json,
    settings,
)

if TYPE_CHECKING:
    from diagagent.actions import LedgerEntry
    from diagagent.diagnosis import Diagnosis

ANALYZER_LABELS = {"logs": "log templates and events (L4)", "health": "health probes", "stacks": "stack clusters",
                   "flows": "flow timeline (LLMPrism)", "schemata": "failure schemata"}


LLM_UNAVAILABLE = "LLM unavailable, offline playbook answer"


def confidence_lines(d: Diagnosis) -> list[str]:
    """The confidence's why in plain lines: its basis, what raised it (+), what held it down (-), the check."""
    w = d.confidence_why
    if w is None:
        return []
    return ([f"confidence {w.basis}"] if w.basis else []) + [f"  + {r}" for r in w.raised] + \
        [f"  - {h}" for h in w.held_down] + ([f"  to settle it: {w.check}"] if w.check else [])


def render(d: Diagnosis, entries: Sequence[LedgerEntry | None] = ()) -> Group:
    """The diagnosis as rich renderables: summary, nodes, evidence, schemata, proposals, notes."""
    head = (f"[bold]{escape(d.root_cause)}[/]\n\ncategory [bold]{d.category or '?'}[/]   fault [bold]{d.fault or '?'}[/]   "
            f"confidence [bold]{d.confidence:.0%}[/]   stage {d.stage or '?'}   iteration "
            f"{d.iteration if d.iteration is not None else '?'}")
    why = confidence_lines(d)
    if why:
        head += "\n\n" + escape("\n".join(why))
    parts: list = [Panel(head, title=f"job {d.job_id} ({d.status})", title_align="left", border_style="red")]
    if d.llm_unavailable:
        parts.insert(0, Panel(Text(f"{LLM_UNAVAILABLE}: {d.llm_unavailable}"), border_style="bold yellow",
                              title="LLM unavailable", title_align="left"))
    if d.faulty_nodes:
        nodes = Table(title="faulty nodes", title_justify="left", expand=True)
        nodes.add_column("host", style="bold")
        nodes.add_column("score", justify="right")
        nodes.add_column("why", ratio=1)
        for n in d.faulty_nodes:
            nodes.add_row(Text(n.host), f"{n.score:.2f}", Text(n.reason))
        parts.append(nodes)
    if d.evidence:
        ev = Text()
        for e in d.evidence[:12]:
            where = f"{e.file}:{e.lines}" if e.file and e.line else (e.file or e.host or "")
            ev.append(f"{e.id:>4} ", style="bold")
            ev.append(f"{e.role:<8}", style="red" if e.role == "cause" else "dim")
            ev.append(f"{where}\n", style="cyan")
            ev.append(f"      {e.text[:300]}\n")
        parts.append(Panel(ev, title="evidence", title_align="left"))
    if d.schemata:
        sch = Table(title="matched schemata", title_justify="left")
        for col in ("schema", "title", "score"):
            sch.add_column(col, justify="right" if col == "score" else "left")
        for s in d.schemata[:3]:
            sch.add_row(s.schema_id, Text(s.title), f"{s.score:.2f}")
        parts.append(sch)
    if d.proposals:
        recorded = any(e is not None for e in entries)
        title = "proposed actions, as the ledger has them now" if recorded else "proposed actions (not recorded)"
        prop = Table(title=title, title_justify="left", expand=True)
        for col in ("ledger", "action", "target", "reason"):
            prop.add_column(col, ratio=2 if col == "reason" else None)
        for i, p in enumerate(d.proposals):
            target = {"evict": ", ".join(p.nodes), "restart": f"step {p.from_step}",
                      "rollback": p.to_commit or ""}.get(p.kind, "")
            entry = entries[i] if i < len(entries) else None
            state = Text("-") if entry is None else Text.assemble(f"#{entry.id} ", (entry.state, STATE_STYLE.get(
                entry.state, "")), f" by {entry.decided_by}" if entry.decided_by else "")
            reason = Text(p.reason)
            if p.warnings:
                reason.append(f" ({'; '.join(p.warnings)})", style="yellow")
            prop.add_row(state, p.kind, Text(target), reason)
        parts.append(prop)
    if d.notes:
        parts.append(Panel(Text("\n".join(f"- {n}" for n in d.notes)), title="not checked / to check", title_align="left",
                           border_style="yellow"))
    return Group(*parts)


RAY_HELP = ("Read the logs, probes and stacks as Ray tasks on this cluster (ray://head:10001, auto, head:6379), or "
            "'local' to start Ray here; the nodes must see the bundle at the same path (DIAGAGENT_RAY_ADDRESS). "
            "Needs pip install 'diagagent[ray]'.")


def register(app: typer.Typer) -> None:
    @app.command()
    def diagnose(
        targets: list[str] = typer.Argument(..., help=TARGETS_HELP, show_default=False),
        save: Path | None = typer.Option(None, "--save", help=SAVE_HELP),
        status: str | None = typer.Option(None, "--status", help=STATUS_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the Diagnosis as JSON."),
        llm: bool = typer.Option(False, "--llm", help="Use the configured LLM (DIAGAGENT_LLM_BASE_URL)."),
        submit: bool = typer.Option(True, "--submit/--no-submit", help="Record proposals in the Ledger as pending."),
        report: Path | None = typer.Option(None, "--report", help="Also write a report (.html or .md)."),
        ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help=RAY_HELP),
    ) -> None:
        """Diagnose an incident: root cause, faulty nodes, cited evidence, and actions pending approval."""
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        from diagagent.agent import Session

        cfg = settings()
        if ray:
            cfg = cfg.model_copy(update={"ray_address": ray})
        if report is not None:
            from diagagent.apps.report import UnsupportedReportFormat, report_format

            try:
                report_format(report)
            except UnsupportedReportFormat as exc:
                fail(str(exc))
        with open_bundle(targets, cfg, save=save, status=status) as bundle:
            progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                console=console(stderr=True), transient=True, disable=json_out)
            tasks: dict[str, int] = {}

            def on_event(event: dict) -> None:
                kind, name = event.get("type"), event.get("name") or event.get("tool")
                if kind in ("analyzer_start", "tool_start"):
                    label = ANALYZER_LABELS.get(name, name) if kind == "analyzer_start" else f"tool {name}"
                    tasks[name] = progress.add_task(label, total=None)
                elif kind in ("analyzer_end", "tool_end") and name in tasks:
                    progress.remove_task(tasks.pop(name))

            with progress:
                session = Session(bundle, cfg, on_event=on_event, use_llm=llm and bool(cfg.llm_base_url))
                d = session.diagnose()
            if llm and not cfg.llm_base_url:
                d = d.model_copy(update={"llm_unavailable": "--llm, but no DIAGAGENT_LLM_BASE_URL is configured"})
            if d.llm_unavailable:
                console(stderr=True).print(Text.assemble((f"{LLM_UNAVAILABLE}: ", "bold yellow"), d.llm_unavailable),
                                           soft_wrap=True)
            entries = _ledger_entries(d, cfg, bundle.job, submit) if d.proposals else []
            if report is not None:
                from diagagent.apps.report import write_report

                write_report(d, bundle, report, analyses=session.ctx.analyses, entries=entries)
            if json_out:
                print_json(d)
                return
            console().print(render(d, entries))
            if any(e is not None and e.state == "pending" for e in entries):
                console().print("approve with [bold]diagagent actions approve ID[/] (see [bold]diagagent actions "
                                "show ID[/] for exactly what runs)")
            if report is not None:
                console().print(f"report written to {report}")


def _ledger_entries(d: Diagnosis, cfg, job, submit: bool) -> list[LedgerEntry | None]:
    """Each proposal's ledger entry as it stands now. With `submit`, a new one is recorded as pending, proposed by
    whoever ran the diagnosis (they cannot also approve it), and an action proposed before comes back in whatever
    state it reached; without, only what is already recorded is looked up."""
    from diagagent.actions import Ledger

    ledger = Ledger.from_settings(cfg)
    if not submit:
        return [ledger.find(d.job_id, p) for p in d.proposals]
    proposer = os_user()
    return [ledger.submit(d.job_id, p, proposer, job=job, evidence=d.evidence) for p in d.proposals]
