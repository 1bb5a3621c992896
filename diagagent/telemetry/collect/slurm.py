"""`collect slurm JOBID`: a bundle from a real Slurm: `scontrol show job` (else `sacct`), the output files, probes,
and py-spy stacks. `srun -l` output is split per task into logs/<host>/rank-<task>.log; per-task files too.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from diagagent.telemetry.collect import node_stacks
from diagagent.telemetry.collect.runner import CollectError, Runner, last_line
from diagagent.telemetry.collect.slurm_layout import (
    Step,
    distribute,
    main_step,
    parse_sacct_steps,
    parse_scontrol_steps,
)
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


def parse_scontrol(text: str, key: str = "JobId") -> list[dict[str, str]]:
    """Each record of `scontrol show job -o` (one per line: an array task or a het component each), or with
    `key="StepId"` of `scontrol show step -o`."""
    return [{k: v.strip() for k, v in _PAIR.findall(line)} for line in text.splitlines()
            if re.match(rf"\s*{key}=", line)]


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
    return distribute(hosts, ntasks, "Block") or {}


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

    def __init__(self, runner: Runner | None = None, quiet_for_s: float = 600.0, py_spy: str = "py-spy",
                 python: str = "python3", stacks_timeout_s: float = 300.0) -> None:
        self.runner = runner or Runner()
        self.quiet_for_s = quiet_for_s
        self.py_spy = py_spy  # as the job's nodes find it (on their PATH, or a path there)
        self.python = python  # the nodes' Python, which runs node_stacks.py there
        self.stacks_timeout_s = stacks_timeout_s

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
                manifest: ProbeManifest | None = None, transport: str | None = None,
                stacks: bool = False) -> CollectResult:
        """Write the job's bundle into `dest`; with `probes` each node's health probes, with `stacks` (a running
        job) a py-spy dump of each rank."""
        records = self.records(job_id)
        ids = [r.get("JobId", "") + (f"_{r['ArrayTaskId']}" if r.get("ArrayTaskId") else "") for r in records]
        if len(records) > 1 and all(r.get("ArrayTaskId") for r in records) and "_" not in job_id:
            raise CollectError(f"job {job_id} is a job array of {len(records)} tasks; collect one of them: "
                               + ", ".join(r["ArrayJobId"] + "_" + r["ArrayTaskId"] for r in records[:20])
                               + (" ..." if len(records) > 20 else ""))
        with BundleWriter(dest) as writer:
            result = self._write(job_id, records, ids, writer, probes, probe_names, manifest, transport, stacks)
        result.commands = list(self.runner.ran)
        return result

    def _write(self, job_id: str, records: list[dict[str, str]], ids: list[str], writer: BundleWriter,
               probes: bool, probe_names: list[str] | None, manifest: ProbeManifest | None,
               transport: str | None, stacks: bool) -> CollectResult:
        first = records[0]
        if first.get("_from") == "sacct":
            writer.note("scontrol no longer knows the job; read from sacct (no output file paths: looked for "
                        f"slurm-{job_id}.out in its work dir)")
        if len(records) > 1:
            writer.note(f"heterogeneous job: {len(records)} components ({', '.join(ids)}), collected together")
        outputs = self._output_files(job_id, records)
        newest = max((p.stat().st_mtime for p, _ in outputs if p.exists()), default=None)
        status = job_status(first.get("JobState", ""), newest, self.quiet_for_s, time.time())
        if status == "hung":
            quiet = time.time() - (newest or 0)
            quiet_text = f"{quiet:.0f} s" if quiet < 120 else f"{quiet / 60:.0f} min"
            writer.note(f"no output has moved for {quiet_text} (more than "
                        f"--quiet-for {self.quiet_for_s:g} s): collected as hung while Slurm says "
                        f"{first.get('JobState')}")
        hosts, host_of_task, placed = self._placement(job_id, records, status)
        if stacks:
            seen = self._stacks(job_id, first, hosts, status, writer)
            if seen and len(hosts) > 1:
                host_of_task.update(seen)
                placed = (f"task -> node read from `scontrol listpids` on each node while the job ran "
                          f"({len(seen)} task(s))")
        if len(hosts) > 1:
            writer.note(placed)
        batch_host = first.get("BatchHost") or (hosts[0] if hosts else "batch")
        srun_said: dict[int, str] = {}
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
            srun_said.update(counts["srun_errors"])
            if counts["labelled"]:
                writer.note(f"{path.name}: {counts['labelled']:,} lines of {len(counts['tasks'])} task(s) split by their "
                            f"`srun -l` labels into logs/<host>/rank-<task>.log; {counts['unlabelled']:,} "
                            "unlabelled line(s) in batch.log")
            if counts["unplaced"]:
                writer.note(f"task(s) {', '.join(map(str, counts['unplaced'][:10]))} are not in the job's task "
                            f"layout; their lines were put under {batch_host}")
        self._correct_by_srun(srun_said, host_of_task, hosts, writer)
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

    # --- which node ran which task ----------------------------------------------------------------------------

    def _placement(self, job_id: str, records: list[dict[str, str]],
                   status: str) -> tuple[list[str], dict[int, str], str]:
        """The job's nodes, task -> node, and how that was found (for the notes): from the training step's record
        (`scontrol show step` while it runs, else sacct) where there is one, else assumed as srun's default."""
        hosts: list[str] = []
        host_of_task: dict[int, str] = {}
        offset = 0
        how = ""
        for rec in records:  # a het job's components each run their own tasks, numbered on
            rec_hosts = self.hostnames(rec.get("NodeList", ""))
            hosts += [h for h in rec_hosts if h not in hosts]
            ntasks = _int(rec.get("NumTasks")) or len(rec_hosts)
            per_node = _int(rec.get("NtasksPerN:B:S:C", "").split(":")[0])
            layout = None
            if len(rec_hosts) > 1 and len(records) == 1:
                layout, how = self._step_layout(job_id, status, per_node)
            if layout is None:
                counts = [per_node] * len(rec_hosts) if per_node else None
                layout = distribute(rec_hosts, ntasks, "Block", counts) or {}
                how = (f"task -> node ASSUMED: srun's default block distribution of {ntasks} task(s) over "
                       f"{len(rec_hosts)} node(s), "
                       + (f"{per_node} a node (NtasksPerN)" if per_node else "as evenly as the count allows")
                       + (f" ({how})" if how else "")
                       + "; srun's error lines in the output and --stacks (`scontrol listpids`) correct it")
            host_of_task.update({offset + task: host for task, host in layout.items()})
            offset += ntasks
        if len(records) > 1:
            how = "task -> node ASSUMED for a heterogeneous job: each component's tasks in block order, numbered on"
        return hosts, host_of_task, how

    def _step_layout(self, job_id: str, status: str, per_node: int) -> tuple[dict[int, str] | None, str]:
        """Task -> node from the job's main step as Slurm recorded it, and how; (None, why not) without one."""
        steps: list[Step] = []
        said = ""
        if status in ("running", "hung"):
            proc = self.runner.run(["scontrol", "show", "step", "-o", job_id], check=False)
            steps = parse_scontrol_steps(parse_scontrol(proc.stdout.decode("utf-8", errors="replace"), "StepId"))
            said = "scontrol show step"
        if main_step(steps) is None:
            proc = self.runner.run(["sacct", "-j", job_id, "-n", "-P", "--format=JobID,NodeList,NTasks,Layout"],
                                   check=False)
            if proc.returncode == 0:
                steps, said = parse_sacct_steps(proc.stdout.decode("utf-8", errors="replace")), "sacct"
            else:
                return None, f"no step record: sacct said {last_line(proc.stderr)!r}"
        step = main_step(steps)
        if step is None:
            return None, f"{said} has no srun step of the job"
        step_hosts = self.hostnames(step.nodelist)
        counts = [per_node] * len(step_hosts) if per_node and per_node * len(step_hosts) >= step.ntasks else None
        layout = distribute(step_hosts, step.ntasks, step.dist or "Block", counts)
        if layout is None:
            return None, f"step {step.step_id}'s distribution {step.dist} does not say which node ran which task"
        return layout, (f"task -> node from step {step.step_id} as {said} recorded it: {step.ntasks} task(s) on "
                        f"{len(step_hosts)} node(s), distribution {step.dist or 'Block (srun default)'}, "
                        + (f"{per_node} a node (NtasksPerN)" if counts else
                           "per-node counts not recorded: as evenly as the count allows"))

    def _correct_by_srun(self, srun_said: dict[int, str], host_of_task: dict[int, str], hosts: list[str],
                         writer: BundleWriter) -> None:
        """srun's `srun: error: HOST: tasks N-M: ...` lines name each failed task's node: a fact, over the layout;
        their logs are moved under it."""
        moved: list[int] = []
        for task, host in sorted(srun_said.items()):
            if host not in hosts or host_of_task.get(task) == host:
                continue
            old = host_of_task.get(task)
            host_of_task[task] = host
            if old is not None and writer.move_logs(old, host, f"rank-{task}."):
                moved.append(task)
        if moved:
            writer.note(f"srun's error lines put task(s) {', '.join(map(str, moved[:20]))} on another node than the "
                        "layout said: their logs moved there")

    # --- py-spy stacks -----------------------------------------------------------------------------------------

    def _stacks(self, job_id: str, first: dict[str, str], hosts: list[str], status: str,
                writer: BundleWriter) -> dict[int, str]:
        """py-spy dumps of a running job's ranks: one `srun --overlap` step on its nodes runs node_stacks.py, which
        finds the training processes (`scontrol listpids`) and dumps each into stacks/<host>/rank-<N>.txt. Returns
        task -> node as the nodes' `scontrol listpids` told. What could not be dumped is said in the notes."""
        if status not in ("running", "hung"):
            writer.note(f"--stacks: the job is not running ({first.get('JobState', '?')}): py-spy needs its live "
                        "processes; no stacks taken")
            return {}
        if not hosts:
            writer.note("--stacks: the job has no nodes; no stacks taken")
            return {}
        base = job_id.split("_")[0].split("+")[0]
        nodelist = first.get("NodeList") if len(hosts) > 1 and first.get("NodeList") else ",".join(hosts)
        source = Path(node_stacks.__file__).read_text(encoding="utf-8")
        argv = ["srun", "--overlap", f"--jobid={base}", f"--nodelist={nodelist}", f"--nodes={len(hosts)}",
                f"--ntasks={len(hosts)}", "--ntasks-per-node=1", "--kill-on-bad-exit=0", self.python, "-c", source,
                base, self.py_spy]
        try:
            proc = self.runner.run(argv, check=False, timeout_s=self.stacks_timeout_s)
        except CollectError as exc:
            writer.note(f"--stacks: {exc}; no stacks taken")
            return {}
        placement: dict[int, str] = {}
        dumped_on: set[str] = set()
        dumped, failed, odd = 0, [], 0
        for line in proc.stdout.decode("utf-8", errors="replace").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                odd += 1
                continue
            if not isinstance(item, dict) or not isinstance(item.get("host"), str):
                odd += 1
                continue
            host = item["host"]
            if isinstance(item.get("placement"), list):
                placement.update({t: host for t in item["placement"] if isinstance(t, int)})
            elif isinstance(item.get("note"), str):
                writer.note(f"--stacks: {item['note']}")
            elif isinstance(item.get("rank"), int) and isinstance(item.get("dump"), str):
                writer.append_stack(host, item["rank"], item["dump"])
                dumped += 1
                dumped_on.add(host)
            elif isinstance(item.get("rank"), int):
                failed.append(f"rank {item['rank']} on {host}: {str(item.get('error'))[:300]}")
        if proc.returncode != 0:
            writer.note(f"--stacks: `srun --overlap --jobid={base} {self.python} -c <node_stacks.py>` exited "
                        f"{proc.returncode}: {last_line(proc.stderr)}")
        if failed:
            writer.note(f"--stacks: {len(failed)} rank(s) not dumped: " + "; ".join(failed[:8])
                        + (" ..." if len(failed) > 8 else ""))
        if odd:
            writer.note(f"--stacks: {odd} line(s) of the nodes' answer were not node_stacks.py's JSON; skipped")
        if dumped:
            writer.note(f"--stacks: py-spy dumps of {dumped} rank(s) on {len(dumped_on)} node(s) in "
                        "stacks/<host>/rank-<N>.txt")
        return placement

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
