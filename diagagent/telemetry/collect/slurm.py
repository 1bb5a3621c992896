"""`collect slurm JOBID`: a bundle from a real Slurm: `scontrol show job` (else `sacct`), the output files, probes.

`srun -l` output is split per task into logs/<host>/rank-<task>.log; per-task files (`--output=x-%j-%t.out`) too.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from diagagent.telemetry.collect.runner import CollectError, Runner
from diagagent.telemetry.collect.writer import BundleWriter, safe_name
from diagagent.telemetry.live_probes import ProbeError, ProbeManifest, Transport, run_probe, save_run

JOB_ID = re.compile(r"^\d{1,12}(?:[_+]\d{1,9})?$")
# `scontrol show job -o`: Key=value pairs separated by spaces; keys look like NumCPUs, CPUs/Task, ReqB:S:C:T
_PAIR = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=(.*?)(?=\s[A-Za-z][A-Za-z0-9_/:]*=|\s*$)")
FAILED_STATES = {"FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED", "BOOT_FAIL", "DEADLINE",
                 "PREEMPTED", "REVOKED"}
RUNNING_STATES = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "CONFIGURING"}
MAX_TASK_FILES = 10_000


class CollectResult(BaseModel):
    """What a collector wrote: the bundle, the job's id and status as found, and what it could not get."""

    source: str
    job_id: str
    path: str
    status: str
    hosts: list[str] = Field(default_factory=list)
    files: int = 0
    notes: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)


def parse_scontrol(text: str) -> list[dict[str, str]]:
    """Each record of `scontrol show job -o` (one per line: an array task or a het component each)."""
    return [{k: v.strip() for k, v in _PAIR.findall(line)} for line in text.splitlines() if "JobId=" in line]


def slurm_time(value: str | None) -> datetime | None:
    """Slurm's local `2026-11-26T05:55:32` as an aware time; `Unknown`, `None`, `N/A` as None."""
    if not value or value in ("Unknown", "None", "N/A", "(null)"):
        return None
    try:
        return datetime.fromisoformat(value).astimezone()
    except ValueError:
        return None


def exit_code(value: str | None) -> int | None:
    """`ExitCode=3:0` -> 3; `0:9` (killed by signal 9) -> 137, as a shell reports it."""
    if not value or ":" not in value:
        return None
    code, _, sig = value.partition(":")
    try:
        return 128 + int(sig) if int(sig) else int(code)
    except ValueError:
        return None


def job_status(state: str, newest_output: float | None, quiet_for_s: float, now: float) -> str:
    base = state.split()[0].rstrip("+") if state else ""
    if base == "COMPLETED":
        return "succeeded"
    if base in RUNNING_STATES:
        if newest_output is not None and now - newest_output > quiet_for_s:
            return "hung"
        return "running"
    if base == "PENDING":
        raise CollectError("the job is pending: nothing has run yet, so there is nothing to diagnose")
    return "failed"


def block_layout(hosts: Sequence[str], ntasks: int) -> dict[int, str]:
    """Task -> host under Slurm's default block distribution: as even as can be, the first nodes take the rest."""
    if not hosts:
        return {}
    base, extra = divmod(max(ntasks, len(hosts)), len(hosts))
    layout: dict[int, str] = {}
    task = 0
    for i, host in enumerate(hosts):
        for _ in range(base + (1 if i < extra else 0)):
            if task < ntasks:
                layout[task] = host
            task += 1
    return layout


def _task_files(directory: Path, job_id: str, known: set[Path]) -> list[tuple[Path, int | None]]:
    """Files beside the job's output that name the job id as a word, with the task number that follows it, if any:
    `train-42-3.out` -> task 3, `slurm-42.err` -> none."""
    pattern = re.compile(rf"(?:^|[^0-9]){re.escape(job_id)}(?:[._-](\d{{1,7}}))?(?:[._-][A-Za-z]\w*)*$")
    out: list[tuple[Path, int | None]] = []
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return out
    for p in entries:
        if len(out) >= MAX_TASK_FILES or p in known or not p.is_file():
            continue
        m = pattern.search(p.name.removesuffix(".gz"))
        if m:
            out.append((p, int(m.group(1)) if m.group(1) else None))
    return out


