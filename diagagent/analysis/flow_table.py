"""Job recognition over a bundle's flow records: this job's flows (both ends on its nodes) are kept in one
compact columnar table; other tenants' flows and external ones (storage, control plane) are only counted, and
records with absurd values (no time, a time past year 5000, bytes over a petabyte) are skipped and counted per file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import polars as pl
from pydantic import BaseModel

from diagagent.analysis.flow_structure import components
from diagagent.analysis.guard import Budget
from diagagent.analysis.workers import Workers
from diagagent.telemetry import Bundle, ReadIssue
from diagagent.telemetry.readers import iter_flow_batches

MAX_EPOCH_S = 1e11  # a flow time past this (year 5138), or before its negative, is no time
MAX_FLOW_BYTES = 1e15  # a petabyte in one flow record is no measurement


class FlowCounts(BaseModel):
    """How the bundle's flow records split up."""

    total: int = 0
    job: int = 0  # both ends on this job's nodes
    external: int = 0  # one end on this job's nodes (storage, control plane, another tenant's service)
    foreign: int = 0  # neither end on this job's nodes: other tenants
    malformed: int = 0  # no usable time, end before start, absurd time, or negative or absurd bytes


@dataclass(frozen=True)
class FlowTable:
    """This job's flows: `frame` has start, end (epoch s), src, dst (index into `hosts`) and bytes."""

    hosts: list[str]
    frame: pl.DataFrame
    counts: FlowCounts
    capture_start: float | None  # first and last moment any flow record (of any tenant) covers
    capture_end: float | None
    recognition: str  # how the job's nodes were recognized, in words


def _job_addresses(bundle: Bundle) -> dict[str, str]:
    """IP -> host from job.yaml (`ip`, plus an `ips` list where a node has several NICs)."""
    out: dict[str, str] = {}
    for node in bundle.job.nodes:
        extra = (node.model_extra or {}).get("ips") or []
        for ip in [node.ip, *(extra if isinstance(extra, list) else [])]:
            if ip:
                out[str(ip).strip()] = node.host
    return out


def _batches(bundle: Bundle, issues: list[ReadIssue], budget: Budget | None = None, files: list[str] | None = None,
             first: bool = True) -> Iterator[tuple[str, pyarrow.RecordBatch]]:  # noqa: F821
    """(file, batch) over every flow file (or `files`); stops early (and says where in `budget`) once the budget is
    spent, after the first batch (when `first`: these are the bundle's first files)."""
    files = bundle.flow_files if files is None else files
    for i, rel in enumerate(files):
        for n, batch in enumerate(iter_flow_batches(bundle.root / rel, rel, issues)):
            if not first and budget is not None and budget.spent():
                budget.stop(f"{rel} (batch {n + 1})", len(files) - i)
                return
            first = False
            yield rel, batch


def _infer_addresses(bundle: Bundle) -> tuple[dict[str, str], str]:
    """Without IPs in job.yaml: LLMPrism's union-find over the flow graph. Hubs (storage, control plane: far
    more peers than the typical address) are left out first; the component carrying the most flows is the job,
    less the addresses with far fewer flows than its typical member."""
    pairs: Counter[tuple[str, str]] = Counter()
    for _, batch in _batches(bundle, []):  # read problems are reported by the second pass
        frame = pl.from_arrow(batch).group_by("src_ip", "dst_ip").len()
        for src, dst, n in frame.iter_rows():
            if src and dst and src != dst:
                pairs[(src, dst)] += n
    peers: dict[str, set[str]] = {}
    for src, dst in pairs:
        peers.setdefault(src, set()).add(dst)
        peers.setdefault(dst, set()).add(src)
    if not peers:
        return {}, "no flows between distinct addresses"
    names = sorted(peers)
    index = {ip: i for i, ip in enumerate(names)}
    hub_limit = max(8.0, 4.0 * float(np.median([len(p) for p in peers.values()])))
    linked = [(index[a], index[b]) for a, b in pairs if max(len(peers[a]), len(peers[b])) <= hub_limit]
    groups = components(len(names), linked)
    if not groups:
        return {}, "no connected group of addresses"
    group_of = {i: gi for gi, g in enumerate(groups) for i in g}
    weight: Counter[int] = Counter()
    flows_of: Counter[str] = Counter()
    for (src, dst), n in pairs.items():
        gi = group_of.get(index[src])
        if gi is not None and gi == group_of.get(index[dst]):
            weight[gi] += n
            flows_of[src] += n
            flows_of[dst] += n
    if not weight:
        return {}, "no connected group of addresses"
    members = [names[i] for i in groups[weight.most_common(1)[0][0]]]
    typical = float(np.median([flows_of[ip] for ip in members]))
    # a storage or service address that talks to the job now and then is not one of its nodes
    ips = [ip for ip in members if flows_of[ip] >= 0.1 * typical]
    return (
        {ip: ip for ip in ips},
        (f"job.yaml names no node IPs: the job is taken to be the {len(ips)} addresses of the connected "
         f"group carrying the most flows (union-find over the flow graph, hubs left out)"),
    )


