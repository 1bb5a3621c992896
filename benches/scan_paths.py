"""The log scan's fast path against reading every line one by one: the same scan, findings and diagnosis?

Scans each bundle twice (`scan_bundle(fast=...)` off and on), and diagnoses it twice (Settings.fast_scan off and on), and
compares everything (the whole LogScan, the log findings, the diagnosis). Prints per bundle `same` or what differs
(with `--quiet`, only the counts: for a held-out split), and the CPU seconds of each scan.

    python benches/scan_paths.py evals/real/dev evals/cases ~/.local/state/diagagent/suites/standard [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from diagagent.analysis import logscan
from diagagent.analysis.events import findings_from_scan, host_names
from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.telemetry import Bundle


def bundles(paths: list[Path]) -> list[Path]:
    """Each path that is a bundle (it has logs/ or job.yaml), else the bundles in it."""
    out = []
    for p in paths:
        if (p / "job.yaml").exists() or (p / "logs").is_dir():
            out.append(p)
        else:
            out += sorted(q for q in p.iterdir() if q.is_dir() and ((q / "job.yaml").exists() or (q / "logs").is_dir()))
    return out


def scan(bundle: Bundle, fast: bool) -> tuple[logscan.LogScan, float]:
    """One scan with the fast path on or off, and its CPU seconds."""
    cpu = time.process_time()
    return logscan.scan_bundle(bundle, workers=1, fast=fast), time.process_time() - cpu


def compare(path: Path, state_dir: Path, with_diagnosis: bool = True) -> dict:
    """What differs between the two paths on one bundle (empty lists: nothing)."""
    with Bundle.open(path) as b:
        slow, slow_s = scan(b, False)
        fast, fast_s = scan(b, True)
        status, names = b.job.status, host_names(b)
    a, f = dataclasses.asdict(slow), dataclasses.asdict(fast)
    differ = [k for k in a if repr(a[k]) != repr(f[k])]  # (repr: NaN is not equal to itself)
    if repr(findings_from_scan(slow, status, None, names)) != repr(findings_from_scan(fast, status, None, names)):
        differ.append("findings")
    if with_diagnosis:
        answers = []
        for on in (False, True):
            settings = Settings.load(state_dir=state_dir, fast_scan=on)
            with Bundle.open(path) as b:
                answers.append(diagnose(b, settings).model_dump(mode="json"))
        if answers[0] != answers[1]:
            differ.append("diagnosis")
    return {"bundle": str(path), "differ": differ, "slow_cpu_s": round(slow_s, 3), "fast_cpu_s": round(fast_s, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--no-diagnosis", action="store_true", help="compare the scans and findings only")
    ap.add_argument("--quiet", action="store_true", help="print only the counts (for a held-out split)")
    ap.add_argument("--state-dir", type=Path, default=Path("/tmp/diagagent-scan-paths-state"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = [compare(p, args.state_dir, not args.no_diagnosis) for p in bundles(args.paths)]
    if not args.quiet:
        for r in results:
            print(("same " if not r["differ"] else f"DIFFERENT ({', '.join(r['differ'])}) ") + r["bundle"])
    summary = {"bundles": len(results), "different": sum(bool(r["differ"]) for r in results),
               "slow_cpu_s": round(sum(r["slow_cpu_s"] for r in results), 2),
               "fast_cpu_s": round(sum(r["fast_cpu_s"] for r in results), 2)}
    print(json.dumps(summary) if args.json else summary)


if __name__ == "__main__":
    main()
