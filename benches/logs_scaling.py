"""Bench: the log analysis over 0.25 to 4 GB of logs, on a local process pool and as Ray tasks on a local Ray.

Simulates one job (default 32 nodes x 8 GPUs, an uncorrectable ECC error, uncompressed), then for each size pads
every rank log that prints progress with copies of its own healthy progress block (inserted before its first
progress line, so the job's real progress still ends it) and runs `analyze_logs` in a child process: once with the
local pool (one process per core), once with `DIAGAGENT_RAY_ADDRESS=local` semantics (a Ray instance started in
the child). Reports seconds, MB/s per core used (a bundle under PARALLEL_BYTES is one chunk: one core), CPU seconds
of the driver and of the pool's workers, the peak RSS of the driver and of the largest worker, and whether both
gave the same findings. The padded bundle is deleted after each size.

    python benches/logs_scaling.py --sizes 0.25 0.5 1 2 4 --json
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROGRESS = b" iteration "


def pad(base: Path, out: Path, gb: float) -> float:
    """Copy `base` to `out`, padding the rank logs that print progress up to about `gb` GB of logs in all."""
    shutil.copytree(base, out)
    logs = sorted(p for p in (out / "logs").rglob("*.log"))
    total = sum(p.stat().st_size for p in logs)
    blocks = {}
    for p in logs:
        lines = p.read_bytes().splitlines(keepends=True)
        progress = [ln for ln in lines if PROGRESS in ln]
        if progress:
            blocks[p] = (lines, progress)
    block_bytes = sum(sum(len(ln) for ln in prog) for _, prog in blocks.values())
    copies = max(0, int((gb * 1e9 - total) / block_bytes)) if block_bytes else 0
    for p, (lines, progress) in blocks.items():
        first = next(i for i, ln in enumerate(lines) if PROGRESS in ln)
        block = b"".join(progress)
        with p.open("wb") as f:
            f.writelines(lines[:first])
            for _ in range(copies):
                f.write(block)
            f.writelines(lines[first:])
    return sum(p.stat().st_size for p in logs) / 1e9


def child(bundle: str, mode: str) -> None:
    """In a fresh process: the log analysis, on the local pool or on a local Ray instance."""
    from diagagent.analysis.events import analyze_logs
    from diagagent.analysis.workers import Workers, workers_for
    from diagagent.telemetry import Bundle

    runner = Workers() if mode == "pool" else workers_for(ray_address="local")
    t0 = time.perf_counter()
    if mode == "ray":
        runner._connect()  # Ray's own start (once per cluster, not per diagnosis) is reported apart
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Bundle.open(bundle) as b:
        f = analyze_logs(b, None, runner=runner)
    seconds = time.perf_counter() - t0
    if mode == "ray":
        import ray

        ray.shutdown()
    runner.close()
    cores = runner.count
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    answer = [(e.id, e.role, e.count) for e in f.events[:20]] + [n.host for n in f.nodes[:5]]
    from diagagent.analysis.logscan import CHUNK_BYTES, PARALLEL_BYTES, log_bytes

    with Bundle.open(bundle) as b:
        chunks = Workers().chunks(log_bytes(b), len(b.log_files), PARALLEL_BYTES, CHUNK_BYTES)
    print(json.dumps({"seconds": round(seconds, 2), "cores": min(cores, chunks), "startup_s": round(startup, 2),
                      "chunks": chunks, "driver_cpu_s": round(own.ru_utime + own.ru_stime, 1),
                      "workers_cpu_s": round(kids.ru_utime + kids.ru_stime, 1),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "worker_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
                      "answer": answer}))


def run(bundle: Path, mode: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(bundle), mode], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.25, 0.5, 1, 2, 4], help="GB of logs")
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--modes", nargs="+", default=["pool", "ray"], choices=["pool", "ray"])
    ap.add_argument("--dir", type=Path, default=None, help="where to write the bundles (default: a temp dir)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    from diagagent.sim import simulate

    rows = []
    with tempfile.TemporaryDirectory(prefix="diagagent-scaling-", dir=args.dir) as tmp:
        base = Path(tmp) / "base"
        simulate(base, "gpu_ecc_uncorrectable", nodes=args.nodes, seed=1, minutes=60, compress=False)
        for gb in args.sizes:
            bundle = Path(tmp) / f"job-{gb}"
            real_gb = pad(base, bundle, gb)
            row: dict = {"gb": round(real_gb, 3)}
            for mode in args.modes:
                r = run(bundle, mode)
                row[mode] = {"seconds": r["seconds"], "cores": r["cores"], "startup_s": r["startup_s"],
                             "chunks": r["chunks"], "driver_cpu_s": r["driver_cpu_s"],
                             "workers_cpu_s": r["workers_cpu_s"],
                             "mb_per_s_per_core": round(real_gb * 1e3 / r["seconds"] / r["cores"], 1),
                             "peak_rss_mb": r["peak_rss_mb"], "worker_peak_rss_mb": r["worker_peak_rss_mb"]}
                row.setdefault("answers", []).append(r["answer"])
            answers = row.pop("answers")
            row["same_answer"] = all(a == answers[0] for a in answers)
            rows.append(row)
            shutil.rmtree(bundle)
            print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'GB':>6} " + " ".join(f"{m + ' s':>8} {m + ' MB/s/core':>16} {m + ' RSS MB':>12}" for m in args.modes)
          + "  same")
    for row in rows:
        print(f"{row['gb']:>6} " + " ".join(f"{row[m]['seconds']:>8} {row[m]['mb_per_s_per_core']:>16} "
                                            f"{max(row[m]['peak_rss_mb'], row[m]['worker_peak_rss_mb']):>12}"
                                            for m in args.modes) + f"  {row['same_answer']}")


if __name__ == "__main__":
    main()
