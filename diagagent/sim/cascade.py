"""How one rank's failure spreads: peers stuck in a collective hit the NCCL watchdog (600 s later), ring neighbours
of a dead host see IB errors, launchers kill siblings and print their failure summaries.

`spread(plan, incident)` returns every rank's death (or none) and adds the cascade's lines to the incident.
"""

from __future__ import annotations

import random

from diagagent.sim import clock
from diagagent.sim.clock import stream
from diagagent.sim.hardware import rail_of_gpu
from diagagent.sim.incident import EXIT_CODES, Death, Event, Incident
from diagagent.sim.plan import WATCHDOG_S, Plan
from diagagent.sim.stories.common import hex_addr, new_ctx
from diagagent.sim.stories.network import ib_completion_error

_SIGNALS = {-6: "Signal 6 (SIGABRT)", -9: "Signal 9 (SIGKILL)", -15: "Signal 15 (SIGTERM)"}


def spread(plan: Plan, inc: Incident) -> dict[int, Death]:
    """Every rank that died, when and how: the story's roots plus the cascade."""
    if inc.outcome != "crash":
        return {}
    rng = stream(plan.seed, "cascade")
    deaths = dict(inc.deaths)
    layout = plan.layout
    if inc.network_peers_fail:
        _ring_neighbours_fail(plan, inc, deaths, rng)
    if inc.stage == "init":
        _agents(plan, inc, deaths, rng)
        return deaths
    first = min(d.ts for d in deaths.values())
    seq = _seq(plan, inc)
    for rank in range(layout.world):
        if rank in deaths:
            continue
        ts = first + WATCHDOG_S + rng.uniform(-0.4, 0.6) * plan.iter_s + rng.uniform(0.0, 1.5)
        if plan.env.launcher == "torchrun":
            killer = _first_on_node(deaths, layout.ranks_of(layout.node_of(rank)))
            if killer is not None and killer.kind != "vanished" and killer.ts + 3.0 < ts:
                deaths[rank] = Death(killer.ts + rng.uniform(0.5, 2.5), "terminated")
                continue
        deaths[rank] = Death(ts + 0.05, "abort")
        inc.add(rank, _watchdog(plan, rank, ts, seq, rng))
    _agents(plan, inc, deaths, rng)
    return deaths


def _first_on_node(deaths: dict[int, Death], ranks: range) -> Death | None:
    found = [deaths[r] for r in ranks if r in deaths]
    return min(found, key=lambda d: d.ts) if found else None


def _ring_neighbours_fail(plan: Plan, inc: Incident, deaths: dict[int, Death], rng: random.Random) -> None:
    """Ranks across the DP ring from a dead or cut-off host get IB completion errors naming its IP, then abort."""
    ctx = new_ctx(plan)
    layout = plan.layout
    for node in inc.faulty_nodes:
        for peer in layout.ring_neighbors(node):
            gpus = sorted(rng.sample(range(layout.gpus_per_node), min(2, layout.gpus_per_node)))
            for gpu in gpus:
                rank = peer * layout.gpus_per_node + gpu
                if rank in deaths:
                    continue
                ts = inc.t_fault + rng.uniform(18, 60)
                hca = rail_of_gpu(gpu, layout.gpus_per_node)
                for ev in ib_completion_error(ctx, rank, layout.ips[node], hca, ts, send=rng.random() < 0.5):
                    inc.add(rank, Event(ev.ts, ev.lines))  # a symptom: not cited
                deaths[rank] = Death(ts + 0.9, "abort")


def _seq(plan: Plan, inc: Incident) -> int:
    per_iter = 3 + 2 * plan.layout.pp
    done = (inc.iteration or plan.resumed_step) - plan.resumed_step
    return 40 + per_iter * max(done, 0) + per_iter // 2


