"""Parsers for node health probe output as the tools print it: `nvidia-smi -q`, `dcgmi diag`, `dmesg -T`, `ibstat`,
`rdma link`, `perfquery`, nccl-tests `all_reduce_perf`, the generic JSON probe, and any other command's text. Each
returns signals with the exact line.

Lines are numbered as the bundle readers number them (split on `\\n` only); odd lines are skipped and counted. A
parser raises only `FileError`, naming the file, for text it cannot read at all (JSON nested past the parser's depth).
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from pydantic import BaseModel, Field

from diagagent.analysis.logparse import content_level
from diagagent.analysis.xid import Severity, XidCatalog
from diagagent.telemetry.errors import FileError, file_errors

SEVERITY_RANK: dict[str, int] = {"fatal": 3, "error": 2, "warning": 1, "info": 0}


class HealthSignal(BaseModel):
    """One thing a probe showed, with the line that shows it."""

    host: str | None = None
    probe: str
    file: str
    line: int = Field(ge=1, description="1-based line of `text` in `file`.")
    text: str = Field(description="The exact line, as untrusted data.")
    kind: str  # xid, ecc_uncorrectable, ib_port_down, low_busbw, oom_kill, kernel_panic, thermal_throttle, ...
    code: int | None = None  # the Xid (or SXid) number where there is one
    severity: Severity
    meaning: str
    action: str = ""
    device: str | None = None  # GPU PCI id, HCA/port, ...
    end_line: int | None = None  # a message printed over several lines (dmesg indents the lines after its first)
    count: int = 1  # how many lines of this kind it stands for (repeats counted, the first cited)


@dataclass(slots=True)
class Reading:
    """What one probe file said: signals it shows on its own, and values to compare against the node's peers."""

    signals: list[HealthSignal] = field(default_factory=list)
    values: dict[str, tuple[float, int, str]] = field(default_factory=dict)  # name -> (value, line, line text)
    skipped: int = 0
    first_skipped: int | None = None  # the line of the first part skipped

    def skip(self, line: int | None) -> None:
        """Count a line (or value) that could not be read as this probe's output."""
        self.skipped += 1
        if self.first_skipped is None:
            self.first_skipped = line


P = ParamSpec("P")
R = TypeVar("R")
MAX_DIGITS = 18  # a count or id printed with more digits is not one a probe prints: the line is skipped


