"""A small synthetic flow generator for the flow-analysis tests: a pp x dp grid of nodes training with
1F1B-like pipeline traffic and ring all-reduce bursts, with foreign tenants, storage, jitter and lost records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import yaml

T0 = 1_795_161_600.0  # 2026-11-20T08:00:00Z


@dataclass
class SynthSpec:
    """What to generate. Node n has dp coordinate n % dp and pp stage n // dp (Megatron order, tp = gpus)."""

    dp: int = 4
    pp: int = 2
    iterations: int = 30
    microbatches: int = 4
    fwd_s: float = 0.20  # forward time of one microbatch on one stage; backward is twice that
    optimizer_s: float = 0.05
    grad_bytes: float = 4e9  # gradient bytes per node all-reduced each iteration
    act_bytes: float = 64e6  # activation bytes per microbatch between stages
    link_bps: float = 25e9  # bytes per second of one node's port
    compute_jitter: float = 0.01  # relative, per node per iteration
    time_jitter_s: float = 0.0005  # exporter clock jitter on start and end
    drop: float = 0.0  # fraction of records lost
    merge_ring_steps: bool = False  # one record per edge per all-reduce instead of one per ring step
    straggler: str | None = None
    straggler_slowdown: float = 1.3
    straggler_from: int = 0
    slow_link_host: str | None = None
    slow_link_factor: float = 0.4
    hang_host: str | None = None
    hang_at: int | None = None
    tail_s: float = 0.0  # foreign traffic after the job's last flow (a hang leaves the capture running)
    pause_at: int | None = None  # the job pauses (a checkpoint save) before this iteration
    pause_s: float = 30.0
    foreign: bool = True
    declare_parallelism: bool = True
    seed: int = 1
    truth: dict = field(default_factory=dict)

    @property
    def nodes(self) -> int:
        return self.dp * self.pp

    def host(self, n: int) -> str:
        return f"node-{n:03d}"

    def ip(self, n: int) -> str:
        return f"10.0.{n // 250}.{n % 250 + 1}"


def generate(spec: SynthSpec) -> dict[str, np.ndarray]:
    """Flow records as columns (start, end, src_ip, dst_ip, bytes), and the truth in `spec.truth`."""
    rng = np.random.default_rng(spec.seed)
    dp, pp, mb = spec.dp, spec.pp, spec.microbatches
    idx = {spec.host(n): n for n in range(spec.nodes)}
    rows: list[tuple[float, float, int, int, float]] = []  # node indices; foreign ips are negative

    def bw(a: int, b: int) -> float:
        slow = idx.get(spec.slow_link_host or "", -1)
        return spec.link_bps * (spec.slow_link_factor if slow in (a, b) else 1.0)

    def emit(s: float, a: int, b: int, nbytes: float) -> float:
        end = s + nbytes / bw(a, b)
        rows.append((s, end, a, b, nbytes))
        return end

    speed = np.ones(spec.nodes)
    t = T0 + 1.0
    ends = [t]
    hang = idx.get(spec.hang_host or "", -1)
    for it in range(spec.iterations):
        if it == spec.pause_at:
            t += spec.pause_s
        if spec.straggler and it == spec.straggler_from:
            speed[idx[spec.straggler]] = spec.straggler_slowdown
        mult = speed * rng.lognormal(0.0, spec.compute_jitter, spec.nodes)
        hung = hang >= 0 and spec.hang_at is not None and it >= spec.hang_at
        ready = np.zeros(spec.nodes)
        for d in range(dp):  # one pipeline per dp column: all forwards, then all backwards (GPipe-like)
            col = [p * dp + d for p in range(pp)]
            free = np.full(pp, t)
            arrive = np.full(mb, t)
            for p, n in enumerate(col):
                if hung and n == hang:
                    free[p:] = np.inf
                    break
                for m in range(mb):
                    free[p] = max(free[p], arrive[m]) + spec.fwd_s * mult[n]
                    arrive[m] = emit(free[p], n, col[p + 1], spec.act_bytes) if p + 1 < pp else free[p]
            back = arrive.copy()
            for p in range(pp - 1, -1, -1):
                n = col[p]
                if not (np.isfinite(free[p]) and np.isfinite(back).all()):
                    ready[n], back[:] = np.inf, np.inf
                    continue
                for m in range(mb):
                    free[p] = max(free[p], back[m]) + 2 * spec.fwd_s * mult[n]
                    back[m] = emit(free[p], n, col[p - 1], spec.act_bytes) if p > 0 else free[p]
                ready[n] = free[p]
        group_end = []
        for p in range(pp):  # ring all-reduce in each dp group, step by step
            ring = [p * dp + d for d in range(dp)]
            if dp == 1:
                group_end.append(ready[ring[0]])
                continue
            chunk = spec.grad_bytes / dp
            done = [max(ready[ring[i]], ready[ring[(i + 1) % dp]]) for i in range(dp)]
            first = list(done)
            for step in range(2 * (dp - 1)):
                prev = list(done)
                for i in range(dp):
                    a, b = ring[i], ring[(i + 1) % dp]
                    s = max(prev[i], prev[i - 1]) if step else prev[i]
                    if not np.isfinite(s):
                        done[i] = np.inf
                        continue
                    if spec.merge_ring_steps:
                        done[i] = s + chunk / bw(a, b)
                    else:
                        done[i] = emit(s, a, b, chunk)
            if spec.merge_ring_steps:
                rows.extend(
                    (first[i], done[i], ring[i], ring[(i + 1) % dp], chunk * 2 * (dp - 1))
                    for i in range(dp)
                    if np.isfinite(done[i])
                )
            group_end.append(max(done))
        if hung:
            break
        t = max(group_end) + spec.optimizer_s
        ends.append(max(group_end))
    job_end = max(r[1] for r in rows)
    pause = {spec.pause_at: spec.pause_s} if spec.pause_at is not None else {}
    spec.truth = {
        "timeline": [
            {"iteration": i, "start": ends[i] + pause.get(i, 0.0), "end": ends[i + 1]}
            for i in range(len(ends) - 1)
        ],
        "dp_groups": [sorted(spec.host(p * dp + d) for d in range(dp)) for p in range(pp)] if dp > 1 else [],
        "pp_groups": [sorted(spec.host(p * dp + d) for p in range(pp)) for d in range(dp)] if pp > 1 else [],
        "job_end": job_end,
    }
    if spec.foreign:
        _add_foreign(rows, rng, spec, job_end + spec.tail_s)
    arr = np.array(rows, dtype=np.float64)
    keep = rng.random(len(arr)) >= spec.drop
    arr = arr[keep]
    noise = rng.normal(0.0, spec.time_jitter_s, (len(arr), 2))
    start, end = arr[:, 0] + noise[:, 0], np.maximum(arr[:, 1] + noise[:, 1], arr[:, 0] + noise[:, 0])
    ip = np.array(
        [spec.ip(n) for n in range(spec.nodes)] + [f"10.9.{k // 250}.{k % 250 + 1}" for k in range(200)]
    )
    src, dst = arr[:, 2].astype(int), arr[:, 3].astype(int)
    return {
        "start": start,
        "end": end,
        "src_ip": ip[np.where(src >= 0, src, spec.nodes - src - 1)],
        "dst_ip": ip[np.where(dst >= 0, dst, spec.nodes - dst - 1)],
        "bytes": arr[:, 4].round(),
    }


