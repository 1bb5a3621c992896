"""Shared helpers for the IK incident bundles (stdlib only).

Every bundle keeps its files as lists of lines; truth line numbers are found from the written text by a marker
substring (and the n-th occurrence), never typed by hand.
"""
import json, os, random, shutil
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc


class Bundle:
    def __init__(self, iid):
        self.iid = iid
        self.dir = os.path.join(ROOT, iid)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.files = {}
        self.marks = []
        self.raw_tail = {}   # rel -> text appended without a final newline (a log cut off mid-line)

    def f(self, rel):
        return self.files.setdefault(rel, [])

    def mark(self, rel, sub, nth=1):
        self.marks.append((rel, sub, nth))

    def _text(self, rel):
        body = "\n".join(self.files[rel]) + "\n"
        if rel in self.raw_tail:
            body += self.raw_tail[rel]
        return body

    def line_of(self, rel, sub, nth):
        n = 0
        for i, l in enumerate(self._text(rel).split("\n")):
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
                fh.write(self._text(rel).encode("utf-8", "surrogateescape"))
        truth["indicating_lines"] = [{"file": r, "line": self.line_of(r, s, n)} for r, s, n in self.marks]
        with open(os.path.join(self.dir, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=2)
            fh.write("\n")
        self.check(truth)

    def check(self, truth):
        total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(self.dir) for fn in fns)
        assert total < 150_000, (self.iid, total)
        assert 1 <= len(truth["indicating_lines"]) <= 6, self.iid
        for k in ("fault", "category", "root_cause", "faulty_nodes", "stage", "iteration", "actions"):
            assert k in truth, (self.iid, k)
        print(f"== {self.iid}  ({total} bytes)  fault={truth['fault']} cat={truth['category']} "
              f"nodes={truth['faulty_nodes']} stage={truth['stage']} it={truth['iteration']}")
        for ent in truth["indicating_lines"]:
            raw = open(os.path.join(self.dir, ent["file"]), "rb").read().split(b"\n")
            txt = raw[ent["line"] - 1].decode("utf-8", "replace")
            assert txt.strip(), ent
            print(f"   {ent['file']}:{ent['line']}: {txt[:230]}")


def T(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def k8s_ts(t):
    # kubectl logs --timestamps: RFC3339 with nanoseconds
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z"


def dmesg_T(t):
    # dmesg -T: [Fri Nov 27 10:12:13 2026]
    return "[" + t.strftime("%a %b ") + f"{t.day:2d}" + t.strftime(" %H:%M:%S %Y") + "]"


def pylog_ts(t):
    # Python logging asctime: 2026-11-27 10:12:13,123
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def glog(t, lvl="I", tid=0):
    # c10d / glog style: [rank3]:[E1127 10:12:13.123456789 ProcessGroupNCCL.cpp:616]
    return f"{lvl}{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d}{tid:03d}"


def nccl(host, pid, tid, dev, msg):
    return f"{host}:{pid}:{tid} [{dev}] NCCL {msg}"


def nccl_init_lines(host, pid, dev, ip, iface="ibp12s0", hcas=8, version="2.21.5+cuda12.4"):
    tid = pid
    out = [nccl(host, pid, tid, dev, f"INFO Bootstrap : Using {iface}:{ip}<0>")]
    if dev == 0:
        out.append(nccl(host, pid, tid, dev, f"INFO cudaDriverVersion 12040"))
        out.append(f"NCCL version {version}")
    devs = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(hcas))
    out.append(nccl(host, pid, tid + 211, dev, f"INFO NET/IB : Using {devs} ; OOB {iface}:{ip}<0>"))
    out.append(nccl(host, pid, tid + 211, dev, "INFO Using non-device net plugin version 0"))
    out.append(nccl(host, pid, tid + 211, dev, "INFO Using network IB"))
    return out


