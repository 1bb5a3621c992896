"""Builders of small stack bundles for the stack tests: a job.yaml and one py-spy text dump per rank.

The stacks are Megatron-shaped: healthy ranks wait in the gradient all-reduce, stuck ones elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

OUTER = [
    "forward_backward_pipelining_without_interleaving (megatron/core/pipeline_parallel/schedules.py:1412)",
    "train_step (megatron/training/training.py:617)",
    "train (megatron/training/training.py:1151)",
    "pretrain (megatron/training/training.py:283)",
    "<module> (pretrain_gpt.py:243)",
]
GRAD_SYNC = [
    "all_reduce (torch/distributed/distributed_c10d.py:2050)",
    "wrapper (torch/distributed/c10d_logger.py:72)",
    "finish_grad_sync (megatron/core/distributed/param_and_grad_buffer.py:412)",
    "finalize_model_grads (megatron/core/distributed/finalize_model_grads.py:184)",
] + OUTER
TP_ALLREDUCE = [
    "all_reduce (torch/distributed/distributed_c10d.py:2050)",
    "wrapper (torch/distributed/c10d_logger.py:72)",
    "_reduce (megatron/core/tensor_parallel/mappings.py:33)",
    "forward (megatron/core/tensor_parallel/mappings.py:221)",
    "apply (torch/autograd/function.py:553)",
    "forward (megatron/core/tensor_parallel/layers.py:1012)",
    "forward_step (megatron/core/pipeline_parallel/schedules.py:275)",
] + OUTER
STUCK_COMPUTE = [
    "synchronize (torch/cuda/__init__.py:801)",
    "forward (megatron/core/transformer/attention.py:377)",
    "forward_step (megatron/core/pipeline_parallel/schedules.py:275)",
] + OUTER
P2P_RECV = [
    "recv (torch/distributed/distributed_c10d.py:1701)",
    "_communicate (megatron/core/pipeline_parallel/p2p_communication.py:382)",
    "recv_forward (megatron/core/pipeline_parallel/p2p_communication.py:440)",
] + OUTER
IDLE_THREAD = ["wait (threading.py:324)", "wait (threading.py:607)", "run (tqdm/_monitor.py:60)"]


def dump(pid: int, frames: list[str]) -> str:
    lines = [f"Process {pid}: /usr/bin/python3 -u pretrain_gpt.py", "Python v3.10.12 (/usr/bin/python3.10)", "",
             f'Thread {pid} (active): "MainThread"']
    lines += [f"    {f}" for f in frames]
    lines += [f'Thread {pid + 90} (idle): "Thread-1"'] + [f"    {f}" for f in IDLE_THREAD]
    return "\n".join(lines) + "\n"


def make_stack_bundle(root: Path, nodes: int, gpus: int, tp: int, pp: int, dp: int,
                      frames_of: Callable[[int, int], list[str]], rounds: int = 1,
                      skip_ranks: set[int] | None = None) -> Path:
    """A bundle of `nodes` x `gpus` ranks; `frames_of(rank, round)` gives each dump's main-thread frames."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ['job_id: "7"', "status: hung", f"gpus_per_node: {gpus}",
             f"parallelism: {{tp: {tp}, pp: {pp}, dp: {dp}, cp: 1, ep: 1}}", "nodes:"]
    for n in range(nodes):
        ranks = list(range(n * gpus, (n + 1) * gpus))
        lines.append(f"  - {{host: node-{n:03d}, ranks: {ranks}}}")
    (root / "job.yaml").write_text("\n".join(lines) + "\n")
    for n in range(nodes):
        d = root / "stacks" / f"node-{n:03d}"
        d.mkdir(parents=True, exist_ok=True)
        for rank in range(n * gpus, (n + 1) * gpus):
            if skip_ranks and rank in skip_ranks:
                continue
            (d / f"rank-{rank}.txt").write_text("".join(dump(1000 + rank, frames_of(rank, r)) for r in range(rounds)))
    return root
