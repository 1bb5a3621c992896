"""Per-rank log files: startup, per-iteration lines, benign noise and red herrings, the fault and its cascade.

`rank_logs(...)` yields each rank's file content with the line numbers truth cites; launcher logs likewise.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

from diagagent.sim import clock
from diagagent.sim.clock import stream
from diagagent.sim.frameworks import (
    grad_norm_at,
    iteration_line,
    logging_rank,
    loss_at,
    rank0_startup,
    save_events,
)
from diagagent.sim.hardware import gpu_bus, hca_name, rails
from diagagent.sim.incident import Death, Event, Incident
from diagagent.sim.plan import Plan, boot_time


@dataclass(slots=True)
class TextFile:
    """A file built from events in time order, remembering which of its lines truth cites (1-based)."""

    path: str
    data: bytes
    cited: list[int]


def render(path: str, events: list[Event], cut_last: bool = False) -> TextFile:
    events.sort(key=lambda e: (e.ts, e.order))
    out: list[str] = []
    cited: list[int] = []
    for ev in events:
        base = len(out) + 1
        cited.extend(base + i for i in ev.cite)
        out.extend(ev.lines)
    text = "\n".join(out) + "\n" if out else ""
    if cut_last and out:
        text = text[: len(text) - 1 - max(1, len(out[-1]) // 2)]
    return TextFile(path, text.encode("utf-8", "surrogateescape"), cited)


def _warnings(plan: Plan, ts: float) -> Event:
    site = f"/usr/local/lib/python{plan.env.python[:4]}/dist-packages"
    return Event(
        ts,
        [
            f"{site}/torch/distributed/distributed_c10d.py:4181: UserWarning: No device id is provided via "
            f"`init_process_group` or `barrier `. Using the current device set by the user. ",
            "  warnings.warn(  # warn only once",
            f"{site}/transformer_engine/pytorch/cpu_offload.py:593: DeprecationWarning: Offloading weights "
            "is deprecated. "
            f"Using offload_weights=True does not have any effect.",
            "  warnings.warn(",
            f"{site}/megatron/core/tensor_parallel/layers.py:280: FutureWarning: "
            "`torch.cuda.amp.custom_fwd(args...)` is "
            f"deprecated. Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
            "  def forward(",
        ],
    )


def _nccl_init(plan: Plan, rank: int, ts: float) -> Event:
    lay = plan.layout
    host, ip = plan.host(rank), lay.ips[lay.node_of(rank)]
    pid = plan.pids[rank]
    local = rank % lay.gpus_per_node
    p = f"{host}:{pid}:{pid} [{local}] NCCL INFO "
    q = f"{host}:{pid}:{pid + 151} [{local}] NCCL INFO "
    nets = " ".join(f"[{i}]{hca_name(i)}:1/IB" for i in range(rails(lay.gpus_per_node)))
    comm = f"0x{(pid * 2654435761) % (1 << 44):x}"
    nxt, prv = (rank + 1) % plan.world, (rank - 1) % plan.world
    lines = [
        f"{p}Bootstrap : Using ib0:{ip}<0>",
        f"{p}NET/Plugin: Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object "
        f"file: No such file or directory",
        f"{p}NET/Plugin: Using internal network plugin.",
        f"{p}cudaDriverVersion 12040",
    ]
    if rank == 0:
        lines.append(f"NCCL version {plan.env.nccl}+cuda{plan.env.cuda}")
    lines += [
        f"{q}NET/IB : Using {nets} [RO]; OOB ib0:{ip}<0>",
        f"{q}Using network IB",
        f"{q}ncclCommInitRank comm {comm} rank {rank} nranks {plan.world} cudaDev {local} nvmlDev {local} "
        f"busId {gpu_bus(plan.env, local)}000 commId 0x5f3a1c2b9d8e7f60 - Init START",
        f"{q}comm {comm} rank {rank} nRanks {plan.world} nNodes {lay.nodes} localRanks {lay.gpus_per_node} "
        f"localRank {local} MNNVL 0",
        f"{q}Trees [0] {nxt}/-1/-1->{rank}->{prv} [1] {nxt}/-1/-1->{rank}->{prv}",
        f"{q}P2P Chunksize set to 524288",
        f"{q}Connected all rings",
        f"{q}Connected all trees",
        f"{q}threadThresholds 8/8/64 | {8 * plan.world}/8/64 | 512 | 512",
        f"{q}24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per "
        "peer",
        f"{q}ncclCommInitRank comm {comm} rank {rank} nranks {plan.world} cudaDev {local} nvmlDev {local} "
        f"busId {gpu_bus(plan.env, local)}000 commId 0x5f3a1c2b9d8e7f60 - Init COMPLETE",
    ]
    return Event(ts, lines)


def _nemo_groups(plan: Plan, rank: int, ts: float) -> Event:
    """NeMo's megatron_init prints each rank's parallel groups."""
    lay = plan.layout
    tp, _cp, dp, pp = lay.coords(rank)
    stride_dp, stride_pp = lay.tp * lay.cp, lay.tp * lay.cp * lay.dp
    dp_base = rank - dp * stride_dp
    pp_base = rank - pp * stride_pp
    head = f"[NeMo I {clock.plain(ts)} megatron_init:"
    return Event(
        ts,
        [
            f"{head}263] Rank {rank} has data parallel group : "
            f"{[dp_base + i * stride_dp for i in range(lay.dp)]}",
            f"{head}294] Rank {rank} has tensor model parallel group: "
            f"{[rank - tp + i for i in range(lay.tp)]}",
            f"{head}316] Rank {rank} has pipeline model parallel group: "
            f"{[pp_base + i * stride_pp for i in range(lay.pp)]}",
            f"{head}319] Rank {rank} has embedding group: {[pp_base, pp_base + (lay.pp - 1) * stride_pp]}",
        ],
    )


def _per_rank_startup(plan: Plan, rank: int, t0: float, t_train: float) -> list[Event]:
    span = t_train - t0
    events = [_warnings(plan, t0 + span * 0.15 + (rank % 97) * 0.003)]
    if plan.env.nccl_debug_info:
        events.append(_nccl_init(plan, rank, t0 + span * 0.3 + (rank % 89) * 0.002))
    if plan.env.framework == "nemo":
        events.append(_nemo_groups(plan, rank, t0 + 2.0))
    if plan.env.framework == "deepspeed":
        events.append(
            Event(
                t0 + 2.0,
                [
                    f"[{clock.pylog(t0 + 2.0)}] [INFO] [comm.py:652:init_distributed] cdb=None",
                    f"[{clock.pylog(t0 + 2.0)}] [INFO] [comm.py:683:init_distributed] Initializing "
                    f"TorchBackend in DeepSpeed with backend nccl",
                ],
            )
        )
    return events


def iteration_events(plan: Plan, inc: Incident) -> list[Event]:
    """The logging rank's per-iteration lines (the first NaN iteration's line is cited), and rank 0's saves."""
    sched = inc.schedule
    rng = stream(plan.seed, "loss")
    base_tflops = (410.0 if plan.env.gpu_short == "H100" else 165.0) * rng.uniform(0.85, 1.05)
    events: list[Event] = []
    skipped = nan = 0
    scale = 1.0 if plan.env.framework != "deepspeed" else 65536.0
    for k, end in enumerate(sched.ends):
        it = sched.iteration(k)
        dur = end - sched.starts[k]
        loss = loss_at(plan, it, inc.spike_from, inc.nan_from, rng.gauss(0, 0.01))
        gnorm = grad_norm_at(it, inc.spike_from, inc.nan_from, rng.gauss(0, 0.08))
        is_nan = math.isnan(loss)
        if is_nan:
            skipped, nan = skipped + 1, nan + 1
            scale = max(1.0, scale / 2)
        lines = iteration_line(
            plan,
            it,
            end,
            dur,
            loss,
            gnorm,
            skipped if is_nan else 0,
            nan if is_nan else 0,
            scale,
            base_tflops * plan.iter_s / dur,
        )
        if is_nan and plan.env.framework == "deepspeed":
            lines.insert(
                0,
                f"[{clock.pylog(end)}] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! "
                f"Rank 0 Skipping step. Attempted loss scale: {int(scale * 2)}, reducing to {int(scale)}",
            )
        cite = (len(lines) - 1,) if is_nan and it == inc.nan_from else ()
        if plan.env.framework == "megatron":
            slow = inc.slow_from is not None and k >= inc.slow_from
            compute = max(inc.slow_nodes.values(), default=1.0) if slow else 1.0
            link = max(inc.slow_link.values(), default=1.0) if slow else 1.0
            lines += megatron_timers(
                plan.iter_s * 1000 * (dur / plan.iter_s if not slow else 1.0), compute, link, rng
            )
        events.append(Event(end, lines, cite))
    return events


