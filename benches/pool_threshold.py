"""Bench: where starting worker processes pays: the cost of a pool's first chunk against each analyzer's rate.

Times, in one run: a spawned pool of one process per core running a tiny chunk of log work (what starting the pool
costs, imports included; wall seconds), and each analyzer's file work in this process over a simulated bundle (MB/s
per core, from CPU seconds). The break-even size of an analyzer is where its one-process time saved by the other cores
equals that cost; its threshold (PARALLEL_*_BYTES) should be a few times past it.

    python benches/pool_threshold.py --nodes 256 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from diagagent.analysis.health import _ProbeJob, _read_probe_files
    from diagagent.analysis.logscan import ScanJob, scan_files
    from diagagent.analysis.workers import Workers
    from diagagent.analysis.xid import load_xid_catalog
    from diagagent.sim import simulate
    from diagagent.telemetry import Bundle

    with tempfile.TemporaryDirectory(prefix="diagagent-threshold-") as tmp:
        root = Path(tmp) / "job"
        simulate(root, "gpu_ecc_uncorrectable", nodes=args.nodes, seed=1, minutes=60, compress=False)
        b = Bundle.open(root)
        job = b.job
        names = [n.host for n in job.nodes]
        scan = ScanJob(str(root), b.log_files, dict(job.rank_to_host), dict(job.host_to_ranks), names, b.year)
        probes = _ProbeJob(b.view(), b.probe_files, load_xid_catalog(), None, True)
        sizes = {"logs": sum((root / f.file).stat().st_size for f in b.log_files),
                 "probes": sum((root / f.file).stat().st_size for f in b.probe_files)}
        seconds = {}
        t0 = time.process_time()  # CPU seconds: the rate of one core, whatever else the machine runs
        scan_files(scan)
        seconds["logs"] = time.process_time() - t0
        t0 = time.process_time()
        _read_probe_files(probes)
        seconds["probes"] = time.process_time() - t0
        tiny = [ScanJob(str(root), b.log_files[:1], {}, {}, names, b.year)] * Workers().count
        pool = Workers()
        t0 = time.perf_counter()
        pool.map(scan_files, tiny)
        start_s = time.perf_counter() - t0
        pool.close()
    cores = pool.count
    report = {"cores": cores, "pool_start_s": round(start_s, 2)}
    for part in ("logs", "probes"):
        rate = sizes[part] / seconds[part]  # bytes/s in one process
        # one process: size / rate; `cores` processes: size / (rate * cores) + start
        break_even = start_s * rate * cores / (cores - 1) if cores > 1 else float("inf")
        report[part] = {"mb": round(sizes[part] / 1e6, 1), "seconds": round(seconds[part], 2),
                        "mb_per_s": round(rate / 1e6, 1), "break_even_mb": round(break_even / 1e6, 1)}
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
