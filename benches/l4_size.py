"""Bench: an L4-size job (79 nodes x 8 GPUs = 632 ranks, every rank logging its progress, about 12 GB of logs)
diagnosed end to end, against `cat` and `grep -c error` over the same files in the same run.

Simulates the bundle into a temp dir (deleted after; `--gb` scales the logs by the job's duration), then measures:
`cat` and `grep -c error` over its log files; the log scan alone, fast path (its per-byte passes compiled, and in
numpy/pyarrow as without the compiled module) and line by line (CPU seconds: MB/s per core); and the whole diagnosis in
a child process (seconds, peak RSS), fast and slow, which must give the same answer.
Numbers from a shared machine vary: compare the ratios measured in one run.

    python benches/l4_size.py [--gb 12] [--nodes 79] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MB_PER_RANK_MINUTE = 0.0102  # what one rank logs per minute of training here (Megatron: a 1.2 KB block per iteration)


def child(bundle: str, state_dir: str, fast: bool) -> None:
    """In a fresh process: diagnose, and print seconds, peak RSS (with the scan's workers) and the answer."""
    from diagagent.config import Settings
    from diagagent.diagnosis import diagnose
    from diagagent.telemetry import Bundle

    settings = Settings.load(state_dir=Path(state_dir), fast_scan=fast)
    t0 = time.perf_counter()
    with Bundle.open(bundle) as b:
        d = diagnose(b, settings)
        truth = b.truth
    seconds = time.perf_counter() - t0
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps({"seconds": round(seconds, 2), "peak_rss_mb": round(rss / 1024, 1),
                      "answer": d.model_dump(mode="json"),
                      "correct": bool(truth and d.fault == truth.fault
                                      and d.faulty_hosts[:1] == (truth.faulty_nodes or [])[:1])}))


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def scan_cpu(bundle: Path, fast: bool, compiled: bool = True) -> float:
    """CPU seconds of the log scan alone, in one process (the per-core rate)."""
    from diagagent.analysis import logscan
    from diagagent.telemetry import Bundle

    with Bundle.open(bundle) as b:
        cpu = time.process_time()
        logscan.scan_bundle(b, workers=1, fast=fast, compiled=compiled)
        return time.process_time() - cpu


def diagnose_in_child(bundle: Path, state: Path, fast: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(bundle), str(state), "1" if fast else "0"],
                         capture_output=True, text=True, check=True,  # (the scan's workers read the path off the env)
                         env={**os.environ, "PYTHONHASHSEED": "0", "DIAGAGENT_FAST_SCAN": "1" if fast else "0"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=12.0, help="about this many GB of logs")
    ap.add_argument("--nodes", type=int, default=79)
    ap.add_argument("--fault", default="gpu_ecc_uncorrectable")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-slow", action="store_true", help="skip the line-by-line scan and diagnosis")
    ap.add_argument("--keep", type=Path, help="write the bundle here and keep it")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from diagagent.sim import simulate

    tmp = Path(tempfile.mkdtemp(prefix="diagagent-l4-"))
    bundle = args.keep or tmp / "bundle"
    try:
        ranks = args.nodes * 8
        minutes = max(10.0, args.gb * 1000 / (ranks * MB_PER_RANK_MINUTE))
        t0 = time.perf_counter()
        simulate(bundle, args.fault, args.nodes, args.seed, minutes=minutes, compress=False, every_rank_logs=True)
        sim_s = time.perf_counter() - t0
        files = sorted(str(p) for p in (bundle / "logs").rglob("*") if p.is_file())
        size = sum(os.path.getsize(f) for f in files)
        cat_s = _timed(["sh", "-c", 'cat "$@" > /dev/null', "cat", *files])  # (also warms the page cache)
        cat_s = _timed(["sh", "-c", 'cat "$@" > /dev/null', "cat", *files])
        grep_s = _timed(["grep", "-c", "error", *files])
        fast_cpu = scan_cpu(bundle, True)
        numpy_cpu = scan_cpu(bundle, True, compiled=False)
        slow_cpu = None if args.no_slow else scan_cpu(bundle, False)
        fast = diagnose_in_child(bundle, tmp / "state", True)
        slow = None if args.no_slow else diagnose_in_child(bundle, tmp / "state", False)
        mb = size / 1e6
        result = {
            "nodes": args.nodes, "ranks": ranks, "files": len(files), "minutes": round(minutes, 1),
            "gb": round(size / 1e9, 2), "simulate_seconds": round(sim_s, 1),
            "seconds": fast["seconds"], "mb_per_s": round(mb / fast["seconds"], 1),
            "scan_cpu_s": round(fast_cpu, 2), "mb_per_s_per_core": round(mb / fast_cpu, 1),
            "numpy_scan_cpu_s": round(numpy_cpu, 2), "numpy_mb_per_s_per_core": round(mb / numpy_cpu, 1),
            "slow_scan_cpu_s": round(slow_cpu, 2) if slow_cpu else None,
            "slow_mb_per_s_per_core": round(mb / slow_cpu, 1) if slow_cpu else None,
            "peak_rss_mb": fast["peak_rss_mb"], "cat_seconds": round(cat_s, 2), "grep_seconds": round(grep_s, 2),
            "scan_vs_grep": round(grep_s / fast_cpu, 3), "numpy_scan_vs_grep": round(grep_s / numpy_cpu, 3),
            "slow_scan_vs_grep": round(grep_s / slow_cpu, 3)
            if slow_cpu else None, "scan_vs_cat": round(cat_s / fast_cpu, 3),
            "slow_seconds": slow["seconds"] if slow else None,
            "slow_peak_rss_mb": slow["peak_rss_mb"] if slow else None,
            "same_answer": (fast["answer"] == slow["answer"]) if slow else None, "correct": fast["correct"],
        }
        if args.json:
            print(json.dumps(result))
        else:
            for k, v in result.items():
                print(f"{k:>24}: {v}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
    else:
        main()
