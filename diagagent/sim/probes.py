"""Node health probe outputs, as the tools print them: nvidia-smi -q, dcgmi diag, dmesg -T, ibstat, perfquery,
all_reduce_perf. A healthy node prints healthy values; `NodeHealth` says where one differs.

`node_probes(...)` returns a node's files with the lines truth cites (keys from `NodeHealth.cite`).
"""

from __future__ import annotations

import random
import textwrap

from diagagent.sim import clock
from diagagent.sim.clock import stream
from diagagent.sim.hardware import gpu_pci, gpu_pci_full, hca_name, hca_pci, rails
from diagagent.sim.incident import Event, NodeHealth
from diagagent.sim.logs import TextFile, render
from diagagent.sim.plan import Plan, boot_time


class Lines:
    """Lines of one probe file, with named marks for the lines truth may cite."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.marks: dict[str, int] = {}

    def add(self, line: str, mark: str | None = None) -> None:
        self.lines.append(line)
        if mark is not None:
            self.marks[mark] = len(self.lines)

    def file(self, path: str, keys: list[str]) -> TextFile:
        data = ("\n".join(self.lines) + "\n").encode()
        return TextFile(path, data, [self.marks[k] for k in keys if k in self.marks])


def _kv(indent: int, key: str, value: object) -> str:
    return " " * indent + key.ljust(42 - indent) + f": {value}"


def nvidia_smi(plan: Plan, node: int, health: NodeHealth, ts: float, rng: random.Random) -> Lines:
    env = plan.env
    new = env.driver >= "550"
    out = Lines()
    out.add("")
    out.add("==============NVSMI LOG==============")
    out.add("")
    out.add(_kv(0, "Timestamp", clock.dmesg(ts)))
    out.add(_kv(0, "Driver Version", env.driver))
    out.add(_kv(0, "CUDA Version", env.cuda))
    out.add("")
    out.add(_kv(0, "Attached GPUs", plan.layout.gpus_per_node))
    for gpu in range(plan.layout.gpus_per_node):
        pci = gpu_pci_full(env, gpu)
        if gpu in health.gpu_lost:
            out.add(
                f"Unable to determine the device handle for GPU {pci}: GPU is lost.  Reboot the system to "
                f"recover this GPU",
                f"nvidia-smi:lost:{gpu}",
            )
            continue
        _gpu_section(out, plan, node, gpu, health, new, rng)
    out.add("")
    return out


def _gpu_section(
    out: Lines, plan: Plan, node: int, gpu: int, health: NodeHealth, new: bool, rng: random.Random
) -> None:
    env = plan.env
    hopper = env.gpu_short == "H100"
    throttle = health.throttle.get(gpu)
    temp = health.temp.get(gpu, rng.randrange(34, 48))

    def act(on: bool) -> str:
        return "Active" if on else "Not Active"

    out.add(f"GPU {gpu_pci_full(env, gpu)}")
    out.add(_kv(4, "Product Name", env.gpu))
    out.add(_kv(4, "Product Architecture", "Hopper" if hopper else "Ampere"))
    out.add(_kv(4, "Persistence Mode", "Enabled"))
    out.add(_kv(4, "Serial Number", f"1654{(node * 131 + gpu * 17) % 10**9:09d}"))
    out.add(
        _kv(
            4,
            "GPU UUID",
            f"GPU-{(node * 7919 + gpu) * 2654435761 % (1 << 32):08x}-5e2a-"
            f"{node % 10000:04d}-{gpu:04d}-a1b2c3d4e5f6",
        )
    )
    out.add(_kv(4, "Minor Number", gpu))
    out.add(_kv(4, "VBIOS Version", "96.00.89.00.01" if hopper else "92.00.36.00.10"))
    out.add(_kv(4, "Performance State", "P0"))
    out.add(f"    Clocks {'Event' if new else 'Throttle'} Reasons")
    out.add(_kv(8, "Idle", act(False)))
    out.add(_kv(8, "Applications Clocks Setting", act(False)))
    out.add(_kv(8, "SW Power Cap", act(throttle == "power")))
    out.add(_kv(8, "HW Slowdown", act(throttle == "thermal")))
    out.add(_kv(12, "HW Thermal Slowdown", act(throttle == "thermal")), f"nvidia-smi:throttle:{gpu}")
    out.add(_kv(12, "HW Power Brake Slowdown", act(False)))
    out.add(_kv(8, "Sync Boost", act(False)))
    out.add(_kv(8, "SW Thermal Slowdown", act(throttle == "thermal")))
    out.add(_kv(8, "Display Clock Setting", act(False)))
    out.add("    FB Memory Usage")
    total = 81559 if hopper else 81920
    used = rng.randrange(2, 9) if health.panic else rng.randrange(68000, 76000)
    out.add(_kv(8, "Total", f"{total} MiB"))
    out.add(_kv(8, "Reserved", "551 MiB" if hopper else "635 MiB"))
    out.add(_kv(8, "Used", f"{used} MiB"))
    out.add(_kv(8, "Free", f"{total - used - 551} MiB"))
    out.add("    ECC Errors")
    unc = health.ecc_uncorrectable.get(gpu, 0)
    cor = health.ecc_correctable.get(gpu, 0)
    for scope in ("Volatile", "Aggregate"):
        out.add(f"        {scope}")
        out.add(_kv(12, "SRAM Correctable", 0))
        if new:
            out.add(_kv(12, "SRAM Uncorrectable Parity", 0))
            out.add(_kv(12, "SRAM Uncorrectable SEC-DED", 0))
        else:
            out.add(_kv(12, "SRAM Uncorrectable", 0))
        out.add(_kv(12, "DRAM Correctable", cor if scope == "Volatile" else cor + (cor * 3)))
        out.add(
            _kv(12, "DRAM Uncorrectable", unc), f"nvidia-smi:ecc{'' if scope == 'Volatile' else '_agg'}:{gpu}"
        )
    out.add("    Retired Pages")
    out.add(_kv(8, "Single Bit ECC", "N/A"))
    out.add(_kv(8, "Double Bit ECC", "N/A"))
    out.add(_kv(8, "Pending Page Blacklist", "N/A"))
    out.add("    Remapped Rows")
    out.add(_kv(8, "Correctable Error", 0))
    out.add(_kv(8, "Uncorrectable Error", unc), f"nvidia-smi:remap:{gpu}")
    out.add(_kv(8, "Pending", "Yes" if gpu in health.remap_pending else "No"))
    out.add(_kv(8, "Remapping Failure Occurred", "No"))
    out.add("    Temperature")
    out.add(_kv(8, "GPU Current Temp", f"{temp} C"), f"nvidia-smi:temp:{gpu}")
    if new:
        out.add(_kv(8, "GPU T.Limit Temp", f"{87 - temp} C"))
        out.add(_kv(8, "GPU Shutdown T.Limit Temp", "-7 C"))
        out.add(_kv(8, "GPU Slowdown T.Limit Temp", "-2 C"))
        out.add(_kv(8, "GPU Max Operating T.Limit Temp", "0 C"))
    else:
        out.add(_kv(8, "GPU Shutdown Temp", "92 C"))
        out.add(_kv(8, "GPU Slowdown Temp", "89 C"))
        out.add(_kv(8, "GPU Max Operating Temp", "85 C"))
    out.add(_kv(8, "Memory Current Temp", f"{temp + rng.randrange(3, 9)} C"))
    out.add("    GPU Power Readings")
    limit = 700.0 if hopper else 400.0
    out.add(
        _kv(8, "Power Draw", f"{(limit * (0.99 if throttle == 'power' else rng.uniform(0.55, 0.85))):.2f} W")
    )
    out.add(_kv(8, "Current Power Limit", f"{limit:.2f} W"))
    top = 1980 if hopper else 1410
    sm = int(top * rng.uniform(0.52, 0.62)) if throttle == "thermal" else top
    out.add("    Clocks")
    out.add(_kv(8, "Graphics", f"{sm} MHz"))
    out.add(_kv(8, "SM", f"{sm} MHz"))
    out.add(_kv(8, "Memory", f"{2619 if hopper else 1593} MHz"))
    out.add("    Max Clocks")
    out.add(_kv(8, "Graphics", f"{top} MHz"))
    out.add(_kv(8, "SM", f"{top} MHz"))
    out.add(_kv(8, "Memory", f"{2619 if hopper else 1593} MHz"))


def dcgm_diag(plan: Plan, health: NodeHealth) -> Lines:
    g = plan.layout.gpus_per_node
    out = Lines()

    def row(a: str, b: str) -> str:
        return f"| {a:<25} | {b:<46} |"

    def sect(name: str) -> str:
        return f"+-----  {name}  " + "-" * (18 - len(name)) + "+" + "-" * 48 + "+"

    edge = "+---------------------------+------------------------------------------------+"
    results = {test: (res, warn) for test, res, warn in health.dcgm}

    def test(name: str, ok: str = "Pass - All") -> None:
        res, warn = results.get(name, (ok, ""))
        out.add(row(name, res), f"dcgm:{name}" if warn else None)
        for i, chunk in enumerate(textwrap.wrap(warn, 46)):
            out.add(row("Warning" if i == 0 else "", chunk))

    out.add("Successfully ran diagnostic for group.")
    out.add(edge)
    out.add(row("Diagnostic", "Result"))
    out.add("+===========================+================================================+")
    out.add(sect("Metadata"))
    out.add(row("DCGM Version", "3.3.7"))
    out.add(row("Driver Version Detected", plan.env.driver))
    out.add(
        row("GPU Device IDs Detected", ",".join(["2330" if plan.env.gpu_short == "H100" else "20b2"] * g))
    )
    out.add(sect("Deployment"))
    for name in (
        "Denylist",
        "NVML Library",
        "CUDA Main Library",
        "Permissions and OS Blocks",
        "Persistence Mode",
        "Environment Variables",
        "Page Retirement/Row Remap",
        "Graphics Processes",
        "Inforom",
    ):
        test(name, "Pass")
    out.add(sect("Integration"))
    test("PCIe")
    test("NVLink")
    out.add(sect("Hardware"))
    test("GPU Memory")
    out.add(sect("Stress"))
    test("Targeted Stress")
    test("Targeted Power")
    test("Memory Bandwidth")
    out.add(edge)
    return out


def dmesg(plan: Plan, node: int, health: NodeHealth, red_herring: bool, rng: random.Random) -> TextFile:
    boot = boot_time(plan, node)
    base = [
        (
            boot,
            "Linux version 6.5.0-1018-nvidia (buildd@lcy02-amd64-034) (x86_64-linux-gnu-gcc-12 (Ubuntu "
            "12.3.0-1ubuntu1~22.04) 12.3.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #18-Ubuntu SMP",
        ),
        (
            boot + 0.1,
            "Command line: BOOT_IMAGE=/boot/vmlinuz-6.5.0-1018-nvidia root=UUID=4f3c2a1b ro "
            "iommu=pt pci=realloc=off",
        ),
        (boot + 21.0, "nvidia: loading out-of-tree module taints kernel."),
        (
            boot + 21.4,
            f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {plan.env.driver}  Release Build  "
            f"(dvs-builder@U16-I3-B03-4-3)  Wed Jun 12 22:44:51 UTC 2024",
        ),
        (
            boot + 22.0,
            "nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, "
            "Class = 0x68000",
        ),
    ]
    for hca in range(rails(plan.layout.gpus_per_node)):
        base.append(
            (boot + 12.0 + hca * 0.1, f"mlx5_core {hca_pci(plan.env, hca)}: firmware version: 28.39.2048")
        )
        base.append((boot + 40.0 + hca * 0.1, f"mlx5_core {hca_pci(plan.env, hca)} ib{hca}: Link up"))
    base.append(
        (boot + 55.0, "systemd[1]: Started nvidia-fabricmanager.service - NVIDIA fabric manager service.")
    )
    if red_herring:
        old = boot + 3600 * rng.uniform(2, 30)
        base.append(
            (
                old,
                f"NVRM: Xid (PCI:{gpu_pci(plan.env, 2)}): 13, pid=912344, "
                f"name=python3, Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address",
            )
        )
        base.append(
            (old + 0.01, f"NVRM: Xid (PCI:{gpu_pci(plan.env, 2)}): 43, pid=912344, name=python3, Ch 00000010")
        )
    events = [Event(t, [f"[{clock.dmesg(t)}] {text}"]) for t, text in base]
    events += [Event(e.ts, e.lines, e.cite, 1) for e in health.dmesg]
    return render(f"probes/{plan.layout.hosts[node]}/dmesg.txt", events)


def ibstat(plan: Plan, node: int, health: NodeHealth) -> Lines:
    out = Lines()
    hopper = plan.env.gpu_short == "H100"
    for hca in range(rails(plan.layout.gpus_per_node)):
        guid = f"0x946dae0300{(node * 16 + hca) % (1 << 24):06x}"
        down = hca in health.port_down
        out.add(f"CA '{hca_name(hca)}'")
        out.add(f"\tCA type: {'MT4129' if hopper else 'MT4123'}")
        out.add("\tNumber of ports: 1")
        out.add(f"\tFirmware version: {'28.39.2048' if hopper else '20.39.2048'}")
        out.add("\tHardware version: 0")
        out.add(f"\tNode GUID: {guid}")
        out.add(f"\tSystem image GUID: {guid}")
        out.add("\tPort 1:")
        out.add(f"\t\tState: {'Down' if down else 'Active'}", f"ibstat:state:{hca}")
        out.add(f"\t\tPhysical state: {'Polling' if down else 'LinkUp'}", f"ibstat:phys:{hca}")
        out.add(f"\t\tRate: {10 if down else (400 if hopper else 200)}")
        out.add(f"\t\tBase lid: {0 if down else 1000 + node * 8 + hca}")
        out.add("\t\tLMC: 0")
        out.add("\t\tSM lid: 1")
        out.add("\t\tCapability mask: 0xa751e848")
        out.add(f"\t\tPort GUID: {guid}")
        out.add("\t\tLink layer: InfiniBand")
    return out


def ib_counters(plan: Plan, node: int, health: NodeHealth, rng: random.Random, herring: bool) -> Lines:
    out = Lines()
    for hca in range(rails(plan.layout.gpus_per_node)):
        sym = health.symbol_errors.get(hca, 3 if herring and hca == 1 else 0)
        fields = [
            ("PortSelect", "1"),
            ("CounterSelect", "0x0000"),
            ("SymbolErrorCounter", str(sym)),
            ("LinkErrorRecoveryCounter", str(health.link_downed.get(hca, 0) * 2)),
            ("LinkDownedCounter", str(health.link_downed.get(hca, 0))),
            ("PortRcvErrors", "0"),
            ("PortRcvRemotePhysicalErrors", "0"),
            ("PortRcvSwitchRelayErrors", "0"),
            ("PortXmitDiscards", "0"),
            ("PortXmitConstraintErrors", "0"),
            ("PortRcvConstraintErrors", "0"),
            ("CounterSelect2", "0x00"),
            ("LocalLinkIntegrityErrors", "0"),
            ("ExcessiveBufferOverrunErrors", "0"),
            ("QP1Dropped", "0"),
            ("VL15Dropped", "0"),
            ("PortXmitData", "4294967295"),
            ("PortRcvData", "4294967295"),
            ("PortXmitPkts", "4294967295"),
            ("PortRcvPkts", "4294967295"),
            ("PortXmitWait", str(health.xmit_wait.get(hca, rng.randrange(800, 90000)))),
        ]
        out.add(f"$ perfquery -C {hca_name(hca)} -P 1")
        lid = 0 if hca in health.port_down else 1000 + node * 8 + hca
        out.add(f"# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)")
        marks = {
            "LinkDownedCounter": f"ib-counters:link_downed:{hca}",
            "PortXmitWait": f"ib-counters:xmit_wait:{hca}",
            "SymbolErrorCounter": f"ib-counters:symbol:{hca}",
        }
        for key, value in fields:
            out.add(f"{key}:".ljust(33, ".") + value, marks.get(key))
    return out


def nccl_tests(plan: Plan, node: int, health: NodeHealth, rng: random.Random) -> Lines:
    lay = plan.layout
    host = lay.hosts[node]
    peer = lay.hosts[(node + 1) % lay.nodes]
    g = lay.gpus_per_node
    out = Lines()
    out.add(
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0"
    )
    out.add("#")
    out.add("# Using devices")
    for i in range(2 * g):
        h = host if i < g else peer
        out.add(
            f"#  Rank {i:2d} Group  0 Pid {plan.pids[0] + 1000 + i:6d} on {h:>10} device {i % g:2d} "
            f"[0x{gpu_pci_full(plan.env, i % g)[9:11].lower()}] {plan.env.gpu}"
        )
    out.add("#")
    out.add(
        "#                                                              out-of-place                       "
        "in-place          "
    )
    out.add(
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
        "algbw   "
        "busbw #wrong"
    )
    out.add(
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
        "(GB/s)  "
        "(GB/s)       "
    )
    if health.nccl_test_error:
        out.add(f"{host}: {health.nccl_test_error}", "nccl-tests:error")
        out.add(f" .. {host} pid {plan.pids[0] + 1000}: Test failure common.cu:401")
        return out
    peak = health.busbw or (370.0 if plan.env.gpu_short == "H100" else 185.0) * rng.uniform(0.96, 1.02)
    n = 2 * g
    bws = []
    for p in range(20, 34):
        size = 1 << p
        bus = peak * (1 - 0.93 ** (p - 17))
        alg = bus * n / (2 * (n - 1))
        us = size / (alg * 1e3)
        bws.append(bus)
        out.add(
            f"{size:12d}  {size // 4:12d}     float     sum      -1  {us:7.1f}  {alg:6.2f}  {bus:6.2f}      "
            "0  "
            f"{us * 1.002:7.1f}  {alg * 0.998:6.2f}  {bus * 0.998:6.2f}      0"
        )
    out.add("# Out of bounds values : 0 OK")
    out.add(f"# Avg bus bandwidth    : {sum(bws) / len(bws):.4f} ", "nccl-tests:busbw")
    out.add("#")
    return out


def node_probes(plan: Plan, node: int, health: NodeHealth, ts: float, herring: str | None) -> list[TextFile]:
    """The six probe files of one node; `herring` makes a healthy node look a little scary."""
    rng = stream(plan.seed, "probes", node)
    if herring == "ecc":
        health.ecc_correctable.setdefault(rng.randrange(plan.layout.gpus_per_node), rng.randrange(2, 40))
    elif herring == "power":
        gpu = rng.randrange(plan.layout.gpus_per_node)
        health.throttle.setdefault(gpu, "power")
        health.temp.setdefault(gpu, rng.randrange(76, 84))
    host = plan.layout.hosts[node]
    keys = health.cite
    base = f"probes/{host}"
    return [
        nvidia_smi(plan, node, health, ts, rng).file(
            f"{base}/nvidia-smi.txt", [k for k in keys if k.startswith("nvidia-smi:")]
        ),
        dcgm_diag(plan, health).file(f"{base}/dcgm-diag.txt", [k for k in keys if k.startswith("dcgm:")]),
        dmesg(plan, node, health, herring == "xid", rng),
        ibstat(plan, node, health).file(f"{base}/ibstat.txt", [k for k in keys if k.startswith("ibstat:")]),
        ib_counters(plan, node, health, rng, herring == "symbol").file(
            f"{base}/ib-counters.txt", [k for k in keys if k.startswith("ib-counters:")]
        ),
        nccl_tests(plan, node, health, rng).file(
            f"{base}/nccl-tests.txt", [k for k in keys if k.startswith("nccl-tests:")]
        ),
    ]
