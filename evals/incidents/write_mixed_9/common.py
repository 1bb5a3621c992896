"""Shared helpers for the hand-written incident bundles (stdlib only)."""
import datetime as _dt
import json
import os
import random


def ts(base, seconds):
    """base datetime + seconds."""
    return base + _dt.timedelta(seconds=seconds)


def iso(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


class Bundle:
    """Collects the files of one incident, finds truth lines from the text written."""

    def __init__(self, root, incident_id):
        self.id = incident_id
        self.dir = os.path.join(root, incident_id)
        self.files = {}
        self.marks = []

    def add(self, rel, lines):
        self.files[rel] = list(lines)
        return self.files[rel]

    def line_of(self, rel, needle, nth=1):
        """1-based number of the nth line of `rel` containing `needle` (split on '\n' only)."""
        text = "\n".join(self.files[rel])
        seen = 0
        for i, ln in enumerate(text.split("\n"), 1):
            if needle in ln:
                seen += 1
                if seen == nth:
                    return i
        raise ValueError(f"{self.id}: {needle!r} (#{nth}) not in {rel}")

    def mark(self, rel, needle, nth=1):
        self.marks.append({"file": rel, "line": self.line_of(rel, needle, nth)})

    def write(self, job_yaml, truth):
        if os.path.isdir(self.dir):
            for dp, dn, fn in os.walk(self.dir, topdown=False):
                for f in fn:
                    os.remove(os.path.join(dp, f))
                for d in dn:
                    os.rmdir(os.path.join(dp, d))
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, "job.yaml"), "w") as f:
            f.write(job_yaml)
        for rel, lines in self.files.items():
            p = os.path.join(self.dir, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", newline="") as f:
                f.write("\n".join(lines) + "\n")
        truth = dict(truth)
        truth["indicating_lines"] = self.marks
        with open(os.path.join(self.dir, "truth.json"), "w") as f:
            json.dump(truth, f, indent=2)
            f.write("\n")
        return self.check()

    def check(self):
        """Re-read every indicating line from disk; return [(file, line, text)]."""
        out = []
        assert 1 <= len(self.marks) <= 6, self.id
        for m in self.marks:
            with open(os.path.join(self.dir, m["file"]), newline="") as f:
                lines = f.read().split("\n")
            text = lines[m["line"] - 1]
            assert text.strip(), f"{self.id}: empty indicating line {m}"
            out.append((m["file"], m["line"], text))
        size = 0
        for dp, _, fn in os.walk(self.dir):
            for f in fn:
                size += os.path.getsize(os.path.join(dp, f))
        assert size < 150_000, f"{self.id}: bundle is {size} bytes"
        return out, size


# ----------------------------------------------------------------------------- job.yaml

def job_yaml(job_id, name, framework, status, started, ended, exit_code, gpn, par,
             nodes, code, ckpts, spares=2, extra=None):
    y = [f'job_id: "{job_id}"', f"name: {name}", f"framework: {framework}",
         f"status: {status}", f"started_at: {iso(started)}"]
    if ended is not None:
        y.append(f"ended_at: {iso(ended)}")
    if exit_code is not None:
        y.append(f"exit_code: {exit_code}")
    y.append(f"gpus_per_node: {gpn}")
    tp, pp, dp, cp = par
    y.append(f"parallelism: {{tp: {tp}, pp: {pp}, dp: {dp}, cp: {cp}, ep: 1}}")
    assert tp * pp * dp * cp == sum(len(r) for _, _, r in nodes), name
    y.append("nodes:")
    for host, ip, ranks in nodes:
        y.append(f"  - {{host: {host}, ip: {ip}, ranks: [{', '.join(map(str, ranks))}]}}")
    y.append("code:")
    for commit, at, msg in code:
        y.append(f'  - {{commit: {commit}, at: {iso(at)}, message: "{msg}"}}')
    y.append("checkpoints:")
    for step, at, path, valid in ckpts:
        y.append(f"  - {{step: {step}, at: {iso(at)}, path: {path}, valid: {'true' if valid else 'false'}}}")
    y.append(f"spares: {spares}")
    for k, v in (extra or {}).items():
        y.append(f"{k}: {v}")
    return "\n".join(y) + "\n"


# ----------------------------------------------------------------------------- probes

def nvidia_smi_q(host, when, bus_ids, driver="550.90.07", cuda="12.4", product="NVIDIA H100 80GB HBM3",
                 lost=None, seed=0):
    """`nvidia-smi -q` (trimmed to the sections SREs read). lost: bus id that answers 'GPU is lost'."""
    r = random.Random(seed)
    o = ["", "==============NVSMI LOG==============", "",
         f"Timestamp                                 : {when.strftime('%a %b %d %H:%M:%S %Y')}",
         f"Driver Version                            : {driver}",
         f"CUDA Version                              : {cuda}", "",
         f"Attached GPUs                             : {len(bus_ids)}"]
    for i, bus in enumerate(bus_ids):
        if bus == lost:
            o.append(f"Unable to determine the device handle for GPU{i}: {bus[4:]}: GPU is lost.  "
                     "Reboot the system to recover this GPU")
            continue
        temp = r.randint(31, 44)
        o += [f"GPU {bus}",
              f"    Product Name                          : {product}",
              "    Product Brand                         : NVIDIA",
              "    Persistence Mode                      : Enabled",
              f"    Serial Number                         : 165232{r.randint(1000000, 9999999)}",
              f"    GPU UUID                              : GPU-{r.getrandbits(32):08x}-{r.getrandbits(16):04x}-{r.getrandbits(16):04x}-{r.getrandbits(16):04x}-{r.getrandbits(48):012x}",
              f"    Minor Number                          : {i}",
              "    PCI",
              f"        Bus Id                            : {bus}",
              "    Clocks Event Reasons",
              "        Idle                              : Active",
              "        Applications Clocks Setting       : Not Active",
              "        SW Power Cap                      : Not Active",
              "        HW Slowdown                       : Not Active",
              "        HW Thermal Slowdown               : Not Active",
              "        SW Thermal Slowdown               : Not Active",
              "    ECC Errors",
              "        Volatile",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : 0",
              "            DRAM Uncorrectable            : 0",
              "        Aggregate",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : 0",
              "            DRAM Uncorrectable            : 0",
              "    Remapped Rows",
              "        Correctable Error                 : 0",
              "        Uncorrectable Error               : 0",
              "        Pending                           : No",
              "        Remapping Failure Occurred        : No",
              "    Temperature",
              f"        GPU Current Temp                  : {temp} C",
              "        GPU Shutdown Temp                 : 92 C",
              "        GPU Slowdown Temp                 : 89 C",
              "    Power Readings",
              f"        Power Draw                        : {r.randint(68, 80)}.{r.randint(10, 99)} W",
              "        Current Power Limit               : 700.00 W",
              ""]
    return o


def ibstat(cas, base_guid, lid0, bad=None, rate=400):
    """ibstat for the named CAs. bad: {ca: (state, phys, rate)}."""
    o = []
    for i, ca in enumerate(cas):
        state, phys, r = (bad or {}).get(ca, ("Active", "LinkUp", rate))
        guid = f"0x{base_guid + i:016x}"
        o += [f"CA '{ca}'", "\tCA type: MT4129", "\tNumber of ports: 1",
              "\tFirmware version: 28.39.2048", "\tHardware version: 0",
              f"\tNode GUID: {guid}", f"\tSystem image GUID: {guid}", "\tPort 1:",
              f"\t\tState: {state}", f"\t\tPhysical state: {phys}", f"\t\tRate: {r}",
              f"\t\tBase lid: {lid0 + i}", "\t\tLMC: 0", "\t\tSM lid: 1",
              "\t\tCapability mask: 0xa651e848", f"\t\tPort GUID: {guid}",
              "\t\tLink layer: InfiniBand"]
    return o


def perfquery(ca, lid, counters=None, seed=0):
    """`perfquery -C <ca> -P 1` output."""
    r = random.Random(seed)
    c = {"SymbolErrorCounter": 0, "LinkErrorRecoveryCounter": 0, "LinkDownedCounter": 0,
         "PortRcvErrors": 0, "PortRcvRemotePhysicalErrors": 0, "PortRcvSwitchRelayErrors": 0,
         "PortXmitDiscards": 0, "PortXmitConstraintErrors": 0, "PortRcvConstraintErrors": 0,
         "CounterSelect2": "0x00", "LocalLinkIntegrityErrors": 0,
         "ExcessiveBufferOverrunErrors": 0, "VL15Dropped": 0,
         "PortXmitData": r.randint(10**9, 4 * 10**9), "PortRcvData": r.randint(10**9, 4 * 10**9),
         "PortXmitPkts": r.randint(10**7, 9 * 10**7), "PortRcvPkts": r.randint(10**7, 9 * 10**7),
         "PortXmitWait": r.randint(1000, 90000)}
    c.update(counters or {})
    o = [f"# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)", "PortSelect:......................1",
         "CounterSelect:...................0x0000"]
    for k, v in c.items():
        name = k + ":"
        o.append(name + "." * max(1, 33 - len(name)) + str(v))
    return o


def dmesg_boot(base, host, extra_seconds=0, seed=0):
    """Benign `dmesg -T` lines from boot and idle running."""
    r = random.Random(seed)
    t = lambda s: "[" + ts(base, s).strftime("%a %b %d %H:%M:%S %Y") + "]"
    return [
        f"{t(0)} Linux version 5.15.0-119-generic (buildd@lcy02-amd64-075) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #129-Ubuntu SMP Fri Aug 2 19:25:20 UTC 2024 (Ubuntu 5.15.0-119.129-generic 5.15.160)",
        f"{t(0)} Command line: BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=2f1c9a0e-5a4d-4b8e-9d1b-0c6e2f7e8a11 ro pci=realloc=off iommu=pt",
        f"{t(2)} ACPI: Early table checksum verification disabled",
        f"{t(14)} nvidia: loading out-of-tree module taints kernel.",
        f"{t(14)} nvidia-nvlink: Nvlink Core is being initialized, major device number 508",
        f"{t(15)} NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024",
        f"{t(16)} mlx5_core 0000:0c:00.0: firmware version: 28.39.2048",
        f"{t(19)} mlx5_core 0000:0c:00.0: Port module event: module 0, Cable plugged",
        f"{t(31)} IPv6: ADDRCONF(NETDEV_CHANGE): ibp12s0: link becomes ready",
        f"{t(44)} nvidia-fabricmanager: Successfully initialized",
        f"{t(3600 + r.randint(0, 600))} systemd-journald[612]: Data hash table of /var/log/journal/9a1b/system.journal has a fill level at 75.0 (8535 of 11377 items, 6553600 file size, 767 bytes per hash table item), suggesting rotation.",
    ]
