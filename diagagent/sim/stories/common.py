"""What every fault story shares: the seeded context, line prefixes as each tool prints them, and fault timing.

A story is a function `(Ctx) -> Incident`; this module gives it the pieces.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from diagagent.sim import clock
from diagagent.sim.clock import stream
from diagagent.sim.incident import Event, Incident
from diagagent.sim.plan import Plan, Schedule, build_schedule, start_time
from diagagent.sim.tracebacks import traceback


@dataclass
class Ctx:
    plan: Plan
    rng: random.Random

    @property
    def env(self):
        return self.plan.env

    @property
    def layout(self):
        return self.plan.layout

    @property
    def torchrun(self) -> bool:
        return self.plan.env.launcher == "torchrun"

    def host(self, rank: int) -> str:
        return self.plan.host(rank)

    def local(self, rank: int) -> int:
        return rank % self.layout.gpus_per_node

    def pid(self, rank: int) -> int:
        return self.plan.pids[rank]

    def py(self, rank: int) -> str:
        """Prefix of a Python stderr line: torchrun tags each with `[rankN]: `; srun prints them bare."""
        return f"[rank{rank}]: " if self.torchrun else ""

    def c10(self, rank: int, ts: float, where: str, level: str = "E") -> str:
        """`[rank3]:[E1120 10:01:02.123456789 ProcessGroupNCCL.cpp:1595] ` (c10 logging)."""
        return f"[rank{rank}]:[{level}{clock.glog(ts)} {where}] "

    def nccl(self, rank: int, thread: int = 0) -> str:
        """`node-017:48213:48390 [3] NCCL` (NCCL's host:pid:tid [cudaDev] prefix)."""
        pid = self.pid(rank)
        tid = pid if thread == 0 else pid + 150 + thread
        return f"{self.host(rank)}:{pid}:{tid} [{self.local(rank)}] NCCL"

    def tb(
        self,
        rank: int,
        ts: float,
        where: str,
        final: list[str],
        cite: tuple[int, ...] = (0,),
        extra_frames: list | None = None,
    ) -> Event:
        """A Python traceback printed by `rank`; `cite` indexes into `final` (0: the exception line)."""
        lines = traceback(self.env, where, final, extra_frames)
        first = len(lines) - len(final)
        prefix = self.py(rank)
        return Event(ts, [prefix + ln for ln in lines], tuple(first + i for i in cite))

    def rank_on(self, node: int, gpu: int) -> int:
        return node * self.layout.gpus_per_node + gpu

    def pick_node(self) -> int:
        return self.rng.randrange(self.layout.nodes)

    def pick_gpu(self) -> int:
        return self.rng.randrange(self.layout.gpus_per_node)

    def window(self) -> int:
        """Complete iterations the bundle covers before the fault."""
        return max(3, int(self.plan.minutes * 60 / self.plan.iter_s))


def new_ctx(plan: Plan) -> Ctx:
    return Ctx(plan, stream(plan.seed, "story", plan.fault.id))


def crash_in_training(
    ctx: Ctx,
    n_iters: int | None = None,
    frac: tuple[float, float] = (0.1, 0.9),
    failing_save: int | None = None,
) -> tuple[Schedule, float, int]:
    """Schedule `n_iters` complete iterations; the fault strikes inside the next one. -> (schedule, t, iteration)."""
    n = ctx.window() if n_iters is None else n_iters
    sched = build_schedule(ctx.plan, start_time(ctx.plan.seed), n, None, 1.0, failing_save)
    t = sched.next_start + ctx.rng.uniform(*frac) * ctx.plan.iter_s
    return sched, t, sched.iteration(n)


def slow_job(ctx: Ctx, node: int, cause: str, job_factor: float, **kw: object) -> Incident:
    """The job slows by `job_factor` from an iteration 15-40% into the window and is captured while still slow."""
    n = ctx.window()
    slow_from = max(1, int(n * ctx.rng.uniform(0.15, 0.4)))
    sched = build_schedule(ctx.plan, start_time(ctx.plan.seed), n, slow_from, job_factor)
    inc = incident(
        ctx,
        sched,
        sched.starts[slow_from],
        sched.iteration(slow_from),
        cause,
        faulty_nodes=[node],
        slow_from=slow_from,
        **kw,
    )
    inc.t_capture = sched.ends[-1] + ctx.rng.uniform(5, 40)
    return inc


def incident(
    ctx: Ctx, sched: Schedule, t: float, iteration: int | None, cause: str, **kw: object
) -> Incident:
    spec = ctx.plan.fault
    return Incident(
        outcome=spec.outcome,
        stage=kw.pop("stage", spec.stage),
        root_cause=cause,  # type: ignore[arg-type]
        schedule=sched,
        t_fault=t,
        iteration=iteration,
        **kw,
    )  # type: ignore[arg-type]


def kernel(ts: float, text: str, cite: bool = False) -> Event:
    """One `dmesg -T` line."""
    return Event(ts, [f"[{clock.dmesg(ts)}] {text}"], (0,) if cite else ())


def cuda_error_lines(message: str) -> list[str]:
    from diagagent.sim.tracebacks import CUDA_ERROR_TAIL

    return [f"RuntimeError: CUDA error: {message}", *CUDA_ERROR_TAIL]


def hex_addr(rng: random.Random) -> str:
    return f"0x{rng.randrange(0x7F0000000000, 0x7FFFFFFFFFFF):x}"
