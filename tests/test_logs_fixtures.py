"""Hand-written incident bundles in the formats real clusters print, for the log analysis tests.

Each builder writes a bundle folder and returns its path; the lines are what Megatron, DeepSpeed, HF Trainer,
PyTorch (c10d / ProcessGroupNCCL), NCCL, torchrun, Slurm and the kernel print, not the simulator's text.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

T0 = datetime(2026, 11, 20, 8, 0, 0, tzinfo=UTC)


def job_yaml(hosts: list[str], *, status: str = "failed", gpus: int = 2, framework: str = "megatron",
             history: list[str] | None = None, job_id: str = "42") -> str:
    nodes = "\n".join(f"  - {{host: {h}, ip: 10.0.0.{i + 1}, ranks: [{', '.join(str(i * gpus + g) for g in range(gpus))}]}}"
                      for i, h in enumerate(hosts))
    world = len(hosts) * gpus
    hist = f"history: [{', '.join(history)}]\n" if history else ""
    return textwrap.dedent(f"""\
        job_id: "{job_id}"
        framework: {framework}
        status: {status}
        started_at: 2026-11-20T08:00:00Z
        gpus_per_node: {gpus}
        parallelism: {{tp: {gpus}, pp: 1, dp: {len(hosts)}, cp: 1, ep: 1}}
        """) + f"nodes:\n{nodes}\n" + hist + f"# world size {world}\n"


def ts(seconds: float, fmt: str = "py") -> str:
    """A timestamp `seconds` after T0: Python logging ("py"), glog ("glog"), syslog ("syslog")."""
    t = T0 + timedelta(seconds=seconds)
    if fmt == "glog":
        return t.strftime("%m%d %H:%M:%S.%f")
    if fmt == "syslog":
        return t.strftime("%b %d %H:%M:%S")
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def write(root: Path, files: dict[str, str], job: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "job.yaml").write_text(job)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def megatron_iterations(first: int, last: int, start_s: float, step_s: float = 4.0, loss: float = 2.5,
                        nan_from: int | None = None, slow_from: int | None = None) -> tuple[str, float]:
    """Megatron-LM progress lines with a timestamp prefix; returns (text, the time after the last one)."""
    out = []
    t = start_s
    for it in range(first, last + 1):
        step = step_s * (3.0 if slow_from is not None and it >= slow_from else 1.0)
        t += step
        lm = "nan" if nan_from is not None and it >= nan_from else f"{loss - it * 1e-4:.6E}"
        grad = "nan" if nan_from is not None and it >= nan_from else f"{0.9 + (it % 7) * 0.01:.3f}"
        out.append(f"[{ts(t)}] iteration {it:8d}/  100000 | consumed samples: {it * 512:12d} | "
                   f"elapsed time per iteration (ms): {step * 1000:.1f} | learning rate: 1.500E-04 | "
                   f"global batch size:   512 | lm loss: {lm} | loss scale: 1.0 | grad norm: {grad} | "
                   f"number of skipped iterations:   0 | number of nan iterations: "
                   f"{0 if nan_from is None or it < nan_from else it - nan_from + 1:3d} |")
    return "\n".join(out) + "\n", t


def nccl_init(host: str, rank: int, t: float) -> str:
    return (f"{host}:{4000 + rank}:{4100 + rank} [{rank % 2}] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
            f"{host}:{4000 + rank}:{4100 + rank} [{rank % 2}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0\n"
            f"{host}:{4000 + rank}:{4100 + rank} [{rank % 2}] NCCL INFO comm 0x55d5c8e0 rank {rank} nranks 8 "
            f"cudaDev {rank % 2} busId 3b000 - Init COMPLETE\n"
            f"[{ts(t)}] [INFO] [megatron] building GPT model ...\n")


def watchdog(rank: int, t: float, seq: int = 78) -> str:
    return (f"[rank{rank}]:[E{ts(t, 'glog')} ProcessGroupNCCL.cpp:683] [Rank {rank}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
            f"Timeout(ms)=600000) ran for 600{rank:03d} milliseconds before timing out.\n"
            f"[rank{rank}]:[E{ts(t + 0.01, 'glog')} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {rank}] "
            f"Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: "
            f"{seq}, last completed NCCL work: {seq - 1}.\n")


def ecc_cascade(root: Path) -> Path:
    """4 nodes, Megatron: node-003 rank 5 hits an uncorrectable ECC error at iteration 1201; the others time out."""
    hosts = ["node-001", "node-002", "node-003", "node-004"]
    files: dict[str, str] = {}
    crash_s = 300 + 200 * 4.0
    for i, host in enumerate(hosts):
        for g in range(2):
            rank = i * 2 + g
            text = nccl_init(host, rank, 5 + rank * 0.1)
            if rank == 7:  # the last rank prints progress (Megatron's last pipeline stage)
                its, _ = megatron_iterations(1001, 1200, 300)
                text += its
            if rank == 5:
                text += (f"[rank5]:[E{ts(crash_s + 1, 'glog')} ProcessGroupNCCL.cpp:1526] [PG 0 Rank 5] Process "
                         f"group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error "
                         f"encountered\n"
                         f"{host}:4005:4105 [1] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'\n"
                         "Traceback (most recent call last):\n"
                         '  File "/workspace/megatron/pretrain_gpt.py", line 247, in <module>\n'
                         "    pretrain(train_valid_test_datasets_provider,\n"
                         '  File "/workspace/megatron/training/training.py", line 1139, in train_step\n'
                         "    losses_reduced = forward_backward_func(\n"
                         "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
                         "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                         "stacktrace below might be incorrect.\n")
            elif host != "node-003":
                text += watchdog(rank, crash_s + 600 + rank * 0.2)
            files[f"logs/{host}/rank-{rank}.log"] = text
    for host in hosts:
        files[f"logs/{host}/agent.log"] = (
            f"E{ts(crash_s + 640, 'glog')} 140234 torch/distributed/elastic/multiprocessing/api.py:881] failed "
            f"(exitcode: 1) local_rank: 0 (pid: 2345) of binary: /usr/bin/python3\n")
    files["logs/node-003/kern.log"] = (f"{ts(crash_s + 0.5, 'syslog')} node-003 kernel: NVRM: Xid (PCI:0000:3b:00): "
                                       "48, pid=4005, name=python3, DBE (double bit error)\n")
    return write(root, files, job_yaml(hosts))


def import_error(root: Path) -> Path:
    """3 nodes, HF Trainer: every rank fails at import time with the same ModuleNotFoundError."""
    hosts = ["gpu-a", "gpu-b", "gpu-c"]
    files = {}
    for i, host in enumerate(hosts):
        for g in range(2):
            rank = i * 2 + g
            files[f"logs/{host}/rank-{rank}.log"] = (
                f"{ts(2 + rank * 0.01)} - INFO - __main__ - Starting run with 6 processes\n"
                "Traceback (most recent call last):\n"
                '  File "/home/user/train.py", line 12, in <module>\n'
                "    from flash_attn import flash_attn_func\n"
                "ModuleNotFoundError: No module named 'flash_attn'\n")
    return write(root, files, job_yaml(hosts, framework="other"))


def nan_divergence(root: Path) -> Path:
    """2 nodes, Megatron: the loss becomes NaN at iteration 2417 and training goes on until it is stopped."""
    hosts = ["node-a1", "node-a2"]
    its, _ = megatron_iterations(2380, 2430, 100, nan_from=2417)
    files = {"logs/node-a1/rank-0.log": nccl_init("node-a1", 0, 1.0),
             "logs/node-a2/rank-3.log": nccl_init("node-a2", 3, 1.0) + its}
    return write(root, files, job_yaml(hosts))


def checkpoint_failure(root: Path) -> Path:
    """2 nodes, DeepSpeed: saving a checkpoint fails on rank 0 with ENOSPC."""
    hosts = ["worker-0", "worker-1"]
    head = "".join(f"[{ts(10 + (s - 100) * 2)}] [INFO] [logging.py:96:log_dist] [Rank 0] step={s}, skipped=0, "
                   f"lr=[0.00015], mom=[(0.9, 0.95)]\n" for s in range(100, 130))
    save = (f"[{ts(80)}] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: "
            "/ckpt/run7/global_step130/mp_rank_00_model_states.pt\n"
            f"[{ts(80.5)}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving "
            "/ckpt/run7/global_step130/mp_rank_00_model_states.pt...\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/dist-packages/torch/serialization.py", line 628, in save\n'
            "    _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n"
            "OSError: [Errno 28] No space left on device\n")
    files = {"logs/worker-0/rank-0.log": head + save,
             "logs/worker-1/rank-1.log": head.replace("[Rank 0]", "[Rank 1]")}
    return write(root, files, job_yaml(hosts, gpus=1, framework="deepspeed"))


def node_crash(root: Path) -> Path:
    """5 nodes: node-x4 stops logging (kernel panic); every other rank times out in the watchdog 10 minutes later."""
    hosts = [f"node-x{i}" for i in range(5)]
    files = {}
    for i, host in enumerate(hosts):
        for g in range(2):
            rank = i * 2 + g
            text = nccl_init(host, rank, 1.0)
            if rank == 9:
                its, _ = megatron_iterations(500, 560, 100)
                text += its
            lines = "".join(f"[{ts(100 + k * 10)}] [INFO] [megatron] heartbeat ok\n" for k in range(30 if i == 4 else 40))
            text += lines
            if host != "node-x4":
                text += watchdog(rank, 100 + 40 * 10 + 600 + rank * 0.1, seq=561)
            files[f"logs/{host}/rank-{rank}.log"] = text
    return write(root, files, job_yaml(hosts))


def successful(root: Path, job_id: str = "39") -> Path:
    """A successful 2-node run of the same setup: the background lines, and a benign warning."""
    hosts = ["node-001", "node-002"]
    files = {}
    for i, host in enumerate(hosts):
        for g in range(2):
            rank = i * 2 + g
            files[f"logs/{host}/rank-{rank}.log"] = (
                nccl_init(host, rank, 1.0) +
                f"[{ts(3)}] [WARNING] [megatron] The torch.distributed.ReduceOp.AVG is not supported by this "
                "NCCL version; falling back\n")
    return write(root, files, job_yaml(hosts, status="succeeded", job_id=job_id))
