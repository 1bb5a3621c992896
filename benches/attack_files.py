"""Bench: one hostile file at a time (tests/attacks.py) in a copy of a clean simulated bundle, then `diagnose`.

Prints input -> outcome: the same fault and faulty nodes as the clean bundle? the bad file named in the notes?
crashed? flow records kept (job flows, of the clean bundle's)? seconds. `--json` prints the rows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from diagagent.config import Settings
from diagagent.diagnosis import Analyses, diagnose
from diagagent.telemetry import Bundle, BundleError
from tests.attacks import ATTACKS, make_clean


def run(root: Path, settings: Settings) -> dict[str, object]:
    t0 = time.perf_counter()
    try:
        with Bundle.open(root) as bundle:
            a = Analyses(bundle, settings)
            d = diagnose(bundle, settings, analyses=a)
            flows = a.flows.counts.job if a.flows is not None else None
    except BundleError as exc:  # a refused bundle is a named outcome, not a crash
        return {"fault": None, "nodes": [], "notes": [str(exc)], "flows": None, "crash": None,
                "seconds": time.perf_counter() - t0}
    except Exception as exc:  # noqa: BLE001 - the bench reports any crash
        return {"fault": None, "nodes": [], "notes": [], "flows": None, "crash": f"{type(exc).__name__}: {exc}"[:80],
                "seconds": time.perf_counter() - t0}
    return {"fault": d.fault, "nodes": d.faulty_hosts, "notes": d.notes, "flows": flows, "crash": None,
            "confidence": d.confidence, "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", help="run the attacks whose name holds this text")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="diagagent-attacks-") as tmp:
        base = Path(tmp)
        settings = Settings(state_dir=base / "state", jobs_dir=base / "jobs")
        clean = make_clean(base / "clean" / "bundle")
        ref = run(clean, settings)
        rows = []
        for name, (attack, leaves) in ATTACKS.items():
            if args.only and args.only not in name:
                continue
            case = base / name.replace(" ", "_").replace("/", "_") / "bundle"
            shutil.copytree(clean, case, symlinks=True)
            rel = attack(case)
            got = run(case, settings)
            same = got["fault"] == ref["fault"] and got["nodes"] == ref["nodes"]
            named = any(rel in n for n in got["notes"]) if leaves == "skip" else None  # type: ignore[union-attr]
            rows.append({"input": name, "file": rel, "same": same, "named": named, "crash": got["crash"],
                         "fault": got["fault"], "nodes": got["nodes"], "flows": got["flows"],
                         "seconds": round(got["seconds"], 2),  # type: ignore[arg-type]
                         "note": next((n for n in got["notes"] if rel in n), "")})  # type: ignore[union-attr]
    if args.json:
        print(json.dumps({"clean": {k: ref[k] for k in ("fault", "nodes", "flows")}, "rows": rows}, indent=1))
        return
    print(f"clean bundle: fault {ref['fault']}, nodes {ref['nodes']}, {ref['flows']} job flows, "
          f"{ref['seconds']:.2f} s")
    print(f"{'input':36} {'same fault+nodes':16} {'file named':10} {'crashed':8} {'flows kept':10} seconds")
    for r in rows:
        flows = "-" if r["flows"] is None else str(r["flows"])
        crash = r["crash"] or "no"
        print(f"{r['input']:36} {'yes' if r['same'] else 'NO (' + str(r['fault']) + ')':16} "
              f"{'-' if r['named'] is None else 'yes' if r['named'] else 'NO':10} {crash:8} {flows:10} "
              f"{r['seconds']:.2f}")
    print()
    for r in rows:
        print(f"- {r['input']}: {r['note'][:200] or '(no note names ' + r['file'] + ')'}")
    print("\nnamed '-': valid input that must be read whole (nothing to name)")


if __name__ == "__main__":
    main()
