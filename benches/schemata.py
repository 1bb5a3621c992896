"""Schema cache benchmark: query latency with N schemata, and how often the true fault's schema ranks first / top 3.

`python benches/schemata.py --json` prints {"schemata", "p50_ms", "p95_ms", "suite_top1", "suite_top3", ...}.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from diagagent.config import Settings
from diagagent.schemata import FailureSchema, SchemaCache
from diagagent.telemetry import Bundle

REPO = Path(__file__).resolve().parent.parent

_COMPONENTS = ["kubelet", "slurmd", "nvidia-persistenced", "dcgm-exporter", "sshd", "systemd", "containerd", "lnet",
               "nfsd", "mlx5_core", "ib_core", "nccl-proxy", "torch.distributed", "megatron.core", "deepspeed.runtime",
               "accelerate", "bmc", "ipmi", "opensm", "ofed", "nvme", "xfs", "ext4", "kswapd", "irqbalance", "chronyd",
               "node-exporter", "fluent-bit", "etcd", "coredns", "calico", "multus", "sriov", "gpu-operator"]
_VERBS = ["failed to", "timed out while", "could not", "refused to", "gave up trying to", "retrying", "aborted",
          "lost", "detected", "rejected", "stalled while", "skipped"]
_OBJECTS = ["allocate buffer", "sync clock", "register memory region", "open device", "mount volume", "read shard",
            "write journal", "reach peer", "renew lease", "load plugin", "flush cache", "query counter",
            "update route", "reset port", "collect metrics", "scrape target", "resolve service", "bind socket",
            "attach namespace", "spawn worker", "copy tensor", "reduce bucket", "gather params", "init communicator"]
_WORDS = ["error", "warning", "timeout", "gpu", "nccl", "cuda", "memory", "link", "port", "node", "rank", "device",
          "queue", "retry", "fatal", "degraded", "checksum", "latency", "epoch", "step", "iteration", "loss",
          "thread", "process", "signal", "handle", "driver", "firmware", "module", "socket", "channel", "stream"]


def distractors(n: int, seed: int = 7) -> list[FailureSchema]:
    """`n` plausible learned schemata of made-up faults: realistic log vocabulary, different failures."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        comp = rng.choice(_COMPONENTS)
        templates = []
        for _ in range(rng.randint(2, 5)):
            words = " ".join(rng.sample(_WORDS, rng.randint(1, 3)))
            templates.append(f"{comp}: {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} <*> ({words} {rng.randint(1, 999)})")
        obj = rng.choice(_OBJECTS)
        out.append(FailureSchema(
            id=f"synthetic-{i:05d}", origin="learned", title=f"{comp} {obj} failure", category=rng.choice(
                ["hardware", "network", "infrastructure", "framework", "user_code", "data"]),
            fault=f"synthetic_{i:05d}", root_cause=f"{comp} could not {obj}: " + " ".join(rng.sample(_WORDS, 4)),
            templates=templates, symptoms=[f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} on {comp}"]))
    return out


def truth_lines(bundle: Bundle) -> list[str]:
    """The lines truth.json marks as indicating the cause (what an ideal diagnosis would cite)."""
    truth = bundle.truth
    lines = []
    for ref in (truth.indicating_lines or []) if truth else []:
        got = bundle.lines_around(ref.file, ref.line, 0)
        lines += [text for n, text in got if n == ref.line]
    return lines


def diagnosis_lines(bundle: Bundle, settings: Settings) -> list[str]:
    """The evidence of diagagent's own diagnosis of the bundle (cause evidence first)."""
    from diagagent.diagnosis import diagnose  # type: ignore[attr-defined]

    diagnosis = diagnose(bundle, settings)
    evidence = [e for e in diagnosis.evidence if e.kind != "schema" and e.text.strip()]
    return [e.text for e in sorted(evidence, key=lambda e: e.role != "cause")]


def query_texts(bundle: Bundle, mode: str, settings: Settings) -> list[str]:
    return truth_lines(bundle) if mode == "truth" else diagnosis_lines(bundle, settings)


def suite_bundles(name: str, settings: Settings) -> list[Path]:
    from diagagent.evaluation.suites import ensure_suite, find_suite, load_suite

    return ensure_suite(load_suite(find_suite(name)), settings.state_dir)


def rank_quality(cache: SchemaCache, cases: list[tuple[str, str, list[str]]]) -> dict:
    """top-1 / top-3 rate of the true fault's schema over (name, fault, query lines) cases."""
    top1 = top3 = 0
    misses = []
    for name, fault, lines in cases:
        hits = cache.search(lines, k=3) if lines else []
        faults = [h.fault for h in hits]
        top1 += bool(faults) and faults[0] == fault
        top3 += fault in faults
        if not faults or faults[0] != fault:
            misses.append({"case": name, "fault": fault, "got": [f"{h.id}:{h.score}" for h in hits],
                           "lines": len(lines)})
    n = max(len(cases), 1)
    return {"top1": round(top1 / n, 4), "top3": round(top3 / n, 4), "cases": len(cases),
            "cases_without_lines": sum(1 for *_, lines in cases if not lines), "misses": misses}


def load_cases(folders: list[Path], mode: str, settings: Settings) -> list[tuple[str, str, list[str]]]:
    cases = []
    for folder in folders:
        with Bundle.open(folder) as bundle:
            truth = bundle.truth
            if truth is None or not truth.fault:
                continue
            cases.append((folder.name, truth.fault, query_texts(bundle, mode, settings)))
    return cases


def latency(cache: SchemaCache, queries: list[list[str]], n: int) -> tuple[float, float]:
    cache.search(queries[0], k=5)  # builds the template index
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        cache.search(queries[i % len(queries)], k=5)
        times.append((time.perf_counter() - t0) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--schemata", type=int, default=10000, help="cache size for the latency run (seeds + filler)")
    parser.add_argument("--suite", default="standard")
    parser.add_argument("--query", choices=["truth", "diagnosis"], default="truth",
                        help="truth: the lines truth.json marks as indicating; diagnosis: diagnose()'s evidence")
    parser.add_argument("--embedding", choices=["hashing", "minilm", "openai"], default=None)
    parser.add_argument("--queries", type=int, default=300, help="timed queries")
    parser.add_argument("--fusion", choices=["both", "similarity", "templates"], default="both",
                        help="rank by both signals (the product) or by one alone (to measure each)")
    parser.add_argument("--state-dir", type=Path, default=None, help="reuse a state dir (suite bundles, caches)")
    parser.add_argument("--cases-dir", type=Path, default=REPO / "evals" / "cases", help="hand-made real-format cases")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-schemata-") as tmp:
        state = args.state_dir or Path(tmp)
        overrides = {"embedding": args.embedding} if args.embedding else {}
        settings = Settings.load(state_dir=state, **overrides)
        suite_settings = Settings.load(state_dir=state)  # suite bundles are shared by every embedding
        suite_cases = load_cases(suite_bundles(args.suite, suite_settings), args.query, suite_settings)
        real_folders = sorted(p for p in args.cases_dir.glob("*") if (p / "truth.json").is_file())
        real_cases = load_cases(real_folders, args.query, suite_settings) if real_folders else []

        seeds_only = SchemaCache.open(settings.model_copy(
            update={"chroma_path": state / f"seeds-{settings.embedding}"}))
        seeds_only.fusion = args.fusion
        seeds_suite = rank_quality(seeds_only, suite_cases)
        seeds_real = rank_quality(seeds_only, real_cases)

        t0 = time.perf_counter()
        big = SchemaCache.open(settings.model_copy(
            update={"chroma_path": state / f"n{args.schemata}-{settings.embedding}"}))
        missing = args.schemata - big.count()
        if missing > 0:
            big.add_many(distractors(missing))
        build_s = time.perf_counter() - t0
        big.fusion = args.fusion
        big_suite = rank_quality(big, suite_cases)
        big_real = rank_quality(big, real_cases)
        queries = [lines for *_, lines in suite_cases if lines] or [["NCCL watchdog timeout"]]
        p50, p95 = latency(big, queries, args.queries)

    result = {
        "schemata": big.count(), "p50_ms": round(p50, 2), "p95_ms": round(p95, 2),
        "suite_top1": big_suite["top1"], "suite_top3": big_suite["top3"],
        "suite": args.suite, "query": args.query, "embedding": settings.embedding, "fusion": args.fusion,
        "suite_cases": big_suite["cases"], "suite_cases_without_lines": big_suite["cases_without_lines"],
        "seeds_only": {"schemata": seeds_only.count(), "suite_top1": seeds_suite["top1"],
                       "suite_top3": seeds_suite["top3"], "real_top1": seeds_real["top1"],
                       "real_top3": seeds_real["top3"]},
        "real_cases": big_real["cases"], "real_top1": big_real["top1"], "real_top3": big_real["top3"],
        "build_s": round(build_s, 1),
        "misses": {"suite": big_suite["misses"], "real": big_real["misses"]},
    }
    if args.json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