def _add_foreign(rows: list, rng: np.random.Generator, spec: SynthSpec, until: float) -> None:
    """Another tenant's training job (its own ring), storage traffic and a control-plane star on this job."""
    t, period = T0, 0.9
    other = [-(k + 1) for k in range(6)]
    while t < until:
        for i, a in enumerate(other):
            rows.append((t + 0.5, t + 0.7, a, other[(i + 1) % len(other)], 2e9))
        t += period
    storage = -100
    for n in range(spec.nodes):
        for k in range(3):
            s = T0 + 2 + k * 7.3 + n * 0.01
            rows.append((s, s + 0.8, n, storage, 5e8))
            rows.append((s + 1, s + 1.01, storage, n, 4e3))
    for n in range(1, spec.nodes):
        for s in np.arange(T0 + 1, until, 5.0):
            rows.append((s, s + 0.001, n, 0, 300.0))
    for _ in range(50):
        a, b = rng.integers(-199, -7, 2)
        s = rng.uniform(T0, until)
        rows.append((s, s + rng.uniform(0.01, 1), int(a), int(b), float(rng.integers(1e3, 1e8))))


def write_bundle(root: Path, spec: SynthSpec, fmt: str = "csv") -> Path:
    """A bundle directory with job.yaml and flows/ for `spec`; the truth stays in `spec.truth`."""
    cols = generate(spec)
    root.mkdir(parents=True, exist_ok=True)
    job = {
        "job_id": "synth",
        "framework": "megatron",
        "status": "hung" if spec.hang_host else "slow",
        "gpus_per_node": 8,
        "nodes": [
            {"host": spec.host(n), "ip": spec.ip(n), "ranks": list(range(8 * n, 8 * n + 8))}
            for n in range(spec.nodes)
        ],
    }
    if spec.declare_parallelism:
        job["parallelism"] = {"tp": 8, "pp": spec.pp, "dp": spec.dp, "cp": 1, "ep": 1}
    (root / "job.yaml").write_text(yaml.safe_dump(job, sort_keys=False))
    (root / "flows").mkdir(exist_ok=True)
    table = pa.table(cols)
    if fmt == "parquet":
        pq.write_table(table, root / "flows" / "flows.parquet")
    else:
        pcsv.write_csv(table, root / "flows" / "flows.csv")
    return root


def test_generator_builds_the_grid_and_truth(tmp_path: Path) -> None:
    spec = SynthSpec(dp=3, pp=2, iterations=5)
    cols = generate(spec)
    assert len(spec.truth["timeline"]) == 5
    assert spec.truth["dp_groups"] == [
        ["node-000", "node-001", "node-002"],
        ["node-003", "node-004", "node-005"],
    ]
    assert spec.truth["pp_groups"][0] == ["node-000", "node-003"]
    assert (cols["end"] >= cols["start"]).all()
    assert {"10.0.0.1", "10.0.0.6"} <= set(cols["src_ip"].tolist())


def test_straggler_makes_iterations_longer() -> None:
    base, slow = (
        SynthSpec(dp=4, pp=1, iterations=6),
        SynthSpec(dp=4, pp=1, iterations=6, straggler="node-002"),
    )
    generate(base)
    generate(slow)
    dur = [np.mean([x["end"] - x["start"] for x in s.truth["timeline"]]) for s in (base, slow)]
    assert dur[1] > dur[0] * 1.1