PARALLEL_FLOW_BYTES = 64 << 20  # flow files past this many bytes are read in chunks, by several processes
CHUNK_FLOW_BYTES = 16 << 20  # ... of about this many bytes of whole files each


@dataclass
class _FlowRead:
    """This job's flows in some files, and what was counted there."""

    chunks: list[pl.DataFrame]
    counts: FlowCounts
    lo: float
    hi: float
    malformed: Counter[str]
    issues: list[ReadIssue]
    stopped: tuple[str, int] | None = None  # the deadline passed: where reading stopped, files left unread


@dataclass
class _FlowJob:
    bundle: Bundle  # a view: its own issues
    files: list[str]
    addresses: dict[str, str]
    hosts: list[str]
    deadline: float | None  # epoch seconds: no batch is started after it (but the bundle's first)
    first: bool


def _read_flow_files(job: _FlowJob) -> _FlowRead:
    """Read one chunk of flow files: keep this job's flows (compactly), count the rest."""
    import time

    budget = Budget(None if job.deadline is None else max(0.0, job.deadline - time.time()))
    read = _read_flows(job.bundle, job.files, job.addresses, job.hosts, budget, first=job.first)
    if budget.hit:
        read.stopped = (budget.stopped_at or "", budget.unread)
    return read


def _read_flows(bundle: Bundle, files: list[str], addresses: dict[str, str], hosts: list[str],
                budget: Budget | None, first: bool = True) -> _FlowRead:
    import pyarrow as pa
    import pyarrow.compute as pc

    host_index = {h: i for i, h in enumerate(hosts)}
    ip_list = list(addresses)
    ip_values = pa.array(ip_list, type=pa.string())
    ip_to_host_index = np.array([host_index[addresses[ip]] for ip in ip_list] + [-1], dtype=np.int32)
    out = _FlowRead([], FlowCounts(), np.inf, -np.inf, Counter(), bundle.issues)
    counts = out.counts
    for rel, batch in _batches(bundle, bundle.issues, budget, files, first):
        n = batch.num_rows
        if not n:
            continue
        counts.total += n
        start = batch.column("start").to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        end = batch.column("end").to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        nbytes = pc.fill_null(batch.column("bytes"), -1.0).to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            usable = (np.abs(start) < MAX_EPOCH_S) & (np.abs(end) < MAX_EPOCH_S) & (end >= start) & \
                (nbytes >= 0) & (nbytes < MAX_FLOW_BYTES)
        out.malformed[rel] += int(n - usable.sum())
        if usable.any():
            out.lo, out.hi = min(out.lo, float(start[usable].min())), max(out.hi, float(end[usable].max()))
        src = ip_to_host_index[
            pc.fill_null(
                pc.index_in(pc.utf8_trim_whitespace(batch.column("src_ip")), value_set=ip_values), -1
            ).to_numpy(zero_copy_only=False)
        ]
        dst = ip_to_host_index[
            pc.fill_null(
                pc.index_in(pc.utf8_trim_whitespace(batch.column("dst_ip")), value_set=ip_values), -1
            ).to_numpy(zero_copy_only=False)
        ]
        ours = (src >= 0) & usable
        theirs = (dst >= 0) & usable
        job = ours & theirs & (src != dst)
        counts.job += int(job.sum())
        counts.external += int((ours ^ theirs).sum())
        counts.foreign += int((usable & (src < 0) & (dst < 0)).sum())
        out.chunks.append(
            pl.DataFrame(
                {"start": start[job], "end": end[job], "src": src[job], "dst": dst[job], "bytes": nbytes[job]}
            )
        )
    return out


