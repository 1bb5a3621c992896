"""Node health from probe output: per node a verdict (healthy, degraded, faulty) with the exact evidence lines.

`analyze_health(bundle) -> HealthFindings`; pure and LLM-free. Parsers live in probes.py; here each node is
also compared with its peers (bus bandwidth, IB port state and rate, port counters, GPU count, throttling). A probe
file that cannot be read is skipped and named (in `bundle.issues`); the other files are read as usual.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from statistics import median
from typing import Literal

from pydantic import BaseModel, Field

from diagagent.analysis.guard import Budget
from diagagent.analysis.probes import (
    SEVERITY_RANK,
    HealthSignal,
    IbPort,
    PortCounter,
    Reading,
    parse_dcgm_diag,
    parse_dmesg,
    parse_ibstat,
    parse_json_probe,
    parse_limits,
    parse_load,
    parse_nccl_tests,
    parse_nvidia_smi,
    parse_perfquery,
    parse_rdma_link,
    parse_text_probe,
)
from diagagent.analysis.workers import Workers
from diagagent.analysis.xid import Severity, XidCatalog, load_xid_catalog
from diagagent.telemetry import Bundle, FileError, PartFile, ReadIssue, file_errors
from diagagent.telemetry.readers import read_text

Verdict = Literal["healthy", "degraded", "faulty"]
ProbeKind = Literal["nvidia-smi", "dcgm-diag", "dmesg", "ibstat", "rdma-link", "ib-counters", "nccl-tests", "load",
                    "limits", "json", "text"]

# counter -> (kind, severity when an outlier, the least value that counts, meaning); perfquery and sysfs names
_COUNTERS: dict[str, tuple[str, Severity, int, str]] = {
    "LinkDownedCounter": ("ib_link_downed", "error", 1, "the IB link went down {v} time(s): a flapping link"),
    "link_downed": ("ib_link_downed", "error", 1, "the IB link went down {v} time(s): a flapping link"),
    "LinkErrorRecoveryCounter": ("ib_link_recovery", "warning", 1, "{v} link error recoveries"),
    "link_error_recovery": ("ib_link_recovery", "warning", 1, "{v} link error recoveries"),
    "SymbolErrorCounter": ("ib_symbol_errors", "warning", 10, "{v} symbol errors (bad cable or transceiver)"),
    "symbol_error": ("ib_symbol_errors", "warning", 10, "{v} symbol errors (bad cable or transceiver)"),
    "PortRcvErrors": ("ib_rcv_errors", "warning", 10, "{v} receive errors"),
    "port_rcv_errors": ("ib_rcv_errors", "warning", 10, "{v} receive errors"),
    "LocalLinkIntegrityErrors": ("ib_link_integrity", "warning", 1, "{v} local link integrity errors"),
    "local_link_integrity_errors": ("ib_link_integrity", "warning", 1, "{v} local link integrity errors"),
    "ExcessiveBufferOverrunErrors": ("ib_buffer_overrun", "warning", 1, "{v} excessive buffer overruns"),
    "excessive_buffer_overrun_errors": ("ib_buffer_overrun", "warning", 1, "{v} excessive buffer overruns"),
    "PortRcvRemotePhysicalErrors": ("ib_remote_physical", "warning", 10, "{v} remote physical errors"),
    "port_rcv_remote_physical_errors": ("ib_remote_physical", "warning", 10, "{v} remote physical errors"),
    "PortXmitDiscards": ("ib_xmit_discards", "warning", 100, "{v} transmit discards"),
    "port_xmit_discards": ("ib_xmit_discards", "warning", 100, "{v} transmit discards"),
    "PortXmitWait": ("ib_congestion", "error", 1000, "{v} ticks waiting to transmit: the port is congested"),
    "port_xmit_wait": ("ib_congestion", "error", 1000, "{v} ticks waiting to transmit: the port is congested"),
    # a RoCE / Ethernet port's own counters, as `ethtool -S` prints them for ConnectX (mlx5) NICs (NVIDIA's mlx5
    # counters documentation: rx_crc_errors_phy, rx_symbol_err_phy, link_down_events_phy on the physical port)
    "rx_crc_errors_phy": ("ib_link_integrity", "warning", 10, "{v} frames dropped for a bad FCS (CRC) on the port"),
    "rx_symbol_err_phy": ("ib_symbol_errors", "warning", 10, "{v} symbol errors (bad cable or transceiver)"),
    "link_down_events_phy": ("ib_link_downed", "error", 1, "the port's link went down {v} time(s): a flapping link"),
}
_SHAPE = {"ibstat": "CA '<name>' blocks with Port N: State, Rate",
          "rdma-link": "'link <device>/<port> ... state <STATE> physical_state <STATE>' lines",
          "ib-counters": "perfquery Name:....value lines (or ethtool -S name: value)"}
_PEER_ESCALATE = ("thermal_throttle", "power_brake", "hw_slowdown", "gpu_overheat")


class NodeHealth(BaseModel):
    host: str
    verdict: Verdict
    reason: str
    probes: list[str] = Field(description="The probe files read for this node (relative to the bundle).")
    signals: list[HealthSignal] = Field(description="Most severe first; each with its exact line.")


class HealthSuspect(BaseModel):
    host: str
    score: float
    reason: str
    files: list[str] = Field(default_factory=list, description="file:line of the strongest signals.")


class HealthFindings(BaseModel):
    present: bool
    note: str = ""
    files: int = 0
    skipped: int = Field(0, description="Lines or files that could not be read as their probe; skipped.")
    problems: list[str] = Field(default_factory=list)
    nodes: list[NodeHealth] = Field(default_factory=list, description="Faulty first, then degraded, then healthy.")
    unprobed_hosts: list[str] = Field(default_factory=list)
    peer_baselines: dict[str, float] = Field(default_factory=dict)
    suspects: list[HealthSuspect] = Field(default_factory=list)

    def node(self, host: str) -> NodeHealth | None:
        return next((n for n in self.nodes if n.host == host), None)


def probe_kind(part: PartFile, head: str) -> ProbeKind:
    """Which probe a file holds: by its name (BUNDLE.md), else by what its first lines look like; else any other
    command's text."""
    name = part.name.lower()
    if part.file.endswith((".json", ".json.gz")) and head.lstrip()[:1] in ("{", "["):  # (a JSON-lines export such
        # as `journalctl -k -o json` is read as the lines its records stand for, telemetry/records.py)
        return "json"
    for prefix, kind in (("nvidia-smi", "nvidia-smi"), ("nvsmi", "nvidia-smi"), ("dcgm", "dcgm-diag"),
                         ("dmesg", "dmesg"), ("kern", "dmesg"), ("journal", "dmesg"), ("ibstat", "ibstat"),
                         ("rdma", "rdma-link"),
                         ("ib-counters", "ib-counters"), ("ib_counters", "ib-counters"), ("perfquery", "ib-counters"),
                         ("ethtool", "ib-counters"),
                         ("nccl", "nccl-tests"), ("all_reduce", "nccl-tests"),
                         ("uptime", "load"), ("top.", "load"), ("top-", "load"), ("top_", "load"),
                         ("loadavg", "load"), ("ulimit", "limits"), ("limits", "limits")):
        if name.startswith(prefix):
            return kind  # type: ignore[return-value]
    if "NVSMI LOG" in head or "Attached GPUs" in head:
        return "nvidia-smi"
    if "| Diagnostic" in head:
        return "dcgm-diag"
    if "CA '" in head:
        return "ibstat"
    if "physical_state" in head:
        return "rdma-link"
    if "# Port counters" in head or "PortRcvErrors" in head:
        return "ib-counters"
    if "busbw" in head or "nThread" in head:
        return "nccl-tests"
    if "load average:" in head:
        return "load"
    if "max locked memory" in head.lower():
        return "limits"
    if "NVRM:" in head or "kernel:" in head or head.startswith("["):
        return "dmesg"
    return "text"  # any other command's output: its lines that say warning or worse


