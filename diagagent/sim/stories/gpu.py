"""Hardware fault stories: ECC, GPU off the bus, NVLink, a throttling straggler, a silent GPU hang, a node crash.

Each returns the Incident: the faulty rank's own lines, the kernel's Xid lines and the probe deviations.
"""

from __future__ import annotations

from diagagent.sim.hardware import gpu_pci, gpu_pci_full
from diagagent.sim.incident import Death, Event, Incident
from diagagent.sim.pipeline import slowdown
from diagagent.sim.stories.common import (
    Ctx,
    crash_in_training,
    cuda_error_lines,
    incident,
    kernel,
    slow_job,
)


def _cuda_crash(ctx: Ctx, message: str, cause: str, nccl_warn: bool = True) -> tuple[Incident, int, int]:
    """A rank dies of a CUDA error (the caller adds the kernel's Xid lines). -> (incident, node, gpu)."""
    node, gpu = ctx.pick_node(), ctx.pick_gpu()
    rank = ctx.rank_on(node, gpu)
    sched, t, it = crash_in_training(ctx)
    where = ctx.rng.choice(["forward", "backward", "optimizer"])
    inc = incident(ctx, sched, t, it, cause.format(gpu=gpu, host=ctx.layout.hosts[node]), faulty_nodes=[node])
    if nccl_warn:
        inc.add(rank, Event(t + 0.05, [f"{ctx.nccl(rank, 2)} WARN Cuda failure '{message}'"]))
    inc.add(rank, ctx.tb(rank, t + 0.1, where, cuda_error_lines(message)))
    inc.deaths[rank] = Death(t + 0.3, "error", f"RuntimeError: CUDA error: {message}")
    return inc, node, gpu


def gpu_ecc_uncorrectable(ctx: Ctx) -> Incident:
    inc, node, gpu = _cuda_crash(
        ctx, "uncorrectable ECC error encountered", "uncorrectable ECC error on GPU {gpu} of {host}"
    )
    hopper = ctx.env.gpu_short == "H100"
    pci = gpu_pci(ctx.env, gpu)
    t = inc.t_fault
    pid = ctx.pid(ctx.rank_on(node, gpu))
    if hopper:
        texts = [
            (
                f"NVRM: Xid (PCI:{pci}): 94, pid={pid}, name=python3, Contained: SM (0x1). RST: No, D-RST: "
                "No",
                True,
            ),
            (
                f"NVRM: Xid (PCI:{pci}): 48, pid={pid}, name=python3, An uncorrectable double bit error "
                "(DBE) has "
                f"been detected on GPU in the framebuffer at partition 6, subpartition 1.",
                True,
            ),
            (
                f"NVRM: Xid (PCI:{pci}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
                f"(0x{ctx.rng.randrange(1 << 30):016x}) marked for remapping, reset gpu to activate.",
                True,
            ),
        ]
    else:
        texts = [
            (
                f"NVRM: Xid (PCI:{pci}): 48, pid={pid}, name=python3, Ch 00000008, intr 00000000. "
                f"DBE (double bit error) detected",
                True,
            ),
            (
                f"NVRM: Xid (PCI:{pci}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
                f"(0x{ctx.rng.randrange(1 << 30):016x}) marked for remapping, reset gpu to activate.",
                True,
            ),
        ]
    health = inc.node_health(node)
    health.dmesg = [kernel(t - 0.4 + 0.001 * i, text, cite) for i, (text, cite) in enumerate(texts)]
    health.ecc_uncorrectable[gpu] = ctx.rng.choice([1, 1, 2, 4])
    health.remap_pending.append(gpu)
    health.dcgm.append(
        (
            "GPU Memory",
            f"Fail - GPU: {gpu}",
            f"GPU {gpu} Detected {health.ecc_uncorrectable[gpu]} volatile double-bit ECC error(s).",
        )
    )
    health.cite += [f"nvidia-smi:ecc:{gpu}", f"nvidia-smi:ecc_agg:{gpu}"]
    return inc


def gpu_fell_off_bus(ctx: Ctx) -> Incident:
    message = ctx.rng.choice(["unspecified launch failure", "unknown error"])
    inc, node, gpu = _cuda_crash(ctx, message, "GPU {gpu} of {host} fell off the PCIe bus (Xid 79)")
    pci, pid = gpu_pci(ctx.env, gpu), ctx.pid(ctx.rank_on(node, gpu))
    t = inc.t_fault
    health = inc.node_health(node)
    health.dmesg = [
        kernel(
            t - 0.5,
            f"NVRM: GPU at PCI:{pci}: GPU-{ctx.rng.randrange(1 << 32):08x}-"
            f"{ctx.rng.randrange(1 << 16):04x}-{ctx.rng.randrange(1 << 16):04x}",
        ),
        kernel(
            t - 0.5, f"NVRM: Xid (PCI:{pci}): 79, pid={pid}, name=python3, GPU has fallen off the bus.", True
        ),
        kernel(t - 0.49, f"NVRM: GPU {pci}.0: GPU has fallen off the bus."),
        kernel(t - 0.48, "NVRM: A GPU crash dump has been created. If possible, please run"),
        kernel(t - 0.48, "NVRM: nvidia-bug-report.sh as root to collect this data before"),
        kernel(t - 0.48, "NVRM: the NVIDIA kernel module is unloaded."),
    ]
    health.gpu_lost.append(gpu)
    health.nccl_test_error = f"Test CUDA failure common.cu:1030 '{message}'"
    health.dcgm.append(
        (
            "Denylist",
            "Fail",
            f"Detected {ctx.layout.gpus_per_node - 1} GPUs but "
            f"{ctx.layout.gpus_per_node} were expected: GPU {gpu} "
            f"({gpu_pci_full(ctx.env, gpu)}) is lost.",
        )
    )
    health.cite += [f"nvidia-smi:lost:{gpu}"]
    return inc