def _watchdog(plan: Plan, rank: int, ts: float, seq: int, rng: random.Random) -> Event:
    """The ProcessGroupNCCL watchdog timeout block a healthy rank prints before it aborts."""
    layout = plan.layout
    ms = int(WATCHDOG_S * 1000 + rng.uniform(5, 120))
    gr = layout.dp_group_rank(rank)
    if plan.env.framework == "deepspeed":
        op, numel, pg = "_REDUCE_SCATTER_BASE", 262144000, "PG ID 0 PG GUID 0(default_pg)"
    elif layout.pp > 1 and rng.random() < 0.5:
        op, numel, pg = (
            ("RECV" if rng.random() < 0.5 else "SEND"),
            33554432,
            "PG ID 4 PG GUID 9(PIPELINE_MODEL_PARALLEL_GROUP)",
        )
        gr = layout.coords(rank)[3]
    else:
        op, numel, pg = (
            "ALLREDUCE",
            1048576 * rng.choice([64, 96, 128]),
            "PG ID 2 PG GUID 5(DATA_PARALLEL_GROUP)",
        )
    work = f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000)"
    p = f"[rank{rank}]:[E{clock.glog(ts)} ProcessGroupNCCL.cpp:"
    lib = f"/usr/local/lib/python{plan.env.python[:4]}/dist-packages/torch/lib"
    a, b = hex_addr(rng), hex_addr(rng)
    frames = [
        f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 ({a} in {lib}/libc10.so)",
        f"frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        f"std::ratio<1l, 1000l> > >) + 0x282 ({b} in {lib}/libtorch_cuda.so)",
        f"frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 ({b} in {lib}/libtorch_cuda.so)",
        f"frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d ({b} in {lib}/libtorch_cuda.so)",
        "frame #4: <unknown function> + 0xdc253 (0x7f3aa9c0c253 in /lib/x86_64-linux-gnu/libstdc++.so.6)",
        "frame #5: <unknown function> + 0x94ac3 (0x7f3ab3e94ac3 in /lib/x86_64-linux-gnu/libc.so.6)",
        "frame #6: clone + 0x44 (0x7f3ab3f25a04 in /lib/x86_64-linux-gnu/libc.so.6)",
        "",
    ]
    caught = f"[Rank {gr}] Watchdog caught collective operation timeout: {work} ran for {ms} milliseconds before timing out."
    lines = [
        f"{p}616] {caught}",
        f"{p}1785] [{pg} Rank {gr}] Exception (either an error or timeout) detected by watchdog at work: "
        f"{seq}, "
        f"last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}.",
        f"{p}630] [{pg} Rank {gr}] Timeout at NCCL work: {seq}, last enqueued NCCL work: {seq}, "
        f"last completed NCCL work: {seq - 1}.",
        f"{p}632] [{pg} Rank {gr}] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of "
        f"CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        f"{p}638] [{pg} Rank {gr}] To avoid data inconsistency, we are taking the entire process down.",
        f"{p}1595] [{pg} Rank {gr}] Process group watchdog thread terminated with exception: {caught}",
        "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 "
        "(most recent call first):",
        *frames,
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        f"  what():  [{pg} Rank {gr}] Process group watchdog thread terminated with exception: {caught}",
        "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 "
        "(most recent call first):",
        *frames[:4],
        "",
    ]
    return Event(ts, lines)


def _agents(plan: Plan, inc: Incident, deaths: dict[int, Death], rng: random.Random) -> None:
    """Launcher output: torchrun's per-node failure summary, or srun's per-task errors on the batch host."""
    layout = plan.layout
    if plan.env.launcher == "srun":
        _srun(plan, inc, deaths)
        return
    site = f"/usr/local/lib/python{plan.env.python[:4]}/dist-packages"
    for node in range(layout.nodes):
        ranks = [r for r in layout.ranks_of(node) if r in deaths]
        if not ranks or all(deaths[r].kind == "vanished" for r in ranks):
            continue
        own = sorted((r for r in ranks if deaths[r].kind != "terminated"), key=lambda r: (deaths[r].ts, r))
        if not own:
            continue
        root = own[0]
        t = deaths[root].ts + 0.4
        agent_pid = plan.pids[node * layout.gpus_per_node] - 23
        head = f"{clock.glog_us(t)} {agent_pid} torch/distributed/elastic/multiprocessing/api.py"
        lines = [
            f"W{head}:897] Sending process {plan.pids[r]} closing signal SIGTERM"
            for r in layout.ranks_of(node)
            if deaths.get(r) is not None and deaths[r].kind == "terminated"
        ]
        lines.append(
            f"E{head}:869] failed (exitcode: {EXIT_CODES[deaths[root].kind]}) local_rank: "
            f"{root % layout.gpus_per_node} (pid: {plan.pids[root]}) of binary: /usr/bin/python3"
        )
        lines += _child_failed(plan, site, layout.hosts[node], root, own[1:], deaths)
        inc.launcher_events.setdefault(node, []).append(Event(t, lines))