def megatron_timers(ms: float, compute: float, link: float, rng: random.Random) -> list[str]:
    """Megatron's `(min, max) time across ranks (ms):` block: a slow GPU stretches the max of its compute, a
    slow link the max of the gradient sync."""
    fwd, bwd, sync = 0.3 * ms, 0.48 * ms, 0.11 * ms
    rows = [
        ("forward-backward", 0.86 * ms, 0.86 * ms * (1 + 0.85 * (compute - 1))),
        ("forward-compute", fwd, fwd * compute),
        ("backward-compute", bwd, bwd * compute),
        ("batch-generator", 0.8, 3.5),
        ("all-grads-sync", sync * 0.2, sync * link),
        ("optimizer-copy-to-main-grad", 4.4, 4.8),
        ("optimizer-clip-main-grad", 8.6, 8.9),
        ("optimizer-inner-step", 30.1, 30.9),
        ("optimizer", 49.3, 50.1),
    ]
    out = ["(min, max) time across ranks (ms):"]
    for name, low, high in rows:
        jitter = rng.uniform(0.99, 1.01)
        out.append(
            f"    {(name + ' ').ljust(48, '.')}: ({low * jitter:.2f}, {max(high, low) * jitter * 1.004:.2f})"
        )
    return out


def noise_events(plan: Plan, inc: Incident, t_end: float) -> dict[int, list[Event]]:
    """Benign lines on healthy ranks: retried reads, scary-but-benign NCCL WARNs, warnings, a non-UTF-8 byte."""
    rng = stream(plan.seed, "noise")
    sched = inc.schedule
    lay = plan.layout
    faulty = set(inc.faulty_nodes)
    healthy = [n for n in range(lay.nodes) if n not in faulty] or [0]
    span = max(1.0, t_end - sched.t_train)
    count = max(5, int(lay.nodes * span / 900.0))  # every kind at least once
    out: dict[int, list[Event]] = {}
    for i in range(count):
        node = rng.choice(healthy)
        rank = node * lay.gpus_per_node + rng.randrange(lay.gpus_per_node)
        ts = sched.t_train + rng.uniform(0.0, span)
        kind = i % 5
        if kind == 0:
            shard = rng.randrange(4096)
            lines = [
                f"{clock.pylog(ts)} - megatron.core.datasets.indexed_dataset - WARNING - read of "
                f"/lustre/data/tokens/text_document_{shard:05d}.bin failed ([Errno 110] Connection timed "
                "out), "
                f"retrying (attempt 2/5)"
            ]
        elif kind == 1:
            pid = plan.pids[rank]
            lines = [
                f"{plan.host(rank)}:{pid}:{pid + 160} [{rank % lay.gpus_per_node}] NCCL WARN NET/IB : "
                f"Got async event : GID table change"
            ]
        elif kind == 2:
            lines = [
                f"/usr/local/lib/python{plan.env.python[:4]}/dist-packages/torch/utils/checkpoint.py:1399: "
                f"FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                f"`torch.amp.autocast('cpu', args...)` instead.",
                "  with device_autocast_ctx, torch.cpu.amp.autocast(**cpu_autocast_kwargs), "
                "recompute_context:  "
                "# type: ignore[attr-defined]",
            ]
        elif kind == 3:
            lines = [
                f"[rank{rank}]:[W{clock.glog(ts)} ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {rank}] "
                " "
                f"using GPU {rank % lay.gpus_per_node} to perform barrier as devices used by this process "
                "are "
                "currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
                "incorrect."
            ]
        else:
            lines = [
                f"{clock.pylog(ts)} - data - WARNING - skipping document with undecodable title "
                f"'Caf\udce9 Ren\udcc3\udca9' in shard {rng.randrange(4096)}"
            ]
        out.setdefault(rank, []).append(Event(ts, lines))
    return out