def watchdog_timeout(rank, t, seq, op, numel, timeout_ms=600000):
    ran = timeout_ms + random.randint(5, 90)
    pre = f"[rank{rank}]:[{glog(t, 'E', random.randint(100, 999))} ProcessGroupNCCL.cpp:616] [Rank {rank}] "
    return [
        pre + f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, "
              f"NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms}) ran for {ran} milliseconds before timing out.",
        f"[rank{rank}]:[{glog(t, 'E', 1)} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] "
        f"Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, "
        f"last completed NCCL work: {seq - 1}.",
        f"[rank{rank}]:[{glog(t, 'E', 2)} ProcessGroupNCCL.cpp:630] [Rank {rank}] Some NCCL operations have failed or "
        f"timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/"
        f"incomplete data.",
        f"[rank{rank}]:[{glog(t, 'E', 3)} ProcessGroupNCCL.cpp:636] [Rank {rank}] To avoid data inconsistency, we are "
        f"taking the entire process down.",
    ]


def torchrun_summary(t, entries, script="train.py", sp="/usr/local/lib/python3.10/dist-packages", accelerate=False):
    """entries: list of (rank, local_rank, host, exitcode, pid, errmsg-or-None). First one is the root cause."""
    bar = "=" * 60
    if accelerate:
        head = ["Traceback (most recent call last):",
                '  File "/opt/venv/bin/accelerate", line 8, in <module>',
                "    sys.exit(main())",
                f'  File "{sp}/accelerate/commands/accelerate_cli.py", line 48, in main',
                "    args.func(args)",
                f'  File "{sp}/accelerate/commands/launch.py", line 1159, in launch_command',
                "    multi_gpu_launcher(args)",
                f'  File "{sp}/accelerate/commands/launch.py", line 793, in multi_gpu_launcher',
                "    distrib_run.run(args)"]
    else:
        head = ["Traceback (most recent call last):",
                '  File "/usr/local/bin/torchrun", line 8, in <module>',
                "    sys.exit(main())",
                f'  File "{sp}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
                "    return f(*args, **kwargs)",
                f'  File "{sp}/torch/distributed/run.py", line 919, in main',
                "    run(args)"]
    out = head + [
           f'  File "{sp}/torch/distributed/run.py", line 910, in run',
           "    elastic_launch(",
           f'  File "{sp}/torch/distributed/launcher/api.py", line 138, in __call__',
           "    return launch_agent(self._config, self._entrypoint, list(args))",
           f'  File "{sp}/torch/distributed/launcher/api.py", line 269, in launch_agent',
           "    raise ChildFailedError(",
           "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
           bar, f"{script} FAILED", "-" * 60, "Failures:"]
    first, rest = entries[0], entries[1:]
    def block(e):
        rank, lr, host, code, pid, msg = e
        return [f"  time      : {t.strftime('%Y-%m-%d_%H:%M:%S')}", f"  host      : {host}",
                f"  rank      : {rank} (local_rank: {lr})", f"  exitcode  : {code} (pid: {pid})",
                f"  error_file: <N/A>",
                "  traceback : " + (msg or "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")]
    if not rest:
        out.append("  <NO_OTHER_FAILURES>")
    else:
        for k, e in enumerate(rest):
            out.append(f"[{k + 1}]:")
            out += block(e)
    out += ["-" * 60, "Root Cause (first observed failure):", "[0]:"] + block(first) + [bar]
    return out


