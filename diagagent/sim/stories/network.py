"""Network fault stories: an InfiniBand port that flaps, a NIC port that goes down, a congested (slow) link.

The NCCL lines name the peer's IP and the local HCA, as NCCL's IB transport prints them.
"""

from __future__ import annotations

from diagagent.sim.hardware import hca_name, hca_pci, rail_of_gpu
from diagagent.sim.incident import Death, Event, Incident
from diagagent.sim.pipeline import slowdown
from diagagent.sim.stories.common import (
    Ctx,
    crash_in_training,
    incident,
    kernel,
    slow_job,
)


def ib_completion_error(ctx: Ctx, rank: int, peer_ip: str, hca: int, ts: float, send: bool) -> list[Event]:
    """The NCCL WARN for a failed IB work completion, then the watchdog tearing the process down."""
    port = 39936 + ctx.rng.randrange(64) * 256
    opcode, side = ("0", "Send") if send else ("129", "Recv")
    detail = (
        f"NET/IB : Got completion from peer {peer_ip}<{port}> with status=12 opcode={opcode} len=0 "
        f"vendor err 129 ({side}) hca {hca_name(hca)}"
    )
    warn = f"{ctx.nccl(rank, 3)} WARN {detail}"
    info = [
        f"{ctx.nccl(rank, 3)} INFO transport/net.cc:1298 -> 6",
        f"{ctx.nccl(rank, 3)} INFO proxy.cc:694 -> 6",
        f"{ctx.nccl(rank, 3)} INFO proxy.cc:874 -> 6 [Progress Thread]",
    ]
    group_rank = ctx.layout.dp_group_rank(rank)
    head = ctx.c10(rank, ts + 0.8, "ProcessGroupNCCL.cpp:1595")
    abort = [
        f"{head}[PG ID 2 PG GUID 5(DATA_PARALLEL_GROUP) Rank {group_rank}] Process group watchdog thread "
        f"terminated with exception: NCCL error: remote process exited or there was a network error, "
        f"NCCL version {ctx.env.nccl}",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely.",
        "Last error:",
        detail,
    ]
    return [Event(ts, [warn, *info], (0,)), Event(ts + 0.8, abort)]


def _network_crash(ctx: Ctx, cause: str) -> tuple[Incident, int, int, int]:
    node, gpu = ctx.pick_node(), ctx.pick_gpu()
    hca = rail_of_gpu(gpu, ctx.layout.gpus_per_node)
    sched, t, it = crash_in_training(ctx)
    host = ctx.layout.hosts[node]
    inc = incident(
        ctx,
        sched,
        t,
        it,
        cause.format(hca=hca_name(hca), host=host),
        faulty_nodes=[node],
        network_peers_fail=True,
    )
    rank = ctx.rank_on(node, gpu)
    peers = ctx.layout.ring_neighbors(node) or [
        p for p in (ctx.layout.pp_peer(node, 1), ctx.layout.pp_peer(node, -1)) if p is not None
    ]
    peer_ip = ctx.layout.ips[peers[0]] if peers else ctx.layout.ips[node]
    for ev in ib_completion_error(
        ctx, rank, peer_ip, hca, t + ctx.rng.uniform(5, 25), send=ctx.rng.random() < 0.5
    ):
        inc.add(rank, ev)
    t_err = inc.events[rank][0].ts
    inc.deaths[rank] = Death(t_err + 0.9, "abort")
    health = inc.node_health(node)
    health.cite.append(f"ib-counters:link_downed:{hca}")
    return inc, node, gpu, hca


def ib_link_flap(ctx: Ctx) -> Incident:
    inc, node, _gpu, hca = _network_crash(ctx, "InfiniBand port {hca} of {host} flapped (link down/up)")
    t = inc.t_fault
    pci, dev = hca_pci(ctx.env, hca), f"ib{hca}"
    health = inc.node_health(node)
    flaps = ctx.rng.randint(2, 4)
    lines = []
    for i in range(flaps):
        down = t + i * ctx.rng.uniform(8, 40)
        lines.append(kernel(down, f"mlx5_core {pci} {dev}: Link down", cite=i == 0))
        lines.append(kernel(down + ctx.rng.uniform(2, 9), f"mlx5_core {pci} {dev}: Link up"))
    health.dmesg = lines
    health.link_downed[hca] = flaps
    health.symbol_errors[hca] = ctx.rng.randrange(300, 9000)
    return inc


def nic_down(ctx: Ctx) -> Incident:
    inc, node, _gpu, hca = _network_crash(ctx, "NIC port {hca} of {host} went down and stayed down")
    t = inc.t_fault
    pci, dev = hca_pci(ctx.env, hca), f"ib{hca}"
    health = inc.node_health(node)
    health.dmesg = [
        kernel(
            t - 0.2,
            f"mlx5_core {pci}: mlx5_port_module_event:1141:(pid 0): Port module event[error]: "
            f"module {hca}, Cable error, Bad or shorted cable/module",
            cite=True,
        ),
        kernel(t, f"mlx5_core {pci} {dev}: Link down", cite=True),
    ]
    health.port_down.append(hca)
    health.link_downed[hca] = 1
    health.cite.append(f"ibstat:state:{hca}")
    return inc


def slow_link(ctx: Ctx) -> Incident:
    node = ctx.pick_node()
    hca = ctx.rng.randrange(min(ctx.layout.gpus_per_node, 8))
    link_factor = ctx.rng.uniform(3.0, 6.0)
    inc = slow_job(
        ctx,
        node,
        f"congested switch port on {ctx.layout.hosts[node]} ({hca_name(hca)}) slows its "
        f"traffic and every iteration",
        slowdown(ctx.layout.pp, ctx.plan.microbatches, ctx.layout.stage_of(node), link=link_factor),
        slow_link={node: link_factor},
    )
    health = inc.node_health(node)
    health.xmit_wait[hca] = ctx.rng.randrange(2_000_000_000, 4_000_000_000)
    health.busbw = ctx.rng.uniform(28.0, 60.0)
    health.cite += [f"ib-counters:xmit_wait:{hca}", "nccl-tests:busbw"]
    return inc
