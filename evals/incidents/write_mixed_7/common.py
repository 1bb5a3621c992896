"""Shared helpers for the IL incident bundles (stdlib only).

A bundle keeps each file as a list of lines; truth line numbers are looked up afterwards from the
written text by a marker substring (its n-th occurrence), never typed by hand.
"""
import json
import os
import random
import shutil
from datetime import datetime, timedelta, timezone

UTC = timezone.utc


class Bundle:
    def __init__(self, out_dir):
        self.dir = out_dir
        self.iid = os.path.basename(out_dir.rstrip("/"))
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.files = {}
        self.tail = {}      # rel -> text appended with no final newline (a log cut off mid-write)
        self.marks = []

    def f(self, rel):
        return self.files.setdefault(rel, [])

    def add(self, rel, lines):
        self.f(rel).extend(lines)

    def cut(self, rel, text):
        self.f(rel)
        self.tail[rel] = text

    def mark(self, rel, sub, nth=1):
        self.marks.append((rel, sub, nth))

    def text(self, rel):
        lines = self.files[rel]
        body = "\n".join(lines) + ("\n" if lines else "")
        return body + self.tail.get(rel, "")

    def line_of(self, rel, sub, nth):
        n = 0
        for i, l in enumerate(self.text(rel).split("\n")):
            if sub in l:
                n += 1
                if n == nth:
                    return i + 1
        raise SystemExit(f"{self.iid}: marker not found: {rel}: {sub!r} #{nth}")

    def write(self, job_yaml, truth):
        with open(os.path.join(self.dir, "job.yaml"), "w") as fh:
            fh.write(job_yaml.lstrip("\n"))
        for rel in self.files:
            p = os.path.join(self.dir, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as fh:
                fh.write(self.text(rel).encode("utf-8", "surrogateescape"))
        truth["indicating_lines"] = [{"file": r, "line": self.line_of(r, s, n)} for r, s, n in self.marks]
        with open(os.path.join(self.dir, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=2)
            fh.write("\n")
        return self.check(truth)

    def check(self, truth):
        total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(self.dir) for fn in fns)
        assert total < 150_000, (self.iid, total)
        assert 1 <= len(truth["indicating_lines"]) <= 6, self.iid
        for k in ("fault", "category", "root_cause", "faulty_nodes", "stage", "iteration", "actions"):
            assert k in truth, (self.iid, k)
        out = [f"== {self.iid}  ({total} bytes, {sum(len(v) for v in self.files.values())} lines)  "
               f"fault={truth['fault']} cat={truth['category']} nodes={truth['faulty_nodes']} "
               f"stage={truth['stage']} it={truth['iteration']} actions={json.dumps(truth['actions'])}"]
        for ent in truth["indicating_lines"]:
            raw = open(os.path.join(self.dir, ent["file"]), "rb").read().split(b"\n")
            txt = raw[ent["line"] - 1].decode("utf-8", "replace")
            assert txt.strip(), ent
            out.append(f"   {ent['file']}:{ent['line']}: {txt[:240]}")
        return "\n".join(out)


# ---------------------------------------------------------------- time formats

def T(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def dmesg_T(t):
    # dmesg -T: [Sat Nov 28 04:12:13 2026]
    return "[" + t.strftime("%a %b ") + f"{t.day:2d}" + t.strftime(" %H:%M:%S %Y") + "]"


def pyts(t):
    # logging asctime: 2026-11-28 04:12:13,123
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


_NS = [100]


def glog(t, lvl="I"):
    # c10d / glog: E1128 04:12:13.123456789 (torch prints nanoseconds)
    _NS[0] = (_NS[0] + random.randint(7, 61)) % 1000
    return f"{lvl}{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d}{_NS[0]:03d}"


def absl(t, lvl, tid, src):
    # absl python logging: I1128 04:12:13.123456 140234567890 train.py:212]
    return f"{lvl}{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d} {tid} {src}]"


def torchrun_ts(t):
    return t.strftime("%Y-%m-%d_%H:%M:%S")


def jitter(t, lo=0.0, hi=0.9):
    return t + timedelta(seconds=random.uniform(lo, hi))


# ---------------------------------------------------------------- NCCL / torch lines

def nccl(host, pid, tid, dev, msg):
    return f"{host}:{pid}:{tid} [{dev}] NCCL {msg}"


def nccl_init(host, pid, dev, ip, iface="ibp26s0", hcas=8, version="2.21.5+cuda12.4", plugin=True):
    tid = pid + 90 + dev
    out = [nccl(host, pid, pid, dev, f"INFO Bootstrap : Using {iface}:{ip}<0>")]
    if plugin:
        out.append(nccl(host, pid, pid, dev, "INFO NET/Plugin: No plugin found (libnccl-net.so)"))
        out.append(nccl(host, pid, pid, dev, "INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open "
                                             "shared object file: No such file or directory : when loading libnccl-net.so"))
    out.append(nccl(host, pid, pid, dev, "INFO cudaDriverVersion 12040"))
    if dev == 0:
        out.append(f"NCCL version {version}")
    devs = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(hcas))
    out.append(nccl(host, pid, tid, dev, f"INFO NET/IB : Using {devs} ; OOB {iface}:{ip}<0>"))
    out.append(nccl(host, pid, tid, dev, "INFO Using non-device net plugin version 0"))
    out.append(nccl(host, pid, tid, dev, "INFO Using network IB"))
    return out, tid


def nccl_comm_done(host, pid, tid, dev, rank, nranks, busid):
    return nccl(host, pid, tid, dev, f"INFO comm 0x{random.randint(0x55d000000000, 0x55dfffffffff):x} rank {rank} "
                                     f"nranks {nranks} cudaDev {dev} nvmlDev {dev} busId {busid} "
                                     f"commId 0x{random.getrandbits(64):x} - Init COMPLETE")


def watchdog(rank, t, seq, op, numel, timeout_ms):
    ran = timeout_ms + random.randint(3, 80)
    p = f"[rank{rank}]:["
    return [
        p + f"{glog(t, 'E')} ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms}) "
            f"ran for {ran} milliseconds before timing out.",
        p + f"{glog(t, 'E')} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Exception (either an "
            f"error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL "
            f"work: {seq - 1}.",
        p + f"{glog(t, 'E')} ProcessGroupNCCL.cpp:630] [Rank {rank}] Some NCCL operations have failed or timed out. Due to "
            f"the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        p + f"{glog(t, 'E')} ProcessGroupNCCL.cpp:636] [Rank {rank}] To avoid data inconsistency, we are taking the "
            f"entire process down.",
        p + f"{glog(t, 'E')} ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group "
            f"watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms}) ran for "
            f"{ran} milliseconds before timing out.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]


def remote_error_tb(rank, script, frames, last_error, prefix=True):
    """A rank's traceback ending in NCCL's ncclRemoteError (a healthy peer of a dead or unreachable rank)."""
    p = f"[rank{rank}]: " if prefix else ""
    out = [p + "Traceback (most recent call last):", p + f'  File "{script}", line {frames[0][1]}, in <module>',
           p + f"    {frames[0][2]}"]
    for fn, ln, code, where in frames[1:]:
        out += [p + f'  File "{fn}", line {ln}, in {where}', p + f"    {code}"]
    out += [p + "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:2027, remote process exited or there was a network error, NCCL version 2.21.5",
            p + "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
            p + "Last error:",
            p + last_error]
    return out


def child_failed(t, script, host, failures, bar="=" * 60, sp="/usr/local/lib/python3.10/dist-packages"):
    """failures: list of (rank, local_rank, exitcode, pid); the first is the root cause."""
    out = ["Traceback (most recent call last):",
           '  File "/usr/local/bin/torchrun", line 8, in <module>',
           "    sys.exit(main())",
           f'  File "{sp}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
           "    return f(*args, **kwargs)",
           f'  File "{sp}/torch/distributed/run.py", line 919, in main',
           "    run(args)",
           f'  File "{sp}/torch/distributed/run.py", line 910, in run',
           "    elastic_launch(",
           f'  File "{sp}/torch/distributed/launcher/api.py", line 138, in __call__',
           "    return launch_agent(self._config, self._entrypoint, list(args))",
           f'  File "{sp}/torch/distributed/launcher/api.py", line 269, in launch_agent',
           "    raise ChildFailedError(",
           "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
           bar, f"{script} FAILED", "-" * len(bar), "Failures:"]

    def ent(i, r, lr, code, pid):
        sig = {-6: "Signal 6 (SIGABRT)", -9: "Signal 9 (SIGKILL)", -15: "Signal 15 (SIGTERM)"}.get(code)
        tb = f"{sig} received by PID {pid}" if sig else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        return [f"[{i}]:", f"  time      : {torchrun_ts(t)}", f"  host      : {host}", f"  rank      : {r} (local_rank: {lr})",
                f"  exitcode  : {code} (pid: {pid})", "  error_file: <N/A>", f"  traceback : {tb}"]
    if len(failures) == 1:
        out.append("  <NO_OTHER_FAILURES>")
    for i, fl in enumerate(failures[1:], 1):
        out += ent(i, *fl)
    out += ["-" * len(bar), "Root Cause (first observed failure):"] + ent(0, *failures[0]) + [bar]
    return out


# ---------------------------------------------------------------- probes

def dmesg_boot(host, t0, extra=()):
    """A few benign dmesg -T lines of a GPU node (the head of the probe)."""
    lines = [
        (0, "Linux version 5.15.0-122-generic (buildd@lcy02-amd64-034) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld "
            "(GNU Binutils for Ubuntu) 2.38) #132-Ubuntu SMP Thu Aug 29 13:45:52 UTC 2024 (Ubuntu 5.15.0-122.132-generic 5.15.163)"),
        (2, "nvidia: loading out-of-tree module taints kernel."),
        (2, "nvidia-nvlink: Nvlink Core is being initialized, major device number 511"),
        (3, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024"),
        (4, "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.90.07  Fri May 31 09:30:47 UTC 2024"),
        (9, "mlx5_core 0000:18:00.0: firmware version: 28.39.1002"),
        (11, "mlx5_core 0000:18:00.0: Rate limit: 127 rates are supported, range: 0Mbps to 97656Mbps"),
        (14, "IPv6: ADDRCONF(NETDEV_CHANGE): ibp24s0: link becomes ready"),
        (31, "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"),
        (45, "EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none."),
    ] + list(extra)
    return [f"{dmesg_T(t0 + timedelta(seconds=s))} {msg}" for s, msg in lines]


def ibstat(hcas, fw="28.39.1002", guid_base=0xa088c20300e1b000, overrides=None):
    """ibstat for mlx5_0..hcas-1; overrides: {hca_index: {"State": .., "Physical state": .., "Rate": ..}}"""
    overrides = overrides or {}
    out = []
    for i in range(hcas):
        o = overrides.get(i, {})
        g = f"0x{guid_base + i * 0x10:016x}"
        out += [f"CA 'mlx5_{i}'", "\tCA type: MT4129", "\tNumber of ports: 1", f"\tFirmware version: {fw}",
                "\tHardware version: 0", f"\tNode GUID: {g}", f"\tSystem image GUID: {g}", "\tPort 1:",
                f"\t\tState: {o.get('State', 'Active')}", f"\t\tPhysical state: {o.get('Physical state', 'LinkUp')}",
                f"\t\tRate: {o.get('Rate', 400)}", f"\t\tBase lid: {o.get('lid', 200 + i)}", "\t\tLMC: 0", "\t\tSM lid: 1",
                "\t\tCapability mask: 0xa651e848", f"\t\tPort GUID: {g}", "\t\tLink layer: InfiniBand"]
    return out


def perfquery_x(hca, lid, port=1, sym=0, rec=0, downed=0, rcverr=0, xmitwait=None):
    xw = xmitwait if xmitwait is not None else random.randint(10_000_000, 40_000_000)
    xd = random.randint(10 ** 13, 9 * 10 ** 13)
    rd = random.randint(10 ** 13, 9 * 10 ** 13)
    xp = random.randint(10 ** 10, 9 * 10 ** 10)
    rp = random.randint(10 ** 10, 9 * 10 ** 10)
    return [f"# Port extended counters: Lid {lid} port {port} (CapMask: 0x5300 CapMask2: 0x0000002)  [{hca}]",
            f"PortSelect:......................{port}", "CounterSelect:...................0x0000",
            f"PortXmitData:....................{xd}", f"PortRcvData:.....................{rd}",
            f"PortXmitPkts:....................{xp}", f"PortRcvPkts:.....................{rp}",
            f"PortUnicastXmitPkts:.............{xp - 211}", f"PortUnicastRcvPkts:..............{rp - 5120}",
            "PortMulticastXmitPkts:...........211", "PortMulticastRcvPkts:............5120",
            "CounterSelect2:..................0x00000000",
            f"SymbolErrorCounter:..............{sym}", f"LinkErrorRecoveryCounter:........{rec}",
            f"LinkDownedCounter:...............{downed}", f"PortRcvErrors:...................{rcverr}",
            "PortRcvRemotePhysicalErrors:.....0", "PortRcvSwitchRelayErrors:........0",
            "PortXmitDiscards:................0", "PortXmitConstraintErrors:........0",
            "PortRcvConstraintErrors:.........0", "LocalLinkIntegrityErrors:........0",
            "ExcessiveBufferOverrunErrors:....0", "VL15Dropped:.....................0",
            f"PortXmitWait:....................{xw}", "QP1Dropped:......................0"]


H100_BUS = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
            "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0"]


def _reason_block(r):
    def a(k):
        return "Active" if k in r else "Not Active"
    return ["    Clocks Event Reasons",
            f"        Idle                              : {a('idle')}",
            "        Applications Clocks Setting       : Not Active",
            f"        SW Power Cap                      : {a('swpower')}",
            f"        HW Slowdown                       : {a('hw')}",
            f"            HW Thermal Slowdown           : {a('hwthermal')}",
            "            HW Power Brake Slowdown       : Not Active",
            "        Sync Boost                        : Not Active",
            f"        SW Thermal Slowdown               : {a('swthermal')}",
            "        Display Clock Setting             : Not Active"]


def nvsmi_q(t, gpus, sections=("perf", "ecc", "temp", "power", "clock"), product="NVIDIA H100 80GB HBM3",
            driver="550.90.07", cuda="12.4", arch="Hopper", max_sm=1980, mem_clock=2619, plimit=700, head=()):
    """nvidia-smi -q (or -q -d ...) text. gpus: list of dicts with bus, serial, uuid and optional overrides
    (reasons set, temp, power, sm_clock, ecc_dram_unc_vol, ecc_dram_unc_agg, remap_unc, remap_pending, pstate)."""
    out = ["", "==============NVSMI LOG==============", "",
           f"Timestamp                                 : {t.strftime('%a %b %d %H:%M:%S %Y')}",
           f"Driver Version                            : {driver}",
           f"CUDA Version                              : {cuda}", "",
           f"Attached GPUs                             : {len(gpus)}"] + list(head)
    for i, g in enumerate(gpus):
        out.append(f"GPU {g['bus']}")
        out += [f"    Product Name                          : {product}",
                "    Product Brand                         : NVIDIA",
                f"    Product Architecture                  : {arch}",
                "    Persistence Mode                      : Enabled",
                f"    Serial Number                         : {g['serial']}",
                f"    GPU UUID                              : {g['uuid']}",
                f"    Minor Number                          : {i}",
                "    VBIOS Version                         : 96.00.99.00.01",
                f"    Module ID                             : {g.get('module', i + 1)}",
                "    GPU Reset Status",
                "        Reset Required                    : No",
                "        Drain and Reset Recommended       : No"]
        if "perf" in sections:
            out.append(f"    Performance State                     : {g.get('pstate', 'P0')}")
            out += _reason_block(g.get("reasons", set()))
        if "ecc" in sections:
            vu = g.get("ecc_dram_unc_vol", 0)
            au = g.get("ecc_dram_unc_agg", 0)
            out += ["    ECC Mode", "        Current                           : Enabled",
                    "        Pending                           : Enabled",
                    "    ECC Errors", "        Volatile",
                    "            SRAM Correctable              : 0",
                    "            SRAM Uncorrectable Parity     : 0",
                    "            SRAM Uncorrectable SEC-DED    : 0",
                    f"            DRAM Correctable              : {g.get('ecc_dram_cor', 0)}",
                    f"            DRAM Uncorrectable            : {vu}",
                    "        Aggregate",
                    "            SRAM Correctable              : 0",
                    "            SRAM Uncorrectable Parity     : 0",
                    "            SRAM Uncorrectable SEC-DED    : 0",
                    f"            DRAM Correctable              : {g.get('ecc_dram_cor_agg', 0)}",
                    f"            DRAM Uncorrectable            : {au}",
                    "            SRAM Threshold Exceeded       : No",
                    "        Aggregate Uncorrectable SRAM Sources",
                    "            SRAM L2                       : 0",
                    "            SRAM SM                       : 0",
                    "            SRAM Microcontroller          : 0",
                    "            SRAM PCIE                     : 0",
                    "            SRAM Other                    : 0",
                    "    Retired Pages",
                    "        Single Bit ECC                    : N/A",
                    "        Double Bit ECC                    : N/A",
                    "        Pending Page Blacklist            : N/A",
                    "    Remapped Rows",
                    "        Correctable Error                 : 0",
                    f"        Uncorrectable Error               : {g.get('remap_unc', 0)}",
                    f"        Pending                           : {'Yes' if g.get('remap_pending') else 'No'}",
                    "        Remapping Failure Occurred        : No",
                    "        Bank Remap Availability Histogram",
                    f"            Max                           : {2560 - g.get('remap_unc', 0)} bank(s)",
                    f"            High                          : {g.get('remap_unc', 0)} bank(s)",
                    "            Partial                       : 0 bank(s)",
                    "            Low                           : 0 bank(s)",
                    "            None                          : 0 bank(s)"]
        if "temp" in sections:
            out += ["    Temperature",
                    f"        GPU Current Temp                  : {g.get('temp', random.randint(44, 58))} C",
                    "        GPU T.Limit Temp                  : N/A",
                    "        GPU Shutdown Temp                 : 92 C",
                    "        GPU Slowdown Temp                 : 89 C",
                    "        GPU Max Operating Temp            : 87 C",
                    "        GPU Target Temperature            : N/A",
                    f"        Memory Current Temp               : {g.get('memtemp', random.randint(50, 66))} C",
                    "        Memory Max Operating Temp         : 95 C"]
        if "power" in sections:
            out += ["    GPU Power Readings",
                    f"        Power Draw                        : {g.get('power', random.uniform(0.8, 0.94) * plimit):.2f} W",
                    f"        Current Power Limit               : {plimit:.2f} W",
                    f"        Requested Power Limit             : {plimit:.2f} W",
                    f"        Default Power Limit               : {plimit:.2f} W",
                    "        Min Power Limit                   : 200.00 W",
                    f"        Max Power Limit                   : {plimit:.2f} W"]
        if "clock" in sections:
            sm = g.get("sm_clock", max_sm)
            out += ["    Clocks",
                    f"        Graphics                          : {sm} MHz",
                    f"        SM                                : {sm} MHz",
                    f"        Memory                            : {mem_clock} MHz",
                    f"        Video                             : {g.get('video_clock', 1755)} MHz",
                    "    Max Clocks",
                    f"        Graphics                          : {max_sm} MHz",
                    f"        SM                                : {max_sm} MHz",
                    f"        Memory                            : {mem_clock} MHz",
                    "        Video                             : 1965 MHz"]
        out.append("")
    return out


def gpu_list(seed_host, buses=H100_BUS, n=8, per=None):
    per = per or {}
    rnd = random.Random(seed_host)
    gl = []
    for i in range(n):
        g = {"bus": buses[i], "serial": f"{rnd.randint(1650000000000, 1659999999999)}",
             "uuid": "GPU-%08x-%04x-%04x-%04x-%012x" % (rnd.getrandbits(32), rnd.getrandbits(16), rnd.getrandbits(16),
                                                      rnd.getrandbits(16), rnd.getrandbits(48))}
        g.update(per.get(i, {}))
        gl.append(g)
    return gl