def nvsmi_q(t, gpus, driver="550.90.07", cuda="12.4", xid_gpu=None, model="NVIDIA H100 80GB HBM3",
            used=None):
    """A trimmed `nvidia-smi -q`: header plus per-GPU identity, memory, ECC, remapping, temperature sections."""
    out = ["", "==============NVSMI LOG==============", "",
           f"Timestamp                                 : {t.strftime('%a %b %d %H:%M:%S %Y')}",
           f"Driver Version                            : {driver}",
           f"CUDA Version                              : {cuda}", "",
           f"Attached GPUs                             : {len(gpus)}"]
    for i, bus in enumerate(gpus):
        u = (used or {}).get(i, 1)
        out += [f"GPU 0000{bus}.0",
                f"    Product Name                          : {model}",
                f"    Persistence Mode                      : Enabled",
                f"    Serial Number                         : 165232{i:04d}{random.randint(1000, 9999)}",
                f"    GPU UUID                              : GPU-{random.getrandbits(32):08x}-{random.getrandbits(16):04x}-"
                f"{random.getrandbits(16):04x}-{random.getrandbits(16):04x}-{random.getrandbits(48):012x}",
                f"    Minor Number                          : {i}",
                "    FB Memory Usage",
                "        Total                             : 81559 MiB",
                "        Reserved                          : 328 MiB",
                f"        Used                              : {u} MiB",
                f"        Free                              : {81559 - 328 - u} MiB",
                "    ECC Mode",
                "        Current                           : Enabled",
                "        Pending                           : Enabled",
                "    ECC Errors",
                "        Volatile",
                "            SRAM Correctable              : 0",
                "            SRAM Uncorrectable Parity     : 0",
                "            SRAM Uncorrectable SEC-DED    : 0",
                "            DRAM Correctable              : 0",
                "            DRAM Uncorrectable            : 0",
                "    Remapped Rows",
                "        Correctable Error                 : 0",
                "        Uncorrectable Error               : 0",
                "        Pending                           : No",
                "        Remapping Failure Occurred        : No",
                "    Temperature",
                f"        GPU Current Temp                  : {random.randint(31, 44)} C",
                "        GPU Shutdown Temp                 : 92 C",
                "        GPU Slowdown Temp                 : 89 C",
                "    Clocks Event Reasons",
                "        Idle                              : Active" if u < 100 else "        Idle                              : Not Active",
                "        HW Slowdown                       : Not Active",
                "        SW Thermal Slowdown               : Not Active",
                ""]
    return out


H100_BUSES = ["0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00", "0000:9a:00", "0000:ab:00", "0000:ba:00", "0000:db:00"]
A100_BUSES = ["0000:07:00", "0000:0f:00", "0000:47:00", "0000:4e:00", "0000:87:00", "0000:90:00", "0000:b7:00", "0000:bd:00"]


def dmesg_boot_noise(t0, host):
    """Benign dmesg -T lines seen on any GPU host."""
    ls = [
        (0, "nvidia-nvlink: Nvlink Core is being initialized, major device number 507"),
        (1, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024"),
        (3, "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.90.07  Fri May 31 09:30:47 UTC 2024"),
        (9, "mlx5_core 0000:1a:00.0: mlx5_pcie_event:301:(pid 1623): PCIe slot advertised sufficient power (27W)."),
        (14, "IPv6: ADDRCONF(NETDEV_CHANGE): ibp12s0: link becomes ready"),
        (40, "nvidia-fabricmanager: Successfully initialized."),
        (3600, "perf: interrupt took too long (2504 > 2500), lowering kernel.perf_event_max_sample_rate to 79750"),
    ]
    return [f"{dmesg_T(t0 + timedelta(seconds=s))} {m}" for s, m in ls]


_mono = {}


def mono_ns(key, t):
    """Strictly increasing sub-second part for timestamps sharing the same second (per stream key)."""
    sec = t.replace(microsecond=0)
    last_sec, last_ns = _mono.get(key, (None, 0))
    ns = random.randint(1_000_000, 200_000_000) if last_sec != sec else min(last_ns + random.randint(20_000, 3_000_000), 999_999_999)
    if last_sec is not None and sec < last_sec:
        sec, ns = last_sec, min(last_ns + 1000, 999_999_999)
    _mono[key] = (sec, ns)
    return sec, ns


def kts_mono(key, t):
    sec, ns = mono_ns(key, t)
    return sec.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ns:09d}Z"