def rank_logs(
    plan: Plan, inc: Incident, deaths: dict[int, Death], t_end: float, ext: str, every_rank: bool = False
) -> Iterator[TextFile]:
    """Every rank's log file, in rank order; with `every_rank`, each prints the per-iteration lines (as a job that
    logs on every rank does), else only the logging rank."""
    sched = inc.schedule
    t0, t_train = sched.t_start, sched.t_train
    log_rank = logging_rank(plan)
    noise = noise_events(plan, inc, t_end)
    shared_rank0 = rank0_startup(plan, t0, t_train)
    saves = [ev for step, (b, e) in sched.saves.items() for ev in save_events(plan, step, b, e)]
    iterations = iteration_events(plan, inc)
    cut_node_rank = {
        plan.layout.node_of(r) * plan.layout.gpus_per_node for r, d in deaths.items() if d.kind == "vanished"
    }
    for rank in range(plan.world):
        events = _per_rank_startup(plan, rank, t0, t_train)
        if rank == 0:
            events += shared_rank0 + saves
        if rank == log_rank:
            events += iterations
        elif every_rank:
            events += [Event(e.ts, e.lines) for e in iterations]  # (truth cites the logging rank's lines only)
        events += noise.get(rank, [])
        events += inc.events.get(rank, [])
        death = deaths.get(rank)
        end = death.ts if death is not None else t_end
        events = [e for e in events if e.ts <= end]
        path = f"logs/{plan.host(rank)}/rank-{rank}.log{ext}"
        yield render(path, events, cut_last=rank in cut_node_rank)


