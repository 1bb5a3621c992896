"""`diagagent logs PATH|JOB_ID`: the log analysis (L4) as tables or JSON; `diagagent learn-normal PATH|JOB_ID`: add a
successful job's templates to the normal-event pool in the state dir.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from diagagent.apps.common import (
    SAVE_HELP,
    STATUS_HELP,
    TARGETS_HELP,
    console,
    fail,
    open_bundle,
    print_json,
    settings,
)

MAX_TEMPLATE = 240  # characters of a template shown (cut between words); --json has them whole


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%H:%M:%S") if ts is not None else "-"


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)


def _render(findings: LogFindings, job_id: str, top: int) -> None:  # noqa: F821
    out = console()
    head = Table(title=f"logs of job {job_id}", show_header=False, title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    head.add_row("read", f"{findings.lines_read:,} lines ({findings.lines_skipped:,} corrupt, skipped), "
                         f"{findings.hosts_with_logs} nodes, {findings.templates:,} templates")
    head.add_row("stage", findings.stage or "-")
    head.add_row("iteration", f"last good {_or_dash(findings.last_good_iteration)}, "
                              f"first abnormal {_or_dash(findings.first_abnormal_iteration)}")
    out.print(head)
    _events(out, findings, top)
    if findings.nodes:
        nodes = Table(title="suspect nodes", title_justify="left")
        nodes.add_column("host", no_wrap=True)
        nodes.add_column("score", justify="right", no_wrap=True)
        nodes.add_column("why", overflow="fold")
        for n in findings.nodes[:top]:
            nodes.add_row(escape(n.host), f"{n.score:.2f}", escape("; ".join(n.reasons)))
        out.print(nodes)
    if findings.metric_anomalies:
        metrics = Table(title="metric anomalies", title_justify="left")
        for col in ("kind", "iteration", "value", "before", "where"):
            metrics.add_column(col)
        for a in findings.metric_anomalies[:top]:
            metrics.add_row(a.kind, str(a.iteration), str(a.value), str(a.previous),
                            escape(f"{a.location.file}:{a.location.line}"))
        out.print(metrics)
    for note in findings.notes:
        out.print(Text.assemble(("note: ", "dim"), note))  # wrapped between words


def _events(out: Console, findings: LogFindings, top: int) -> None:  # noqa: F821
    """One block per event, readable at 80 columns and in a pipe: a head line (rank, role, score, how often, where
    first seen), then the template and the why, each wrapped between words under it."""
    out.print(Text(f"failure-indicating events (top {top})", style="italic"))
    style = {"cause": "bold red", "symptom": "yellow", "context": "dim"}
    for i, e in enumerate(findings.events[:top], start=1):
        where = f"{e.first.file}:{e.first.line}" + (f" {_when(e.first.ts)}" if e.first.ts else "")
        seen = f"{e.count} line{'s' if e.count != 1 else ''} on {e.host_count} node{'s' if e.host_count != 1 else ''}"
        out.print(Text.assemble((f"{i:>2} ", "bold"), (f"{e.role:<8}", style[e.role]), f"{e.score:.2f}  {seen}  ",
                                (where, "cyan")))
        template = e.template if len(e.template) <= MAX_TEMPLATE else e.template[:MAX_TEMPLATE].rsplit(" ", 1)[0] + " …"
        out.print(Padding(Text(template), (0, 0, 0, 3)))
        out.print(Padding(Text(f"why: {e.why}", style="dim"), (0, 0, 0, 3)))


def register(app: typer.Typer) -> None:
    @app.command()
    def logs(
        targets: list[str] = typer.Argument(..., help=TARGETS_HELP, show_default=False),
        save: Path | None = typer.Option(None, "--save", help=SAVE_HELP),
        status: str | None = typer.Option(None, "--status", help=STATUS_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
        top: int = typer.Option(15, "--top", min=1, help="How many events and nodes to show."),
        workers: int = typer.Option(0, "--workers", min=0, help="Processes reading the logs (0: automatic)."),
    ) -> None:
        """Find the failure-indicating log events, the faulty nodes, the stage and the iteration (L4)."""
        from diagagent.analysis.events import analyze_logs, normal_pool_for

        cfg = settings()
        with open_bundle(targets, cfg, save=save, status=status) as bundle:
            pool, notes = normal_pool_for(bundle, cfg.state_dir, cfg.jobs_dir, workers or None)
            findings = analyze_logs(bundle, pool, workers=workers or None)
            findings.notes = notes + findings.notes
            if json_out:
                shown = findings.model_copy(update={"events": findings.events[:top], "nodes": findings.nodes[:top]})
                print_json(shown)
                return
            _render(findings, bundle.job.job_id, top)

    @app.command("learn-normal")
    def learn_normal(
        target: str = typer.Argument(..., help="A successful job's bundle (directory, .tar.gz, or job id)."),
        force: bool = typer.Option(False, "--force", help="Learn it even if job.yaml says it did not succeed."),
        workers: int = typer.Option(0, "--workers", min=0, help="Processes reading the logs (0: automatic)."),
    ) -> None:
        """Add a successful job's log templates to the normal-event pool (cross-job filtering, L4)."""
        from diagagent.analysis.events import learn_job
        from diagagent.analysis.templates import NormalPool

        cfg = settings()
        with open_bundle(target, cfg) as bundle:
            if bundle.job.status != "succeeded" and not force:
                fail(f"job {bundle.job.job_id} has status '{bundle.job.status}', not 'succeeded': its events would "
                     "be taken as normal. Use --force if it did succeed.")
            if not bundle.log_files:
                fail(f"job {bundle.job.job_id} has no logs to learn from")
            learned = NormalPool()
            count = learn_job(learned, bundle, workers or None)
            path = learned.save(cfg.state_dir)
        pool = NormalPool.load(cfg.state_dir)
        console().print(f"learned {count:,} templates of job {bundle.job.job_id}; the pool ({path}) now holds "
                        f"{len(pool.jobs)} job(s) and {len(pool.templates):,} templates")


__all__ = ["register"]