def reads(expected: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A parser `(text, file, ...)` whose failures on hostile text become a `FileError` naming `file`."""
    def wrap(parse: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(parse)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            file = kwargs.get("file", args[1] if len(args) > 1 else "<probe>")
            with file_errors(str(file), expected):
                return parse(*args, **kwargs)
        return run
    return wrap


def numbered_lines(text: str) -> list[tuple[int, str]]:
    return [(n, raw.rstrip("\r")) for n, raw in enumerate(text.split("\n"), start=1)]


def _sig(reading: Reading, file: str, probe: str, line: int, text: str, kind: str, severity: Severity, meaning: str,
         action: str = "", code: int | None = None, device: str | None = None, merge_within: int = 0) -> None:
    """Add a signal; a repeat of the same kind (and device) within `merge_within` lines only bumps the count."""
    if merge_within:
        for s in reversed(reading.signals):
            if s.kind == kind and s.device == device and s.code == code and line - s.line <= merge_within:
                s.count += 1
                return
    reading.signals.append(HealthSignal(probe=probe, file=file, line=line, text=text.strip()[:2000], kind=kind,
                                        code=code, severity=severity, meaning=meaning, action=action, device=device))


# --- nvidia-smi -q ------------------------------------------------------------------------------------------

_SMI_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_SMI_KV = re.compile(r"^(\s*)(\S[^:]*?)\s*:\s*(.*?)\s*$")
# nvidia-smi's notice on a GPU whose driver logged a critical Xid: '(GPU 00000000:3B:00.0: Detected Critical Xid
# Error).' (dev:fairseq-5059); dmesg holds its number
_SMI_CRITICAL_XID = re.compile(r"Detected Critical Xid Error")
_SMI_LOST = re.compile(r"GPU is lost|Unable to determine the device handle|No devices were found|fallen off the bus",
                       re.IGNORECASE)
# nvidia-smi where the user-space libraries were upgraded under a loaded kernel module (its documented 'Failed to
# initialize NVML: Driver/library version mismatch'; incident mpijob-k8s-nvml-mismatch-oci-hook-4node)
_SMI_NVML_MISMATCH = re.compile(r"Failed to initialize NVML: Driver/library version mismatch")
# what a driver/library mismatch means and what to do, as nvidia-smi or NVRM (dmesg) reports it
_DRIVER_MISMATCH = (("the NVIDIA libraries and the loaded kernel module are of different versions: no GPU can be used "
                     "on this node"),
                    "Reboot the node (or reload the driver) so they match; keep it out of jobs until then.")
_THROTTLE_SECTIONS = ("Clocks Throttle Reasons", "Clocks Event Reasons", "Clocks_event_reasons")
_THROTTLE_KINDS = {
    "HW Thermal Slowdown": ("thermal_throttle", "error", "hardware thermal slowdown: the GPU is too hot and clocks are cut"),
    "SW Thermal Slowdown": ("thermal_throttle", "warning", "software thermal slowdown: the GPU is above its target temperature"),
    "HW Power Brake Slowdown": ("power_brake", "error", "hardware power brake: an external power-brake signal cut the clocks"),
    "HW Slowdown": ("hw_slowdown", "error", "hardware slowdown (thermal or power brake) cut the clocks"),
}


def _signed(value: str) -> int | None:
    head = value.split()[0] if value.split() else ""
    digits = head.removeprefix("-")
    return int(head) if digits.isdigit() and len(digits) <= MAX_DIGITS else None


def _int(value: str) -> int | None:
    head = value.split()[0] if value.split() else ""
    return int(head) if head.isdigit() and len(head) <= MAX_DIGITS else None


_DRIVER_VERSION = re.compile(r"^(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?$")  # nvidia-smi -q's 'Driver Version : 550.127.08'


@reads("nvidia-smi -q output")
def parse_nvidia_smi(text: str, file: str, probe: str = "nvidia-smi", correctable_warn: int = 1000) -> Reading:
    """`nvidia-smi -q`: ECC (volatile / aggregate; SRAM/DRAM or Single/Double Bit), retired pages, remapped rows,
    clock throttle / event reasons, temperatures, lost GPUs. Values: `gpus` (Attached GPUs), `gpu_count`, `driver`
    (its major.minor version)."""
    r = Reading()
    stack: list[tuple[int, str]] = []
    gpu: str | None = None
    gpus_seen = 0
    temps: dict[str, tuple[int, int, str]] = {}
    throttled: dict[str, tuple[str, int, str]] = {}  # this GPU's active throttle reasons: name -> (kind, line, text)

    def flush_gpu() -> None:
        specific = [k for k in throttled if k != "HW Slowdown"]
        for name, (kind, line, txt) in throttled.items():
            if name == "HW Slowdown" and specific:
                continue  # the parent reason; the specific child says why
            if name == "SW Thermal Slowdown" and "HW Thermal Slowdown" in throttled:
                continue  # the hardware slowdown is the stronger statement of the same heat
            _, severity, meaning = _THROTTLE_KINDS[name]
            _sig(r, file, probe, line, txt, kind, severity, f"{meaning} ({name}: Active)",
                 "Check cooling and power of this GPU; a GPU that keeps throttling slows the whole job: evict it.",
                 device=gpu)
        throttled.clear()
        cur, slow, maxop, margin = temps.get("cur"), temps.get("slow"), temps.get("maxop"), temps.get("tlimit")
        if cur is not None:
            limit = slow or maxop
            over = None
            if limit is not None and cur[0] >= limit[0]:
                over = f"at or above its slowdown limit ({limit[0]} C)"
            elif margin is not None and margin[0] <= 0:
                over = f"{-margin[0]} C past its slowdown threshold (T.Limit {margin[0]} C)"
            if over:
                _sig(r, file, probe, cur[1], cur[2], "gpu_overheat", "error", f"GPU at {cur[0]} C, {over}",
                     "Check the node's cooling; evict the node if the GPU stays this hot.", device=gpu)
        temps.clear()

    for n, line in numbered_lines(text):
        if not line.strip() or line.startswith("="):
            continue
        m = _SMI_GPU.match(line)
        if m:
            if gpu is not None:
                flush_gpu()
            gpu, gpus_seen, stack = m.group(1), gpus_seen + 1, []
            continue
        if _SMI_LOST.search(line):
            _sig(r, file, probe, n, line, "gpu_lost", "fatal", "nvidia-smi cannot reach a GPU (lost or fallen off the bus)",
                 "Drain the node and reboot it; reseat or replace the GPU if it recurs.", device=gpu, merge_within=50)
            continue
        if _SMI_NVML_MISMATCH.search(line):
            _sig(r, file, probe, n, line, "driver_mismatch", "error", *_DRIVER_MISMATCH)
            continue
        if _SMI_CRITICAL_XID.search(line):
            _sig(r, file, probe, n, line, "xid", "fatal", "nvidia-smi reports a critical Xid error on a GPU",
                 "Read the node's dmesg for the Xid's number (48/94/95 ECC, 79 off the bus, 74 NVLink); drain the node "
                 "until it is known.", device=gpu, merge_within=50)
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        kv = _SMI_KV.match(line) if ":" in line else None
        if kv is None:
            stack.append((indent, line.strip()))
            continue
        key, value = kv.group(2), kv.group(3)
        if value[:1].isdigit() and value.split()[0].isdigit() and len(value.split()[0]) > MAX_DIGITS:
            r.skip(n)  # no count or reading nvidia-smi prints has that many digits
            continue
        path = [s for _, s in stack]
        if key == "Attached GPUs" and _int(value) is not None:
            r.values["gpus"] = (float(_int(value) or 0), n, line)
        elif key == "Driver Version" and (v := _DRIVER_VERSION.match(value.strip())):  # compared with the peers'
            r.values["driver"] = (float(f"{v.group(1)}.{v.group(2)}"), n, line)
        elif "ECC Errors" in path:
            _smi_ecc(r, file, probe, n, line, path, key, value, gpu, correctable_warn)
        elif "Retired Pages" in path:
            count = _int(value)
            if key.startswith("Double Bit") and count:
                _sig(r, file, probe, n, line, "retired_pages", "warning", f"{count} page(s) retired for double-bit ECC errors",
                     "Reset the GPU at the next opportunity; replace it if retirements keep growing.", device=gpu)
            elif key.startswith("Pending") and value.lower().startswith("yes"):
                _sig(r, file, probe, n, line, "retired_pages_pending", "warning", "a page retirement waits for a GPU reset",
                     "Reset the GPU (or reboot the node) to retire the page.", device=gpu)
        elif "Remapped Rows" in path:
            count = _int(value)
            if key.startswith("Uncorrectable") and count:
                _sig(r, file, probe, n, line, "row_remap_uncorrectable", "warning",
                     f"{count} row(s) remapped after uncorrectable ECC errors",
                     "Reset the GPU so pending remaps apply; watch for more uncorrectable errors.", device=gpu)
            elif key == "Pending" and value.lower().startswith("yes"):
                _sig(r, file, probe, n, line, "row_remap_pending", "warning", "a row remapping waits for a GPU reset",
                     "Reset the GPU to apply the remapping before it runs more work.", device=gpu)
            elif key.startswith("Remapping Failure") and value.lower().startswith("yes"):
                _sig(r, file, probe, n, line, "row_remap_failure", "fatal", "row remapping failed: the GPU has no spare rows left",
                     "Drain the node and replace the GPU.", device=gpu)
        elif any(s in path for s in _THROTTLE_SECTIONS) and "Counters" not in " ".join(path):
            if key in _THROTTLE_KINDS and value.lower() == "active":
                throttled[key] = (_THROTTLE_KINDS[key][0], n, line)
        elif "Temperature" in path:
            t = _signed(value)
            if t is not None and key == "GPU T.Limit Temp":
                temps["tlimit"] = (t, n, line)
            elif t is not None:
                if key == "GPU Current Temp":
                    temps["cur"] = (t, n, line)
                elif key == "GPU Slowdown Temp":
                    temps["slow"] = (t, n, line)
                elif key == "GPU Max Operating Temp":
                    temps["maxop"] = (t, n, line)
    if gpu is not None:
        flush_gpu()
    r.values["gpu_count"] = (float(gpus_seen), 1, "")
    return r


def _smi_ecc(r: Reading, file: str, probe: str, n: int, line: str, path: list[str], key: str, value: str,
             gpu: str | None, correctable_warn: int) -> None:
    count = _int(value)
    if not count:
        return
    volatile = "Volatile" in path
    uncorrectable = "Uncorrectable" in key or "Double Bit" in path
    if uncorrectable:
        if "Double Bit" in path and key == "Total" and any(
                s.kind.startswith("ecc_uncorrectable") and s.line >= n - 12 for s in r.signals):
            return  # the per-memory rows above already say it
        if volatile:
            _sig(r, file, probe, n, line, "ecc_uncorrectable", "fatal",
                 f"{count} uncorrectable ECC error(s) since the driver loaded ({key})",
                 "Drain the node and reset the GPU (row remapping applies on reset); replace it if remapping failed.",
                 device=gpu)
        else:
            _sig(r, file, probe, n, line, "ecc_uncorrectable_aggregate", "warning",
                 f"{count} uncorrectable ECC error(s) over the GPU's lifetime ({key})",
                 "Check Remapped Rows; replace the GPU if uncorrectable errors keep appearing.", device=gpu)
    elif volatile and ("Correctable" in key or "Single Bit" in path) and count >= correctable_warn:
        _sig(r, file, probe, n, line, "ecc_correctable", "warning", f"{count} correctable ECC errors since the driver loaded",
             "Watch the count; a fast-rising correctable rate precedes uncorrectable errors.", device=gpu)


# --- dcgmi diag ---------------------------------------------------------------------------------------------

_DCGM_ROW = re.compile(r"^\|\s*(.*?)\s*\|\s*(.*?)\s*\|\s*$")
_DCGM_SECTION = re.compile(r"^[|+]-+\s+(\w[\w ]*?)\s+-+\+")
_DCGM_FR = re.compile(r"DCGM_FR_\w+")


@reads("dcgmi diag output")
def parse_dcgm_diag(text: str, file: str, probe: str = "dcgm-diag") -> Reading:
    """`dcgmi diag -r 1|2|3|4` result table. DCGM 2/3 print `GPU Memory | Pass - GPUs: 0, 1` and a continuation
    row `| Fail - GPU: 3`; DCGM 4 prints `memory | Fail` then `| GPU2: Fail` rows. The cited line is the first
    row that says Fail; Warning/Error detail rows (with their DCGM_FR_* code) are added to its meaning."""
    r = Reading()
    section, test = "", ""
    failed: HealthSignal | None = None  # the current test's failure signal
    wrapped_prev = False  # dcgmi cuts long details at the cell width, mid-word
    for n, line in numbered_lines(text):
        m = _DCGM_SECTION.match(line)
        if m:
            section, test, failed = m.group(1).strip(), "", None
            continue
        if line.startswith("Error"):
            _sig(r, file, probe, n, line, "dcgm_error", "warning", "dcgmi diag could not run to the end",
                 "Rerun dcgmi diag; check that nv-hostengine runs and the GPUs are visible.")
            continue
        row = _DCGM_ROW.match(line)
        if row is None or section == "Metadata" or row.group(1) == "Diagnostic":
            continue
        name, value = row.group(1), row.group(2)
        is_detail = name.lower().startswith(("warning", "error", "info"))
        if name and not is_detail:
            test, failed = name, None
        status = _dcgm_status(value)
        if status == "fail" and not is_detail:
            gpus = _dcgm_gpus(value)
            if failed is None:
                where = f" on GPU {', '.join(gpus)}" if gpus else ""
                _sig(r, file, probe, n, line, "dcgm_fail", "error", f"dcgmi diag test '{test}' ({section or 'diag'}) "
                     f"failed{where}", "Drain the node; the failed test names the part to service (memory, PCIe, "
                     "NVLink, power, thermal).", device=",".join(gpus) or None)
                failed = r.signals[-1]
            elif gpus:
                failed.device = ",".join(filter(None, [failed.device, *gpus]))
                failed.meaning += f"; GPU {', '.join(gpus)} failed"
        elif status == "warn" and not is_detail:
            _sig(r, file, probe, n, line, "dcgm_warn", "warning", f"dcgmi diag test '{test}' warned",
                 "Rerun dcgmi diag -r 3 on a drained node.")
            failed = r.signals[-1]
        elif failed is not None and (is_detail or (not name and status is None)) and len(failed.meaning) < 800:
            cells = line.split("|")
            wrapped = len(cells) > 2 and len(cells[2]) > 2 and not cells[2][-2].isspace()
            failed.meaning += f"; {name}: {value}" if is_detail else f"{'' if wrapped_prev else ' '}{value}"
            wrapped_prev = wrapped
            continue
        wrapped_prev = False
    for sig in r.signals:
        codes = sorted(set(_DCGM_FR.findall(sig.meaning.replace(" ", ""))))
        if codes:
            sig.meaning += f" [{', '.join(codes)}]"
    return r


def _dcgm_status(value: str) -> str | None:
    low = value.lower()
    m = re.match(r"^(?:gpu\s*\d+\s*:\s*)?(pass|fail|warn|skip)", low)
    return m.group(1) if m else None


def _dcgm_gpus(value: str) -> list[str]:
    m = re.match(r"^GPU\s*(\d+)\s*:", value, re.IGNORECASE)
    if m:
        return [m.group(1)]
    return re.findall(r"\d+", value.split("-", 1)[1]) if "-" in value else []


# --- dmesg -T -----------------------------------------------------------------------------------------------

_XID = re.compile(r"NVRM: Xid \(([^)]*)\):\s*(\d{1,9}),\s*(.*)$")
_SXID = re.compile(r"SXid \(([^)]*)\):\s*(\d{1,9}),\s*(Non-fatal|Fatal)?", re.IGNORECASE)
_AER = re.compile(r"AER: (Uncorrected \((?:Fatal|Non-Fatal)\)|Corrected) error received|"
                  r"PCIe Bus Error: severity=(Uncorrected \((?:Fatal|Non-Fatal)\)|Corrected)", re.IGNORECASE)
# the amdgpu driver's GPU page fault, AMD's Xid 31 (gmc_v9_0.c: "[%s] %s page fault (src_id:%u ring:%u vmid:%u
# pasid:%u)", mmhub or gfxhub, retry or no-retry; older kernels print no retry word): "amdgpu 0000:3d:00.0: amdgpu:
# [mmhub0] no-retry page fault (src_id:0 ring:160 vmid:3 pasid:32790)" (dev:legacy-rocm-build-4021). A retry fault is
# one the GPU recovers from (demand paging), not a fault.
_AMDGPU_PAGE_FAULT = re.compile(r"amdgpu: \[(?:mm|gfx)hub\d*\] (?:no-retry )?page fault \(src_id:")
# and its RAS report of uncorrectable errors (amdgpu_ras.c: "%ld uncorrectable hardware errors detected in %s block",
# newer "socket: %d, die: %d, %u new uncorrectable hardware errors detected in %s block" and "... detected in total
# in %s block"); the UMC block is the HBM's memory controller, so a UMC error is AMD's uncorrectable ECC
_AMDGPU_RAS_UE = re.compile(r"(\d+) (?:new )?uncorrectable hardware errors detected in (?:total in )?(\w+) block")
# and its reset of a hung GPU that did not work (amdgpu_device.c: "GPU mode1 reset failed", "ASIC reset failed with error,
# %d for drm dev, %s", "GPU reset(%d) failed"): the GPU stays wedged until the node is power-cycled
# (dev:legacy-rocm-build-2494, two GPUs at once)
_AMDGPU_RESET_FAILED = re.compile(r"(?:amdgpu ([\w:.]+): )?amdgpu: (?:GPU (?:mode[12] |BACO )?reset(?:\(\d+\))? failed|"
                                  r"ASIC reset failed with error)")
_OOM_KILL = re.compile(r"(?:Memory cgroup )?[Oo]ut of memory: Kill(?:ed)? process (\d+) \(([^)]*)\)")
_OOM_INVOKED = re.compile(r"(\S+) invoked oom-killer")
# mm/memcontrol.c mem_cgroup_print_oom_meminfo(): 'memory: usage %llukB, limit %llukB, failcnt %lu', printed when a
# memory cgroup's OOM killer runs: usage at the limit (dev:pai-1089, an OpenPAI container killed reading its data)
_MEMCG_AT_LIMIT = re.compile(r"\bmemory: usage (\d+)kB, limit \1kB, failcnt \d+")
_LINK_DOWN = re.compile(r"(mlx\d_\w*|ib\w*|bnxt\w*|enp\w+|eth\d+).*\blink (?:is )?down\b", re.IGNORECASE)
_LINK_UP = re.compile(r"(mlx\d_\w*|ib\w*|bnxt\w*|enp\w+|eth\d+).*\blink (?:is )?up\b", re.IGNORECASE)
_NIC_MODULE = re.compile(r"mlx5_core.*(?:Port module event|module \d+).*(?:error|unplugged|high temperature)",
                         re.IGNORECASE)
_DMESG_PLAIN = (
    (re.compile(r"Kernel panic - not syncing"), "kernel_panic", "fatal", "the kernel panicked: the node went down",
     "Drain the node; read the panic reason (machine check, hung task, oops) and service it before it rejoins."),
    (re.compile(r"Machine Check Exception|Machine check: .*(?:context corrupt|Uncorrected)"),
     "machine_check", "fatal", "a CPU/memory machine-check exception (hardware error)",
     "Drain the node; run memory and CPU diagnostics; service the part the MCE bank names."),
    (re.compile(r"Machine check events logged|EDAC .*(?:UE|CE) "), "machine_check_logged", "warning",
     "machine-check (hardware error) events were logged", "Read them with mcelog / rasdaemon; watch for more."),
    (re.compile(r"BUG: unable to handle|general protection fault|Oops:|kernel BUG at"), "kernel_oops", "error",
     "a kernel oops (driver or kernel bug, or bad memory)", "Drain the node and check the kernel and driver versions."),
    (re.compile(r"watchdog: BUG: soft lockup|rcu_sched self-detected stall|hard LOCKUP"), "soft_lockup", "error",
     "a CPU stopped responding (lockup)", "Drain the node; check the kernel log before the lockup."),
    (re.compile(r"INFO: task \S+ blocked for more than \d+ seconds"), "hung_task", "warning",
     "a task blocked in the kernel for minutes (I/O or driver hang)", "Check the storage and the GPU driver on this node."),
    # the driver's words for a GPU it cannot reach (open-gpu-kernel-modules): Xid 79's second line 'NVRM: GPU
    # 0000:3b:00.0: GPU has fallen off the bus.'; at probe time, before any Xid, the three-line 'NVRM: The NVIDIA GPU
    # 0000:b3:00.0 / NVRM: (PCI ID: 10de:26b5) installed in this system has / NVRM: fallen off the bus and is not
    # responding to commands.'; and the status it returns, printed as 'GPU lost from the bus [NV_ERR_GPU_IS_LOST]'
    (re.compile(r"GPU has fallen off the bus|fallen off the bus and is not responding|NV_ERR_GPU_IS_LOST"),
     "gpu_lost", "fatal", "a GPU fell off the PCIe bus",
     "Drain the node and reboot it; reseat or replace the GPU if it recurs."),
    # GSP-RM stopped answering the driver (Xid 119's lines when the Xid line itself is missing or cut): 'Timeout
    # waiting for RPC from GSP! Expected function 10 (FREE)' (drivers 510-530), '... from GPU0 GSP!' (535), 'Timeout
    # after 6s of waiting for RPC response from GPU0 GSP!' (550+), '_kgspLogXid119: ***** GSP Timeout *****' (580),
    # and the RPC dump that follows them, 'GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data ...'
    (re.compile(r"waiting for RPC (?:response )?from (?:GPU\d+ )?GSP|GSP RPC buffer contains function|"
                r"\*{5,} GSP Timeout \*{5,}"), "gsp_timeout", "fatal",
     "the GPU System Processor (GSP) stopped answering the driver (Xid 119)",
     "Drain the node and reset the GPU or reboot; update the driver, or disable GSP firmware if it recurs."),
    # NVRM's word that it cannot use a GPU: dev:gpu-operator-1146 ('RmInitAdapter failed! (0x24:0x72:1568)'),
    # dev:sichek-51 ('GspRmAlloc failed', 'Reset required [NV_ERR_RESET_REQUIRED]')
    (re.compile(r"NVRM: .*(?:RmInitAdapter failed|NV_ERR_RESET_REQUIRED|GspRmAlloc failed)"), "gpu_driver_error",
     "error", "the NVIDIA driver cannot use a GPU (its initialization failed, or it needs a reset)",
     "Drain the node; reset the GPU (nvidia-smi -r) or reboot; replace it if it recurs."),
    # the kernel module refusing a client library of another version: 'NVRM: API mismatch: the client has the version
    # 550.127.05, but / NVRM: this kernel module has the version 550.90.07.' (a driver upgraded under a loaded module)
    (re.compile(r"NVRM: API mismatch: the client has the version"), "driver_mismatch", "error", *_DRIVER_MISMATCH),
    # any other NVRM line the driver prints as a failure: a failed call or assertion, or an NV_ERR_ status
    # ('NVRM: rpcRmApiControl_GSP: GspRmControl failed: ... status=0x65', 'NVRM: nvAssertOkFailedNoLog: Assertion
    # failed: Call timed out [NV_ERR_TIMEOUT]', 'NVRM: The NVIDIA probe routine failed for 1 device(s).')
    # (not 'rm_init_adapter failed, device minor number 0': it repeats the RmInitAdapter line before it)
    (re.compile(r"NVRM: (?!.*rm_init_adapter failed).*(?:\bfailed\b|\[NV_ERR_\w+\]|\btimed out\b)", re.IGNORECASE),
     "gpu_driver_error", "error",
     "the NVIDIA driver reported a failure on this node",
     "Read the NVRM lines around it; reset the GPU or reboot the node if they repeat."),
    # an RDMA work completion in error on this node: the verbs' IBV_WC_RETRY_EXC_ERR (12) and IBV_WC_RNR_RETRY_EXC_ERR
    # (13) mean the remote side never answered, so the suspect is a peer's link or the fabric, not this adapter
    # (mlx5_ib's cq.c: 'mlx5_handle_error_cqe:332:(pid 0): WC error: 12, Message: transport retry counter exceeded',
    # then 'dump_cqe:272:(pid 0): dump error cqe' and the completion's bytes)
    (re.compile(r"WC error: 1[23]\b|(?:transport|RNR) retry counter exceeded|dump error cqe", re.IGNORECASE),
     "rdma_completion_error", "warning",
     "an RDMA completion in error: the remote side did not answer (a peer's link or the fabric)",
     "Look for the peer whose link went down or whose port errors climb; this node is the one that noticed."),
    # an RDMA NIC driver's own failure, printed at its error level: mlx5_core's failed firmware command
    # ('mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838:(pid 1234): CREATE_QP(0x500) op_mod(0x0) failed, status bad
    # parameter(0x3), syndrome (0x1234)', drivers/net/ethernet/mellanox/mlx5/core/cmd.c), its health poller's fatal
    # error, the EFA or Broadcom RDMA driver failing a command
    (re.compile(r"\b(?:mlx[45]_core|mlx5_ib|efa|infiniband \w+|bnxt_(?:en|re)|irdma)\b.*(?:\bfail(?:ed|ure)?\b|"
                r"\berror\b|\btimed? ?out\b|\bfatal\b)", re.IGNORECASE), "nic_driver_error", "error",
     "the network adapter's driver reported a failure on this node",
     "Check the adapter (ibstat, ibv_devinfo, the driver's health counters); reset it or evict the node if it repeats."),
    (re.compile(r"NVLink.*(?:fatal|error)|nvlink.*(?:fatal|error)"), "nvlink_error", "error", "an NVLink error",
     "Check nvidia-smi nvlink -e; reset the GPUs or service the NVLink/NVSwitch."),
    (re.compile(r"EXT4-fs error|XFS .*(?:corruption|I/O error)|Buffer I/O error|blk_update_request: I/O error|"
                r"nvme\S* .*I/O error"), "disk_io_error", "warning", "a local disk or file system I/O error",
     "Check the disk (smartctl) and the file system."),
    (re.compile(r"LustreError: |Lustre: .*(?:evicted|Connection to .* was lost)|nfs: server .* not responding"),
     "fs_client_error",
     "warning", "the shared file system client lost its server", "Check the file system servers and the node's network."),
)


_DMESG_STAMP = re.compile(r"\s*(?:\[|[A-Z][a-z]{2} [ \d]\d |\d{4}-\d\d-\d\dT)")
MAX_CONTINUED = 8


def dmesg_records(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each kernel message: dmesg and journalctl print the lines after a message's
    first indented and without a timestamp ('[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0' then
    '               NVRM: (PCI ID: 10de:26b5) installed in this system has' ...); they are joined to it."""
    out: list[tuple[int, int, str]] = []
    for n, line in numbered_lines(text):
        if not line.strip():
            continue
        if out and line[:1] in (" ", "\t") and not _DMESG_STAMP.match(line) and out[-1][1] - out[-1][0] < MAX_CONTINUED:
            first, _, joined = out[-1]
            out[-1] = (first, n, f"{joined} {line.strip()}")
        else:
            out.append((n, n, line))
    return out


@reads("dmesg output")
def parse_dmesg(text: str, file: str, catalog: XidCatalog, probe: str = "dmesg") -> Reading:
    """`dmesg -T` (or plain `dmesg`, or `journalctl -k`): Xid with NVIDIA's catalog meaning, severity and action,
    NVSwitch SXid, NVLink, PCIe AER, the OOM killer, kernel panics and machine checks, NIC link changes."""
    r = Reading()
    records = dmesg_records(text)
    for n, _, line in records:
        m = _XID.search(line)
        if m:
            code = int(m.group(2))
            entry = catalog.lookup(code)
            _sig(r, file, probe, n, line, "xid", entry.severity,
                 f"Xid {code} {entry.mnemonic}: {entry.meaning}".replace("  ", " ").replace(" :", ":"),
                 f"{entry.action}" + (f" (NVIDIA: {entry.immediate})" if entry.immediate else ""),
                 code=code, device=m.group(1).removeprefix("PCI:"), merge_within=5)
            continue
        m = _SXID.search(line)
        if m:
            fatal = (m.group(3) or "").lower() == "fatal"
            _sig(r, file, probe, n, line, "nvswitch_sxid", "fatal" if fatal else "warning",
                 f"NVSwitch SXid {m.group(2)} ({m.group(3) or 'severity not printed'})",
                 "Check the NVSwitch fabric (nvidia-fabricmanager log); a fatal SXid needs the node reset or serviced.",
                 code=int(m.group(2)), device=m.group(1), merge_within=5)
            continue
        m = _AER.search(line)
        if m:
            sev = (m.group(1) or m.group(2) or "").lower()
            if "fatal" in sev and "non-fatal" not in sev:
                _sig(r, file, probe, n, line, "pcie_aer_fatal", "fatal", "PCIe uncorrected fatal error (AER)",
                     "Drain the node; reseat or replace the device the AER names.", merge_within=4)
            elif "uncorrected" in sev:
                _sig(r, file, probe, n, line, "pcie_aer_uncorrected", "error", "PCIe uncorrected non-fatal error (AER)",
                     "Watch for more; reseat the device if they repeat.", merge_within=4)
            else:
                _sig(r, file, probe, n, line, "pcie_aer_corrected", "info", "PCIe corrected error (AER)",
                     "None unless they come in floods; then check the slot and cable.", merge_within=10_000)
            continue
        if _AMDGPU_PAGE_FAULT.search(line):  # like Xid 31, mostly the application's illegal access: not a faulty node
            _sig(r, file, probe, n, line, "gpu_page_fault", "warning",
                 "GPU page fault (amdgpu): a kernel accessed an address it may not, usually the application's bug",
                 "Debug the application's illegal access (AMD_SERIALIZE_KERNEL=3, compute-sanitizer on NVIDIA); if "
                 "several applications fault on one GPU, run the vendor's diagnostics.", merge_within=50)
            continue
        m = _AMDGPU_RESET_FAILED.search(line)
        if m:  # (once a GPU: its mode1 and ASIC reset lines are one failed reset)
            _sig(r, file, probe, n, line, "gpu_reset_failed", "fatal",
                 "the driver could not reset a hung GPU (amdgpu): it stays unusable until the node is power-cycled",
                 "Drain the node; power-cycle it and run the vendor's diagnostics (rocm-smi, AGFHC) before it returns.",
                 device=m.group(1), merge_within=20)
            continue
        m = _AMDGPU_RAS_UE.search(line)
        if m and int(m.group(1)) > 0:
            _sig(r, file, probe, n, line, "gpu_ras_uncorrectable", "fatal",
                 f"{m.group(1)} uncorrectable hardware error(s) in the GPU's {m.group(2)} block (amdgpu RAS)"
                 + (": HBM memory, AMD's uncorrectable ECC" if m.group(2).upper() == "UMC" else ""),
                 "Drain the node; reset the GPU and run the vendor's diagnostics (AMD: rocm-smi, AGFHC) before it "
                 "returns; replace it if the errors repeat.", merge_within=20)
            continue
        m = _OOM_KILL.search(line)
        if m:
            _sig(r, file, probe, n, line, "oom_kill", "error",
                 f"the kernel OOM killer killed process {m.group(1)} ({m.group(2)}): host memory ran out",
                 "Restart from the last checkpoint; lower host memory use (dataloader workers, pinned memory) "
                 "or raise the memory limit.")
            continue
        if _OOM_INVOKED.search(line):
            _sig(r, file, probe, n, line, "oom_invoked", "info", "the OOM killer was invoked (a kill follows)", "",
                 merge_within=200)
            continue
        if _MEMCG_AT_LIMIT.search(line):
            _sig(r, file, probe, n, line, "memcg_at_limit", "error",
                 "a memory cgroup (the job's container) used all of its limit: its OOM killer ran",
                 "Restart from the last checkpoint; lower host memory use or raise the container's memory limit.",
                 merge_within=200)
            continue
        m = _LINK_DOWN.search(line)
        if m:
            dev = _link_device(line, m.group(1))
            _sig(r, file, probe, n, line, "nic_link_down", "error", f"network link down ({dev})",
                 "Check the cable, transceiver and switch port; a flapping link breaks NCCL: evict the node.",
                 device=dev, merge_within=100_000)  # a flapping port: the first drop is cited, the rest counted
            continue
        m = _LINK_UP.search(line)
        if m:
            dev = _link_device(line, m.group(1))
            _sig(r, file, probe, n, line, "nic_link_up", "info", f"network link up ({dev})", "", device=dev,
                 merge_within=100_000)
            continue
        if _NIC_MODULE.search(line):
            _sig(r, file, probe, n, line, "nic_module_error", "warning", "NIC cable/transceiver module event",
                 "Check or replace the transceiver and cable.", merge_within=20)
            continue
        for pattern, kind, severity, meaning, action in _DMESG_PLAIN:
            if pattern.search(line):
                last = r.signals[-1] if r.signals else None
                if kind == "gpu_lost" and last is not None and last.code == 79 and n - last.line <= 5:
                    last.count += 1  # the driver's second line about the Xid 79 just cited
                    break
                if kind in ("gpu_driver_error", "gsp_timeout"):
                    # the driver's failures after a GPU went down are its aftermath: a GSP timeout too, whose banner
                    # says so itself ('_kgspLogXid119: Note: Please also check logs above.' after an Xid 74,
                    # dev:vllm-40652)
                    gpu_down = next((s for s in r.signals if s.severity in ("fatal", "error")
                                     and s.kind in ("xid", "gpu_lost", "gsp_timeout", "gpu_driver_error")), None)
                    if gpu_down is not None:
                        gpu_down.count += 1
                        break
                _sig(r, file, probe, n, line, kind, severity, meaning, action, merge_within=20)  # type: ignore[arg-type]
                break
    _hung_where(r, file, probe, records)
    _nfs_recovered(r, records)
    ends = {n: end for n, end, _ in records if end > n}
    for signal in r.signals:
        signal.end_line = ends.get(signal.line)
    return r


_NFS_LOST = re.compile(r"nfs: server (\S+) not responding")
_NFS_OK = re.compile(r"nfs: server (\S+) OK\b")


def _nfs_recovered(r: Reading, records: list[tuple[int, int, str]]) -> None:
    """An NFS server that stopped answering and then answered again: the Linux NFS client prints 'nfs: server X not
    responding, still trying', then 'nfs: server X OK' once it answers; a stall the mount got over is no failure."""
    back = {}  # server -> the last line it answered on
    for n, _, line in records:
        m = _NFS_OK.search(line)
        if m:
            back[m.group(1)] = n
    for signal in r.signals:
        m = _NFS_LOST.search(signal.text) if signal.kind == "fs_client_error" else None
        if m and back.get(m.group(1), 0) > signal.line:
            signal.severity = "info"
            signal.meaning += f" for a while: it answered again (line {back[m.group(1)]})"


# a frame of the kernel's call trace in a loadable module: 'cxiWaitEventWait+0x208/0x330 [mmfslinux]' (not a '?' guess)
_MODULE_FRAME = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?!\?)\S+\+0x[0-9a-f]+/0x[0-9a-f]+ \[(\w+)\]\s*$")
HUNG_TRACE_LINES = 60  # how far after a hung-task report its call trace is read


