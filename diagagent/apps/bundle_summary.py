"""What a bundle holds, counted by reading every file once: the summary `diagagent show` prints (or gives as JSON).

Apart from cmd_show so that the CLI's start (`diagagent --help`) does not import pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from diagagent.telemetry import Bundle, parse_timestamp

if TYPE_CHECKING:
    from rich.progress import Progress


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
    spares: int | None
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
