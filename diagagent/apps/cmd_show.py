"""`diagagent show PATH|JOB_ID`: what a bundle holds (job, nodes, parallelism, parts, files, lines, time span).

The first thing to run on an unfamiliar incident; it reads every file once, with a progress bar.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from pydantic import BaseModel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from diagagent.apps.common import SAVE_HELP, STATUS_HELP, TARGETS_HELP, console, open_bundle, print_json
from diagagent.telemetry import Bundle, parse_timestamp


class PartSummary(BaseModel):
    part: str
    files: int
    bytes: int
    records: int | None = None  # lines for logs, rows for flows
    first_ts: float | None = None
    last_ts: float | None = None
    hosts: int = 0


class BundleSummary(BaseModel):
    job_id: str
    name: str | None
    framework: str
    status: str
    nodes: int
    world_size: int
    parallelism: dict[str, int] | None
    spares: int
    code_head: str | None
    checkpoints: int
    newest_valid_checkpoint: int | None
    parts: list[PartSummary]
    missing: list[str]
    read_issues: list[str]
    inferred: list[str] = []  # a bundle built from raw logs: what was inferred (hosts, ranks) and how


def summarize(bundle: Bundle, progress: Progress | None = None) -> BundleSummary:
    """Count files, lines and rows and find each part's time span, reading every file once."""
    job = bundle.job
    parts: list[PartSummary] = []
    task = progress.add_task("logs", total=len(bundle.log_files)) if progress else None
    lines, first, last = 0, None, None
    budget = bundle.new_budget()
    for lf in bundle.log_files:
        n = 0
        for n, text in bundle.iter_raw_lines(lf.file, budget):
            if not text:
                continue
            ts = parse_timestamp(text, bundle.year)
            if ts is not None:
                first = ts if first is None or ts < first else first
                last = ts if last is None or ts > last else last
        lines += n  # the number of the last line is how many there are (blank runs are given once)
        if progress is not None and task is not None:
            progress.advance(task)
    parts.append(PartSummary(part="logs", files=len(bundle.log_files), records=lines, first_ts=first, last_ts=last,
                             bytes=sum((bundle.root / f.file).stat().st_size for f in bundle.log_files),
                             hosts=len({f.host for f in bundle.log_files if f.host})))
    rows, first, last = 0, None, None
    if bundle.flow_files:
        import pyarrow.compute as pc

        for batch in bundle.iter_flow_batches():
            rows += batch.num_rows
            if batch.num_rows:
                lo, hi = pc.min(batch.column("start")).as_py(), pc.max(batch.column("end")).as_py()
                first = lo if first is None or lo < first else first
                last = hi if last is None or hi > last else last
    parts.append(PartSummary(part="flows", files=len(bundle.flow_files), records=rows, first_ts=first, last_ts=last,
                             bytes=sum((bundle.root / f).stat().st_size for f in bundle.flow_files)))
    for name, files in (("stacks", bundle.stack_files), ("probes", bundle.probe_files)):
        parts.append(PartSummary(part=name, files=len(files),
                                 bytes=sum((bundle.root / f.file).stat().st_size for f in files),
                                 hosts=len({f.host for f in files if f.host})))
    valid = [c.step for c in job.checkpoints if c.valid]
    return BundleSummary(
        job_id=job.job_id, name=job.name, framework=job.framework, status=job.status, nodes=len(job.nodes),
        world_size=job.world_size,
        parallelism=job.parallelism.model_dump(include={"tp", "pp", "dp", "cp", "ep"}) if job.parallelism else None,
        spares=job.spares, code_head=job.code[-1].commit if job.code else None, checkpoints=len(job.checkpoints),
        newest_valid_checkpoint=max(valid) if valid else None, parts=parts, missing=list(bundle.missing),
        read_issues=[str(i) for i in bundle.issues if i.kind != "inferred"],
        inferred=[str(i) for i in bundle.issues if i.kind == "inferred"])


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
    for k, v in (("status", s.status), ("framework", s.framework), ("nodes", f"{s.nodes} (+{s.spares} spares)"),
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
        with open_bundle(targets, save=save, status=status) as bundle:
            if json_out:
                print_json(summarize(bundle))
                return
            with Progress(TextColumn("reading {task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console(stderr=True), transient=True) as progress:
                summary = summarize(bundle, progress)
            render(summary)


__all__ = ["BundleSummary", "register", "summarize"]