def _read_all_flows(bundle: Bundle, addresses: dict[str, str], hosts: list[str], budget: Budget | None,
                    workers: Workers | None) -> _FlowRead:
    """Every flow file, in this process or (many bytes) in chunks of whole files by `workers`, merged in order."""
    files = bundle.flow_files
    size = sum(_size(bundle, rel) for rel in files) if workers is not None else 0
    parts = workers.chunks(size, len(files), PARALLEL_FLOW_BYTES, CHUNK_FLOW_BYTES) if workers is not None else 1
    if parts <= 1:
        return _read_flows(bundle, files, addresses, hosts, budget)
    step = -(-len(files) // parts)
    deadline = budget.deadline() if budget is not None else None
    jobs = [_FlowJob(bundle.view(), files[i:i + step], addresses, hosts, deadline, i == 0)
            for i in range(0, len(files), step)]
    whole = _FlowRead([], FlowCounts(), np.inf, -np.inf, Counter(), bundle.issues)
    for k, read in enumerate(workers.map(_read_flow_files, jobs)):  # type: ignore[union-attr]
        bundle.issues.extend(read.issues)
        whole.chunks.extend(read.chunks)
        for name in ("total", "job", "external", "foreign"):
            setattr(whole.counts, name, getattr(whole.counts, name) + getattr(read.counts, name))
        whole.lo, whole.hi = min(whole.lo, read.lo), max(whole.hi, read.hi)
        whole.malformed.update(read.malformed)
        if read.stopped is not None:
            if budget is not None:
                budget.stop(read.stopped[0], read.stopped[1] + max(0, len(files) - (k + 1) * step))
            break
    return whole


def _size(bundle: Bundle, rel: str) -> int:
    try:
        return (bundle.root / rel).stat().st_size
    except OSError:
        return 0


def read_job_flows(bundle: Bundle, budget: Budget | None = None, workers: Workers | None = None) -> FlowTable:
    """Stream every flow batch once, keep this job's flows (compactly), count the rest. Read problems and
    records skipped as malformed go to `bundle.issues`, per file. Many bytes of flows are read by `workers`."""
    addresses = _job_addresses(bundle)
    recognition = f"flows whose two ends are among the {len(addresses)} node IPs in job.yaml"
    if not addresses and bundle.flow_files:
        addresses, recognition = _infer_addresses(bundle)
    hosts = sorted(
        set(addresses.values()),
        key=lambda h: (bundle.job.hosts.index(h) if h in bundle.job.hosts else len(bundle.job.hosts), h),
    )
    read = _read_all_flows(bundle, addresses, hosts, budget, workers)
    counts, chunks, lo, hi, malformed = read.counts, read.chunks, read.lo, read.hi, read.malformed
    for rel, n in malformed.items():
        if n:
            counts.malformed += n
            bundle.issues.append(ReadIssue(file=rel, count=n, problem=(
                "flow records without a usable time or byte count (empty, end before start, a time past year 5000 "
                "or bytes negative or over a petabyte), skipped")))
    schema = {"start": pl.Float64, "end": pl.Float64, "src": pl.Int32, "dst": pl.Int32, "bytes": pl.Float64}
    frame = pl.concat(chunks, rechunk=True) if chunks else pl.DataFrame(schema=schema)
    capture_end = hi if np.isfinite(hi) else None
    if bundle.job.ended_at is not None:
        capture_end = max(capture_end or 0.0, bundle.job.ended_at.timestamp())
    return FlowTable(
        hosts=hosts,
        frame=frame.cast(schema),
        counts=counts,
        capture_start=lo if np.isfinite(lo) else None,
        capture_end=capture_end,
        recognition=recognition,
    )
