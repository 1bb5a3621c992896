"""The log analysis (L4) alone, scored like the eval: events F1 / recall@5, node top-k, stage, iteration.

Runs `analyze_logs` over a suite's simulated bundles (generated once into the suites cache) and over the hand-made
cases in evals/cases, turns the findings into a Diagnosis (cause events as evidence, suspects as faulty nodes), and
scores it with diagagent.evaluation.metrics. Events are scored twice: against every indicating line (the eval's
number; probe lines are out of a log analyzer's reach) and against the indicating lines in logs/ only.

    .venv/bin/python benches/logs_suite.py --suite standard --cases evals/cases --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from diagagent.analysis.events import LogFindings, analyze_logs
from diagagent.config import Settings

try:
    from diagagent.diagnosis import Diagnosis, Evidence, NodeScore
except ImportError:  # the output models moved into a package
    from diagagent.contract import Diagnosis, Evidence, NodeScore  # type: ignore[no-redef]
from diagagent.evaluation.metrics import LineIndex, cited_lines, score_case, score_events
from diagagent.evaluation.suites import Suite, SuiteCase, SuiteError, ensure_suite, find_suite, load_suite
from diagagent.telemetry import Bundle

NODE_SIZES = (8, 32, 128)


def default_suite() -> Suite:
    """Every fault at 3 seeds, 8 to 128 nodes: what evals/suites/standard.yaml describes, if it is not there."""
    from diagagent.sim import FAULTS

    return Suite(name="standard", description="every fault at 3 seeds, 8 to 128 nodes",
                 cases=[SuiteCase(fault=f, nodes=NODE_SIZES[seed - 1], seed=seed) for f in FAULTS for seed in (1, 2, 3)])


def to_diagnosis(job_id: str, findings: LogFindings) -> Diagnosis:
    where = [(loc, e.score) for e in findings.causes() for loc in [e.first, *e.also]]
    evidence = [Evidence(id=f"e{i}", kind="log", role="cause", file=loc.file, line=loc.line, host=loc.host,
                         rank=loc.rank, text=loc.text, score=score) for i, (loc, score) in enumerate(where, start=1)]
    nodes = [NodeScore(host=n.host, score=n.score) for n in findings.nodes]
    return Diagnosis(job_id=job_id, stage=findings.stage, iteration=findings.first_abnormal_iteration,
                     evidence=evidence, faulty_nodes=nodes)


def score_bundle(path: Path, workers: int | None) -> dict:
    with Bundle.open(path) as bundle:
        truth = bundle.truth
        start = time.perf_counter()
        findings = analyze_logs(bundle, workers=workers)
        seconds = time.perf_counter() - start
        diagnosis = to_diagnosis(bundle.job.job_id, findings)
        cited = cited_lines(diagnosis)
        indicated = [(r.file, r.line) for r in truth.indicating_lines or []]
        index = LineIndex.from_bundle(bundle, [*cited, *indicated])
        score = score_case(diagnosis, truth, index, case=path.name)
        in_logs = [ref for ref in indicated if ref[0].startswith("logs/")]
        log_events = score_events(cited, in_logs, index) if truth.indicating_lines is not None else None
        return {"case": path.name, "fault": truth.fault, "seconds": round(seconds, 3), "lines": findings.lines_read,
                "events": score.events.model_dump(), "log_events": log_events.model_dump() if log_events else None,
                "log_lines_indicated": len(in_logs), "nodes": score.nodes.model_dump(),
                "stage": score.stage_accuracy, "iteration": score.iteration_accuracy,
                "iteration_within_1": score.iteration_within_1, "predicted_stage": findings.stage,
                "truth_stage": truth.stage, "predicted_iteration": findings.first_abnormal_iteration,
                "truth_iteration": truth.iteration, "predicted_nodes": [n.host for n in findings.nodes[:5]],
                "truth_nodes": truth.faulty_nodes, "cited": [f"{f}:{n}" for f, n in cited],
                "indicated": [f"{f}:{n}" for f, n in indicated]}


def _mean(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def summarize(rows: list[dict]) -> dict:
    nodes_scored = [r for r in rows if r["nodes"]["top1"] is not None]
    return {
        "cases": len(rows),
        "events_f1": _mean([r["events"]["f1"] for r in rows]),
        "events_recall_at_5": _mean([r["events"]["recall_at_5"] for r in rows]),
        "log_events_f1": _mean([r["log_events"]["f1"] for r in rows if r["log_events"] and r["log_lines_indicated"]]),
        "log_events_recall_at_5": _mean([r["log_events"]["recall_at_5"] for r in rows
                                         if r["log_events"] and r["log_lines_indicated"]]),
        "log_events_precision": _mean([r["log_events"]["precision"] for r in rows
                                       if r["log_events"] and r["log_lines_indicated"]]),
        "cases_without_log_lines_citing_nothing": _mean([float(not r["cited"]) for r in rows
                                                         if r["log_lines_indicated"] == 0]),
        "nodes_top1": _mean([r["nodes"]["top1"] for r in nodes_scored]),
        "nodes_top5": _mean([r["nodes"]["top5"] for r in nodes_scored]),
        "stage_accuracy": _mean([r["stage"] for r in rows]),
        "iteration_accuracy": _mean([r["iteration"] for r in rows]),
        "iteration_within_1": _mean([r["iteration_within_1"] for r in rows]),
        "seconds_median": sorted(r["seconds"] for r in rows)[len(rows) // 2] if rows else None,
    }


def by_fault(rows: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["fault"] or "?"].append(r)
    return {fault: summarize(group) for fault, group in sorted(groups.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="standard", help="suite name or YAML path ('' to skip)")
    parser.add_argument("--cases", default="evals/cases", help="folder of hand-made cases ('' to skip)")
    parser.add_argument("--workers", type=int, default=1, help="processes per analysis")
    parser.add_argument("--gen-workers", type=int, default=2, help="processes generating missing suite bundles")
    parser.add_argument("--only", default="", help="comma-separated fault ids to run")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--detail", action="store_true", help="include every case's row in the JSON")
    args = parser.parse_args()
    only = {f for f in args.only.split(",") if f}
    out: dict = {}
    if args.suite:
        try:
            suite = load_suite(find_suite(args.suite))
        except SuiteError:
            suite = default_suite()
        if only:
            suite = suite.model_copy(update={"cases": [c for c in suite.cases if c.fault in only]})
        folders = ensure_suite(suite, Settings.load().state_dir, workers=args.gen_workers)
        rows = [score_bundle(f, args.workers) for f in folders]
        out["suite"] = {"name": suite.name, **summarize(rows), "by_fault": by_fault(rows)}
        if args.detail:
            out["suite"]["rows"] = rows
    if args.cases and Path(args.cases).is_dir():
        paths = sorted(p.parent for p in Path(args.cases).rglob("truth.json") if (p.parent / "job.yaml").is_file())
        rows = [score_bundle(p, args.workers) for p in paths]
        if only:
            rows = [r for r in rows if r["fault"] in only]
        out["cases"] = {"path": args.cases, **summarize(rows), "by_fault": by_fault(rows)}
        if args.detail:
            out["cases"]["rows"] = rows
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    for name, block in out.items():
        print(f"== {name}: {block.get('name') or block.get('path')}")
        for key, value in block.items():
            if key not in ("by_fault", "rows", "name", "path"):
                print(f"  {key:40} {value}")
        for fault, s in block["by_fault"].items():
            print(f"  {fault:34} n={s['cases']} logF1={s['log_events_f1']} nodes1={s['nodes_top1']} "
                  f"stage={s['stage_accuracy']} it1={s['iteration_within_1']}")


if __name__ == "__main__":
    main()