def _hung_where(r: Reading, file: str, probe: str, records: list[tuple[int, int, str]]) -> None:
    """Where each hung task waits: the first frame of its call trace in a kernel module (a shared file system's
    client, a GPU driver), as a signal of its own that knowledge/signatures.yaml can name ('INFO: task python:280058
    blocked for more than 120 seconds.' then '... cxiWaitEventWait+0x208/0x330 [mmfslinux]', GPFS, dev:m4-logs-tr141-try3)."""
    starts = [n for n, _, _ in records]
    for hung in [s for s in r.signals if s.kind == "hung_task"]:
        for n, _, line in records[bisect.bisect_right(starts, hung.line):]:
            if n > hung.line + HUNG_TRACE_LINES:
                break
            if m := _MODULE_FRAME.match(line):
                _sig(r, file, probe, n, line, "hung_task_module", "error",
                     f"the blocked task waits in kernel module {m.group(1)}",
                     f"Check what {m.group(1)} serves on this node (a file system mount, a driver)")
                break


def _link_device(line: str, fallback: str) -> str:
    m = re.search(r"(\S+):\s+[Ll]ink (?:is )?(?:down|up|DOWN|UP)", line)
    return m.group(1) if m else fallback


# --- ibstat -------------------------------------------------------------------------------------------------