def analyze_health(bundle: Bundle, catalog: XidCatalog | None = None, budget: Budget | None = None,
                   workers: Workers | None = None) -> HealthFindings:
    """Parse every probe file (in `workers` when there are many), compare each node with its peers, and give each
    probed node a verdict."""
    if not bundle.probe_files:
        return HealthFindings(present=False, note="This bundle has no probes/ (nvidia-smi, dcgmi diag, dmesg, ibstat, "
                                                  "perfquery, nccl-tests); `diagagent probe HOST --save` collects them.")
    catalog = catalog or load_xid_catalog()
    job = bundle.job
    findings = HealthFindings(present=True)
    signals: dict[str, list[HealthSignal]] = defaultdict(list)
    probes: dict[str, list[str]] = defaultdict(list)
    readings: dict[str, dict[str, Reading]] = defaultdict(dict)  # host -> probe kind -> reading
    ib_ports: dict[str, list[IbPort]] = {}
    counters: dict[str, list[PortCounter]] = {}
    files_of: dict[tuple[str, str], str] = {}
    files = bundle.probe_files
    for i, read in enumerate(_read_probes(bundle, files, catalog, budget, workers)):
        if read is None:  # the time budget ran out before this file
            budget.stop(files[i].file, len(files) - i)  # type: ignore[union-attr]
            break
        part, kind, parsed = read.part, read.kind, read.parsed
        host = part.host
        if host is None:
            findings.skipped += 1
            findings.problems.append(f"{part.file}: not under probes/<host>/, so no node to give it to; skipped")
            continue
        findings.files += 1
        bundle.issues.extend(read.issues)
        if read.error is not None:
            bundle.issues.append(read.error)
            findings.skipped += 1
            findings.problems.append(str(read.error))
            continue  # an unreadable probe says nothing about its node: the node is not counted as probed by it
        probes[host].append(part.file)
        if kind in ("ibstat", "rdma-link", "ib-counters") and not parsed and not read.blank:
            issue = ReadIssue(file=part.file, problem=f"no {kind} output in it (expected "
                                                      f"{_SHAPE[kind]}); file skipped")
            bundle.issues.append(issue)
            findings.skipped += 1
            findings.problems.append(str(issue))
            continue
        if kind == "load" and "load" in readings[host]:
            continue  # uptime and top say the same load: the node's first such file is the one compared and cited
        files_of[(host, kind)] = part.file
        if kind in ("ibstat", "rdma-link"):
            ib_ports.setdefault(host, []).extend(parsed)  # type: ignore[arg-type]
        elif kind == "ib-counters":
            counters[host] = parsed  # type: ignore[assignment]
        else:
            reading: Reading = parsed  # type: ignore[assignment]
            findings.skipped += reading.skipped
            if reading.skipped:
                bundle.issues.append(ReadIssue(file=part.file, line=reading.first_skipped, count=reading.skipped,
                                               problem=f"lines or values that are not {kind} output, skipped"))
            readings[host][kind] = reading
            signals[host].extend(reading.signals)

    _peer_busbw(readings, files_of, signals, findings)
    _peer_ib_ports(ib_ports, signals)
    _peer_counters(counters, files_of, signals)
    _peer_gpus(readings, files_of, signals, job.gpus_per_node)
    _peer_escalate(readings, signals)
    _peer_load(readings, files_of, signals, findings)
    _peer_memlock(readings, files_of, signals)
    _peer_driver(readings, files_of, signals)

    nodes = []
    for host in sorted(probes):
        sigs = sorted(signals.get(host, []), key=lambda s: (-SEVERITY_RANK[s.severity], s.file, s.line))
        for s in sigs:
            s.host = host
        worst = SEVERITY_RANK[sigs[0].severity] if sigs else 0
        verdict: Verdict = "faulty" if worst >= 2 else ("degraded" if worst == 1 else "healthy")
        reason = f"{sigs[0].kind}: {sigs[0].meaning}" if sigs and worst >= 1 else "no probe shows a problem"
        nodes.append(NodeHealth(host=host, verdict=verdict, reason=reason, probes=sorted(probes[host]),
                                signals=[s for s in sigs if s.severity != "info" or len(sigs) < 50]))
    order = {"faulty": 0, "degraded": 1, "healthy": 2}
    findings.nodes = sorted(nodes, key=lambda n: (order[n.verdict], n.host))
    findings.unprobed_hosts = sorted(set(job.hosts) - set(probes))
    findings.suspects = _suspects(findings.nodes)
    counts = {v: sum(1 for n in nodes if n.verdict == v) for v in order}
    findings.note = (f"{len(nodes)} node(s) probed: {counts['faulty']} faulty, {counts['degraded']} degraded, "
                     f"{counts['healthy']} healthy" +
                     (f"; {len(findings.unprobed_hosts)} node(s) without probes" if findings.unprobed_hosts else ""))
    return findings


