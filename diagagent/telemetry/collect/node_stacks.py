"""Run on each node of a Slurm job (its source is sent by `srun --overlap --jobid`): py-spy dumps of the job's ranks.

Standard library only (the node has a Python, not diagagent). Prints one JSON object a line: placement, dump, error, note.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

DUMP_TIMEOUT_S = 30.0


def emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def listpids(job_id: str) -> list[tuple[int, str, str]]:
    """(pid, step, global task id or "-") of every process `scontrol listpids JOB` knows on this node."""
    out = subprocess.run(["scontrol", "listpids", job_id], capture_output=True, text=True, timeout=60, check=True)
    rows = []
    for line in out.stdout.splitlines()[1:]:  # PID JOBID STEPID LOCALID GLOBALID
        cols = line.split()
        if len(cols) >= 5 and cols[0].isdigit():
            rows.append((int(cols[0]), cols[2], cols[4]))
    return rows


def process_table() -> dict[int, int]:
    """pid -> parent pid of every process on this node (from /proc/PID/stat)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        parents[int(entry)] = int(stat[stat.rfind(")") + 2:].split()[1])
    return parents


def is_python(pid: int) -> bool:
    try:
        name = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
                name = f.read().strip()
        except OSError:
            return False
    return name.startswith(("python", "pypy"))


def env_rank(pid: int) -> int | None:
    """The process's RANK (torchrun and most launchers set it per worker), if it has one."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for item in f.read().split(b"\0"):
                if item.startswith(b"RANK=") and item[5:].isdigit():
                    return int(item[5:])
    except OSError:
        pass
    return None


def descendants(root: int, parents: dict[int, int]) -> list[int]:
    """`root` and every process below it, parents before children."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo += sorted(children.get(pid, []))
    return out


def ranks_of(tasks: list[tuple[int, str, str]], parents: dict[int, int]) -> list[tuple[int, int, str]]:
    """(rank, pid, step) of the training processes: under each task, the top-most Python process of each RANK (a
    launcher's workers), else the task's top-most Python process, ranked by its Slurm task id."""
    chosen: list[tuple[int, int, str]] = []
    for task_pid, step, task in tasks:
        pythons = [p for p in descendants(task_pid, parents) if is_python(p)]
        by_rank: dict[int, int] = {}
        for pid in pythons:
            rank = env_rank(pid)
            if rank is not None and rank not in by_rank:
                by_rank[rank] = pid
        if by_rank:
            chosen += [(rank, pid, step) for rank, pid in sorted(by_rank.items())]
        elif pythons:
            chosen.append((int(task), pythons[0], step))
    return chosen


def main(argv: list[str]) -> int:
    job_id, py_spy = argv[1], argv[2]
    host = os.environ.get("SLURMD_NODENAME") or os.uname().nodename.split(".")[0]
    own_step = os.environ.get("SLURM_STEP_ID", "")
    try:
        rows = listpids(job_id)
    except (OSError, subprocess.SubprocessError) as exc:
        emit(host=host, note=f"`scontrol listpids {job_id}` failed on {host}: {exc}")
        return 0
    tasks = [(pid, step, task) for pid, step, task in rows
             if step.isdigit() and step != own_step and task.isdigit()]
    emit(host=host, placement=sorted({int(task) for _, _, task in tasks}))
    if not tasks:
        tasks = [(pid, step, task) for pid, step, task in rows if step == "batch" and task.isdigit()]
        if tasks:
            emit(host=host, note=f"no srun step of job {job_id} runs on {host}: dumped the batch script's Python "
                                 "processes instead")
    chosen = ranks_of(tasks, process_table())
    if not chosen:
        emit(host=host, note=f"no Python process of job {job_id} found on {host} ({len(tasks)} task(s))")
        return 0
    exe = shutil.which(py_spy)
    if exe is None:
        emit(host=host, note=f"py-spy ({py_spy}) is not installed on {host} (or not on its PATH): "
                             f"{len(chosen)} rank(s) there not dumped")
        return 0
    for rank, pid, step in chosen:
        try:
            proc = subprocess.run([exe, "dump", "--pid", str(pid)], capture_output=True, text=True,
                                  timeout=DUMP_TIMEOUT_S, errors="replace", check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            emit(host=host, rank=rank, pid=pid, step=step, error=f"py-spy dump --pid {pid}: {exc}")
            continue
        if proc.returncode != 0 or not proc.stdout.strip():
            said = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
            emit(host=host, rank=rank, pid=pid, step=step, error=f"py-spy dump --pid {pid} exited {proc.returncode}: "
                                                                 f"{said}")
            continue
        emit(host=host, rank=rank, pid=pid, step=step, dump=proc.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