_IB_CA = re.compile(r"^CA '([^']+)'")
_IB_PORT = re.compile(r"^\s+Port (\d+):\s*$")
_IB_KV = re.compile(r"^\s+([A-Za-z ]+):\s*(.*?)\s*$")


@dataclass(slots=True)
class IbPort:
    ca: str
    port: str
    state: str = ""
    state_line: int = 0
    state_text: str = ""
    physical: str = ""
    physical_line: int = 0
    rate: float | None = None
    rate_line: int = 0
    rate_text: str = ""
    link_layer: str = ""
    ca_type: str = ""  # the adapter's model (MT4125): a node's NICs of one model are one set of rails
    file: str = ""
    probe: str = "ibstat"  # the command that printed it: ibstat, or iproute2's rdma link

    @property
    def name(self) -> str:
        return f"{self.ca}/{self.port}"


@reads("ibstat output")
def parse_ibstat(text: str, file: str = "ibstat") -> list[IbPort]:
    """`ibstat`: every CA's ports with State, Physical state, Rate and Link layer (and the line of each)."""
    ports: list[IbPort] = []
    ca, ca_type, port = "", "", None
    for n, line in numbered_lines(text):
        m = _IB_CA.match(line)
        if m:
            ca, ca_type, port = m.group(1), "", None
            continue
        m = _IB_PORT.match(line)
        if m and ca:
            port = IbPort(ca, m.group(1), ca_type=ca_type, file=file)
            ports.append(port)
            continue
        m = _IB_KV.match(line)
        if m is not None and port is None and m.group(1).strip() == "CA type":
            ca_type = m.group(2).strip()
        if m is None or port is None:
            continue
        key, value = m.group(1).strip(), m.group(2)
        if key == "State":
            port.state, port.state_line, port.state_text = value, n, line
        elif key == "Physical state":
            port.physical, port.physical_line = value, n
        elif key == "Rate":
            try:
                port.rate, port.rate_line, port.rate_text = float(value.split()[0]), n, line
            except (ValueError, IndexError):
                pass
        elif key == "Link layer":
            port.link_layer = value
    return ports


