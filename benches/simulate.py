"""Benchmark: how long the simulator takes to write one bundle, and how big it is.

`python benches/simulate.py --nodes 1024 --json` prints {"nodes", "seconds", "bytes", "files"}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path


def measure(
    nodes: int, fault: str, seed: int, minutes: float | None, gpus_per_node: int
) -> dict[str, float | int]:
    from diagagent.sim import simulate

    root = Path(tempfile.mkdtemp(prefix="diagagent-bench-sim-"))
    try:
        start = time.perf_counter()
        simulate(root / "bundle", fault, nodes, seed, gpus_per_node=gpus_per_node, minutes=minutes)
        seconds = time.perf_counter() - start
        files = [p for p in (root / "bundle").rglob("*") if p.is_file()]
        return {
            "nodes": nodes,
            "seconds": round(seconds, 2),
            "bytes": sum(p.stat().st_size for p in files),
            "files": len(files),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--fault", default="gpu_ecc_uncorrectable")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--minutes", type=float, default=None, help="default: the simulator's (60 at 1,024 nodes)"
    )
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = parser.parse_args()
    result = measure(args.nodes, args.fault, args.seed, args.minutes, args.gpus_per_node)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['nodes']} nodes: {result['seconds']} s, {result['bytes'] / 1e6:.1f} MB in {result['files']} files"
        )


if __name__ == "__main__":
    main()
