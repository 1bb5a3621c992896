"""`diagagent show PATH|JOB_ID`: what a bundle holds (job, nodes, parallelism, parts, files, lines, time span).

The first thing to run on an unfamiliar incident; it reads every file once, with a progress bar.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from diagagent.apps.common import SAVE_HELP, STATUS_HELP, TARGETS_HELP, console, open_bundle, print_json

if TYPE_CHECKING:
    from diagagent.apps.bundle_summary import BundleSummary


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S") if ts is not None else "-"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def render(s: BundleSummary) -> None:
    out = console()
    job = Table(title=f"job {s.job_id}" + (f"  {s.name}" if s.name else ""), show_header=False, title_justify="left")
    job.add_column(style="bold")
    job.add_column()
    par = " ".join(f"{k}={v}" for k, v in (s.parallelism or {}).items()) or "not stated"
    spares = "?" if s.spares is None else s.spares
    for k, v in (("status", s.status), ("framework", s.framework), ("nodes", f"{s.nodes} (+{spares} spares)"),
                 ("world size", str(s.world_size)), ("parallelism", par), ("code", s.code_head or "-"),
                 ("checkpoints", f"{s.checkpoints}, newest valid step {s.newest_valid_checkpoint}")):
        job.add_row(k, v)
    out.print(job)
    parts = Table(title="parts", title_justify="left")
    for col in ("part", "files", "hosts", "size", "lines/rows", "from", "to"):
        parts.add_column(col, justify="right" if col in ("files", "hosts", "size", "lines/rows") else "left")
    for p in s.parts:
        if not p.files:
            parts.add_row(p.part, "[yellow]missing[/]", "", "", "", "", "")
            continue
        parts.add_row(p.part, str(p.files), str(p.hosts or "-"), _size(p.bytes),
                      f"{p.records:,}" if p.records is not None else "-", _when(p.first_ts), _when(p.last_ts))
    out.print(parts)
    if s.inferred:
        out.print("[bold]built from raw logs:[/]")
        for note in s.inferred:
            out.print(Text(f"  {note}"), soft_wrap=True)
    if s.read_issues:
        out.print(f"[yellow]{len(s.read_issues)} read problem(s), skipped and counted:[/]")
        for issue in s.read_issues[:20]:
            out.print(f"  {issue}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    @app.command()
    def show(
        targets: list[str] = typer.Argument(..., help=TARGETS_HELP, show_default=False),
        save: Path | None = typer.Option(None, "--save", help=SAVE_HELP),
        status: str | None = typer.Option(None, "--status", help=STATUS_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ) -> None:
        """Show what a bundle holds: job, nodes, parallelism, which parts are present, files, lines, time span."""
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from diagagent.apps.bundle_summary import summarize

        with open_bundle(targets, save=save, status=status) as bundle:
            if json_out:
                print_json(summarize(bundle))
                return
            with Progress(TextColumn("reading {task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console(stderr=True), transient=True) as progress:
                summary = summarize(bundle, progress)
            render(summary)


__all__ = ["register", "render"]