# --- rdma link (iproute2) -----------------------------------------------------------------------------------

# one line a port, as iproute2's `rdma link` prints it: 'link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev
# ens6f0np0' (RoCE), 'link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state DOWN
# physical_state POLLING' (InfiniBand, dev:rccl-1423), and older releases' '0/1: mlx5_0/1: state DOWN
# physical_state DISABLED'
_RDMA_LINK = re.compile(r"^\s*(?:link\s+|\d+/\d+:\s+)([\w.-]+)/(\d+):?\s(.*?)\bstate\s+(\w+)\s+physical_state\s+(\w+)"
                        r"(?:.*?\bnetdev\s+(\S+))?")


@reads("rdma link output")
def parse_rdma_link(text: str, file: str = "rdma-link") -> list[IbPort]:
    """`rdma link`: each port's state and physical state (and the line of each), in the order printed: a port read
    several times (the command run again, its outputs one after the other) is listed once a reading."""
    ports: list[IbPort] = []
    for n, line in numbered_lines(text):
        m = _RDMA_LINK.match(line)
        if m is None:
            continue
        ca, port, addressing, state, physical, netdev = m.groups()
        layer = "Ethernet" if netdev else "InfiniBand" if "lid " in addressing else ""
        ports.append(IbPort(ca, port, state=state.capitalize(), state_line=n, state_text=line, physical=physical,
                            physical_line=n, link_layer=layer, file=file, probe="rdma link"))
    return ports


