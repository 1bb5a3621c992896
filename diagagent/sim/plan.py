"""The shape of one simulated job: hosts and IPs, parallel layout, software versions, and the iteration schedule.

Everything here is derived from (fault, nodes, seed, ...) alone; the scenario and the writers read it.
"""

from __future__ import annotations

import calendar
import math
from dataclasses import dataclass, field

from diagagent.sim.clock import stream
from diagagent.sim.faults import FaultSpec

EPOCH_2026_11_16 = calendar.timegm((2026, 11, 16, 0, 0, 0))
NICE_INTERVALS = (10, 20, 25, 50, 100, 200, 250, 500, 1000)
WATCHDOG_S = 600.0


@dataclass(frozen=True)
class Layout:
    """Hosts, IPs and the Megatron rank layout (tp fastest, then cp, dp, pp); each node is whole ranks of one stage."""

    hosts: tuple[str, ...]
    ips: tuple[str, ...]
    gpus_per_node: int
    tp: int
    cp: int
    dp: int
    pp: int

    @property
    def nodes(self) -> int:
        return len(self.hosts)

    @property
    def world(self) -> int:
        return self.nodes * self.gpus_per_node

    def node_of(self, rank: int) -> int:
        return rank // self.gpus_per_node

    def ranks_of(self, node: int) -> range:
        g = self.gpus_per_node
        return range(node * g, node * g + g)

    def coords(self, rank: int) -> tuple[int, int, int, int]:
        """(tp, cp, dp, pp) of a rank."""
        tp, rest = rank % self.tp, rank // self.tp
        cp, rest = rest % self.cp, rest // self.cp
        return tp, cp, rest % self.dp, rest // self.dp

    @property
    def nodes_per_stage(self) -> int:
        return self.nodes // self.pp

    def stage_of(self, node: int) -> int:
        return node // self.nodes_per_stage

    def stage_nodes(self, stage: int) -> range:
        n = self.nodes_per_stage
        return range(stage * n, stage * n + n)

    def ring_neighbors(self, node: int) -> list[int]:
        """The nodes next to `node` in its stage's data-parallel ring (what NCCL's inter-node ring connects)."""
        members = self.stage_nodes(self.stage_of(node))
        if len(members) < 2:
            return []
        i = node - members.start
        prev, nxt = members[(i - 1) % len(members)], members[(i + 1) % len(members)]
        return [prev] if prev == nxt else [prev, nxt]

    def pp_peer(self, node: int, step: int) -> int | None:
        """The node holding the same data-parallel replica one stage later (`step` 1) or earlier (-1)."""
        stage = self.stage_of(node) + step
        if not 0 <= stage < self.pp:
            return None
        return node + step * self.nodes_per_stage

    def dp_group_rank(self, rank: int) -> int:
        return self.coords(rank)[2]


@dataclass(frozen=True)
class Env:
    """Software and hardware versions: what the banners, probes and tracebacks print."""

    framework: str  # megatron | nemo | deepspeed
    launcher: str  # torchrun | srun
    gpu: str
    gpu_short: str
    capacity_gib: float
    driver: str
    cuda: str
    torch: str
    nccl: str
    python: str
    nccl_debug_info: bool
    pyspy_json: bool
    flow_format: str  # "csv.gz" | "parquet"
    slurm_job: int
    workdir: str
    script: str


@dataclass
class Schedule:
    """When each iteration of the window ran, and the checkpoints saved in it."""

    t_start: float  # job launch
    t_train: float  # first iteration starts
    it_first: int  # the first iteration this job runs (resumed checkpoint + 1)
    starts: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    saves: dict[int, tuple[float, float]] = field(default_factory=dict)  # step -> (begin, end) of the save
    next_start: float = 0.0  # when the iteration after the last complete one starts

    @property
    def done(self) -> int:
        return len(self.ends)

    def iteration(self, k: int) -> int:
        return self.it_first + k

    @property
    def last_done(self) -> int | None:
        return self.it_first + self.done - 1 if self.done else None


