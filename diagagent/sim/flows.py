"""Network flow records (BUNDLE.md flows/): per iteration, pipeline point-to-point between adjacent stages and a
data-parallel ring all-reduce burst, plus rendezvous, storage, monitoring and another tenant's job.

Vectorized with numpy (a 1,024-node hour is millions of rows); `flow_file(...)` returns gzip'd CSV or Parquet.
"""

from __future__ import annotations

import gzip
import hashlib
import io
from dataclasses import dataclass, field

import numpy as np

from diagagent.sim.frameworks import _SHAPES
from diagagent.sim.incident import Incident
from diagagent.sim.pipeline import DP_LEN, OPT_LEN, simulate_pipeline
from diagagent.sim.plan import Plan

PAIR_RATE = 45e9  # bytes/s of a pipeline transfer between two hosts (all rails)
CHANNEL_RATE = 22e9  # bytes/s of one NCCL channel's flow on a ring edge during the all-reduce burst
PER_PHASE = 2  # flow records per pipeline pair per phase (the collector aggregates micro-batches)


def np_rng(plan: Plan, purpose: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{plan.seed}|{plan.fault.id}|{purpose}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@dataclass
class FlowSet:
    """Flow records as parallel arrays; IPs are indexes into `ips`."""

    ips: list[str]
    parts: list[tuple[np.ndarray, ...]] = field(default_factory=list)

    def ip(self, address: str) -> int:
        self.ips.append(address)
        return len(self.ips) - 1

    def add(
        self,
        start: np.ndarray,
        dur: np.ndarray,
        src: np.ndarray,
        dst: np.ndarray,
        nbytes: np.ndarray,
        dst_port: int,
        rng: np.random.Generator,
    ) -> None:
        n = start.size
        if n == 0:
            return
        src_port = rng.integers(32768, 61000, n) if dst_port != 4791 else rng.integers(49152, 65535, n)
        self.parts.append(
            (
                start.ravel(),
                (start + dur).ravel(),
                src.ravel().astype(np.int32),
                dst.ravel().astype(np.int32),
                src_port.astype(np.int32),
                np.full(n, dst_port, np.int32),
                np.maximum(nbytes.ravel(), 64).astype(np.int64),
            )
        )


def _iteration_axes(
    plan: Plan, inc: Incident, first: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, nominal duration, slowed?) per iteration with traffic from index `first`, the in-progress one
    last if cut."""
    sched = inc.schedule
    starts, ends = np.array(sched.starts[first:], float), np.array(sched.ends[first:], float)
    slowed = np.zeros(starts.size, bool)
    if inc.slow_from is not None:
        slowed[max(0, inc.slow_from - first) :] = True
    nominal = ends - starts
    if slowed.any():
        nominal[slowed] = plan.iter_s
    if inc.outcome != "slow" and inc.iteration is not None and inc.stage == "training":
        starts = np.append(starts, sched.next_start)
        ends = np.append(ends, sched.next_start + plan.iter_s)
        nominal = np.append(nominal, plan.iter_s)
        slowed = np.append(slowed, False)
    return starts, ends, nominal, slowed


def _training(
    fs: FlowSet, plan: Plan, inc: Incident, axes: tuple, rng: np.random.Generator, complete: int
) -> None:
    """Pipeline sends between adjacent stages and each stage's gradient all-reduce ring, from the causal model.

    A ring edge starts when both ends are ready (their backward done); a congested link carries the same bytes
    more slowly, on the all-reduce and on the pipeline."""
    lay = plan.layout
    starts, ends, nominal, slowed = axes
    factor = _compute_factor(plan, inc, slowed)
    times = simulate_pipeline(factor, lay.pp, plan.microbatches if lay.pp > 1 else 2, PER_PHASE)
    nps = lay.nodes_per_stage
    link = np.ones(factor.shape)
    for node, slower in inc.slow_link.items():
        link[slowed, node] = slower
    # A slowed iteration lasts what the schedule says: its modeled length (compute, the sync on the slowest link,
    # the optimizer step) is stretched over the scheduled span, so the sync burst ends where the truth's iteration
    # ends. A healthy one models to exactly 1 (FWD, BWD, DP_LEN and OPT_LEN add up to the nominal span).
    model_len = times.ready.max(axis=1) + DP_LEN * link.max(axis=1) + OPT_LEN
    nominal = np.where(slowed, (ends - starts) / model_len, nominal)
    t0, span = starts[:, None], nominal[:, None]
    hidden = _SHAPES[plan.model][0]
    act = plan.micro_batch * plan.seq_len * hidden * 2.0  # one micro-batch's activations (or their gradients)
    for send in times.sends:
        src = np.arange(send.stage * nps, (send.stage + 1) * nps)
        dst = src + nps if send.forward else src - nps
        begin = t0 + send.start * span + rng.normal(0, 0.0005, send.start.shape)
        dur = act / PAIR_RATE * np.maximum(link[:, src], link[:, dst]) * rng.uniform(0.95, 1.05, begin.shape)
        fs.add(
            begin,
            dur,
            np.broadcast_to(src, begin.shape),
            np.broadcast_to(dst, begin.shape),
            act * rng.uniform(0.98, 1.02, begin.shape),
            4791,
            rng,
        )
    if nps < 2 or complete == 0:
        return
    src = np.arange(lay.nodes)
    dst = (src // nps) * nps + (src % nps + 1) % nps
    ready = times.ready[:complete]
    t0, span = t0[:complete], span[:complete]
    begin = t0 + np.maximum(ready[:, src], ready[:, dst]) * span
    dur = DP_LEN * span * np.maximum(link[:complete, src], link[:complete, dst])
    size = CHANNEL_RATE * DP_LEN * span * np.ones((1, src.size))
    for channel in range(2):
        fs.add(
            begin + channel * 0.0005 + rng.normal(0, 0.001, begin.shape),
            dur * rng.uniform(0.98, 1.02, dur.shape),
            np.broadcast_to(src, begin.shape),
            np.broadcast_to(dst, begin.shape),
            size * rng.uniform(0.995, 1.005, begin.shape),
            4791,
            rng,
        )


def _compute_factor(plan: Plan, inc: Incident, slowed: np.ndarray) -> np.ndarray:
    """Iterations x nodes: how much longer each node computes (the straggler once slowed, the mild one always)."""
    out = np.ones((slowed.size, plan.layout.nodes))
    for node, factor in inc.mild_slow_nodes.items():
        out[:, node] = factor
    for node, factor in inc.slow_nodes.items():
        out[slowed, node] = factor
    return out


def _background(
    fs: FlowSet, plan: Plan, inc: Incident, t_end: float, rng: np.random.Generator, t_stop: float
) -> None:
    """Rendezvous at init, checkpoint load and saves, data reads, monitoring scrapes, another tenant's job."""
    lay = plan.layout
    sched = inc.schedule
    nodes = np.arange(lay.nodes)
    storage = np.array([fs.ip(f"10.9.0.{11 + i}") for i in range(8)])
    monitor = fs.ip("10.9.1.5")
    t0, t_train = sched.t_start, sched.t_train
    fs.add(
        t0 + rng.uniform(2, 20, lay.nodes),
        rng.uniform(0.01, 0.2, lay.nodes),
        nodes,
        np.zeros(lay.nodes),
        rng.integers(2000, 60000, lay.nodes),
        29500,
        rng,
    )
    if inc.stage != "init" or inc.t_fault > t0 + (t_train - t0) * 0.55:
        ckpt = plan.params_b * 1e9 * 14 / lay.nodes
        ld = t0 + (t_train - t0) * 0.5 + rng.uniform(0, 5, lay.nodes)
        fs.add(
            ld,
            rng.uniform(8, 20, lay.nodes),
            storage[nodes % storage.size],
            nodes,
            ckpt * rng.uniform(0.99, 1.01, lay.nodes),
            988,
            rng,
        )
    for begin, end in sched.saves.values():
        ckpt = plan.params_b * 1e9 * 14 / lay.nodes
        fs.add(
            begin + rng.uniform(0.5, 2, lay.nodes),
            (end - begin) * rng.uniform(0.6, 0.9, lay.nodes),
            nodes,
            storage[(nodes + 3) % storage.size],
            ckpt * rng.uniform(0.99, 1.01, lay.nodes),
            988,
            rng,
        )
    if inc.stage == "checkpoint":
        fs.add(
            sched.next_start + rng.uniform(0.5, 2, lay.nodes),
            np.full(lay.nodes, max(1.0, inc.t_fault - sched.next_start)),
            nodes,
            storage[(nodes + 3) % storage.size],
            rng.uniform(1e9, 4e9, lay.nodes),
            988,
            rng,
        )
    if t_stop > t_train:
        period = 30.0
        ticks = np.arange(t_train, t_stop, period)
        start = ticks[:, None] + rng.uniform(0, period, (1, lay.nodes))
        fs.add(
            start,
            rng.uniform(0.05, 0.8, start.shape),
            np.broadcast_to(storage[nodes % storage.size], start.shape),
            np.broadcast_to(nodes, start.shape),
            rng.uniform(2e7, 2e8, start.shape),
            988,
            rng,
        )
    scrape = np.arange(t0 - 60.0, t_end, 15.0)
    start = scrape[:, None] + (nodes[None, :] % 50) * 0.01
    fs.add(
        start,
        np.full(start.shape, 0.004),
        np.full(start.shape, monitor),
        np.broadcast_to(nodes, start.shape),
        rng.integers(3000, 9000, start.shape),
        9100,
        rng,
    )
    _other_tenant(fs, plan, t0 - 900.0, t_end, rng)


def _other_tenant(fs: FlowSet, plan: Plan, t_from: float, t_to: float, rng: np.random.Generator) -> None:
    """Another job on the same fabric: its own hosts, ring all-reduce at its own period."""
    count = int(min(64, max(4, plan.layout.nodes // 4)))
    used = set(plan.layout.ips)
    ips = []
    n = 1
    while len(ips) < count:
        ip = f"10.{64 + (9000 + n) // 250}.{((9000 + n) % 250) // 50}.{((9000 + n) % 50) + 10}"
        if ip not in used:
            ips.append(fs.ip(ip))
        n += 1
    hosts = np.array(ips)
    period = plan.iter_s * float(rng.uniform(0.55, 1.7))
    ticks = np.arange(t_from + float(rng.uniform(0, period)), t_to, period)
    src = np.broadcast_to(hosts, (ticks.size, count))
    dst = np.broadcast_to(np.roll(hosts, -1), (ticks.size, count))
    begin = ticks[:, None] + 0.8 * period + rng.normal(0, 0.003, src.shape)
    fs.add(begin, np.full(src.shape, 0.12 * period), src, dst, rng.uniform(5e9, 6e9, src.shape), 4791, rng)


def flow_file(plan: Plan, inc: Incident, t_end: float, since: float | None = None) -> tuple[str, bytes]:
    """All flow records of the bundle (those of training iterations from `since` on, when given), sorted by start:
    (file name, content), gzip'd CSV or Parquet."""
    import pyarrow as pa

    fs = FlowSet(list(plan.layout.ips))
    rng = np_rng(plan, "flows")
    stop = inc.t_fault if inc.outcome != "slow" else t_end
    if inc.stage != "init":
        first = 0 if since is None else sum(1 for end in inc.schedule.ends if end < since)
        _training(fs, plan, inc, _iteration_axes(plan, inc, first), rng, inc.schedule.done - first)
    _background(fs, plan, inc, t_end, rng, stop)
    cols = [np.concatenate([p[i] for p in fs.parts]) for i in range(7)]
    fs.parts.clear()
    job_traffic = cols[0] < stop
    keeps_going = (cols[5] == 9100) | (
        (cols[5] == 4791) & (cols[2] >= plan.layout.nodes)
    )  # monitoring, tenant
    keep = (job_traffic | keeps_going) & (cols[0] < t_end)
    if since is not None:
        keep &= cols[0] >= since
    order = np.argsort(np.where(keep, cols[0], np.inf), kind="stable")[: int(keep.sum())]
    cols = [c[order] for c in cols]
    ip_table = pa.array(fs.ips, pa.string())
    table = pa.table(
        {
            "start": np.round(cols[0], 6),
            "end": np.round(np.maximum(cols[1], cols[0]), 6),
            "src_ip": ip_table.take(pa.array(cols[2])),
            "dst_ip": ip_table.take(pa.array(cols[3])),
            "src_port": cols[4],
            "dst_port": cols[5],
            "bytes": cols[6],
            "packets": np.maximum(1, cols[6] // 4096),
        }
    )
    buf = io.BytesIO()
    if plan.env.flow_format == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, buf, compression="zstd", row_group_size=1 << 20)
        return "flows.parquet", buf.getvalue()
    import pyarrow.csv as pcsv

    buf.write((",".join(table.column_names) + "\n").encode())
    pcsv.write_csv(table, buf, pcsv.WriteOptions(include_header=False, quoting_style="none"))
    return "flows.csv.gz", gzip.compress(buf.getvalue(), compresslevel=3, mtime=0)