# --- perfquery ----------------------------------------------------------------------------------------------

_PQ_HEADER = re.compile(r"^# Port (?:extended )?counters: Lid (\d+) port (\d+)", re.IGNORECASE)
_PQ_COUNTER = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*:\.*\s*(\d{1,20})\s*$")  # 64-bit counters
_SYSFS_COUNTER = re.compile(r"^\s*(?:\S*/)?([a-z_]+(?:errors?|downed|recovery|discards|wait|error))\s*[:=]\s*(\d{1,20})\s*$")


@dataclass(slots=True)
class PortCounter:
    port: str  # "lid 91 port 1", or "" when the output has no header
    name: str
    value: int
    line: int
    text: str


@reads("perfquery port counters")
def parse_perfquery(text: str, file: str = "ib-counters") -> list[PortCounter]:
    """`perfquery` (and `-x`) port counters, `Name:.....value`; also sysfs-style `symbol_error: N` lines."""
    out: list[PortCounter] = []
    port = ""
    for n, line in numbered_lines(text):
        m = _PQ_HEADER.match(line)
        if m:
            port = f"lid {m.group(1)} port {m.group(2)}"
            continue
        m = _PQ_COUNTER.match(line) or _SYSFS_COUNTER.match(line)
        if m:
            out.append(PortCounter(port, m.group(1), int(m.group(2)), n, line))
    return out


