"""Bench: stack aggregation over N ranks' py-spy dumps (default 16,384: 2,048 nodes x 8 GPUs).

Writes a temporary bundle (Megatron layout tp 8, pp 8; one hung pipeline), then times `analyze_stacks` end to end
(listing, reading and parsing every file, clustering, eviction; the median of 3 runs). `--json` prints
{"ranks", "seconds", ...}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from diagagent.analysis.stacks import _collect, analyze_stacks
from diagagent.telemetry import Bundle

SITE = "/usr/local/lib/python3.10/dist-packages"
OUTER = [
    ("forward_backward_pipelining_without_interleaving", "megatron/core/pipeline_parallel/schedules.py", 1412),
    ("train_step", "megatron/training/training.py", 617),
    ("train", "megatron/training/training.py", 1151),
    ("pretrain", "megatron/training/training.py", 283),
    ("<module>", "pretrain_gpt.py", 243),
]
WAIT_NATIVE = [("__futex_abstimed_wait_common", "libc.so.6", 0), ("0x7f3a2c41e2d0", "libcuda.so.535.161.08", 0),
               ("c10d::ProcessGroupNCCL::WorkNCCL::synchronizeInternal", "ProcessGroupNCCL.cpp", 1290)]
HEALTHY = WAIT_NATIVE + [
    ("all_reduce", "torch/distributed/distributed_c10d.py", 2050), ("wrapper", "torch/distributed/c10d_logger.py", 72),
    ("finish_grad_sync", "megatron/core/distributed/param_and_grad_buffer.py", 412),
    ("finalize_model_grads", "megatron/core/distributed/finalize_model_grads.py", 184)] + OUTER
BEHIND = WAIT_NATIVE + [
    ("recv", "torch/distributed/distributed_c10d.py", 1701),
    ("_communicate", "megatron/core/pipeline_parallel/p2p_communication.py", 382),
    ("recv_forward", "megatron/core/pipeline_parallel/p2p_communication.py", 440)] + OUTER
STUCK = [("cudaStreamSynchronize", "libcudart.so.12", 0), ("synchronize", "torch/cuda/__init__.py", 801),
         ("forward", "megatron/core/transformer/attention.py", 377),
         ("forward_step", "megatron/core/pipeline_parallel/schedules.py", 275)] + OUTER
IDLE = [("wait", "threading.py", 324), ("wait", "threading.py", 607), ("run", "tqdm/_monitor.py", 60),
        ("_bootstrap_inner", "threading.py", 1016), ("_bootstrap", "threading.py", 973)]


def _dump(pid: int, frames: list[tuple[str, str, int]]) -> str:
    out = [f"Process {pid}: /usr/bin/python3 -u pretrain_gpt.py --tensor-model-parallel-size 8",
           "Python v3.10.12 (/usr/bin/python3.10)", "", f'Thread {pid} (active): "MainThread"']
    out += [f"    {f} ({p}:{n})" if n else f"    {f} ({p})" for f, p, n in frames]
    out += [f'Thread {pid + 50} (idle): "Thread-1"'] + [f"    {f} ({p}:{n})" for f, p, n in IDLE]
    out += [f'Thread {pid + 51} (idle): "Thread-2 (_pin_memory_loop)"'] + [f"    {f} ({p}:{n})" for f, p, n in IDLE]
    return "\n".join(out) + "\n"


def write_bundle(root: Path, ranks: int, gpus: int = 8, pp: int = 8) -> None:
    nodes = ranks // gpus
    dp = ranks // (gpus * pp)
    root.mkdir(parents=True, exist_ok=True)
    lines = ['job_id: "bench"', "status: hung", f"gpus_per_node: {gpus}",
             f"parallelism: {{tp: {gpus}, pp: {pp}, dp: {dp}, cp: 1, ep: 1}}", "nodes:"]
    lines += [f"  - {{host: node-{n:05d}}}" for n in range(nodes)]
    (root / "job.yaml").write_text("\n".join(lines) + "\n")
    bad_dp = dp // 3  # one pipeline (data-parallel replica) hangs; its GPU in stage 3 is the culprit
    culprit = 3 * gpus * dp + bad_dp * gpus + 5
    for n in range(nodes):
        d = root / "stacks" / f"node-{n:05d}"
        d.mkdir(parents=True, exist_ok=True)
        for rank in range(n * gpus, (n + 1) * gpus):
            in_bad = (rank // gpus) % dp == bad_dp
            frames = STUCK if rank == culprit else (BEHIND if in_bad else HEALTHY)
            (d / f"rank-{rank}.txt").write_text(_dump(100000 + rank, frames))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="diagagent-bench-stacks-") as tmp:
        root = Path(tmp) / "bundle"
        write_bundle(root, args.ranks)
        with Bundle.open(root) as b:
            t0 = time.perf_counter()
            _collect(b, False)
            parse_s = time.perf_counter() - t0
        times = []
        for _ in range(3):  # a fresh Bundle each time: the file listing is part of the cost
            with Bundle.open(root) as b:
                t0 = time.perf_counter()
                f = analyze_stacks(b)
                times.append(time.perf_counter() - t0)
    total = sorted(times)[1]
    result = {"ranks": f.ranks, "seconds": round(total, 3), "runs": [round(t, 3) for t in times],
              "read_and_parse_seconds": round(parse_s, 3),
              "clusters": len(f.clusters), "evict": f.eviction.kind if f.eviction else None,
              "machines": f.eviction.machine_count if f.eviction else 0}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['ranks']} ranks: {result['seconds']} s ({result['read_and_parse_seconds']} s reading and "
              f"parsing); {result['clusters']} clusters; evict {result['evict']} group, {result['machines']} machines")


if __name__ == "__main__":
    main()