PARALLEL_PROBE_BYTES = 32 << 20  # probes past this many bytes are parsed in chunks, by several processes: they parse
# at about 10 MB/s per core, and a pool's start (1-1.5 s) pays from about 15-30 MB on 2 cores (benches/pool_threshold.py)
PROBE_BYTES = 32 << 20  # a probe file is read up to this many bytes
CHUNK_PROBE_BYTES = 4 << 20  # ... of about this many bytes of consecutive files (whole hosts) each


@dataclass(slots=True)
class _ProbeRead:
    """One probe file, read and parsed (in whichever process): what the verdicts need, not its text."""

    part: PartFile
    kind: ProbeKind | None = None
    parsed: Reading | list[IbPort] | list[PortCounter] | None = None
    error: ReadIssue | None = None  # the file could not be read or parsed
    blank: bool = False  # it holds nothing but white space
    issues: list[ReadIssue] = field(default_factory=list)  # read problems met on the way, in order


@dataclass(slots=True)
class _ProbeJob:
    bundle: Bundle  # a view: its own issues and share of the read budget
    files: list[PartFile]
    catalog: XidCatalog
    deadline: float | None  # epoch seconds: no file is started after it (but the first)
    first: bool  # this chunk holds the bundle's first probe file (read whatever the budget)


