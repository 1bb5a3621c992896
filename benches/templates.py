"""Template mining throughput on a simulated 256-node bundle: ours against stock drain3 with the same masking.

Both read the same lines from memory in the same run. Stock: decode, strip the header (the same function), then
drain3's `TemplateMiner.add_log_message` with our masking as drain3 masking instructions. Ours: `TemplateMiner.mine`.
`group_agreement` is the grouping accuracy of ours taking stock drain3's grouping as the truth. Also the whole scan
(`scan_bundle`, one and two processes) and its peak Python memory on the logs and on the logs repeated twice.

    .venv/bin/python benches/templates.py --json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from drain3 import TemplateMiner as Drain3Miner
from drain3.masking import MaskingInstruction
from drain3.template_miner_config import TemplateMinerConfig

from diagagent.analysis import logparse
from diagagent.analysis.logscan import scan_bundle
from diagagent.analysis.templates import LineShaper, TemplateMiner, grouping_accuracy
from diagagent.telemetry import Bundle
from diagagent.telemetry.readers import open_binary

ROOT = Path(tempfile.gettempdir()) / "diagagent-bench-templates"


def bundle_path(nodes: int, fault: str, seed: int) -> Path:
    """A simulated bundle, generated once and kept in the temp dir."""
    from diagagent.sim import SIM_VERSION, simulate

    path = ROOT / f"{fault}-n{nodes}-s{seed}-{SIM_VERSION}"
    if not (path / "job.yaml").is_file():
        tmp = path.with_name(path.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        simulate(tmp, fault, nodes, seed, compress=False)
        tmp.rename(path)
    return path


def read_lines(bundle: Bundle) -> list[bytes]:
    lines: list[bytes] = []
    for lf in bundle.log_files:
        with open_binary(bundle.root / lf.file) as f:
            lines.extend(f.read().split(b"\n"))
    return lines


def stock_miner(names: re.Pattern[str] | None) -> Drain3Miner:
    """drain3 with our masking as masking instructions (each regex, in our order, replaced by <*>)."""
    config = TemplateMinerConfig()
    patterns = ([names.pattern] if names is not None else []) + [
        logparse._HEX_TOKEN.pattern, logparse._COLON_IDS.pattern, logparse._PATH_TOKEN.pattern,
        logparse._DIGIT_TOKEN.pattern]
    config.masking_instructions = [MaskingInstruction(p, "*") for p in patterns]
    config.mask_prefix, config.mask_suffix = "<", ">"
    config.drain_max_clusters = 50_000
    return Drain3Miner(None, config)


def mine_stock(lines: list[bytes], names: re.Pattern[str] | None) -> list[int]:
    miner = stock_miner(names)
    out = []
    for raw in lines:
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            out.append(-1)
            continue
        out.append(miner.add_log_message(logparse.split_header(text).message)["cluster_id"])
    return out


def scan_seconds(root: Path, workers: int) -> float:
    with Bundle.open(root) as bundle:
        start = time.perf_counter()
        scan_bundle(bundle, workers=workers)
        return time.perf_counter() - start


def scan_peak_mb(root: Path) -> float:
    """Peak MB of Python allocations during one single-process scan (tracemalloc; slower, so timed apart)."""
    with Bundle.open(root) as bundle:
        tracemalloc.start()
        scan_bundle(bundle, workers=1)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak / 2**20


def doubled(root: Path) -> Path:
    """The bundle with every log file's lines written twice (twice the lines, the same shapes)."""
    out = ROOT / (root.name + "-x2")
    if not (out / "job.yaml").is_file():
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(root, out)
        for p in (out / "logs").rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                p.write_bytes(data + (b"" if data.endswith(b"\n") else b"\n") + data)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--fault", default="gpu_ecc_uncorrectable")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = bundle_path(args.nodes, args.fault, args.seed)
    with Bundle.open(root) as bundle:
        lines = read_lines(bundle)
        names = logparse.names_pattern([n.host for n in bundle.job.nodes])
    start = time.perf_counter()
    ours = TemplateMiner().mine(lines, LineShaper(names))
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    stock = mine_stock(lines, names)
    stock_s = time.perf_counter() - start
    kept = [i for i, s in enumerate(stock) if s >= 0]
    agreement = grouping_accuracy([ours[i] for i in kept], [stock[i] for i in kept])
    one_s, two_s = scan_seconds(root, 1), scan_seconds(root, 2)
    twice = doubled(root)
    twice_s = scan_seconds(twice, 1)
    one_mb, twice_mb = scan_peak_mb(root), scan_peak_mb(twice)
    result = {
        "bundle": root.name, "lines": len(lines),
        "lines_per_s": round(len(lines) / ours_s), "stock_lines_per_s": round(len(lines) / stock_s),
        "ratio": round(stock_s / ours_s, 1), "group_agreement": round(agreement, 4),
        "groups": len(set(ours) - {-1}), "stock_groups": len(set(stock) - {-1}),
        "scan_lines_per_s_1_process": round(len(lines) / one_s), "scan_lines_per_s_2_processes": round(len(lines) / two_s),
        "scan_peak_mb": round(one_mb, 1), "scan_peak_mb_twice_the_lines": round(twice_mb, 1),
        "scan_peak_ratio_twice_to_once": round(twice_mb / one_mb, 2) if one_mb else None,
        "scan_seconds_twice_the_lines": round(twice_s, 2),
    }
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for k, v in result.items():
            print(f"{k:32} {v}")


if __name__ == "__main__":
    main()