# --- nccl-tests ---------------------------------------------------------------------------------------------

_NCCL_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\d{1,12}(?:\.\d{0,12})?)")
_NCCL_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,18})\s*(\w*)")
_NCCL_FAIL = re.compile(r"Test (?:NCCL|CUDA) failure|NCCL WARN|NCCL error|Test failure")


@reads("nccl-tests output")
def parse_nccl_tests(text: str, file: str, probe: str = "nccl-tests") -> Reading:
    """nccl-tests `*_perf` output (the `redop root ... #wrong` layout and the older `redop ... error` one).
    Values: `avg_busbw` (the Avg bus bandwidth line) and `max_busbw` (out-of-place busbw at the largest size)."""
    r = Reading()
    columns: list[str] = []
    largest = -1
    for n, line in numbered_lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").split()
            if "busbw" in body and "size" in body:
                columns = body
                continue
            m = _NCCL_AVG.match(stripped)
            if m:
                r.values["avg_busbw"] = (float(m.group(1)), n, line)
                continue
            m = _NCCL_OOB.match(stripped)
            if m and int(m.group(1)) > 0:
                _sig(r, file, probe, n, line, "nccl_wrong_results", "error",
                     f"nccl-tests found {m.group(1)} wrong values: data corruption on the path",
                     "Drain the node; run dcgmi diag -r 3 and check NVLink / NIC errors.")
            continue
        if _NCCL_FAIL.search(line):
            _sig(r, file, probe, n, line, "nccl_test_failure", "error", "nccl-tests failed to run",
                 "Check the node's GPUs and NICs (dcgmi diag, ibstat); rerun the test.", merge_within=20)
            continue
        tokens = stripped.split()
        if not columns or not tokens[0].isdigit() or len(tokens) < len(columns) - 1:
            if columns:
                r.skip(n)
            continue
        try:
            size = int(tokens[columns.index("size")])
            busbw = float(tokens[columns.index("busbw")])
        except (ValueError, IndexError):
            r.skip(n)
            continue
        wrong_col = next((i for i, c in enumerate(columns) if c in ("#wrong", "error")), None)
        if wrong_col is not None and wrong_col < len(tokens) and columns[wrong_col] == "#wrong" and \
                tokens[wrong_col].isdigit() and len(tokens[wrong_col]) <= MAX_DIGITS and int(tokens[wrong_col]) > 0:
            _sig(r, file, probe, n, line, "nccl_wrong_results", "error",
                 f"{tokens[wrong_col]} wrong values at size {size}", "Drain the node; run dcgmi diag -r 3.",
                 merge_within=10_000)
        if size >= largest:
            largest = size
            r.values["max_busbw"] = (busbw, n, line)
    return r


# --- the generic JSON probe ---------------------------------------------------------------------------------


