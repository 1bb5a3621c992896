"""Which node ran which task of a Slurm job: read from what Slurm recorded where it can be, else assumed and said so.

Formats (Slurm 22.05 man pages): `scontrol show step -o` (`Dist=`), sacct(1) `Layout`, srun(1) `--distribution`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# srun's own report of failed tasks, in the job's output: `srun: error: node-3: tasks 8-11,14: Exited with exit code 1`
SRUN_TASK_ERROR = re.compile(rb"^srun: error: ([A-Za-z0-9][\w.-]*): tasks? ([\d,\-]{1,200}): ")
# SLURM_TASKS_PER_NODE (sbatch(1)): counts in node order, `2(x3),1` = 2, 2, 2, 1
_TASKS_PER_NODE = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


@dataclass(frozen=True)
class Step:
    """One job step as `scontrol show step` or sacct recorded it: its node list (Slurm's compressed form), its
    task count and its task distribution (`Block`, `Cyclic`, `Plane`, `Arbitrary`, or `BCyclic` style pairs)."""

    step_id: str
    nodelist: str
    ntasks: int
    dist: str


def parse_scontrol_steps(records: Sequence[dict[str, str]]) -> list[Step]:
    """`scontrol show step -o JOB` records (parsed Key=value lines): StepId=42.0 NodeList=... Tasks=8 Dist=Block."""
    return [Step(r.get("StepId", ""), r.get("NodeList", ""), _int(r.get("Tasks")), r.get("Dist", ""))
            for r in records if r.get("StepId")]


def parse_sacct_steps(text: str) -> list[Step]:
    """`sacct -j JOB -n -P --format=JobID,NodeList,NTasks,Layout` rows: `42.0|node-[1-2]|16|Block`."""
    steps = []
    for line in text.splitlines():
        cols = line.split("|")
        if len(cols) >= 4 and cols[0].strip():
            steps.append(Step(cols[0].strip(), cols[1].strip(), _int(cols[2]), cols[3].strip()))
    return steps


def main_step(steps: Sequence[Step]) -> Step | None:
    """The training step: of the numbered steps (not batch, extern, interactive) the one with the most tasks, the
    latest of equals; None when there is none."""
    numbered = [s for s in steps if re.fullmatch(r"\d+(?:_\d+)?(?:\+\d+)?\.\d+", s.step_id) and s.ntasks > 0]
    return max(reversed(numbered), key=lambda s: s.ntasks, default=None)


def tasks_per_node(spec: str) -> list[int]:
    """`2(x3),1` -> [2, 2, 2, 1]; [] when it is not in that form."""
    counts: list[int] = []
    for part in spec.split(","):
        m = _TASKS_PER_NODE.match(part.strip())
        if m is None:
            return []
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    return counts


def distribute(hosts: Sequence[str], ntasks: int, dist: str = "Block",
               counts: Sequence[int] | None = None) -> dict[int, str] | None:
    """Task -> host as srun's first distribution method places them (srun(1) `--distribution`): `block` fills a node
    with consecutive tasks, `cyclic` deals them round-robin. `counts` are the tasks each node runs, when known; else
    as even as can be, the first nodes taking the rest (srun(1)'s example: 4 tasks on 3 nodes are 2, 1, 1). None for
    a distribution that does not say (`Arbitrary`, `Plane` without its size)."""
    if not hosts or ntasks <= 0:
        return {}
    method = _method(dist)
    if method is None:
        return None
    if not counts or len(counts) != len(hosts) or sum(counts) < ntasks:
        base, extra = divmod(max(ntasks, len(hosts)), len(hosts))
        counts = [base + (1 if i < extra else 0) for i in range(len(hosts))]
    layout: dict[int, str] = {}
    if method == "block":
        task = 0
        for host, n in zip(hosts, counts, strict=True):
            for _ in range(n):
                if task < ntasks:
                    layout[task] = host
                task += 1
        return layout
    left = list(counts)
    task = 0
    while task < ntasks and any(left):
        for i, host in enumerate(hosts):
            if left[i] and task < ntasks:
                layout[task] = host
                left[i] -= 1
                task += 1
    return layout


def _method(dist: str) -> str | None:
    """The node-level part of a step's distribution name: `Block`, `BCyclic`, `block:cyclic` -> block; `Cyclic`,
    `CBlock` -> cyclic; `Arbitrary`, `Plane`, `Unknown` -> None. Empty (not recorded) is srun's default, block."""
    name = dist.strip().split(":")[0].split(",")[0].lower()
    if name in ("", "*", "block") or (name.startswith("b") and name[1:] in ("cyclic", "block", "fcyclic")):
        return "block"
    if name == "cyclic" or (name.startswith("c") and name[1:] in ("cyclic", "block", "fcyclic")):
        return "cyclic"
    return None


def srun_error_tasks(line: bytes) -> tuple[str, list[int]] | None:
    """(host, tasks) of srun's `srun: error: HOST: task(s) 4-7,9: ...` line, else None."""
    m = SRUN_TASK_ERROR.match(line)
    if m is None:
        return None
    tasks: list[int] = []
    for part in m.group(2).decode().split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        tasks += range(int(lo), int(hi or lo) + 1)
        if len(tasks) > 100_000:
            return None
    return m.group(1).decode(), tasks


def _int(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        return 0


__all__ = ["SRUN_TASK_ERROR", "Step", "distribute", "main_step", "parse_sacct_steps", "parse_scontrol_steps",
           "srun_error_tasks", "tasks_per_node"]