def launcher_logs(plan: Plan, inc: Incident, ext: str) -> Iterator[TextFile]:
    """torchrun's agent log per node (`torchrun.log`), or srun's output on the batch host (`slurm-<job>.out`)."""
    if plan.env.launcher == "srun":
        events = [ev for node in sorted(inc.launcher_events) for ev in inc.launcher_events[node]]
        t0 = inc.schedule.t_start
        events.append(
            Event(
                t0,
                [
                    f"srun: job {plan.env.slurm_job} queued and waiting for resources",
                    f"srun: job {plan.env.slurm_job} has been allocated resources",
                ],
            )
        )
        yield render(f"logs/{plan.layout.hosts[0]}/slurm-{plan.env.slurm_job}.out{ext}", events)
        return
    for node in range(plan.layout.nodes):
        t0 = inc.schedule.t_start
        host = plan.layout.hosts[node]
        agent = plan.pids[node * plan.layout.gpus_per_node] - 23
        head = f"I{clock.glog_us(t0 + 0.5)} {agent} torch/distributed"
        events = [
            Event(
                t0 + 0.5,
                [
                    f"W{clock.glog_us(t0 + 0.4)} {agent} torch/distributed/run.py:793] ",
                    f"W{clock.glog_us(t0 + 0.4)} {agent} torch/distributed/run.py:793] " + "*" * 49,
                    f"W{clock.glog_us(t0 + 0.4)} {agent} torch/distributed/run.py:793] Setting "
                    "OMP_NUM_THREADS environment "
                    "variable for each process to be 1 in default, to avoid your system being overloaded, "
                    "please further "
                    f"tune the variable for optimal performance in your application as needed. ",
                    f"W{clock.glog_us(t0 + 0.4)} {agent} torch/distributed/run.py:793] " + "*" * 49,
                    f"{head}/elastic/agent/server/api.py:865] [default] starting workers for entrypoint: "
                    "python3",
                    f"{head}/elastic/agent/server/api.py:680] [default] Rendezvous'ing worker group",
                    f"{head}/elastic/agent/server/api.py:525] [default] Rendezvous complete for workers. "
                    "Result:",
                    f"{head}/elastic/agent/server/api.py:525]   restart_count=0",
                    f"{head}/elastic/agent/server/api.py:525]   master_addr={plan.layout.hosts[0]}",
                    f"{head}/elastic/agent/server/api.py:525]   master_port=29500",
                    f"{head}/elastic/agent/server/api.py:525]   group_rank={node}",
                    f"{head}/elastic/agent/server/api.py:525]   group_world_size={plan.layout.nodes}",
                ],
            )
        ]
        events += inc.launcher_events.get(node, [])
        yield render(f"logs/{host}/torchrun.log{ext}", events)


def kernel_logs(plan: Plan, inc: Incident, ext: str) -> Iterator[TextFile]:
    """`logs/<host>/kern.log` (syslog format) on nodes whose kernel logged something during the job; a node that
    crashed loses its unflushed kern.log, so it has none."""
    for node in sorted(inc.health):
        health = inc.health[node]
        if health.panic or not health.dmesg:
            continue
        host, boot = plan.layout.hosts[node], boot_time(plan, node)
        events = []
        for ev in health.dmesg:
            text = [ln.split("] ", 1)[1] for ln in ev.lines]
            events.append(
                Event(
                    ev.ts,
                    [f"{clock.syslog(ev.ts)} {host} kernel: [{ev.ts - boot:12.6f}] {t}" for t in text],
                    ev.cite,
                )
            )
        yield render(f"logs/{host}/kern.log{ext}", events)