@reads('a JSON probe: {"probe": ..., "status": "ok|warn|fail", "detail": ..., "metrics": {...}}')
def parse_json_probe(text: str, file: str, probe: str) -> Reading:
    """`{"probe": ..., "status": "ok|warn|fail", "detail": ..., "metrics": {...}}`; the line cited is the detail, what
    the probe found, else the status."""
    r = Reading()
    expected = 'a JSON object {"probe": ..., "status": "ok|warn|fail", "detail": ..., "metrics": {...}}'
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileError(file, f"not valid JSON ({exc.msg}); expected {expected}", exc.lineno) from exc
    if not isinstance(data, dict):
        raise FileError(file, f"a JSON {type(data).__name__}; expected {expected}")
    status = data.get("status", "")
    if not isinstance(status, str):
        r.skip(None)  # a status that is not a word says nothing
    status = status.lower() if isinstance(status, str) else ""
    name = data.get("probe")
    name = name if isinstance(name, str) and name else probe
    lines = list(numbered_lines(text))
    line_no, line_text = next(((n, line) for key in ('"detail"', '"status"') for n, line in lines if key in line),
                              (1, text.split("\n", 1)[0]))
    detail = str(data.get("detail", ""))[:500]
    if status in ("fail", "failed", "error", "critical"):
        _sig(r, file, name, line_no, line_text, "probe_fail", "error", f"probe {name} failed: {detail}",
             "Drain the node and check what the probe tests.")
    elif status in ("warn", "warning", "degraded"):
        _sig(r, file, name, line_no, line_text, "probe_warn", "warning", f"probe {name} warned: {detail}",
             "Check what the probe tests.")
    metrics = data.get("metrics")
    if isinstance(metrics, dict):
        for k, v in metrics.items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            if abs(v) < 1e300 and math.isfinite(v):  # an int past float's range is no metric either
                r.values[f"metric:{k}"] = (float(v), line_no, line_text)
            else:
                r.skip(line_no)
    return r


MAX_TEXT_SIGNALS = 50  # a command's warning lines past this many are counted with the last, not kept
# what Kubernetes reports at its Normal level that ended a pod: the scheduler's 'Preempted' event ('Preempted by pod
# <uid> on node <node>'), and the container's last state 'OOMKilled' (its documented event reasons and states)
_KUBE_REASON = re.compile(r"\b(?:Preempted|OOMKilled)\b")
# dig's answer header when the name did not resolve: ';; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 24608'
# (BIND's dig: NXDOMAIN, no such name; SERVFAIL, the resolver failed; REFUSED)
_DIG_FAILED = re.compile(r"^;; ->>HEADER<<- opcode: \w+, status: (?:NXDOMAIN|SERVFAIL|REFUSED)\b")


# `uptime` and the first lines of `top -b` ('top - 04:10:59 up 6 days,  3:11,  1 user,  load average: 188.42, 171.07,
# 96.33', '%Cpu(s): 97.9 us,  1.8 sy,  0.0 ni,  0.1 id, ...'), procps' documented output; /proc/loadavg's '188.42
# 171.07 96.33 183/1512 812044'
_LOAD_AVERAGE = re.compile(r"load averages?:\s*([\d.]+),?\s+[\d.]+,?\s+[\d.]+")
_PROC_LOADAVG = re.compile(r"^([\d.]+) [\d.]+ [\d.]+ \d+/\d+ \d+$")
_CPU_IDLE = re.compile(r"^%?Cpu\(s\):.*?([\d.]+)\s*id\b")


@reads("uptime, top -b or /proc/loadavg output")
def parse_load(text: str, file: str) -> Reading:
    """The host's load: its 1-minute load average and, from top, the share of CPU time idle, to compare with the
    node's peers (a host whose CPUs a stray process saturates starves its input pipeline)."""
    r = Reading()
    for n, line in numbered_lines(text):
        m = _LOAD_AVERAGE.search(line) or _PROC_LOADAVG.match(line.strip())
        if m and "load_1m" not in r.values:
            r.values["load_1m"] = (float(m.group(1)), n, line)
        m = _CPU_IDLE.match(line.strip())
        if m and "cpu_idle_pct" not in r.values:
            r.values["cpu_idle_pct"] = (float(m.group(1)), n, line)
    return r


# bash's `ulimit -a` ('max locked memory           (kbytes, -l) 64', or 'unlimited'; dash and zsh print
# 'locked memory(kbytes)   64' and '-l: locked-in-memory size (kbytes) 64') and the kernel's /proc/<pid>/limits
# ('Max locked memory         65536                65536                bytes': its soft limit, the first value)
_ULIMIT_MEMLOCK = re.compile(r"^(?:max locked memory\s+\((kbytes|bytes), -l\)|locked memory\(kbytes\)|-l: "
                             r"locked-in-memory size \(kbytes\))\s+(\S+)\s*$", re.IGNORECASE)
_PROC_MEMLOCK = re.compile(r"^Max locked memory\s+(\S+)\s+\S+\s+bytes\s*$")


@reads("ulimit -a or /proc/<pid>/limits output")
def parse_limits(text: str, file: str) -> Reading:
    """The processes' memlock limit, in bytes (unlimited: infinity), to compare with the node's peers: RDMA pins the
    buffers it registers, and a limit lower than the other nodes' fails the registration (NCCL's 'Call to
    ibv_reg_mr failed')."""
    r = Reading()
    for n, line in numbered_lines(text):
        if "memlock_bytes" in r.values:
            break
        if m := _ULIMIT_MEMLOCK.match(line.strip()):  # in kbytes unless bash says bytes
            value, factor = m.group(2), 1 if (m.group(1) or "").lower() == "bytes" else 1024
        elif m := _PROC_MEMLOCK.match(line.strip()):
            value, factor = m.group(1), 1
        else:
            continue
        if value.lower() in ("unlimited", "infinity"):
            r.values["memlock_bytes"] = (math.inf, n, line)
        elif value.isdigit() and len(value) <= MAX_DIGITS:
            r.values["memlock_bytes"] = (float(value) * factor, n, line)
        else:
            r.skip(n)
    return r


@reads("the text output of a command")
def parse_text_probe(text: str, file: str, probe: str) -> Reading:
    """Any other command's text (`kubectl describe pod`, `top`, a site's own check): each line whose words say warning
    or worse is a warning signal, for the signatures to read ('Warning  Evicted ... kubelet  The node was low on
    resource: ephemeral-storage.'). The words of a command diagagent does not know hint; they never prove a node
    faulty."""
    r = Reading()
    for n, line in numbered_lines(text):
        if content_level(line) in ("warning", "error", "fatal") or _KUBE_REASON.search(line) or _DIG_FAILED.match(line):
            if len(r.signals) >= MAX_TEXT_SIGNALS:
                r.signals[-1].count += 1
                continue
            _sig(r, file, probe, n, line, "text_probe", "warning", f"{probe} says: {line.strip()[:200]}",
                 "Read the probe's output around this line.")
    return r


__all__ = ["SEVERITY_RANK", "HealthSignal", "IbPort", "PortCounter", "Reading", "numbered_lines",
           "parse_dcgm_diag", "parse_dmesg", "parse_ibstat", "parse_json_probe", "parse_limits", "parse_load",
           "parse_nccl_tests", "parse_nvidia_smi", "parse_perfquery", "parse_rdma_link", "parse_text_probe"]