def nvlink_error(ctx: Ctx) -> Incident:
    message = "uncorrectable NVLink error detected during the execution"
    inc, node, gpu = _cuda_crash(ctx, message, "fatal NVLink error (Xid 74) on GPU {gpu} of {host}")
    pci, pid = gpu_pci(ctx.env, gpu), ctx.pid(ctx.rank_on(node, gpu))
    link = ctx.rng.randrange(18 if ctx.env.gpu_short == "H100" else 12)
    t = inc.t_fault
    health = inc.node_health(node)
    health.dmesg = [
        kernel(
            t - 0.3,
            f"NVRM: Xid (PCI:{pci}): 74, pid={pid}, name=python3, NVLink: fatal error detected on link "
            f"{link}(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)",
            True,
        ),
        kernel(
            t - 0.29,
            f"NVRM: Xid (PCI:{pci}): 74, pid={pid}, name=python3, NVLink: fatal error detected on link "
            f"{link}(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
        ),
    ]
    health.dcgm.append(("NVLink", f"Fail - GPU: {gpu}", f"GPU {gpu}'s NvLink link {link} is currently down"))
    return inc


def gpu_straggler(ctx: Ctx) -> Incident:
    node, gpu = ctx.pick_node(), ctx.pick_gpu()
    node_factor = ctx.rng.uniform(1.35, 1.8)
    inc = slow_job(
        ctx,
        node,
        f"GPU {gpu} of {ctx.layout.hosts[node]} throttles (HW thermal slowdown) and slows every iteration",
        slowdown(ctx.layout.pp, ctx.plan.microbatches, ctx.layout.stage_of(node), compute=node_factor),
        slow_nodes={node: node_factor},
    )
    health = inc.node_health(node)
    health.throttle[gpu] = "thermal"
    health.temp[gpu] = ctx.rng.randrange(89, 95)
    health.dcgm.append(
        (
            "Targeted Power",
            f"Fail - GPU: {gpu}",
            f"Thermal violations totaling {ctx.rng.uniform(8, 30):.1f} seconds started at "
            f"{ctx.rng.uniform(1, 9):.1f} seconds into the test for GPU {gpu}",
        )
    )
    health.cite += [f"nvidia-smi:throttle:{gpu}", f"nvidia-smi:temp:{gpu}"]
    return inc


def gpu_hang(ctx: Ctx) -> Incident:
    node, gpu = ctx.pick_node(), ctx.pick_gpu()
    sched, t, it = crash_in_training(ctx, frac=(0.05, 0.3))
    inc = incident(
        ctx,
        sched,
        t,
        it,
        f"GPU {gpu} of {ctx.layout.hosts[node]} stopped making progress (silent hang)",
        faulty_nodes=[node],
        hang_rank=ctx.rank_on(node, gpu),
    )
    inc.t_capture = t + ctx.rng.uniform(300, 540)
    return inc


def node_crash(ctx: Ctx) -> Incident:
    node = ctx.pick_node()
    sched, t, it = crash_in_training(ctx)
    host = ctx.layout.hosts[node]
    inc = incident(
        ctx,
        sched,
        t,
        it,
        f"{host} crashed (kernel panic after a machine check); its ranks vanished",
        faulty_nodes=[node],
        network_peers_fail=True,
    )
    for rank in ctx.layout.ranks_of(node):
        inc.deaths[rank] = Death(t, "vanished")
    cpu, bank = ctx.rng.randrange(96), ctx.rng.choice([5, 12, 17, 22])
    health = inc.node_health(node)
    health.panic = True
    health.dmesg = [
        kernel(t - 2.1, "mce: [Hardware Error]: Machine check events logged"),
        kernel(
            t - 0.02,
            f"mce: [Hardware Error]: CPU {cpu}: Machine Check Exception: 5 Bank {bank}: be00000000800400",
            True,
        ),
        kernel(
            t - 0.02, "mce: [Hardware Error]: RIP !INEXACT! 10:<ffffffff9a2c1e47> {intel_idle+0x87/0x130}"
        ),
        kernel(t - 0.01, "mce: [Hardware Error]: TSC 0 ADDR 8f2a1c3c0 MISC 9001000a0081086 "),
        kernel(t - 0.01, "mce: [Hardware Error]: Run the above through 'mcelog --ascii'"),
        kernel(t, "Kernel panic - not syncing: Fatal machine check", True),
    ]
    return inc
