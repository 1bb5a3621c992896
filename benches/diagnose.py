"""Bench: the whole offline diagnosis (every analyzer, the schema cache, fusion, proposals) of one incident.

Simulates a bundle (default: 1,024 nodes x 8 GPUs, an uncorrectable ECC error, seed 1) once into a temp dir, then
diagnoses it in a child process so the peak RSS is the diagnosis's own. `--json` prints
{"nodes", "seconds", "peak_rss_mb", ...}; `--bundle PATH` diagnoses an existing bundle instead.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def child(bundle: str, state_dir: str) -> None:
    """Run in a fresh process: diagnose and report seconds, peak RSS and the answer."""
    from diagagent.config import Settings
    from diagagent.diagnosis import Analyses, diagnose
    from diagagent.telemetry import Bundle

    settings = Settings.load(state_dir=Path(state_dir))
    t0 = time.perf_counter()
    with Bundle.open(bundle) as b:
        analyses = Analyses(b, settings)
        d = diagnose(b, settings, analyses=analyses)
        truth = b.truth
    seconds = time.perf_counter() - t0
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime  # (worker processes included)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": round(seconds, 2), "cpu_s": round(cpu_s, 1), "peak_rss_mb": round(max(peak_mb, children_mb), 1),
                      "analyzers_s": {k: round(v, 2) for k, v in analyses.timings.items()},
                      "fault": d.fault, "faulty_nodes": d.faulty_hosts[:3],
                      "correct": bool(truth and d.fault == truth.fault
                                      and d.faulty_hosts[:1] == (truth.faulty_nodes or [])[:1])}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--fault", default="gpu_ecc_uncorrectable")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--bundle", type=Path, help="diagnose this bundle instead of simulating one")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="diagagent-bench-") as tmp:
        bundle = args.bundle
        sim_s = None
        if bundle is None:
            from diagagent.sim import simulate

            bundle = Path(tmp) / "job"
            t0 = time.perf_counter()
            simulate(bundle, args.fault, nodes=args.nodes, seed=args.seed, minutes=args.minutes)
            sim_s = time.perf_counter() - t0
        state = Path(tmp) / "state"
        # a warm schema cache, as on a real install (its one-time seeding is not the diagnosis)
        subprocess.run([sys.executable, "-c", "from diagagent.config import Settings; from diagagent.schemata import "
                        f"SchemaCache; SchemaCache.open(Settings.load(state_dir={str(state)!r}))"], check=True)
        out = subprocess.run([sys.executable, __file__, "--child", str(bundle), str(state)], check=True,
                             capture_output=True, text=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
    report = {"nodes": args.nodes if args.bundle is None else None, **result, "simulate_s": sim_s and round(sim_s, 1)}
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
