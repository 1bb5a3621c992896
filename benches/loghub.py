"""Grouping accuracy (GA) and parsing accuracy (PA) of our template mining on every Loghub-2k system.

Oracle: the corrected templates (`loghub2.0_2k/*_structured_corrected.csv`, the Loghub-2.0 benchmark's `-otc` oracle;
`corrected_khan2022/` for Android and Windows, which Loghub-2.0 lacks). As in the benchmark, each line's Content
column (the message without its header) is what is parsed. One configuration for every system: the same masking,
drain3 settings and canonical form as for training logs. Published Drain on this oracle: GA 0.85, PA 0.32 (the 14
Loghub-2.0 systems); `ga_avg_14` / `pa_avg_14` are comparable to those.

    .venv/bin/python benches/loghub.py --data ../shared/data/loghub --json
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from diagagent.analysis.templates import LineShaper, TemplateMiner, grouping_accuracy


def oracle_file(system: Path) -> Path | None:
    for sub in ("loghub2.0_2k", "corrected_khan2022"):
        path = system / sub / f"{system.name}_2k.log_structured_corrected.csv"
        if path.is_file():
            return path
    return None


def score_system(path: Path) -> dict:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    contents = [r["Content"].encode() for r in rows]
    truth = [r["EventTemplate"] for r in rows]
    start = time.perf_counter()
    groups, templates = TemplateMiner().mine_templates(contents, LineShaper(headers=False))
    seconds = time.perf_counter() - start
    predicted = [templates[g] if g >= 0 else "" for g in groups]
    return {"ga": round(grouping_accuracy(groups, truth), 4),
            "pa": round(sum(p == t for p, t in zip(predicted, truth)) / len(truth), 4),
            "templates": len(templates), "oracle_templates": len(set(truth)), "lines": len(rows),
            "seconds": round(seconds, 3), "oracle": "/".join(path.parts[-2:])}


def _mean(rows: list[dict], key: str) -> float | None:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data/loghub", help="the Loghub folder (one folder per system)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    systems = {}
    for system in sorted(p for p in Path(args.data).iterdir() if p.is_dir()):
        path = oracle_file(system)
        if path is not None:
            systems[system.name] = score_system(path)
    loghub2 = [s for s in systems.values() if s["oracle"].startswith("loghub2.0_2k")]
    every = list(systems.values())
    out = {"systems": systems, "ga_avg": _mean(every, "ga"), "pa_avg": _mean(every, "pa"),
           "ga_avg_14": _mean(loghub2, "ga"), "pa_avg_14": _mean(loghub2, "pa")}
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    for name, s in systems.items():
        print(f"{name:12} GA {s['ga']:.3f}  PA {s['pa']:.3f}  templates {s['templates']}/{s['oracle_templates']}")
    print(f"average      GA {out['ga_avg']}  PA {out['pa_avg']}  (14 Loghub-2.0 systems: GA {out['ga_avg_14']}, "
          f"PA {out['pa_avg_14']})")


if __name__ == "__main__":
    main()