def _read_probe_files(job: _ProbeJob) -> list[_ProbeRead | None]:
    """Read and parse one chunk of probe files (None for each file left unread at the deadline)."""
    out: list[_ProbeRead | None] = []
    for i, part in enumerate(job.files):
        if (i or not job.first) and job.deadline is not None and time.time() > job.deadline:
            return out + [None] * (len(job.files) - i)
        out.append(_read_probe(job.bundle, part, job.catalog))
    return out


def _read_probe(bundle: Bundle, part: PartFile, catalog: XidCatalog) -> _ProbeRead:
    read = _ProbeRead(part)
    if part.host is None:
        return read
    seen = len(bundle.issues)
    try:
        with file_errors(part.file, "probe output"):
            text = _read_listed(bundle, part.file)
            read.kind = probe_kind(part, text[:4096])
            read.parsed = _parse(read.kind, text, part, catalog)
            read.blank = not text.strip()
    except FileError as exc:
        read.error, read.kind, read.parsed = ReadIssue.of(exc), None, None
    read.issues = bundle.issues[seen:]
    return read


def _read_probes(bundle: Bundle, files: list[PartFile], catalog: XidCatalog, budget: Budget | None,
                 workers: Workers | None) -> Iterator[_ProbeRead | None]:
    """Every probe file read and parsed, in order: in this process, or in chunks of consecutive files (whole hosts)
    by `workers` when there are enough bytes to pay for the processes."""
    deadline = budget.deadline() if budget is not None else None
    size = sum(_size(bundle, p) for p in files) if workers is not None else 0
    parts = workers.chunks(size, len(files), PARALLEL_PROBE_BYTES, CHUNK_PROBE_BYTES) if workers is not None else 1
    if parts <= 1:
        for i, part in enumerate(files):
            if i and budget is not None and budget.spent():
                yield None
                return
            view = bundle.view()
            yield _read_probe(view, part, catalog)
        return
    step = -(-len(files) // parts)
    chunks = [files[i:i + step] for i in range(0, len(files), step)]
    shares = bundle.budget.share(len(chunks))
    jobs = [_ProbeJob(bundle.view(share), chunk, catalog, deadline, k == 0)
            for k, (chunk, share) in enumerate(zip(chunks, shares))]
    for reads in workers.map(_read_probe_files, jobs):  # type: ignore[union-attr]
        yield from reads


def _read_listed(bundle: Bundle, rel: str) -> str:
    """A listed probe file's text. The listing never enters linked folders, so a file that is not itself a link is
    inside the bundle and skips `Bundle.read_text`'s full path resolution (a third of the reading at 6,000 files)."""
    path = bundle.root / rel
    if os.path.islink(path):
        return bundle.read_text(rel, limit=PROBE_BYTES)
    return read_text(path, rel, bundle.issues, min(PROBE_BYTES, bundle.limits.file_bytes), bundle.budget)


def _size(bundle: Bundle, part: PartFile) -> int:
    try:
        return (bundle.root / part.file).stat().st_size
    except OSError:
        return 0


def _parse(kind: ProbeKind, text: str, part: PartFile, catalog: XidCatalog) -> Reading | list[IbPort] | list[PortCounter]:
    """One probe file through its parser (each raises only `FileError`, naming the file)."""
    if kind == "ibstat":
        return parse_ibstat(text, part.file)
    if kind == "rdma-link":
        return parse_rdma_link(text, part.file)
    if kind == "ib-counters":
        return parse_perfquery(text, part.file)
    if kind == "dmesg":
        return parse_dmesg(text, part.file, catalog)
    if kind == "json":
        return parse_json_probe(text, part.file, part.name)
    if kind == "text":
        return parse_text_probe(text, part.file, part.name)
    if kind == "load":
        return parse_load(text, part.file)
    if kind == "limits":
        return parse_limits(text, part.file)
    return {"nvidia-smi": parse_nvidia_smi, "dcgm-diag": parse_dcgm_diag, "nccl-tests": parse_nccl_tests}[kind](
        text, part.file)


def _peer_busbw(readings: dict[str, dict[str, Reading]], files_of: dict[tuple[str, str], str],
                signals: dict[str, list[HealthSignal]], findings: HealthFindings,
                low: float = 0.75, warn: float = 0.9) -> None:
    """A node whose nccl-tests bus bandwidth is well under its peers' median."""
    values: dict[str, tuple[float, int, str]] = {}
    for host, by_kind in readings.items():
        r = by_kind.get("nccl-tests")
        if r is not None:
            got = r.values.get("avg_busbw") or r.values.get("max_busbw")
            if got is not None:
                values[host] = got
    if len(values) < 3:
        return  # two nodes cannot say which of them is slow
    base = median(v[0] for v in values.values())
    findings.peer_baselines["nccl_busbw_median"] = round(base, 3)
    for host, (value, line, text) in values.items():
        if base <= 0 or value >= warn * base:
            continue
        severity: Severity = "error" if value < low * base else "warning"
        signals[host].append(HealthSignal(
            probe="nccl-tests", file=files_of[(host, "nccl-tests")], line=line, text=text.strip(), kind="low_busbw",
            severity=severity, meaning=f"bus bandwidth {value:g} GB/s is {value / base:.0%} of the peers' median {base:g} GB/s",
            action="Check this node's NICs (ibstat, port counters) and NVLink; evict it if the bandwidth stays low."))


LOAD_OUTLIER = 3.0  # a host whose 1-minute load is this many times its peers' median (and ...
LOAD_MARGIN = 8.0  # ... this many runnable tasks more) is overloaded: its CPUs are what the job waits on
BUSY_IDLE_PCT = 10.0  # ... unless top shows its CPUs this idle or more


def _peer_load(readings: dict[str, dict[str, Reading]], files_of: dict[tuple[str, str], str],
               signals: dict[str, list[HealthSignal]], findings: HealthFindings) -> None:
    """A node whose load average is far above its peers' (uptime, top): a process that is not the job's, or too many
    workers, saturates its CPUs (ByteRobust's CPU overload). Nodes alike under load say nothing of one of them."""
    values = {host: (by_kind["load"].values["load_1m"], by_kind["load"].values.get("cpu_idle_pct"))
              for host, by_kind in readings.items() if "load" in by_kind and "load_1m" in by_kind["load"].values}
    if len(values) < 3:
        return  # two nodes cannot say which of them is loaded
    base = median(v[0][0] for v in values.values())
    findings.peer_baselines["load_1m_median"] = round(base, 3)
    for host, ((load, line, text), idle) in values.items():
        if load < LOAD_OUTLIER * base or load - base < LOAD_MARGIN or (idle is not None and idle[0] >= BUSY_IDLE_PCT):
            continue
        busy = f", {idle[0]:g}% of CPU time idle" if idle is not None else ""
        signals[host].append(HealthSignal(
            probe="load", file=files_of[(host, "load")], line=line, text=text.strip(), kind="cpu_overloaded",
            severity="error", meaning=f"load average {load:g} against the peers' median {base:g}{busy}",
            action="Find what loads the CPUs (top, sorted by CPU); stop what is not the job's, or evict the node."))


def _peer_memlock(readings: dict[str, dict[str, Reading]], files_of: dict[tuple[str, str], str],
                  signals: dict[str, list[HealthSignal]]) -> None:
    """A node whose memlock limit (ulimit -l) is lower than another node's: RDMA (InfiniBand, RoCE, EFA) pins the
    buffers it registers, and this node's ranks cannot (NCCL's 'Call to ibv_reg_mr failed', libfabric's -12), where
    the others can; the node's set-up, not the job's (blind incident verl-ray-memlock-ibv-reg-mr: 64 kB on one node,
    unlimited on the others)."""
    values = _each_nodes(readings, "limits", "memlock_bytes")
    if len(values) < 2:
        return
    most = max(v[0] for v in values.values())
    for host, (value, line, text) in values.items():
        if value < most:
            signals[host].append(HealthSignal(
                probe="limits", file=files_of[(host, "limits")], line=line, text=text.strip(), kind="memlock_below_peers",
                severity="error", meaning=f"max locked memory {_bytes(value)} below its peers' {_bytes(most)}",
                action="Raise the memlock limit to unlimited (limits.conf, the container's --ulimit memlock=-1, "
                       "the scheduler's PropagateResourceLimits) and restart the node's ranks."))


def _peer_driver(readings: dict[str, dict[str, Reading]], files_of: dict[tuple[str, str], str],
                 signals: dict[str, list[HealthSignal]]) -> None:
    """A node whose GPU driver is not the version most of its peers run: its CUDA runtime may need a newer one
    ('CUDA driver version is insufficient for CUDA runtime version') or its kernel module may not match the
    libraries; the node's set-up (blind incident sbatch-slurmout-nemo-old-driver-one-node-4node: 450.248.02 on one node
    of four, 550.127.08 on the others)."""
    values = _each_nodes(readings, "nvidia-smi", "driver")
    if len(values) < 3:
        return
    common, count = Counter(v[0] for v in values.values()).most_common(1)[0]
    if count * 2 <= len(values):
        return  # no version most nodes share: none of them is the odd one

    def version(text: str) -> str:  # as the line prints it, 'Driver Version : 550.127.08'
        return text.split(":")[-1].strip()

    shown = next(version(text) for value, _, text in values.values() if value == common)
    for host, (value, line, text) in values.items():
        if value != common:
            signals[host].append(HealthSignal(
                probe="nvidia-smi", file=files_of[(host, "nvidia-smi")], line=line, text=text.strip(),
                kind="driver_unlike_peers", severity="error",
                meaning=f"driver {version(text)} where {count} of {len(values)} nodes run {shown}",
                action="Install the driver the other nodes run (or drain the node) and restart its ranks."))


def _each_nodes(readings: dict[str, dict[str, Reading]], kind: str, name: str) -> dict[str, tuple[float, int, str]]:
    """Each node's value `name` from its `kind` probe, where it has one: (value, line, line text)."""
    return {host: by_kind[kind].values[name] for host, by_kind in readings.items()
            if kind in by_kind and name in by_kind[kind].values}


def _bytes(value: float) -> str:
    if math.isinf(value):
        return "unlimited"
    for unit in ("B", "kB", "MB"):
        if value < 1024:
            return f"{value:g} {unit}"
        value /= 1024
    return f"{value:g} GB"


def _peer_ib_ports(ib_ports: dict[str, list[IbPort]], signals: dict[str, list[HealthSignal]]) -> None:
    """A port that is not Active where its peers' same port is (an unused port is down everywhere), or slower; and a
    port read several times that was down and is Active again: its link went down and came back."""
    readings: dict[str, dict[str, list[IbPort]]] = {}  # host -> port -> its readings, in the order printed
    for host, ports in ib_ports.items():
        for p in ports:
            readings.setdefault(host, {}).setdefault(p.name, []).append(p)
    active: dict[str, int] = defaultdict(int)
    present: dict[str, int] = defaultdict(int)
    rates: dict[str, list[float]] = defaultdict(list)
    for by_port in readings.values():
        for p in (rs[-1] for rs in by_port.values()):  # a port as it was read last
            present[p.name] += 1
            if p.state.lower() == "active":
                active[p.name] += 1
                if p.rate:
                    rates[p.name].append(p.rate)
    for host, by_port in readings.items():
        # a port down while the node's other adapters of the same model are up: one rail of a set is broken
        # (dev:mscclpp-493, mlx5_1 'State: Down' beside an Active mlx5_0, both MT4125, RoCE)
        last = [rs[-1] for rs in by_port.values()]
        rails = Counter(p.ca_type for p in last if p.ca_type and p.state.lower() == "active")
        for rs in by_port.values():
            p, down = rs[-1], [r for r in rs if r.state and r.state.lower() != "active" and r.state_line]
            if down and p.state.lower() == "active":
                # down, then Active again: the link flapped (dev:rccl-1423, `rdma link` read three times, mlx5_7/1
                # 'state DOWN physical_state POLLING', then 'DOWN ... LINK_UP', then 'ACTIVE')
                seen = ", then ".join(f"{r.state} ({r.physical})" if r.physical else r.state for r in rs)
                signals[host].extend(HealthSignal(
                    probe=r.probe, file=r.file, line=r.state_line, text=r.state_text.strip(), kind="ib_port_flapped",
                    severity="error", device=p.name,
                    meaning=f"port {p.name} went down and came back: read {len(rs)} times, {seen}",
                    action="Check the cable, transceiver and switch port (the link flaps); evict the node if it repeats.")
                    for r in down[:2])
                continue
            peers = present[p.name] - 1
            if p.state and p.state.lower() != "active" and p.state_line:
                used = (active[p.name] * 2 > peers) if peers > 0 else (p.link_layer.lower() != "ethernet"
                                                                      or rails[p.ca_type] > 0)
                if used:
                    signals[host].append(HealthSignal(
                        probe=p.probe, file=p.file, line=p.state_line, text=p.state_text.strip(), kind="ib_port_down",
                        severity="error", device=p.name,
                        meaning=f"port {p.name} is {p.state}" + (f" (Physical state: {p.physical})" if p.physical else "")
                                + (f" while it is Active on {active[p.name]} of {peers} peer(s)" if peers else ""),
                        action="Check the cable, transceiver and switch port; evict the node until the link is up."))
            elif p.rate and len(rates[p.name]) >= 3 and p.rate < 0.75 * median(rates[p.name]):
                signals[host].append(HealthSignal(
                    probe=p.probe, file=p.file, line=p.rate_line, text=p.rate_text.strip(), kind="ib_rate_degraded",
                    severity="warning", device=p.name,
                    meaning=f"port {p.name} runs at {p.rate:g} Gb/s, peers at {median(rates[p.name]):g}",
                    action="Check the cable and transceiver; the link trained at a lower rate."))


def _peer_counters(counters: dict[str, list[PortCounter]], files_of: dict[tuple[str, str], str],
                   signals: dict[str, list[HealthSignal]]) -> None:
    """Error counters well above the peers' (a counter that is high everywhere is the fabric's, not a node's)."""
    per_host: dict[str, dict[str, PortCounter]] = {}
    for host, cs in counters.items():
        worst: dict[str, PortCounter] = {}
        for c in cs:
            if c.name in _COUNTERS and (c.name not in worst or c.value > worst[c.name].value):
                worst[c.name] = c
        per_host[host] = worst
    for host, worst in per_host.items():
        for name, c in worst.items():
            kind, severity, least, meaning = _COUNTERS[name]
            if c.value < least:
                continue
            peers = [w[name].value for h, w in per_host.items() if h != host and name in w]
            base = median(peers) if peers else 0.0
            if peers and c.value < max(least, 10 * base):
                continue
            if not peers and kind == "ib_congestion":
                continue  # congestion has no absolute threshold: only against peers
            signals[host].append(HealthSignal(
                probe="ib-counters", file=files_of[(host, "ib-counters")], line=c.line, text=c.text.strip(), kind=kind,
                severity=severity, device=c.port or None,
                meaning=meaning.format(v=c.value) + (f" (peers' median {base:g})" if peers else ""),
                action="Check the cable, transceiver and switch port of this HCA; evict the node if errors keep rising."))


def _peer_gpus(readings: dict[str, dict[str, Reading]], files_of: dict[tuple[str, str], str],
               signals: dict[str, list[HealthSignal]], gpus_per_node: int) -> None:
    """nvidia-smi seeing fewer GPUs than the node has (a GPU fell off the bus or was never found)."""
    for host, by_kind in readings.items():
        r = by_kind.get("nvidia-smi")
        got = r.values.get("gpus") if r is not None else None
        if got is None or got[0] >= gpus_per_node:
            continue
        signals[host].append(HealthSignal(
            probe="nvidia-smi", file=files_of[(host, "nvidia-smi")], line=got[1], text=got[2].strip(),
            kind="gpu_missing", severity="error",
            meaning=f"nvidia-smi sees {got[0]:g} GPU(s); the node has {gpus_per_node}",
            action="Drain the node and reboot it; a GPU that stays missing needs service."))


def _peer_escalate(readings: dict[str, dict[str, Reading]], signals: dict[str, list[HealthSignal]]) -> None:
    """Throttling on one node while its peers run at full clocks is that node's fault: raise warning to error."""
    smi_hosts = [h for h, k in readings.items() if "nvidia-smi" in k]
    if len(smi_hosts) < 3:
        return
    for kind in _PEER_ESCALATE:
        hosts = {h for h in smi_hosts if any(s.kind == kind for s in signals.get(h, []))}
        if hosts and len(hosts) * 4 <= len(smi_hosts):
            for h in hosts:
                for s in signals[h]:
                    if s.kind == kind and s.severity == "warning":
                        s.severity = "error"
                        s.meaning += f"; only {len(hosts)} of {len(smi_hosts)} nodes show it"


def _suspects(nodes: list[NodeHealth]) -> list[HealthSuspect]:
    weight = {"fatal": 1.0, "error": 0.8, "warning": 0.4, "info": 0.0}
    out = []
    for n in nodes:
        if n.verdict == "healthy" or not n.signals:
            continue
        kinds = {s.kind for s in n.signals if SEVERITY_RANK[s.severity] >= 2}
        score = min(1.0, weight[n.signals[0].severity] + 0.05 * max(0, len(kinds) - 1))
        more = len(n.signals) - 1
        out.append(HealthSuspect(host=n.host, score=round(score, 3),
                                 reason=n.reason + (f" (+{more} more signal(s))" if more else ""),
                                 files=[f"{s.file}:{s.line}" for s in n.signals[:3]]))
    return sorted(out, key=lambda s: (-s.score, s.host))


__all__ = ["HealthFindings", "HealthSuspect", "NodeHealth", "analyze_health", "probe_kind"]
