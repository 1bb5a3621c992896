"""Bench: flow analysis on a simulated 1,024-node hour; `--records N` tiles that hour in time up to N records.

Simulates (cached under --cache) and times `analyze_flows` in a child process, so peak RSS is the analysis's
own. `--json` prints {"records", "records_per_s", "seconds", "peak_rss_mb", "iteration_error_median",
"iteration_error_p95"}; errors are relative iteration-duration errors against truth.json's timeline.
`--suite standard` scores every case of evals/suites/<name>.yaml (straggler / slow-link ranking, healthy
nodes flagged, parallelism, iteration error); `--engines` times the ingest step with pyarrow, polars, duckdb.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from diagagent.analysis.flows import FlowFindings, analyze_flows
from diagagent.telemetry import Bundle

SIZE_FAULTS = ("gpu_straggler", "slow_link")


def iteration_errors(findings: FlowFindings, timeline: list[dict]) -> np.ndarray:
    """Relative duration error of each truth iteration whose end a found boundary matches (within half)."""
    ends = np.array(findings.iterations.boundaries[1:])
    if not len(ends) or not timeline:
        return np.array([])
    durations = ends - np.array(findings.iterations.starts)
    out = []
    for it in timeline:
        true = it["end"] - it["start"]
        j = int(np.argmin(np.abs(ends - it["end"])))
        if true > 0 and abs(ends[j] - it["end"]) < 0.5 * true:
            out.append(abs(durations[j] - true) / true)
    return np.array(out)


def simulated(cache: Path, fault: str, nodes: int, seed: int, minutes: float | None = None) -> Path:
    from diagagent.sim import SIM_VERSION, simulate

    out = cache / f"sim{SIM_VERSION}-{fault}-{nodes}-{seed}-{minutes or 'default'}"
    if not (out / "truth.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        simulate(out, fault, nodes, seed, minutes=minutes)
    return out


def tiled(cache: Path, hour: Path, records: int) -> Path:
    """The hour's flows repeated in time (each copy one capture later) until `records` rows, as Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = cache / f"{hour.name}-tiled-{records}"
    if (out / "truth.json").is_file():
        return out
    with Bundle.open(hour) as bundle:
        batches = list(bundle.iter_flow_batches())
    table = pa.Table.from_batches(batches)
    truth = json.loads((hour / "truth.json").read_text())
    tl = truth["timeline"]
    shift = (tl[-1]["end"] - tl[0]["start"]) + (tl[-1]["end"] - tl[-1]["start"]) + 600.0
    copies = -(-records // table.num_rows)
    parts, timeline = [], []
    for c in range(copies):
        offset = c * shift
        parts.append(
            table.set_column(0, "start", pa.compute.add(table["start"], offset)).set_column(
                1, "end", pa.compute.add(table["end"], offset)
            )
        )
        timeline += [
            {"iteration": x["iteration"] + c * 100000, "start": x["start"] + offset, "end": x["end"] + offset}
            for x in tl
        ]
    shutil.rmtree(out, ignore_errors=True)
    (out / "flows").mkdir(parents=True)
    shutil.copy(hour / "job.yaml", out / "job.yaml")
    pq.write_table(pa.concat_tables(parts).slice(0, records), out / "flows" / "flows.parquet")
    (out / "truth.json").write_text(json.dumps({"timeline": timeline}))
    return out


def analyze_in_child(bundle: Path) -> dict:
    """Time analyze_flows in a fresh process; its peak RSS comes from the kernel's accounting of children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, __file__, "--analyze", str(bundle)], capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result["peak_rss_mb"] = round(max(peak, before) / 1024, 1)
    return result


def analyze_here(bundle: Path) -> dict:
    t = time.perf_counter()
    with Bundle.open(bundle) as b:
        findings = analyze_flows(b)
    seconds = time.perf_counter() - t
    truth = json.loads((bundle / "truth.json").read_text())
    timeline = truth.get("timeline") or []
    err = iteration_errors(findings, timeline)
    out = {
        "records": findings.counts.total,
        "records_per_s": round(findings.counts.total / seconds),
        "seconds": round(seconds, 2),
        **_stats(err, "iteration_error"),
        "iterations": findings.iterations.count,
        "truth_iterations": len(timeline),
    }
    if truth.get("iteration") is not None:  # before and after the first abnormal iteration, apart
        out.update(
            _stats(
                iteration_errors(findings, [x for x in timeline if x["iteration"] < truth["iteration"]]),
                "before_fault_error",
            )
        )
        out.update(
            _stats(
                iteration_errors(findings, [x for x in timeline if x["iteration"] >= truth["iteration"]]),
                "from_fault_error",
            )
        )
    return out


def _stats(err: np.ndarray, name: str) -> dict:
    return {
        f"{name}_median": round(float(np.median(err)), 5) if len(err) else None,
        f"{name}_p95": round(float(np.quantile(err, 0.95)), 5) if len(err) else None,
    }


def suite(cache: Path, name: str) -> dict:
    """Score the flow findings on every case of an eval suite."""
    import yaml

    cases = yaml.safe_load((ROOT / "evals" / "suites" / f"{name}.yaml").read_text())["cases"]
    rows, errors = [], []
    for case in cases:
        path = simulated(cache, case["fault"], case["nodes"], case["seed"])
        with Bundle.open(path) as bundle:
            f = analyze_flows(bundle)
        truth = json.loads((path / "truth.json").read_text())
        faulty = set(truth.get("faulty_nodes") or [])
        err = iteration_errors(f, truth.get("timeline") or [])
        errors.append(err)
        flagged = {s.host for s in f.stragglers if s.flagged} | {
            h for x in f.slow_links if x.flagged for h in (x.src, x.dst)
        }
        source = {"gpu_straggler": "straggler", "slow_link": "slow_link"}.get(case["fault"])
        ranked = [s.host for s in f.suspects if s.source == source] if source else []
        rows.append(
            {
                **case,
                "has_flows": f.has_flows,
                "iterations": f.iterations.count,
                "parallelism_exact": f.parallelism.agrees,
                "top": ranked[0] if ranked else None,
                "faulty": sorted(faulty),
                "first": bool(ranked) and ranked[0] in faulty,
                "healthy_flagged": sorted(flagged - faulty),
                "err50": round(float(np.median(err)), 5) if len(err) else None,
                "err95": round(float(np.quantile(err, 0.95)), 5) if len(err) else None,
            }
        )
    target = [r for r in rows if r["fault"] in SIZE_FAULTS]
    others = [r for r in rows if r["fault"] not in SIZE_FAULTS and r["has_flows"]]
    par = [r for r in rows if r["has_flows"] and r["parallelism_exact"] is not None]
    pooled = np.concatenate([e for e in errors if len(e)]) if any(len(e) for e in errors) else np.array([])
    return {
        "suite": name,
        "cases": len(rows),
        "faulty_ranked_first": f"{sum(r['first'] for r in target)}/{len(target)}",
        "no_healthy_flagged_in_others": f"{sum(not r['healthy_flagged'] for r in others)}/{len(others)}",
        "parallelism_exact": f"{sum(bool(r['parallelism_exact']) for r in par)}/{len(par)}",
        "iteration_error_median": round(float(np.median(pooled)), 5) if len(pooled) else None,
        "iteration_error_p95": round(float(np.quantile(pooled, 0.95)), 5) if len(pooled) else None,
        "rows": rows,
    }


ENGINE_CODE = {
    "pyarrow+numpy": """
import numpy as np, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq, polars as pl
ips = pa.array(IPS)
keep = []
COLUMNS = ["start", "end", "src_ip", "dst_ip", "bytes"]
for batch in pq.ParquetFile(PATH).iter_batches(1 << 20, columns=COLUMNS):
    s = pc.fill_null(pc.index_in(batch.column("src_ip"), value_set=ips), -1).to_numpy()
    d = pc.fill_null(pc.index_in(batch.column("dst_ip"), value_set=ips), -1).to_numpy()
    m = (s >= 0) & (d >= 0)
    keep.append(pl.DataFrame({"src": s[m], "dst": d[m], "bytes": batch.column("bytes").to_numpy()[m]}))
agg = [pl.len(), pl.col("bytes").sum().alias("b"), pl.col("bytes").median().alias("m")]
out = pl.concat(keep).group_by("src", "dst").agg(agg)
""",
    "polars-streaming": """
import polars as pl
out = (pl.scan_parquet(PATH).filter(pl.col("src_ip").is_in(IPS) & pl.col("dst_ip").is_in(IPS))
       .group_by("src_ip", "dst_ip").agg(n=pl.len(), b=pl.col("bytes").sum(), m=pl.col("bytes").median())
       .collect(engine="streaming"))
""",
    "duckdb": """
import duckdb
con = duckdb.connect()
con.execute("CREATE TABLE ips AS SELECT unnest(?) AS ip", [IPS])
out = con.execute(f\"\"\"SELECT src_ip, dst_ip, count(*), sum(bytes), median(bytes)
    FROM read_parquet('{PATH}') WHERE src_ip IN (SELECT ip FROM ips) AND dst_ip IN (SELECT ip FROM ips)
    GROUP BY ALL\"\"\").fetchall()
""",
}


def engines(bundle: Path) -> dict:
    """Ingest + job filter + per-pair aggregation over the Parquet file, each engine in its own process."""
    with Bundle.open(bundle) as b:
        ips = [n.ip for n in b.job.nodes if n.ip]
    path = next((bundle / "flows").glob("*.parquet"))
    out = {}
    for name, code in ENGINE_CODE.items():
        script = (
            f"import time, resource\nIPS = {ips!r}\nPATH = {str(path)!r}\nt = time.perf_counter()\n{code}\n"
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        if done.returncode:
            out[name] = {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
            continue
        seconds, rss = done.stdout.split()
        out[name] = {"seconds": round(float(seconds), 2), "peak_rss_mb": round(int(rss) / 1024, 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--fault", default="gpu_straggler")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--records", type=int, help="tile the simulated hour in time up to this many records")
    ap.add_argument("--suite", help="score an eval suite (e.g. standard) instead")
    ap.add_argument(
        "--engines", action="store_true", help="time the ingest step with pyarrow, polars, duckdb"
    )
    ap.add_argument("--cache", type=Path, default=Path("/tmp/diagagent-bench-flows"))
    ap.add_argument("--analyze", type=Path, help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args()
    if args.analyze:
        print(json.dumps(analyze_here(args.analyze)))
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.suite:
        result = suite(args.cache, args.suite)
    else:
        bundle = simulated(args.cache, args.fault, args.nodes, args.seed, args.minutes)
        if args.records:
            bundle = tiled(args.cache, bundle, args.records)
        result = engines(bundle) if args.engines else analyze_in_child(bundle)
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
