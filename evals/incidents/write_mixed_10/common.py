"""Shared helpers for the hand-made incident bundles (stdlib only).

A Bundle collects files as lists of lines; `Log.add()` returns the 1-based line number of the line it
wrote, and `Log.mark(key)` remembers the last line written under a key.  Truth line numbers are only ever
taken from those numbers, then re-checked against the text on disk.
"""
import json
import os
import random
import shutil
from datetime import datetime, timedelta, timezone

UTC = timezone.utc


def T(s):
    """'2026-11-20T08:00:00' -> aware datetime."""
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def ms(d):
    """'2026-11-20 08:00:00,123' (Python logging asctime)."""
    return d.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % (d.microsecond // 1000)


def glog(d, level="I"):
    """glog / absl / c10 prefix time: 'I1120 08:00:00.123456'."""
    return "%s%s" % (level, d.strftime("%m%d %H:%M:%S.%f"))


def dmesg_t(d):
    return d.strftime("[%a %b %e %H:%M:%S %Y]")


class Log:
    def __init__(self, rel):
        self.rel = rel
        self.lines = []
        self.marks = {}

    def add(self, text="", key=None):
        """Add one or more lines (text may hold '\n'); returns the number of the last line added."""
        for part in text.split("\n"):
            self.lines.append(part)
        n = len(self.lines)
        if key:
            self.marks[key] = n
        return n

    def extend(self, lines):
        for ln in lines:
            self.add(ln)

    def raw_tail(self, text):
        """Append text to the last line without a newline (log cut mid-line)."""
        self.lines[-1] += text

    def text(self, final_newline=True):
        t = "\n".join(self.lines)
        return t + ("\n" if final_newline else "")


class Bundle:
    def __init__(self, out_dir, incident_id):
        self.id = incident_id
        self.dir = out_dir
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        os.makedirs(out_dir)
        self.logs = {}
        self.cut = set()  # files whose last line has no newline

    def log(self, rel):
        if rel not in self.logs:
            self.logs[rel] = Log(rel)
        return self.logs[rel]

    def write_all(self):
        for rel, lg in self.logs.items():
            path = os.path.join(self.dir, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(lg.text(final_newline=rel not in self.cut))

    def job(self, d):
        write_yaml(os.path.join(self.dir, "job.yaml"), d)

    def truth(self, fault, category, root_cause, faulty_nodes, stage, iteration, marks, actions, **extra):
        """marks: list of (rel, key).  Resolves to line numbers, checks each on disk, writes truth.json."""
        self.write_all()
        ind = []
        shown = []
        for rel, key in marks:
            lg = self.logs[rel]
            n = lg.marks[key]
            with open(os.path.join(self.dir, rel), encoding="utf-8", newline="") as f:
                disk = f.read()
            split = disk.split("\n")
            line = split[n - 1]
            assert line.strip(), (rel, n, "empty indicating line")
            assert line == lg.lines[n - 1], (rel, n)
            # a reader that also breaks on '\r' (str.splitlines) must land on the same line
            assert "\r" not in "\n".join(split[:n]), (rel, n, "carriage return before an indicating line")
            ind.append({"file": rel, "line": n})
            shown.append((rel, n, line))
        t = {
            "fault": fault,
            "category": category,
            "root_cause": root_cause,
            "faulty_nodes": faulty_nodes,
            "stage": stage,
            "iteration": iteration,
            "indicating_lines": ind,
            "actions": actions,
        }
        t.update(extra)
        with open(os.path.join(self.dir, "truth.json"), "w") as f:
            json.dump(t, f, indent=2)
            f.write("\n")
        size = 0
        for root, _, files in os.walk(self.dir):
            for fn in files:
                size += os.path.getsize(os.path.join(root, fn))
        assert size < 150 * 1024, (self.id, size)
        return shown, size


# ----------------------------------------------------------------------------------------------- yaml

def _scalar(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, datetime):
        return iso(v)
    s = str(v)
    if s == "" or any(c in s for c in ":#{}[],&*!|>'\"%@`") or s.strip() != s:
        return json.dumps(s)
    return s


def _flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (k, _flow(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    return _scalar(v)


def write_yaml(path, d):
    out = []
    for k, v in d.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            out.append("%s:" % k)
            for item in v:
                out.append("  - " + _flow(item))
        elif isinstance(v, (dict, list)):
            out.append("%s: %s" % (k, _flow(v)))
        elif k == "job_id":
            out.append('%s: "%s"' % (k, v))
        else:
            out.append("%s: %s" % (k, _scalar(v)))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def nodes_block(hosts, ips, gpn):
    return [{"host": h, "ip": ip, "ranks": list(range(i * gpn, (i + 1) * gpn))} for i, (h, ip) in enumerate(zip(hosts, ips))]


# ----------------------------------------------------------------------------------------------- probes

H100_BUS = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]
A100_BUS = ["07", "0F", "47", "4E", "87", "90", "B7", "BD"]


def nvidia_smi_q(when, gpus=8, product="NVIDIA H100 80GB HBM3", driver="550.90.07", cuda="12.4", seed=0,
                 util=None, per_gpu=None):
    """`nvidia-smi -q` text (the sections an SRE reads).  per_gpu: {index: {field: value}} overrides."""
    rnd = random.Random(seed)
    per_gpu = per_gpu or {}
    bus = H100_BUS if "H100" in product else A100_BUS
    total = 81559 if "80GB" in product else 40960
    L = []
    L.append("")
    L.append("==============NVSMI LOG==============")
    L.append("")
    L.append("Timestamp                                 : %s" % when.strftime("%a %b %d %H:%M:%S %Y"))
    L.append("Driver Version                            : %s" % driver)
    L.append("CUDA Version                              : %s" % cuda)
    L.append("")
    L.append("Attached GPUs                             : %d" % gpus)
    for i in range(gpus):
        o = per_gpu.get(i, {})
        b = bus[i]
        u = o.get("util", util if util is not None else rnd.randint(93, 100))
        L.append("GPU 00000000:%s:00.0" % b)
        L.append("    Product Name                          : %s" % product)
        L.append("    Product Brand                         : NVIDIA")
        L.append("    Product Architecture                  : %s" % ("Hopper" if "H100" in product else "Ampere"))
        L.append("    Display Mode                          : Enabled")
        L.append("    Display Active                        : Disabled")
        L.append("    Persistence Mode                      : Enabled")
        L.append("    MIG Mode")
        L.append("        Current                           : Disabled")
        L.append("        Pending                           : Disabled")
        L.append("    Accounting Mode                       : Disabled")
        L.append("    Serial Number                         : 16542230%05d" % rnd.randint(0, 99999))
        L.append("    GPU UUID                              : GPU-%08x-%04x-%04x-%04x-%012x" % (
            rnd.getrandbits(32), rnd.getrandbits(16), rnd.getrandbits(16), rnd.getrandbits(16), rnd.getrandbits(48)))
        L.append("    Minor Number                          : %d" % i)
        L.append("    VBIOS Version                         : 96.00.89.00.01")
        L.append("    GPU Recovery Action                   : None")
        L.append("    PCI")
        L.append("        Bus                               : 0x%s" % b)
        L.append("        Device                            : 0x00")
        L.append("        Domain                            : 0x0000")
        L.append("        Device Id                         : 0x233010DE")
        L.append("        Bus Id                            : 00000000:%s:00.0" % b)
        L.append("        Replays Since Reset               : 0")
        L.append("    Fan Speed                             : N/A")
        L.append("    Performance State                     : P0")
        L.append("    Clocks Event Reasons")
        L.append("        Idle                              : %s" % o.get("idle", "Not Active"))
        L.append("        Applications Clocks Setting       : Not Active")
        L.append("        SW Power Cap                      : Not Active")
        L.append("        HW Slowdown                       : Not Active")
        L.append("            HW Thermal Slowdown           : Not Active")
        L.append("            HW Power Brake Slowdown       : Not Active")
        L.append("        Sync Boost                        : Not Active")
        L.append("        SW Thermal Slowdown               : Not Active")
        L.append("        Display Clock Setting             : Not Active")
        used = o.get("used", rnd.randint(60000, 72000))
        L.append("    FB Memory Usage")
        L.append("        Total                             : %d MiB" % total)
        L.append("        Reserved                          : 551 MiB")
        L.append("        Used                              : %d MiB" % used)
        L.append("        Free                              : %d MiB" % (total - 551 - used))
        L.append("    Utilization")
        L.append("        Gpu                               : %d %%" % u)
        L.append("        Memory                            : %d %%" % max(0, u - rnd.randint(25, 40)))
        L.append("        Encoder                           : 0 %")
        L.append("        Decoder                           : 0 %")
        L.append("    ECC Mode")
        L.append("        Current                           : Enabled")
        L.append("        Pending                           : Enabled")
        L.append("    ECC Errors")
        L.append("        Volatile")
        L.append("            SRAM Correctable              : 0")
        L.append("            SRAM Uncorrectable Parity     : 0")
        L.append("            SRAM Uncorrectable SEC-DED    : 0")
        L.append("            DRAM Correctable              : %d" % o.get("dram_ce", 0))
        L.append("            DRAM Uncorrectable            : 0")
        L.append("        Aggregate")
        L.append("            SRAM Correctable              : 0")
        L.append("            SRAM Uncorrectable Parity     : 0")
        L.append("            SRAM Uncorrectable SEC-DED    : 0")
        L.append("            DRAM Correctable              : %d" % o.get("dram_ce_agg", o.get("dram_ce", 0)))
        L.append("            DRAM Uncorrectable            : 0")
        L.append("    Retired Pages")
        L.append("        Single Bit ECC                    : N/A")
        L.append("        Double Bit ECC                    : N/A")
        L.append("        Pending Page Blacklist            : N/A")
        L.append("    Remapped Rows")
        L.append("        Correctable Error                 : 0")
        L.append("        Uncorrectable Error               : 0")
        L.append("        Pending                           : No")
        L.append("        Remapping Failure Occurred        : No")
        L.append("    Temperature")
        t = o.get("temp", rnd.randint(38, 52))
        L.append("        GPU Current Temp                  : %d C" % t)
        L.append("        GPU T.Limit Temp                  : %d C" % (87 - t))
        L.append("        GPU Shutdown T.Limit Temp         : -5 C")
        L.append("        GPU Slowdown T.Limit Temp         : -2 C")
        L.append("        GPU Max Operating T.Limit Temp    : 0 C")
        L.append("        GPU Target Temperature            : N/A")
        L.append("        Memory Current Temp               : %d C" % (t + rnd.randint(4, 9)))
        L.append("        Memory Max Operating T.Limit Temp : 0 C")
        L.append("    GPU Power Readings")
        L.append("        Power Draw                        : %.2f W" % o.get("power", rnd.uniform(380, 640)))
        L.append("        Current Power Limit               : 700.00 W")
        L.append("    Clocks")
        L.append("        Graphics                          : %d MHz" % o.get("sm", 1980))
        L.append("        SM                                : %d MHz" % o.get("sm", 1980))
        L.append("        Memory                            : 2619 MHz")
        L.append("        Video                             : 1755 MHz")
        L.append("    Processes")
        for p in o.get("procs", []):
            L.append("        GPU instance ID                   : N/A")
            L.append("        Compute instance ID               : N/A")
            L.append("        Process ID                        : %d" % p[0])
            L.append("            Type                          : C")
            L.append("            Name                          : %s" % p[1])
            L.append("            Used GPU Memory               : %d MiB" % p[2])
        if not o.get("procs"):
            L.append("        None")
        L.append("")
    return L


def ibstat(hcas=8, guid_base=0xb83fd20300a1c000, lid_base=100, fw="28.39.2048", state=None, link="InfiniBand"):
    """`ibstat` text; state: {hca_index: (State, Physical state, Rate)} overrides."""
    state = state or {}
    L = []
    for i in range(hcas):
        g = guid_base + i
        st, ph, rate = state.get(i, ("Active", "LinkUp", 400))
        L.append("CA 'mlx5_%d'" % i)
        L.append("\tCA type: MT4129")
        L.append("\tNumber of ports: 1")
        L.append("\tFirmware version: %s" % fw)
        L.append("\tHardware version: 0")
        L.append("\tNode GUID: 0x%016x" % g)
        L.append("\tSystem image GUID: 0x%016x" % g)
        L.append("\tPort 1:")
        L.append("\t\tState: %s" % st)
        L.append("\t\tPhysical state: %s" % ph)
        L.append("\t\tRate: %d" % rate)
        L.append("\t\tBase lid: %d" % (lid_base + i if st == "Active" else 65535))
        L.append("\t\tLMC: 0")
        L.append("\t\tSM lid: 1")
        L.append("\t\tCapability mask: 0xa651e848")
        L.append("\t\tPort GUID: 0x%016x" % g)
        L.append("\t\tLink layer: %s" % link)
    return L


def dmesg_boot(boot, host, seed=0, nic="mlx5", gpus=8, bus=H100_BUS):
    """A few benign `dmesg -T` lines from boot (driver load, NIC up)."""
    rnd = random.Random(seed)
    f = lambda dt: dmesg_t(dt)
    L = []
    t = boot
    L.append("%s Linux version 5.15.0-122-generic (buildd@lcy02-amd64-034) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #132-Ubuntu SMP Thu Aug 29 13:45:52 UTC 2024 (Ubuntu 5.15.0-122.132-generic 5.15.163)" % f(t))
    t += timedelta(seconds=14)
    L.append("%s nvidia: loading out-of-tree module taints kernel." % f(t))
    L.append("%s nvidia-nvlink: Nvlink Core is being initialized, major device number 505" % f(t))
    L.append("%s NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024" % f(t))
    t += timedelta(seconds=2)
    L.append("%s nvidia-uvm: Loaded the UVM driver, major device number 503." % f(t))
    for i in range(gpus):
        L.append("%s mlx5_core 0000:%s:00.1: mlx5_pcie_event:301:(pid %d): PCIe slot advertised sufficient power (75W)." % (
            f(t), bus[i], 800 + i))
    t += timedelta(seconds=9)
    for i in range(gpus):
        L.append("%s mlx5_core 0000:%s:00.1 ibp%ds0: Link up" % (f(t), bus[i], int(bus[i], 16)))
    t += timedelta(seconds=20)
    L.append("%s IPv6: ADDRCONF(NETDEV_CHANGE): ibp%ds0: link becomes ready" % (f(t), int(bus[0], 16)))
    return L, t
