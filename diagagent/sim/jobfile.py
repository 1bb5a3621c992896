"""`job.yaml` of a simulated job (BUNDLE.md): nodes, ranks, parallelism, code history, checkpoints, status.

Written by hand, not by a YAML dumper, so that the file reads like one an SRE would write and is byte-stable.
"""

from __future__ import annotations

from dataclasses import dataclass

from diagagent.sim import clock
from diagagent.sim.clock import stream
from diagagent.sim.incident import Incident
from diagagent.sim.plan import Plan

_MESSAGES = [
    "bump lr warmup to 2000 iters",
    "data: add code mixture v3",
    "fix eval loss logging",
    "tune NCCL buffer sizes",
    "enable distributed optimizer overlap",
    "update tokenizer path",
]


@dataclass(frozen=True)
class Commit:
    commit: str
    at: float
    message: str


@dataclass(frozen=True)
class CheckpointRecord:
    step: int
    at: float
    valid: bool


def code_history(plan: Plan, inc: Incident) -> list[Commit]:
    """Oldest first. With a code regression the newest commit landed shortly before this job."""
    rng = stream(plan.seed, "code")
    t0 = inc.schedule.t_start
    count = rng.randint(3, 5)
    out = []
    t = t0 - rng.uniform(9, 20) * 86400
    for i in range(count):
        t += rng.uniform(0.5, 2.5) * 86400 if i else 0.0
        out.append(Commit(f"{rng.getrandbits(28):07x}", min(t, t0 - 2.2 * 86400), rng.choice(_MESSAGES)))
    if inc.code_regression:
        out.append(Commit(f"{rng.getrandbits(28):07x}", t0 - rng.uniform(600, 3 * 3600), inc.code_regression))
    return out


def checkpoints(plan: Plan, inc: Incident) -> list[CheckpointRecord]:
    """Oldest first: the ones earlier jobs wrote, the ones this job saved, and a partial one if the save failed."""
    rng = stream(plan.seed, "ckpt")
    t0 = inc.schedule.t_start
    si = plan.save_interval
    out = [
        CheckpointRecord(plan.resumed_step - 2 * si, t0 - rng.uniform(2, 4) * 3600, True),
        CheckpointRecord(plan.resumed_step - si, t0 - rng.uniform(1, 2) * 3600, True),
        CheckpointRecord(plan.resumed_step, t0 - rng.uniform(0.2, 0.9) * 3600, True),
    ]
    out += [CheckpointRecord(step, end, True) for step, (_b, end) in sorted(inc.schedule.saves.items())]
    if inc.invalid_checkpoint is not None:
        out.append(CheckpointRecord(inc.invalid_checkpoint, inc.t_fault, False))
    return [c for c in out if c.step > 0]


def status_of(inc: Incident) -> str:
    return {"crash": "failed", "hang": "hung", "slow": "slow"}[inc.outcome]


def job_yaml(
    plan: Plan, inc: Incident, t_end: float, code: list[Commit], ckpts: list[CheckpointRecord]
) -> str:
    lay = plan.layout
    rng = stream(plan.seed, "jobyaml")
    status = status_of(inc)
    lines = [
        f'job_id: "{plan.job_id}"',
        f"name: {plan.name}",
        f"framework: {plan.env.framework}",
        f"status: {status}",
        f"started_at: {clock.iso(inc.schedule.t_start)}",
    ]
    if status == "failed":
        lines.append(f"ended_at: {clock.iso(t_end)}")
        lines.append("exit_code: 1")
    lines += [
        f"gpus_per_node: {lay.gpus_per_node}",
        f"parallelism: {{tp: {lay.tp}, pp: {lay.pp}, dp: {lay.dp}, cp: {lay.cp}, ep: 1}}",
        f"launcher: {plan.env.launcher}",
        f"scheduler: {{kind: slurm, job: {plan.env.slurm_job}, partition: train}}",
        f"model: {plan.model}",
        f"gpu: {plan.env.gpu}",
        "nodes:",
    ]
    g = lay.gpus_per_node
    for i, host in enumerate(lay.hosts):
        ranks = ", ".join(str(r) for r in range(i * g, i * g + g))
        lines.append(f"  - {{host: {host}, ip: {lay.ips[i]}, ranks: [{ranks}]}}")
    lines.append("code:")
    for c in code:
        lines.append(f'  - {{commit: "{c.commit}", at: {clock.iso(c.at)}, message: "{c.message}"}}')
    lines.append("checkpoints:")
    for c in ckpts:
        path = f"/ckpt/{plan.job_id}/iter_{c.step:07d}"
        lines.append(
            f"  - {{step: {c.step}, at: {clock.iso(c.at)}, path: {path}, valid: {str(c.valid).lower()}}}"
        )
    lines.append(f"spares: {max(2, lay.nodes // 32) + rng.randrange(3)}")
    first = int(plan.job_id) - 3 if plan.job_id.isdigit() else 1
    lines.append(f"history: [job-{max(first, 1)}, job-{max(first + 1, 2)}]")
    return "\n".join(lines) + "\n"