@dataclass
class Plan:
    fault: FaultSpec
    seed: int
    job_id: str
    name: str
    model: str
    params_b: float
    seq_len: int
    micro_batch: int
    global_batch: int
    train_iters: int
    iter_s: float
    save_interval: int
    save_s: float
    layout: Layout
    env: Env
    compress: bool
    minutes: float
    resumed_step: int
    schedule: Schedule = field(default_factory=lambda: Schedule(0.0, 0.0, 1))
    pids: list[int] = field(default_factory=list)  # per rank

    @property
    def world(self) -> int:
        return self.layout.world

    @property
    def microbatches(self) -> int:
        """Micro-batches per iteration on each pipeline."""
        return max(1, self.global_batch // max(1, self.layout.dp * self.micro_batch))

    def host(self, rank: int) -> str:
        return self.layout.hosts[self.layout.node_of(rank)]


def default_minutes(nodes: int) -> float:
    """How much training the bundle covers before the fault, by default: more for bigger jobs."""
    if nodes <= 16:
        return 20.0
    if nodes <= 128:
        return 30.0
    return 60.0


def _layout(nodes: int, gpus_per_node: int, framework: str, seed: int) -> Layout:
    rng = stream(seed, "layout")
    width = max(3, len(str(nodes * 2)))
    cluster = max(nodes + 8, int(nodes * 1.3))
    numbers = sorted(rng.sample(range(1, cluster + 1), nodes))
    hosts = tuple(f"node-{n:0{width}d}" for n in numbers)
    ips = tuple(f"10.{64 + n // 250}.{(n % 250) // 50}.{(n % 50) + 10}" for n in numbers)
    g = gpus_per_node
    if framework == "deepspeed":
        return Layout(hosts, ips, g, tp=1, cp=1, dp=nodes * g, pp=1)
    tp, cp = min(g, 8), 1
    if g == 8 and rng.random() < 0.2:
        tp, cp = 4, 2
    if tp * cp != g:  # odd node sizes: keep TP inside a node, spread the rest as data parallel
        tp, cp = math.gcd(g, 8), 1
    per_node = g // (tp * cp)
    cands = [p for p in (1, 2, 4, 8) if nodes % p == 0 and nodes // p >= 2] or [1]
    pp = rng.choice(cands[-2:])
    dp = nodes * per_node // pp
    return Layout(hosts, ips, g, tp=tp, cp=cp, dp=dp, pp=pp)


def _env(framework: str, seed: int, nodes: int) -> Env:
    rng = stream(seed, "env")
    hopper = rng.random() < 0.7
    torch_v, nccl_v, cuda_v = rng.choice(
        [("2.5.1", "2.21.5", "12.4"), ("2.4.0", "2.20.5", "12.4"), ("2.6.0", "2.23.4", "12.6")]
    )
    script = {"megatron": "pretrain_gpt.py", "nemo": "megatron_gpt_pretraining.py", "deepspeed": "train.py"}[
        framework
    ]
    workdir = {
        "megatron": "/workspace/Megatron-LM",
        "nemo": "/opt/NeMo/examples/nlp/language_modeling",
        "deepspeed": "/workspace/llm-train",
    }[framework]
    return Env(
        framework=framework,
        launcher="torchrun" if framework == "deepspeed" or rng.random() < 0.5 else "srun",
        gpu="NVIDIA H100 80GB HBM3" if hopper else "NVIDIA A100-SXM4-80GB",
        gpu_short="H100" if hopper else "A100",
        capacity_gib=79.33 if hopper else 79.15,
        driver=rng.choice(["550.90.07", "550.127.05"]) if hopper else "535.161.08",
        cuda=cuda_v,
        torch=torch_v,
        nccl=nccl_v,
        python="3.11.7" if hopper else "3.10.12",
        nccl_debug_info=nodes <= 64 and rng.random() < 0.6,
        pyspy_json=rng.random() < 0.25,
        flow_format="parquet" if nodes >= 512 or rng.random() < 0.15 else "csv.gz",
        slurm_job=900000 + rng.randrange(99999),
        workdir=workdir,
        script=script,
    )


def make_plan(
    spec: FaultSpec,
    nodes: int,
    seed: int,
    gpus_per_node: int,
    minutes: float | None,
    job_id: str | None,
    compress: bool | None,
) -> Plan:
    """Everything about the job that does not depend on how the fault plays out."""
    rng = stream(seed, "plan", spec.id)
    framework = rng.choice(["megatron", "megatron", "nemo", "deepspeed"])
    layout = _layout(nodes, gpus_per_node, framework, seed)
    env = _env(framework, seed, nodes)
    model, params_b, seq = rng.choice(
        [
            ("llama3-8b", 8.0, 8192),
            ("llama3-70b", 70.6, 8192),
            ("gpt3-175b", 175.0, 2048),
            ("mixtral-8x7b", 46.7, 4096),
        ]
    )
    minutes = float(minutes) if minutes is not None else default_minutes(nodes)
    iter_s = round(rng.uniform(2.5, 5.0) * (1.0 + math.log2(max(nodes, 2)) / 10.0), 2)
    window_iters = max(4, int(minutes * 60 / iter_s))
    save_interval = max([n for n in NICE_INTERVALS if n <= max(10, window_iters // 2)])
    resumed = save_interval * rng.randint(8, 60)
    micro = rng.choice([1, 1, 2])
    global_batch = (
        layout.dp * micro * max(8, 4 * layout.pp) if framework != "deepspeed" else layout.dp * micro * 2
    )
    return Plan(
        fault=spec,
        seed=seed,
        job_id=job_id or str(1000 + seed % 9000),
        name=f"{model}-pretrain",
        model=model,
        params_b=params_b,
        seq_len=seq,
        micro_batch=micro,
        global_batch=global_batch,
        train_iters=rng.choice([250000, 500000, 1000000]),
        iter_s=iter_s,
        save_interval=save_interval,
        save_s=round(rng.uniform(15, 45), 1),
        layout=layout,
        env=env,
        compress=compress if compress is not None else (nodes >= 256 or rng.random() < 0.25),
        minutes=minutes,
        resumed_step=resumed,
        pids=_pids(layout, seed),
    )


def _pids(layout: Layout, seed: int) -> list[int]:
    rng = stream(seed, "pids")
    out: list[int] = []
    for _ in range(layout.nodes):
        base = rng.randrange(20000, 3000000)
        out.extend(base + 7 * i for i in range(layout.gpus_per_node))
    return out


def build_schedule(
    plan: Plan,
    t_start: float,
    n_iters: int,
    slow_from: int | None,
    slow_factor: float,
    failing_save: int | None = None,
) -> Schedule:
    """Iteration start/end times for `n_iters` complete iterations, slower by `slow_factor` from index `slow_from`.

    A checkpoint is saved after every iteration whose step is a multiple of `save_interval` (blocking);
    `failing_save` is a step whose save never finishes.
    """
    rng = stream(plan.seed, "schedule")
    init_s = rng.uniform(70, 160) + 20 * math.log2(max(plan.layout.nodes, 2))
    sched = Schedule(t_start=t_start, t_train=t_start + init_s, it_first=plan.resumed_step + 1)
    t = sched.t_train
    for k in range(n_iters):
        dur = plan.iter_s * (1.0 + rng.gauss(0.0, 0.012))
        if k == 0:
            dur *= 2.6  # first iteration: allocator warm-up, NCCL lazy connects
        if slow_from is not None and k >= slow_from:
            dur *= slow_factor * (1.0 + abs(rng.gauss(0.0, 0.01)))
        sched.starts.append(t)
        t += dur
        sched.ends.append(t)
        step = sched.iteration(k)
        if step % plan.save_interval == 0 and step != failing_save:
            sched.saves[step] = (t, t + plan.save_s)
            t += plan.save_s
    sched.next_start = t if n_iters else sched.t_train
    return sched


def start_time(seed: int) -> float:
    """When the job launched: a deterministic moment in the week of 2026-11-16."""
    rng = stream(seed, "start")
    return float(EPOCH_2026_11_16 + rng.randrange(0, 6 * 86400) + rng.randrange(0, 3600) + 0.0)


def boot_time(plan: Plan, node: int) -> float:
    """When a node last booted: days before the job."""
    rng = stream(plan.seed, "boot", node)
    return start_time(plan.seed) - rng.uniform(3, 40) * 86400