def _failure(plan: Plan, host: str, rank: int, death: Death) -> list[str]:
    code = EXIT_CODES[death.kind]
    tb = _SIGNALS.get(code, "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    if code < 0:
        tb = f"{tb} received by PID {plan.pids[rank]}"
    return [
        f"  time      : {clock.elastic(death.ts)}",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {rank % plan.layout.gpus_per_node})",
        f"  exitcode  : {code} (pid: {plan.pids[rank]})",
        "  error_file: <N/A>",
        f"  traceback : {tb}",
    ]


def _child_failed(
    plan: Plan, site: str, host: str, root: int, others: list[int], deaths: dict[int, Death]
) -> list[str]:
    bar, dash = "=" * 60, "-" * 60
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        f'  File "{site}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
        "    return f(*args, **kwargs)",
        f'  File "{site}/torch/distributed/run.py", line 919, in main',
        "    run(args)",
        f'  File "{site}/torch/distributed/run.py", line 910, in run',
        "    elastic_launch(",
        f'  File "{site}/torch/distributed/launcher/api.py", line 138, in __call__',
        "    return launch_agent(self._config, self._entrypoint, list(args))",
        f'  File "{site}/torch/distributed/launcher/api.py", line 269, in launch_agent',
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        bar,
        f"{plan.env.script} FAILED",
        dash,
        "Failures:",
    ]
    if not others:
        lines.append("  <NO_OTHER_FAILURES>")
    for i, rank in enumerate(others, start=1):
        lines += [f"[{i}]:", *_failure(plan, host, rank, deaths[rank])]
    lines += [
        dash,
        "Root Cause (first observed failure):",
        "[0]:",
        *_failure(plan, host, root, deaths[root]),
        bar,
    ]
    return lines


def _srun(plan: Plan, inc: Incident, deaths: dict[int, Death]) -> None:
    """srun's lines on the batch host: failed tasks grouped per host, node failures, the step cancel."""
    layout = plan.layout
    step = plan.env.slurm_job
    events: list[Event] = []
    for node in range(layout.nodes):
        ranks = [r for r in layout.ranks_of(node) if r in deaths]
        if not ranks:
            continue
        host = layout.hosts[node]
        if any(deaths[r].kind == "vanished" for r in ranks):
            t = max(deaths[r].ts for r in ranks) + 95.0
            events.append(Event(t, [f"srun: error: Node failure on {host}"]))
            events.append(
                Event(
                    t + 0.5,
                    [
                        f"slurmstepd: error: *** STEP {step}.0 ON {layout.hosts[0]} CANCELLED AT "
                        f"{clock.iso(t + 0.5)[:-1]} DUE TO NODE FAILURE, SEE SLURMCTLD LOG ***"
                    ],
                )
            )
            continue
        by_kind: dict[str, list[int]] = {}
        for r in ranks:
            by_kind.setdefault(deaths[r].kind, []).append(r)
        for kind, group in by_kind.items():
            what = {
                "error": "Exited with exit code 1",
                "abort": "Aborted (core dumped)",
                "killed": "Out Of Memory",
                "terminated": "Terminated",
            }[kind]
            tasks = f"task {group[0]}" if len(group) == 1 else f"tasks {_ranges(group)}"
            events.append(
                Event(max(deaths[r].ts for r in group) + 0.3, [f"srun: error: {host}: {tasks}: {what}"])
            )
    if events:
        last = max(e.ts for e in events)
        events.append(
            Event(last + 0.2, ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish."])
        )
    inc.launcher_events.setdefault(0, []).extend(events)


def _ranges(ranks: list[int]) -> str:
    """`136-139,141` as srun prints task lists."""
    out, start, prev = [], ranks[0], ranks[0]
    for r in ranks[1:] + [None]:  # type: ignore[list-item]
        if r is not None and r == prev + 1:
            prev = r
            continue
        out.append(f"{start}-{prev}" if prev != start else str(start))
        if r is not None:
            start = prev = r
    return ",".join(out)