class SlurmCollector:
    """Reads one job through the Slurm client commands on PATH (with `SLURM_CONF` as the environment sets it)."""

    def __init__(self, runner: Runner | None = None, quiet_for_s: float = 600.0) -> None:
        self.runner = runner or Runner()
        self.quiet_for_s = quiet_for_s

    def records(self, job_id: str) -> list[dict[str, str]]:
        """`scontrol show job -o`, else `sacct`; CollectError naming what both said when Slurm does not know it."""
        if not JOB_ID.match(job_id):
            raise CollectError(f"{job_id!r} is not a Slurm job id (digits, with _N for an array task or +N for a "
                               "het component)")
        proc = self.runner.run(["scontrol", "show", "job", "-o", job_id], check=False)
        records = parse_scontrol(proc.stdout.decode("utf-8", errors="replace")) if proc.returncode == 0 else []
        if records:
            return records
        said = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        acct = self.runner.run(["sacct", "-j", job_id, "-X", "-n", "-P", ("--format=JobID,JobName,State,ExitCode,"
                                "Start,End,NodeList,WorkDir,Partition,User")], check=False)
        rows = [ln.split("|") for ln in acct.stdout.decode("utf-8", errors="replace").splitlines() if ln.strip()]
        if acct.returncode == 0 and rows:
            keys = ["JobId", "JobName", "JobState", "ExitCode", "StartTime", "EndTime", "NodeList", "WorkDir",
                    "Partition", "UserId"]
            return [dict(zip(keys, row, strict=False)) | {"_from": "sacct"} for row in rows]
        acct_said = acct.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise CollectError(f"Slurm does not know job {job_id}: scontrol said "
                           f"{said[-1] if said else 'nothing'!r}; sacct said "
                           f"{acct_said[-1] if acct_said else 'no such job'!r}")

    def hostnames(self, nodelist: str) -> list[str]:
        if not nodelist or nodelist in ("(null)", "None assigned"):
            return []
        return [h for h in self.runner.text(["scontrol", "show", "hostnames", nodelist]).split() if h]

    def collect(self, job_id: str, dest: Path, *, probes: bool = False, probe_names: list[str] | None = None,
                manifest: ProbeManifest | None = None, transport: str | None = None) -> CollectResult:
        records = self.records(job_id)
        ids = [r.get("JobId", "") + (f"_{r['ArrayTaskId']}" if r.get("ArrayTaskId") else "") for r in records]
        if len(records) > 1 and all(r.get("ArrayTaskId") for r in records) and "_" not in job_id:
            raise CollectError(f"job {job_id} is a job array of {len(records)} tasks; collect one of them: "
                               + ", ".join(r["ArrayJobId"] + "_" + r["ArrayTaskId"] for r in records[:20])
                               + (" ..." if len(records) > 20 else ""))
        with BundleWriter(dest) as writer:
            result = self._write(job_id, records, ids, writer, probes, probe_names, manifest, transport)
        result.commands = list(self.runner.ran)
        return result

    def _write(self, job_id: str, records: list[dict[str, str]], ids: list[str], writer: BundleWriter,
               probes: bool, probe_names: list[str] | None, manifest: ProbeManifest | None,
               transport: str | None) -> CollectResult:
        first = records[0]
        if first.get("_from") == "sacct":
            writer.note("scontrol no longer knows the job; read from sacct (no output file paths: looked for "
                        f"slurm-{job_id}.out in its work dir)")
        if len(records) > 1:
            writer.note(f"heterogeneous job: {len(records)} components ({', '.join(ids)}), collected together")
        host_of_task: dict[int, str] = {}
        hosts: list[str] = []
        offset = 0
        for rec in records:
            rec_hosts = self.hostnames(rec.get("NodeList", ""))
            ntasks = _int(rec.get("NumTasks")) or len(rec_hosts)
            for task, host in block_layout(rec_hosts, ntasks).items():
                host_of_task[offset + task] = host
            offset += ntasks
            hosts += [h for h in rec_hosts if h not in hosts]
        if len(hosts) > 1:
            writer.note(f"task -> node taken as Slurm's block distribution over {len(hosts)} nodes "
                        "(what srun does unless --distribution says otherwise)")
        batch_host = first.get("BatchHost") or (hosts[0] if hosts else "batch")
        outputs = self._output_files(job_id, records)
        newest = max((p.stat().st_mtime for p, _ in outputs if p.exists()), default=None)
        status = job_status(first.get("JobState", ""), newest, self.quiet_for_s, time.time())
        if status == "hung":
            writer.note(f"no output has moved for {(time.time() - (newest or 0)) / 60:.0f} min (more than "
                        f"--quiet-for {self.quiet_for_s:g} s): collected as hung while Slurm says "
                        f"{first.get('JobState')}")
        for path, task in outputs:
            if not path.is_file():
                writer.note(f"{path}: the job's output file is not readable from here (missing, or on a node's "
                            "local disk)")
                continue
            err = ".stderr" if path.name.removesuffix(".gz").endswith(".err") else ""
            if task is not None:
                host_of_task.setdefault(task, batch_host)
                writer.copy_log(path, host_of_task[task], f"rank-{task}{err}.log"
                                + (".gz" if path.name.endswith(".gz") else ""))
                continue
            if path.name.endswith(".gz"):
                writer.copy_log(path, batch_host, path.name)
                continue
            counts = writer.split_tasks(path, host_of_task, batch_host, suffix=f"{err}.log")
            for task, host in counts["tasks"].items():
                host_of_task.setdefault(task, host)
            if counts["labelled"]:
                writer.note(f"{path.name}: {counts['labelled']:,} lines of {len(counts['tasks'])} task(s) split by their "
                            f"`srun -l` labels into logs/<host>/rank-<task>.log; {counts['unlabelled']:,} "
                            "unlabelled line(s) in batch.log")
            if counts["unplaced"]:
                writer.note(f"task(s) {', '.join(map(str, counts['unplaced'][:10]))} are not in the job's task "
                            f"layout; their lines were put under {batch_host}")
        if not outputs:
            writer.note("no output file of the job was found")
        nodes: list[dict[str, Any]] = []
        for host in hosts:
            ranks = sorted(t for t, h in host_of_task.items() if h == host)
            nodes.append({"host": host, "ranks": ranks})
        per_node = max((len(n["ranks"]) for n in nodes), default=1) or 1
        gpus = _gpus_per_node(first)
        job: dict[str, Any] = {
            "job_id": job_id, "name": first.get("JobName"), "framework": "other", "status": status,
            "started_at": _iso(slurm_time(first.get("StartTime"))), "ended_at": _iso(slurm_time(first.get("EndTime"))),
            "exit_code": exit_code(first.get("ExitCode")), "gpus_per_node": max(per_node, 1), "nodes": nodes,
            "collected_from": "slurm",
            "slurm": {k: first.get(k) for k in ("JobState", "Reason", "Partition", "UserId", "WorkDir", "StdOut",
                                                "StdErr", "Command", "BatchHost", "NodeList", "NumTasks",
                                                "Restarts") if first.get(k)} | ({"gpus_per_node": gpus} if gpus else {}),
        }
        if status in ("running", "hung"):
            job.pop("ended_at")
        if probes and hosts:
            self._probes(job_id, hosts, status, writer, probe_names, manifest, transport)
        writer.write_raw("scontrol-show-job.txt", "\n".join(
            " ".join(f"{k}={v}" for k, v in r.items()) for r in records).encode())
        writer.write_job(job)
        return CollectResult(source="slurm", job_id=job_id, path=str(writer.dest), status=status, hosts=hosts,
                             files=len(writer.files), notes=list(writer.notes))

    def _output_files(self, job_id: str, records: list[dict[str, str]]) -> list[tuple[Path, int | None]]:
        """The job's StdOut and StdErr, and per-task files beside them (by name) that hold the job id."""
        found: list[tuple[Path, int | None]] = []
        dirs: list[Path] = []
        base_id = job_id.split("_")[0].split("+")[0]
        for rec in records:
            for key in ("StdOut", "StdErr"):
                value = rec.get(key)
                if not value or value in ("/dev/null", "(null)"):
                    continue
                if "%" in value:  # a pattern Slurm left for the steps (%t, %N): the files are found by name below
                    dirs.append(Path(value).parent)
                    continue
                p = Path(value)
                if all(p != q for q, _ in found):
                    found.append((p, None))
                dirs.append(p.parent)
            if rec.get("_from") == "sacct" and rec.get("WorkDir"):
                p = Path(rec["WorkDir"]) / f"slurm-{base_id}.out"
                found.append((p, None))
                dirs.append(p.parent)
        known = {p for p, _ in found}
        for d in dict.fromkeys(dirs):
            for p, task in _task_files(d, base_id, known):
                found.append((p, task))
                known.add(p)
        return found

    def _probes(self, job_id: str, hosts: list[str], status: str, writer: BundleWriter,
                names: list[str] | None, manifest: ProbeManifest | None, transport: str | None) -> None:
        """Each node's health probes: `srun --overlap` into the allocation while the job runs, else ssh."""
        if manifest is None:
            writer.note("--probes: no probe manifest (tools/probes.yaml) given; no probes run")
            return
        transport = transport or ("srun" if status in ("running", "hung") else "ssh")
        if transport == "srun" and "srun" in manifest.transports:
            srun = manifest.transports["srun"].argv
            manifest = manifest.model_copy(update={"transports": {
                **manifest.transports, "srun": Transport(description="in the job's allocation",
                                                         argv=[srun[0], f"--jobid={job_id.split('_')[0]}",
                                                               *srun[1:]])}})
        try:
            selected = manifest.select(names)
        except ProbeError as exc:
            writer.note(f"--probes: {exc}")
            return
        failed: list[str] = []
        for host in hosts:
            for name in selected:
                try:
                    run = run_probe(host, name, manifest, transport)
                except ProbeError as exc:
                    writer.note(f"--probes: {exc}")
                    return
                if run.error or run.exit_code != 0:
                    failed.append(f"{name} on {host}: {run.error or f'exit {run.exit_code}: ' + run.stderr[-200:]}")
                if run.output:
                    writer.files.append(str(save_run(run, writer.root, manifest).relative_to(writer.root)))
        if failed:
            writer.note(f"--probes through {transport}: {len(failed)} probe run(s) failed: " + "; ".join(failed[:8]))


def _int(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        return 0


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t else None


def _gpus_per_node(rec: dict[str, str]) -> int:
    m = re.search(r"gres/gpu(?::[\w-]+)?=(\d+)", rec.get("TRES", "") or rec.get("AllocTRES", ""))
    nodes = _int(rec.get("NumNodes")) or 1
    return int(m.group(1)) // nodes if m else 0


__all__ = ["CollectResult", "SlurmCollector", "block_layout", "exit_code", "job_status", "parse_scontrol",
           "safe_name", "slurm_time"]
