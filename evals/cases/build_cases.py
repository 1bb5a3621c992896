"""Writes the hand-written eval cases in evals/cases/: real phrasing of DeepSpeed, HF Trainer, torchrun, NeMo,
torchtitan, Megatron, Slurm, Kubernetes, NCCL and the kernel, with truth.json line numbers taken from marks.

Run `python evals/cases/build_cases.py` after editing a case; the committed bundles are what the eval reads.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_BYTES = 200 * 1024


# --- writing a case ----------------------------------------------------------------------------------------


class Case:
    """Files as lists of lines; `mark` names a line so truth.json can point at it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.files: dict[str, list[str]] = {}
        self.marks: dict[str, tuple[str, int]] = {}

    def add(self, file: str, text: str, mark: str | None = None) -> None:
        lines = self.files.setdefault(file, [])
        for part in text.split("\n"):
            lines.append(part)
        if mark:
            self.marks[mark] = (file, len(lines))

    def extend(self, file: str, texts: Iterable[str]) -> None:
        for text in texts:
            self.add(file, text)

    def ref(self, mark: str) -> dict:
        file, line = self.marks[mark]
        return {"file": file, "line": line}

    def write(self, job_yaml: str, truth: dict) -> Path:
        root = HERE / self.name
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        (root / "job.yaml").write_text(job_yaml.lstrip("\n"), encoding="utf-8")
        for rel, lines in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
        (root / "truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        if size > MAX_BYTES:
            raise SystemExit(f"{self.name}: {size} bytes, over the {MAX_BYTES} limit")
        return root


# --- time formats -------------------------------------------------------------------------------------------


def t0(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def plus(t: datetime, seconds: float) -> datetime:
    return t + timedelta(seconds=seconds)


def pylog(t: datetime) -> str:  # Python logging default: 2026-03-14 09:12:01,224
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def glog(t: datetime, level: str) -> str:  # c10d / glog: E0314 09:12:01.224512
    return f"{level}{t.strftime('%m%d %H:%M:%S.')}{t.microsecond:06d}"


def dmesg_t(t: datetime) -> str:  # dmesg -T: [Sat Mar 14 09:12:01 2026]
    return "[" + t.strftime("%a %b ") + f"{t.day:2d}" + t.strftime(" %H:%M:%S %Y") + "]"


def k8s(t: datetime) -> str:  # kubectl logs --timestamps: RFC 3339 with nanoseconds
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}412Z"


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def nodes_yaml(hosts: list[str], ips: list[str], per_node: int) -> str:
    rows = []
    for i, (host, ip) in enumerate(zip(hosts, ips, strict=True)):
        ranks = ", ".join(str(r) for r in range(i * per_node, (i + 1) * per_node))
        rows.append(f"  - {{host: {host}, ip: {ip}, ranks: [{ranks}]}}")
    return "nodes:\n" + "\n".join(rows)


def traceback_lines(prefix: str, frames: list[tuple[str, int, str, str]], final: list[str],
                    header: str = "Traceback (most recent call last):") -> list[str]:
    out = [f"{prefix}{header}"]
    for path, line, func, code in frames:
        out.append(f'{prefix}  File "{path}", line {line}, in {func}')
        out.append(f"{prefix}    {code}")
    out += [f"{prefix}{text}" for text in final]
    return out


def watchdog_lines(rank: int, t: datetime, seq: int, op: str = "ALLREDUCE", numel: int = 1) -> list[str]:
    """What every healthy peer prints when a collective never completes (PyTorch >= 2.2 phrasing)."""
    p = f"[rank{rank}]:[{glog(t, 'E')} ProcessGroupNCCL.cpp:632] "
    return [
        f"{p}[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, "
        f"NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for 600034 milliseconds before timing out.",
        f"[rank{rank}]:[{glog(t, 'E')} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {rank}] Exception "
        f"(either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, "
        f"last completed NCCL work: {seq - 1}.",
        f"[rank{rank}]:[{glog(t, 'E')} ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank {rank}] Timeout at NCCL "
        f"work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}.",
        f"[rank{rank}]:[{glog(t, 'E')} ProcessGroupNCCL.cpp:621] [Rank {rank}] Some NCCL operations have failed "
        "or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.",
        f"[rank{rank}]:[{glog(t, 'E')} ProcessGroupNCCL.cpp:627] [Rank {rank}] To avoid data inconsistency, we are "
        "taking the entire process down.",
    ]


def remote_exit_lines(prefix: str, rank: int, t: datetime, nccl: str) -> list[str]:
    """A healthy rank's watchdog when a peer process died (PyTorch >= 2.2 with NCCL >= 2.13)."""
    return [
        f"{prefix}[{glog(t, 'E')} ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank {rank}] Process group watchdog "
        f"thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL "
        f"version {nccl}",
        f"{prefix}ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely.",
    ]


def elastic_failure(t: datetime, host: str, rank: int, local: int, pid: int, exitcode: int, script: str,
                    signal: str | None = None) -> list[str]:
    """torchrun's agent summary when a worker dies (torch >= 2.2)."""
    trace = f"Signal {signal.split()[0]} ({signal.split()[1]}) received by PID {pid}" if signal else \
        "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
    return [
        f"{glog(t, 'E')} {pid - 60} torch/distributed/elastic/multiprocessing/api.py:869] failed "
        f"(exitcode: {exitcode}) local_rank: {local} (pid: {pid}) of binary: /usr/bin/python3",
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/errors/'
        '__init__.py", line 355, in wrapper',
        "    return f(*args, **kwargs)",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 919, in main',
        "    run(args)",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 263, '
        "in launch_agent",
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        f"{script} FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        f"  time      : {t.strftime('%Y-%m-%d_%H:%M:%S')}",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {local})",
        f"  exitcode  : {exitcode} (pid: {pid})",
        "  error_file: <N/A>",
        f"  traceback : {trace}",
        "============================================================",
    ]


# --- 1. DeepSpeed ZeRO-3, CUDA OOM on one rank (user config), with a wandb red herring -------------------------


def deepspeed_zero3_cuda_oom() -> None:
    c = Case("deepspeed-zero3-cuda-oom")
    hosts = ["dgx-a100-01", "dgx-a100-02"]
    start = t0("2026-03-14T09:12:01.224000")
    ds = "[INFO] [launch.py:{}:main]"
    for i, host in enumerate(hosts):
        f = f"logs/{host}/deepspeed.log"
        p = f"{host}: "
        c.extend(f, [
            f"{p}[{pylog(start)}] {ds.format(146)} WORLD INFO DICT: {{'dgx-a100-01': [0, 1, 2, 3, 4, 5, 6, 7], "
            "'dgx-a100-02': [0, 1, 2, 3, 4, 5, 6, 7]}",
            f"{p}[{pylog(start)}] {ds.format(152)} nnodes=2, num_local_procs=8, node_rank={i}",
            f"{p}[{pylog(start)}] {ds.format(163)} global_rank_mapping=defaultdict(<class 'list'>, {{'dgx-a100-01': "
            "[0, 1, 2, 3, 4, 5, 6, 7], 'dgx-a100-02': [8, 9, 10, 11, 12, 13, 14, 15]})",
            f"{p}[{pylog(start)}] {ds.format(164)} dist_world_size=16",
            f"{p}[{pylog(start)}] {ds.format(166)} Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
            f"{p}[{pylog(plus(start, 6))}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator "
            "to cuda (auto detect)",
            f"{p}[{pylog(plus(start, 8))}] [INFO] [comm.py:652:init_distributed] cdb=None",
        ])
        if i == 0:
            c.extend(f, [
                f"{p}[{pylog(plus(start, 8.1))}] [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in "
                "DeepSpeed with backend nccl",
                f"{p}wandb: Currently logged in as: mlplatform. Use `wandb login --relogin` to force relogin",
                f"{p}wandb: Tracking run with wandb version 0.17.9",
                f"{p}wandb: ERROR Failed to sample metric: Not Supported",
                f"{p}[{pylog(plus(start, 29))}] [INFO] [config.py:1000:print] DeepSpeedEngine configuration:",
                f"{p}[{pylog(plus(start, 29))}] [INFO] [config.py:1004:print]   bf16_enabled ................. True",
                f"{p}[{pylog(plus(start, 29))}] [INFO] [config.py:1004:print]   gradient_accumulation_steps .. 4",
                f"{p}[{pylog(plus(start, 29))}] [INFO] [config.py:1004:print]   train_micro_batch_size_per_gpu  4",
                f"{p}[{pylog(plus(start, 29))}] [INFO] [config.py:1004:print]   zero_optimization_stage ...... 3",
                f"{p}[{pylog(plus(start, 29))}] [INFO] [config.py:1004:print]   steps_per_print .............. 1",
                f"{p}[{pylog(plus(start, 31))}] [INFO] [engine.py:2810:load_checkpoint] Loading checkpoint from "
                "/fsx/ckpt/codellama-34b-ft/global_step1200",
                f"{p}[{pylog(plus(start, 58))}] [INFO] [engine.py:3103:_load_checkpoint] rank 0 loaded checkpoint "
                "global_step1200",
            ])
    # rank 0 prints a line per step (steps_per_print=1); seq lengths vary, memory pressure grows
    f0 = "logs/dgx-a100-01/deepspeed.log"
    t = plus(start, 64)
    for step in range(1201, 1347):
        t = plus(t, 20.8 + (step % 7) * 0.31)
        lr = 2.0e-05
        c.add(f0, f"dgx-a100-01: [{pylog(t)}] [INFO] [logging.py:128:log_dist] [Rank 0] step={step}, skipped=0, "
                  f"lr=[{lr}], mom=[(0.9, 0.95)]")
        max_mem = 71.9 + (step % 11) * 0.4
        c.add(f0, f"dgx-a100-01: [{pylog(plus(t, 0.001))}] [INFO] [timer.py:264:stop] epoch=0/micro_step="
                  f"{step * 4}/global_step={step}, RunningAvgSamplesPerSec=12.31, CurrSamplesPerSec="
                  f"{12.6 - (step % 5) * 0.17:.2f}, MemAllocated=31.2GB, MaxMemAllocated={max_mem:.1f}GB")
        if step in (1291, 1322, 1344):
            c.add(f0, f"dgx-a100-01: [{pylog(plus(t, 0.002))}] [WARNING] [stage3.py:2069:step] 3 pytorch allocator "
                      "cache flushes since last step. this happens when there is high memory pressure and is "
                      "detrimental to performance. if this is happening frequently consider adjusting settings to "
                      "reduce memory consumption. If you are unable to make the cache flushes go away consider "
                      "adding get_accelerator().empty_cache() calls in your training loop to ensure that all ranks "
                      "flush their caches at the same time")
    t_oom = plus(t, 14.2)
    f1 = "logs/dgx-a100-02/deepspeed.log"
    p = "dgx-a100-02: [rank11]: "
    site = "/usr/local/lib/python3.10/dist-packages"
    frames = [
        ("/workspace/finetune/train.py", 212, "<module>", "main()"),
        ("/workspace/finetune/train.py", 188, "main", "model_engine.backward(loss)"),
        (f"{site}/deepspeed/utils/nvtx.py", 15, "wrapped_fn", "ret_val = func(*args, **kwargs)"),
        (f"{site}/deepspeed/runtime/engine.py", 2020, "backward", "self.optimizer.backward(loss, "
         "retain_graph=retain_graph)"),
        (f"{site}/deepspeed/runtime/zero/stage3.py", 2259, "backward", "self.loss_scaler.backward(loss.float(), "
         "retain_graph=retain_graph)"),
        (f"{site}/deepspeed/runtime/fp16/loss_scaler.py", 63, "backward", "scaled_loss.backward(retain_graph="
         "retain_graph)"),
        (f"{site}/torch/_tensor.py", 521, "backward", "torch.autograd.backward("),
        (f"{site}/torch/autograd/__init__.py", 289, "backward", "_engine_run_backward("),
        (f"{site}/torch/autograd/graph.py", 768, "_engine_run_backward", "return Variable._execution_engine."
         "run_backward(  # Calls into the C++ engine to run the backward pass"),
    ]
    tb = traceback_lines(p, frames, [])
    c.extend(f1, tb)
    c.add(f1, f"{p}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 3 has a total "
              "capacity of 79.15 GiB of which 2.06 GiB is free. Process 48121 has 77.08 GiB memory in use. Of the "
              "allocated memory 70.12 GiB is allocated by PyTorch, and 5.33 GiB is reserved by PyTorch but "
              "unallocated. If reserved but unallocated memory is large try setting "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
              "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
          mark="oom")
    t_kill = plus(t_oom, 3.1)
    for pid in range(48118, 48126):
        c.add(f1, f"dgx-a100-02: [{pylog(t_kill)}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {pid}")
    c.add(f1, f"dgx-a100-02: [{pylog(plus(t_kill, 2.4))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', "
              "'-u', 'train.py', '--local_rank=7', '--deepspeed', '--deepspeed_config', 'ds_zero3.json'] exits with "
              "return code = 1")
    # the healthy node sees its peers vanish: NCCL remote errors on every rank, then the launcher gives up
    t_remote = plus(t_oom, 4.0)
    for r in range(8):
        q = f"dgx-a100-01: [rank{r}]: "
        c.extend(f0, [
            *remote_exit_lines(q, r, plus(t_remote, r * 0.003), "2.20.5"),
            f"{q}Last error:",
            f"{q}NET/IB : Got completion from peer 10.20.0.12<48873> with status=12 opcode=129 len=0 vendor err 129 "
            "(Recv) localGid ::ffff:10.20.0.11 remoteGid ::ffff:10.20.0.12 hca mlx5_0",
        ])
    c.add(f0, f"dgx-a100-01: [{pylog(plus(t_remote, 2))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', "
              "'-u', 'train.py', '--local_rank=0', '--deepspeed', '--deepspeed_config', 'ds_zero3.json'] exits with "
              "return code = -6")
    c.add(f0, "pdsh@dgx-a100-01: dgx-a100-02: ssh exited with exit code 1")
    job = f"""
job_id: "ds-7731"
name: codellama-34b-ft
framework: deepspeed
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t_remote, 3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.20.0.11", "10.20.0.12"], 8)}
code:
  - {{commit: 5be21c0, at: 2026-03-10T11:00:00Z, message: "ft: pack sequences up to 16k tokens"}}
checkpoints:
  - {{step: 1000, at: 2026-03-13T22:10:00Z, path: /fsx/ckpt/codellama-34b-ft/global_step1000, valid: true}}
  - {{step: 1200, at: 2026-03-14T08:40:00Z, path: /fsx/ckpt/codellama-34b-ft/global_step1200, valid: true}}
spares: 1
launcher: deepspeed (pdsh)
"""
    c.write(job, {
        "fault": "cuda_oom", "category": "user_code",
        "root_cause": "rank 11 (GPU 3 of dgx-a100-02) ran out of GPU memory in backward on a long packed sequence; "
                      "ZeRO-3 had been flushing its allocator cache under memory pressure for 50 steps",
        "faulty_nodes": [], "stage": "training", "iteration": 1347,
        "indicating_lines": [c.ref("oom")],
        "actions": [{"kind": "none"}],
    })


# --- 2. HF Trainer (accelerate), loss spike then NaN, stopped by a NaN guard callback ----------------------


def hf_trainer_nan_divergence() -> None:
    c = Case("hf-trainer-nan-divergence")
    hosts = ["g6e-node-a", "g6e-node-b"]
    start = t0("2026-06-02T01:20:07.000000")
    f0, f1 = "logs/g6e-node-a/stdout.log", "logs/g6e-node-b/stdout.log"
    stamp = start.strftime("%m/%d/%Y %H:%M:%S")
    for i, f in enumerate((f0, f1)):
        for local in range(4):
            rank = i * 4 + local
            c.add(f, f"{stamp} - WARNING - __main__ - Process rank: {rank}, device: cuda:{local}, n_gpu: 1, "
                     "distributed training: True, 16-bits training: False")
    c.extend(f1, [
        "Token indices sequence length is longer than the specified maximum sequence length for this model "
        "(9013 > 8192). Running this sequence through the model will result in indexing errors",
    ])
    c.extend(f0, [
        f"{stamp} - INFO - __main__ - Training/evaluation parameters TrainingArguments(bf16=True, "
        "gradient_accumulation_steps=8, learning_rate=2e-05, logging_steps=1, max_grad_norm=1.0, "
        "output_dir=/fsx/ckpt/mistral-7b-sft, per_device_train_batch_size=4, save_steps=200, seed=42, ...)",
        "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.",
        "There were missing keys in the checkpoint model loaded: ['lm_head.weight'].",
        "***** Running training *****",
        "  Num examples = 1,204,331",
        "  Num Epochs = 1",
        "  Instantaneous batch size per device = 4",
        "  Total train batch size (w. parallel, distributed & accumulation) = 256",
        "  Gradient Accumulation steps = 8",
        "  Total optimization steps = 4,704",
        "  Number of trainable parameters = 7,241,732,096",
        "  Continuing training from checkpoint, will skip to saved global_step",
        "  Continuing training from epoch 0",
        "  Continuing training from global step 2000",
        "  Will skip the first 0 epochs then the first 16000 batches in the first epoch.",
    ])
    total = 4704
    elapsed = 2000 * 8.41
    first_nan = 2213
    for step in range(2001, first_nan + 5):
        elapsed += 8.4 + (step % 3) * 0.05
        pct = step * 100 // total
        filled = "█" * (pct // 10) + "▍"
        left = (total - step) * 8.41
        bar = (f"\r {pct:2d}%|{filled:<10}| {step}/{total} [{int(elapsed // 3600)}:{int(elapsed % 3600 // 60):02d}:"
               f"{int(elapsed % 60):02d}<{int(left // 3600)}:{int(left % 3600 // 60):02d}:{int(left % 60):02d},  "
               f"{8.41 + (step % 4) * 0.02:.2f}s/it]")
        epoch = round(step / total, 2)
        if step < 2205:
            loss, gn = 1.31 - (step - 2000) * 0.0004 + (step % 5) * 0.011, 0.42 + (step % 7) * 0.031
            record = f"{{'loss': {loss:.4f}, 'grad_norm': {gn:.4f}, 'learning_rate': 1.2e-05, 'epoch': {epoch}}}"
        elif step < first_nan:
            loss, gn = 1.4 * 1.45 ** (step - 2204), 3.1 * 3.0 ** (step - 2204)
            record = f"{{'loss': {loss:.4f}, 'grad_norm': {gn:.4f}, 'learning_rate': 1.2e-05, 'epoch': {epoch}}}"
        else:
            record = f"{{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.2e-05, 'epoch': {epoch}}}"
        c.add(f0, bar + record, mark="first_nan" if step == first_nan else None)
        if step == 2200:
            c.extend(f0, [
                "Saving model checkpoint to /fsx/ckpt/mistral-7b-sft/checkpoint-2200",
                "Configuration saved in /fsx/ckpt/mistral-7b-sft/checkpoint-2200/config.json",
                "Configuration saved in /fsx/ckpt/mistral-7b-sft/checkpoint-2200/generation_config.json",
                "Model weights saved in /fsx/ckpt/mistral-7b-sft/checkpoint-2200/model.safetensors",
            ])
    frames = [
        ("/workspace/sft/train_sft.py", 231, "<module>", "main()"),
        ("/workspace/sft/train_sft.py", 219, "main", "trainer.train(resume_from_checkpoint=True)"),
        ("/usr/local/lib/python3.11/site-packages/transformers/trainer.py", 2171, "train", "return inner_training_loop("),
        ("/usr/local/lib/python3.11/site-packages/transformers/trainer.py", 2598, "_inner_training_loop",
         "self.control = self.callback_handler.on_step_end(args, self.state, self.control)"),
        ("/usr/local/lib/python3.11/site-packages/transformers/trainer_callback.py", 495, "on_step_end",
         'return self.call_event("on_step_end", args, state, control)'),
        ("/usr/local/lib/python3.11/site-packages/transformers/trainer_callback.py", 516, "call_event",
         "result = getattr(callback, event)("),
        ("/workspace/sft/callbacks.py", 41, "on_step_end", "raise FloatingPointError("),
    ]
    guard = (f"FloatingPointError: loss is NaN for 5 consecutive steps (first at global step {first_nan}); stopping "
             "so the run can resume from the last good checkpoint")
    for i, f in enumerate((f0, f1)):
        for local in range(4):
            rank = i * 4 + local
            tb = traceback_lines(f"[rank{rank}]: ", frames, [])
            c.extend(f, tb)
            c.add(f, f"[rank{rank}]: {guard}", mark="guard" if rank == 0 else None)
    t_end = plus(start, 1900)
    for i, f in enumerate((f0, f1)):
        c.extend(f, [
            f"{glog(t_end, 'E')} 3301 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) "
            f"local_rank: 0 (pid: {3371 + i}) of binary: /usr/bin/python",
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/accelerate", line 8, in <module>',
            "    sys.exit(main())",
            "  File \"/usr/local/lib/python3.11/site-packages/accelerate/commands/launch.py\", line 1159, in "
            "launch_command",
            "    multi_gpu_launcher(args)",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "train_sft.py FAILED",
        ])
    job = f"""
job_id: "sft-2291"
name: mistral-7b-sft
framework: other
status: failed
started_at: {iso(start)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.3.7.21", "10.3.7.22"], 4)}
code:
  - {{commit: 0c41f9e, at: 2026-05-28T09:00:00Z, message: "sft: mix in synthetic math set v3"}}
checkpoints:
  - {{step: 1800, at: 2026-06-01T20:31:00Z, path: /fsx/ckpt/mistral-7b-sft/checkpoint-1800, valid: true}}
  - {{step: 2000, at: 2026-06-02T01:12:00Z, path: /fsx/ckpt/mistral-7b-sft/checkpoint-2000, valid: true}}
  - {{step: 2200, at: 2026-06-02T01:48:00Z, path: /fsx/ckpt/mistral-7b-sft/checkpoint-2200, valid: true}}
spares: 0
launcher: accelerate launch (HF Trainer)
"""
    c.write(job, {
        "fault": "nan_loss_divergence", "category": "data",
        "root_cause": "loss and grad norm blew up from step 2205 and turned NaN at step 2213; the user's NaN guard "
                      "stopped the run",
        "faulty_nodes": [], "stage": "training", "iteration": first_nan,
        "indicating_lines": [c.ref("first_nan"), c.ref("guard")],
        "actions": [{"kind": "restart", "from_step": 2200}],
    })


# --- 3. single node, 8 GPUs, torchrun: GPU 5 falls off the bus (Xid 79) --------------------------------------


def torchrun_single_node_xid79() -> None:
    c = Case("torchrun-1node-8gpu-xid79")
    host = "gpu-h100-07"
    start = t0("2026-05-02T13:40:00.000000")
    c.extend(f"logs/{host}/node.log", [
        f"{glog(start, 'W')} 201801 torch/distributed/run.py:793] ",
        f"{glog(start, 'W')} 201801 torch/distributed/run.py:793] *****************************************",
        f"{glog(start, 'W')} 201801 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable "
        "for each process to be 1 in default, to avoid your system being overloaded, please further tune the "
        "variable for optimal performance in your application as needed.",
        f"{glog(start, 'W')} 201801 torch/distributed/run.py:793] *****************************************",
    ])
    t = plus(start, 95)
    step_time = 2.43
    for r in range(8):
        f = f"logs/{host}/rank-{r}.log"
        c.extend(f, [
            f"{pylog(plus(start, 4))} INFO train.py:88 -- rank {r}/8 on cuda:{r}, world size 8",
            f"{pylog(plus(start, 61))} INFO train.py:131 -- resumed from /data/ckpt/vit-22b-dist/step_8000 "
            "(model, optimizer, sampler)",
        ])
    for step in range(8001, 8531):
        t = plus(t, step_time + (step % 9) * 0.011)
        if step % 10 == 0:
            c.add(f"logs/{host}/rank-0.log", f"{pylog(t)} INFO train.py:201 -- step {step} | loss "
                                              f"{2.091 - (step - 8000) * 0.0001:.4f} | lr 2.41e-04 | img/s 3311 | "
                                              "mem 61.2G")
    t_fault = plus(t, 1.7)
    c.add("logs/gpu-h100-07/rank-0.log", f"{pylog(plus(t, 0.02))} INFO train.py:212 -- saving async snapshot "
                                         "skipped (every 500 steps)")
    f5 = f"logs/{host}/rank-5.log"
    site = "/opt/conda/lib/python3.11/site-packages"
    tb = traceback_lines("[rank5]: ", [
        ("/workspace/vit/train.py", 244, "<module>", "main()"),
        ("/workspace/vit/train.py", 196, "main", "loss = train_step(model, batch, optimizer)"),
        ("/workspace/vit/train.py", 142, "train_step", "loss.backward()"),
        (f"{site}/torch/_tensor.py", 581, "backward", "torch.autograd.backward("),
        (f"{site}/torch/autograd/__init__.py", 347, "backward", "_engine_run_backward("),
        (f"{site}/torch/autograd/graph.py", 825, "_engine_run_backward", "return Variable._execution_engine."
         "run_backward(  # Calls into the C++ engine to run the backward pass"),
    ], [])
    c.add(f5, f"[rank5]:[{glog(t_fault, 'E')} ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank 5] Process group "
              "watchdog thread terminated with exception: CUDA error: unspecified launch failure")
    c.extend(f5, tb)
    c.add(f5, "[rank5]: RuntimeError: CUDA error: unspecified launch failure", mark="cuda")
    c.extend(f5, [
        "[rank5]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
        "below might be incorrect.",
        "[rank5]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "[rank5]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ])
    t_term = plus(t_fault, 1.4)
    node = f"logs/{host}/node.log"
    for local, pid in enumerate(range(201872, 201880)):
        if local != 5:
            c.add(node, f"{glog(t_term, 'W')} 201801 torch/distributed/elastic/multiprocessing/api.py:897] Sending "
                        f"process {pid} closing signal SIGTERM")
    c.extend(node, elastic_failure(plus(t_term, 2.3), host, 5, 5, 201877, -6, "train.py", "6 SIGABRT"))
    dm = f"probes/{host}/dmesg.txt"
    c.extend(dm, [
        f"{dmesg_t(plus(start, -86000))} pcieport 0000:15:01.0: AER: Corrected error received: 0000:16:00.0",
        f"{dmesg_t(plus(start, -86000))} mlx5_core 0000:16:00.0: PCIe Bus Error: severity=Corrected, type=Physical "
        "Layer, (Receiver ID)",
        f"{dmesg_t(plus(start, 2))} nvidia-peermem nv_mem_peer_register: nvidia-peermem: registered",
        f"{dmesg_t(t_fault)} NVRM: GPU at PCI:0000:9b:00: GPU-2f6a0c71-8e8b-4c05-b1b5-3c2e5d6a1f90",
        f"{dmesg_t(t_fault)} NVRM: GPU Board Serial Number: 1654123009876",
    ])
    c.add(dm, f"{dmesg_t(t_fault)} NVRM: Xid (PCI:0000:9b:00): 79, pid=201877, name=python3, GPU has fallen off the "
              "bus.", mark="xid")
    c.extend(dm, [
        f"{dmesg_t(t_fault)} NVRM: GPU 0000:9b:00.0: GPU has fallen off the bus.",
        f"{dmesg_t(t_fault)} NVRM: A GPU crash dump has been created. If possible, please run",
        "                           NVRM: nvidia-bug-report.sh as root to collect this data before",
        "                           NVRM: the NVIDIA kernel module is unloaded.",
    ])
    c.add(f"probes/{host}/nvidia-smi.txt", "Unable to determine the device handle for GPU0000:9B:00.0: Unknown Error",
          mark="smi")
    job = f"""
job_id: "vit-22b-dist-0502"
name: vit-22b-dist
framework: fsdp
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t_term, 3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}}
nodes:
  - {{host: {host}, ip: 10.1.0.107, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
code:
  - {{commit: e11d0b4, at: 2026-04-30T16:00:00Z, message: "vit: fused attention kernels"}}
checkpoints:
  - {{step: 7500, at: 2026-05-02T09:12:00Z, path: /data/ckpt/vit-22b-dist/step_7500, valid: true}}
  - {{step: 8000, at: 2026-05-02T13:31:00Z, path: /data/ckpt/vit-22b-dist/step_8000, valid: true}}
spares: 2
"""
    c.write(job, {
        "fault": "gpu_fell_off_bus", "category": "hardware",
        "root_cause": "GPU 5 (PCI 0000:9b:00) of gpu-h100-07 fell off the bus (Xid 79) during backward",
        "faulty_nodes": [host], "stage": "training", "iteration": 8531,
        "indicating_lines": [c.ref("cuda"), c.ref("xid"), c.ref("smi")],
        "actions": [{"kind": "evict", "nodes": [host]}, {"kind": "restart", "from_step": 8000}],
    })


# --- 4. Slurm + Megatron, no timestamps anywhere in the logs: an InfiniBand port goes down -------------------


def ibstat_block(hca: str, down: bool, guid: str) -> list[str]:
    return [
        f"CA '{hca}'",
        "\tCA type: MT4129",
        "\tNumber of ports: 1",
        "\tFirmware version: 28.39.2048",
        "\tHardware version: 0",
        f"\tNode GUID: {guid}",
        f"\tSystem image GUID: {guid}",
        "\tPort 1:",
        "\t\tState: Down" if down else "\t\tState: Active",
        "\t\tPhysical state: Polling" if down else "\t\tPhysical state: LinkUp",
        "\t\tRate: 10" if down else "\t\tRate: 400",
        "\t\tBase lid: 65535" if down else f"\t\tBase lid: {int(guid[-3:], 16) % 900 + 17}",
        "\t\tLMC: 0",
        "\t\tSM lid: 0" if down else "\t\tSM lid: 1",
        "\t\tCapability mask: 0xa651e848",
        f"\t\tPort GUID: {guid}",
        "\t\tLink layer: InfiniBand",
    ]


def megatron_iteration(it: int, total: int, ms: float, loss: float, samples_per_it: int = 512) -> str:
    return (f" iteration {it:8d}/{total:8d} | consumed samples: {it * samples_per_it:12d} | elapsed time per "
            f"iteration (ms): {ms:.1f} | learning rate: 2.812E-04 | global batch size: {samples_per_it:5d} | "
            f"lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {0.21 + (it % 13) * 0.004:.3f} | number of "
            "skipped iterations:   0 | number of nan iterations:   0 |")


def slurm_no_timestamps_nic_down() -> None:
    c = Case("slurm-no-timestamps-nic-down")
    hosts = ["hgx-b07", "hgx-b08", "hgx-b09", "hgx-b10"]
    ips = ["10.12.3.7", "10.12.3.8", "10.12.3.9", "10.12.3.10"]
    files = {h: f"logs/{h}/slurm-771203-{h}.out" for h in hosts}
    for i, h in enumerate(hosts):
        c.extend(files[h], [
            f"{h}:{88200 + i}:{88200 + i} [0] NCCL INFO Bootstrap : Using ibp12s0:{ips[i]}<0>",
            f"{h}:{88200 + i}:{88200 + i} [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.",
            f"{h}:{88200 + i}:{88200 + i} [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v7)",
            f"{h}:{88200 + i}:{88200 + i} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
            "[3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB ; OOB ibp12s0:" + ips[i] + "<0>",
        ])
    f0 = files["hgx-b07"]
    c.extend(f0, [
        "using world size: 32, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, "
        "pipeline-model-parallel size: 2 ",
        "> building GPT2BPETokenizer tokenizer ...",
        "> initializing torch distributed ...",
        "> initialized tensor model parallel with size 8",
        "> initialized pipeline model parallel with size 2",
        "loading checkpoint from /lustre/ckpt/gpt-20b at iteration 4000",
        "  successfully loaded checkpoint from /lustre/ckpt/gpt-20b [ t 0/8, p 0/2 ] at iteration 4000",
        "(min, max) time across ranks (ms):",
        "    load-checkpoint ................................: (38211.42, 38240.17)",
        "[after model, optimizer, and learning rate scheduler are built] datetime: (not logged)",
        "training ...",
    ])
    # the last pipeline stage logs the iteration lines (rank 31, on hgx-b10); Megatron prints no timestamp there
    f3 = files["hgx-b10"]
    last = 4137
    for it in range(4001, last + 1):
        c.add(f3, megatron_iteration(it, 250000, 5120.0 + (it % 17) * 3.1, 2.31 - (it - 4000) * 0.0002))
    # hgx-b09 loses mlx5_2: its own NCCL sees the async port event, its DP peers see retry-exceeded completions
    b09 = files["hgx-b09"]
    c.add(b09, "hgx-b09:88202:88415 [2] NCCL WARN NET/IB : mlx5_2:1 Got async event : port error", mark="port")
    c.add(b09, "hgx-b09:88202:88415 [2] NCCL WARN NET/IB : mlx5_2:1 Got async event : GID table change")
    for h, local in (("hgx-b07", 2), ("hgx-b10", 2)):  # its PP peer and its DP peer
        for k in range(3):
            c.add(files[h], f"{h}:{88200 + hosts.index(h)}:{88410 + k} [{local}] NCCL WARN NET/IB : Got completion "
                            f"from peer 10.12.3.9<{49152 + k}> with status=12 opcode=129 len=0 vendor err 129 (Recv) "
                            f"localGid ::ffff:{ips[hosts.index(h)]} remoteGid ::ffff:10.12.3.9 hca mlx5_2")
            c.add(files[h], f"{h}:{88200 + hosts.index(h)}:{88410 + k} [{local}] NCCL INFO transport/net.cc:1296 -> 6")
    # every rank's Python raises; ranks print them interleaved without a prefix or a timestamp
    for i, h in enumerate(hosts):
        for local in range(8):
            rank = i * 8 + local
            c.extend(files[h], [
                f"[rank{rank}]: Traceback (most recent call last):",
                f'[rank{rank}]:   File "/workspace/megatron-lm/pretrain_gpt.py", line 266, in <module>',
                f"[rank{rank}]:     pretrain(",
                f'[rank{rank}]:   File "/workspace/megatron-lm/megatron/training/training.py", line 1273, in '
                "train_step",
                f"[rank{rank}]:     losses_reduced = forward_backward_func(",
                f"[rank{rank}]: torch.distributed.DistBackendError: NCCL error in: "
                "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a "
                "network error, NCCL version 2.21.5",
                f"[rank{rank}]: ncclRemoteError: A call failed possibly due to a network error or a remote process "
                "exiting prematurely.",
                f"[rank{rank}]: Last error:",
                f"[rank{rank}]: NET/IB : Got completion from peer 10.12.3.9<49152> with status=12 opcode=129 len=0 "
                "vendor err 129 (Recv) localGid ::ffff:10.12.3.7 remoteGid ::ffff:10.12.3.9 hca mlx5_2",
            ])
        c.add(files[h], f"srun: error: {h}: tasks {i * 8}-{i * 8 + 7}: Exited with exit code 1")
    c.add(f0, "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    c.add(f0, "slurmstepd: error: *** STEP 771203.0 ON hgx-b07 CANCELLED AT 2026-06-09T03:15:40 ***")
    for i, h in enumerate(hosts):
        ib = f"probes/{h}/ibstat.txt"
        for k in range(8):
            down = h == "hgx-b09" and k == 2
            block = ibstat_block(f"mlx5_{k}", down, f"0x{0xa088c20300b1c000 + i * 0x100 + k:016x}")
            for line in block:
                mark = "state" if down and "State:" in line else "phys" if down and "Physical" in line else None
                c.add(ib, line, mark=mark)
    job = f"""
job_id: "771203"
name: gpt-20b-pretrain
framework: megatron
status: failed
started_at: 2026-06-09T02:01:12Z
ended_at: 2026-06-09T03:15:40Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}}
{nodes_yaml(hosts, ips, 8)}
code:
  - {{commit: 77a0c3d, at: 2026-06-01T12:00:00Z, message: "data: new blend weights"}}
checkpoints:
  - {{step: 3500, at: 2026-06-08T19:44:00Z, path: /lustre/ckpt/gpt-20b/iter_0003500, valid: true}}
  - {{step: 4000, at: 2026-06-09T01:58:00Z, path: /lustre/ckpt/gpt-20b/iter_0004000, valid: true}}
spares: 2
scheduler: slurm
"""
    c.write(job, {
        "fault": "nic_down", "category": "network",
        "root_cause": "InfiniBand HCA mlx5_2 on hgx-b09 went down (port error, physical state Polling); its DP peers "
                      "on the other nodes saw retry-exceeded completions naming 10.12.3.9",
        "faulty_nodes": ["hgx-b09"], "stage": "training", "iteration": last + 1,
        "indicating_lines": [c.ref("port"), c.ref("state"), c.ref("phys")],
        "actions": [{"kind": "evict", "nodes": ["hgx-b09"]}, {"kind": "restart", "from_step": 4000}],
    })


# --- 5. torchtitan (FSDP2), a silent hang: no error line at all; only the stacks show the outlier -----------


def pyspy_dump(pid: int, frames: list[str], active: bool) -> list[str]:
    state = "active" if active else "idle"
    out = [f"Process {pid}: /usr/bin/python3 -u -m torchtitan.train --job.config_file "
           "./torchtitan/models/llama3/train_configs/llama3_70b.toml",
           "Python v3.11.9 (/usr/bin/python3.11)", "", f'Thread {pid} ({state}): "MainThread"']
    out += [f"    {f}" for f in frames]
    out += [f'Thread {pid + 171} (idle): "Thread-2 (_pin_memory_loop)"',
            "    select (selectors.py:415)",
            "    wait (multiprocessing/connection.py:947)",
            "    _poll (multiprocessing/connection.py:440)",
            "    poll (multiprocessing/connection.py:257)",
            "    get (multiprocessing/queues.py:113)",
            "    do_one_step (torch/utils/data/_utils/pin_memory.py:35)",
            "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:58)",
            "    run (threading.py:982)",
            "    _bootstrap_inner (threading.py:1045)",
            "    _bootstrap (threading.py:1002)", ""]
    return out


def torchtitan_silent_hang() -> None:
    c = Case("torchtitan-silent-hang")
    hosts = ["a3-pool-17", "a3-pool-18", "a3-pool-19", "a3-pool-20"]
    start = t0("2026-07-21T00:02:10.000000")
    f0 = f"logs/{hosts[0]}/rank-0.log"
    p = "[rank0]:[titan] "
    c.extend(f0, [
        f"{p}{pylog(start)} - root - INFO - Starting job: Llama 3 70B training",
        f"{p}{pylog(plus(start, 3))} - root - INFO - Building 1-D device mesh with ['dp_shard'], [32]",
        f"{p}{pylog(plus(start, 3))} - root - INFO - [GC] Initial GC collection. 0.00 seconds.",
        f"{p}{pylog(plus(start, 41))} - root - INFO - Applied FSDP to the model",
        f"{p}{pylog(plus(start, 52))} - root - INFO - CUDA memory usage for model: 4.92GiB(6.21%)",
        f"{p}{pylog(plus(start, 60))} - root - INFO - Loading the checkpoint at step 5000.",
        f"{p}{pylog(plus(start, 131))} - root - INFO - Finished loading the checkpoint in 70.87 seconds.",
        f"{p}{pylog(plus(start, 132))} - root - INFO - Training starts at step 5001, with local batch size 2, "
        "global batch size 64, sequence length 8192, total steps 30000 (warmup 2000)",
    ])
    t = plus(start, 140)
    last = 5132
    for step in range(5001, last + 1):
        t = plus(t, 9.62 + (step % 5) * 0.02)
        if step % 5 == 0 or step == last:
            c.add(f0, f"{p}{pylog(t)} - root - INFO - step: {step:4d}  loss:  {2.41 - (step - 5000) * 0.0003:.4f}  "
                      "memory: 58.31GiB(73.62%)  tps: 3,412  tflops: 198.12  mfu: 20.03%")
    healthy = ["dist_max (torchtitan/distributed/utils.py:60)", "train_step (torchtitan/train.py:492)",
               "train (torchtitan/train.py:565)",
               "wrapper (torch/distributed/elastic/multiprocessing/errors/__init__.py:355)",
               "<module> (torchtitan/train.py:701)", "_run_code (<frozen runpy>:88)",
               "_run_module_as_main (<frozen runpy>:198)"]
    stuck = ["_engine_run_backward (torch/autograd/graph.py:825)", "backward (torch/autograd/__init__.py:347)",
             "backward (torch/_tensor.py:581)", "forward_backward_step (torchtitan/train.py:432)",
             "train_step (torchtitan/train.py:468)", *healthy[2:]]
    for i, h in enumerate(hosts):
        for local in range(8):
            rank = i * 8 + local
            bad = rank == 29
            dump = pyspy_dump(61200 + rank, stuck if bad else healthy, active=bad)
            c.extend(f"stacks/{h}/rank-{rank}.txt", dump)
    job = f"""
job_id: "titan-70b-0721"
name: llama3-70b-torchtitan
framework: torchtitan
status: hung
started_at: {iso(start)}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.128.0.17", "10.128.0.18", "10.128.0.19", "10.128.0.20"], 8)}
code:
  - {{commit: 3f90aa1, at: 2026-07-15T08:00:00Z, message: "titan: enable float8 all-gather"}}
checkpoints:
  - {{step: 4500, at: 2026-07-20T22:40:00Z, path: gs://ckpt/llama3-70b/step-4500, valid: true}}
  - {{step: 5000, at: 2026-07-20T23:58:00Z, path: gs://ckpt/llama3-70b/step-5000, valid: true}}
spares: 1
note: "no log line for 14 minutes after step 5132; py-spy dumps taken by the hang detector"
"""
    c.write(job, {
        "fault": "gpu_hang", "category": "hardware",
        "root_cause": "GPU 5 of a3-pool-20 (rank 29) stopped making progress in backward; every other rank waits "
                      "in the step's loss all-reduce",
        "faulty_nodes": ["a3-pool-20"], "stage": "training", "iteration": last + 1,
        "indicating_lines": [],
        "actions": [{"kind": "evict", "nodes": ["a3-pool-20"]}, {"kind": "restart", "from_step": 5000}],
    })


# --- 6. Kubernetes PyTorchJob: a cgroup OOM kill; the cause is only in probes/ --------------------------------


def nvsmi_ecc(gpus: int, sbe: dict[int, int]) -> list[str]:
    out = ["==============NVSMI LOG==============", "", "Timestamp                                 : "
           "Mon Aug  3 11:20:02 2026", "Driver Version                            : 550.90.07",
           "CUDA Version                              : 12.4", "", f"Attached GPUs                             : {gpus}"]
    for g in range(gpus):
        out += [f"GPU 00000000:{0x18 + g * 0x11:02X}:00.0", "    ECC Mode", "        Current                    "
                "       : Enabled", "        Pending                           : Enabled", "    ECC Errors",
                "        Volatile", f"            SRAM Correctable              : {sbe.get(g, 0)}",
                "            SRAM Uncorrectable Parity     : 0", "            SRAM Uncorrectable SEC-DED    : 0",
                "            DRAM Correctable              : 0", "            DRAM Uncorrectable            : 0",
                "    Remapped Rows", "        Correctable Error                 : 0",
                "        Uncorrectable Error               : 0", "        Pending                           : No",
                "        Remapping Failure Occurred        : No", ""]
    return out


def k8s_oom_probes_only() -> None:
    c = Case("k8s-oom-kill-probes-only")
    hosts = ["gke-a3-pool-5d9c-k7wq", "gke-a3-pool-5d9c-m2xz", "gke-a3-pool-5d9c-q8rt", "gke-a3-pool-5d9c-v4nc"]
    pods = ["llama-sft-master-0", "llama-sft-worker-0", "llama-sft-worker-1", "llama-sft-worker-2"]
    start = t0("2026-08-03T09:30:00.000000")
    last = 3188
    for i, (h, pod) in enumerate(zip(hosts, pods, strict=True)):
        f = f"logs/{h}/{pod}.log"
        c.extend(f, [
            f"{k8s(start)} {glog(start, 'W')} 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment "
            "variable for each process to be 1 in default",
            f"{k8s(plus(start, 2))} INFO 2026-08-03 09:30:02 [train.py:71] node_rank={i} world_size=32 "
            f"master_addr=llama-sft-master-0",
            f"{k8s(plus(start, 40))} INFO 2026-08-03 09:30:40 [train.py:119] resumed from /mnt/ckpt/llama-sft/step-3000",
        ])
        if i == 1:
            c.add(f, f"{k8s(plus(start, 1))} [W803 09:30:01.224000000 socket.cpp:697] [c10d] The client socket has "
                     "failed to connect to [llama-sft-master-0]:23456 (errno: 111 - Connection refused).")
    t = plus(start, 44)
    f0 = f"logs/{hosts[0]}/{pods[0]}.log"
    for step in range(3001, last + 1):
        t = plus(t, 6.1 + (step % 4) * 0.03)
        if step % 4 == 0 or step == last:
            c.add(f0, f"{k8s(t)} INFO {t.strftime('%Y-%m-%d %H:%M:%S')} [train.py:188] step={step} loss="
                      f"{1.62 - (step - 3000) * 0.0002:.4f} lr=1.0e-05 tokens/s=98211")
    t_kill = plus(t, 4.2)
    # worker-1's pod: torchrun inside it sees local rank 3 vanish with SIGKILL (no Python message: SIGKILL)
    w1 = f"logs/{hosts[2]}/{pods[2]}.log"
    pid = 48213
    for local, other in enumerate(range(48210, 48218)):
        if other != pid:
            c.add(w1, f"{k8s(plus(t_kill, 0.8))} {glog(plus(t_kill, 0.8), 'W')} 1 torch/distributed/elastic/"
                      f"multiprocessing/api.py:897] Sending process {other} closing signal SIGTERM")
    for line in elastic_failure(plus(t_kill, 2.2), pods[2], 19, 3, pid, -9, "train.py", "9 SIGKILL"):
        c.add(w1, f"{k8s(plus(t_kill, 2.2))} {line}")
    # the other pods: their collectives wait for the dead ranks until the watchdog fires
    t_wd = plus(t_kill, 600.1)
    for i in (0, 1, 3):
        f = f"logs/{hosts[i]}/{pods[i]}.log"
        for local in range(8):
            for line in watchdog_lines(i * 8 + local, plus(t_wd, local * 0.004), 95771, "_REDUCE_SCATTER_BASE",
                                       2097152):
                c.add(f, f"{k8s(plus(t_wd, local * 0.004))} {line}")
    dm = f"probes/{hosts[2]}/dmesg.txt"
    kt = t_kill
    cg = "/kubepods/burstable/pod7c1f2a90-5d1e-4b8e-9a11-0c3b27d4e6f2"
    c.extend(dm, [
        f"{dmesg_t(plus(start, -3600))} nvidia-peermem nv_mem_peer_register: nvidia-peermem: registered",
        f"{dmesg_t(kt)} pt_data_worker invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=-997",
        f"{dmesg_t(kt)} CPU: 88 PID: 48377 Comm: pt_data_worker Tainted: P           OE      6.1.85+ #1",
        f"{dmesg_t(kt)} memory: usage 1073741824kB, limit 1073741824kB, failcnt 41",
        f"{dmesg_t(kt)} Memory cgroup stats for {cg}:",
        f"{dmesg_t(kt)} anon 1087015493632",
        f"{dmesg_t(kt)} Tasks state (memory values in pages):",
        f"{dmesg_t(kt)} [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        f"{dmesg_t(kt)} [  48213]     0 48213 103084960 33742112 270340096        0          -997 python",
        f"{dmesg_t(kt)} [  48377]     0 48377 88231040 12001216 130021376        0          -997 pt_data_worker",
    ])
    c.add(dm, f"{dmesg_t(kt)} oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-9b1d77e0,"
              f"mems_allowed=0-1,oom_memcg={cg},task_memcg={cg}/cri-containerd-9b1d77e0,task=python,pid={pid},uid=0",
          mark="oomkill")
    c.add(dm, f"{dmesg_t(kt)} Memory cgroup out of memory: Killed process {pid} (python) total-vm:412339840kB, "
              "anon-rss:134968448kB, file-rss:1048576kB, shmem-rss:0kB, UID:0 pgtables:264004kB oom_score_adj:-997",
          mark="killed")
    for i, h in enumerate(hosts):
        c.extend(f"probes/{h}/nvidia-smi.txt", nvsmi_ecc(8, {3: 2} if i == 1 else {}))
        if i != 2:
            c.add(f"probes/{h}/dmesg.txt", f"{dmesg_t(plus(start, -3600))} nvidia-peermem nv_mem_peer_register: "
                                           "nvidia-peermem: registered")
    job = f"""
job_id: "llama-sft-0803"
name: llama-sft
framework: fsdp
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t_wd, 5))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.64.1.11", "10.64.1.12", "10.64.1.13", "10.64.1.14"], 8)}
code:
  - {{commit: b73e2f1, at: 2026-07-30T10:00:00Z, message: "data: in-memory shuffle buffer of 2M samples"}}
checkpoints:
  - {{step: 2500, at: 2026-08-03T05:10:00Z, path: /mnt/ckpt/llama-sft/step-2500, valid: true}}
  - {{step: 3000, at: 2026-08-03T09:20:00Z, path: /mnt/ckpt/llama-sft/step-3000, valid: true}}
spares: 1
platform: kubernetes (kubeflow PyTorchJob)
"""
    c.write(job, {
        "fault": "host_oom_killed", "category": "infrastructure",
        "root_cause": "the kernel's cgroup OOM killer killed rank 19 (pid 48213) in pod llama-sft-worker-1 on "
                      "gke-a3-pool-5d9c-q8rt: host memory of the pod reached its 1 TiB limit",
        "faulty_nodes": [hosts[2]], "stage": "training", "iteration": last + 1,
        "indicating_lines": [c.ref("oomkill"), c.ref("killed")],
        "actions": [{"kind": "restart", "from_step": 3000}],
    })


# --- 7. NeMo: the checkpoint save hits the Lustre quota; the partial checkpoint is marked invalid ------------


def nemo_checkpoint_quota() -> None:
    c = Case("nemo-checkpoint-quota")
    hosts = ["dgx-h100-041", "dgx-h100-042"]
    start = t0("2026-09-12T00:01:40.000000")
    files = {h: f"logs/{h}/nemo_log_globalrank-{i * 8}_localrank-0.txt" for i, h in enumerate(hosts)}
    stamp = start.strftime("%Y-%m-%d %H:%M:%S")
    for i, h in enumerate(hosts):
        c.extend(files[h], [
            f"[NeMo W {stamp} nemo_logging:405] Megatron num_microbatches_calculator not found, using Apex version.",
            f"[NeMo I {stamp} nemo_logging:393] Experiments will be logged at /lustre/exp/nemotron-15b/2026-09-12",
            f"[NeMo W {stamp} exp_manager:773] No version folders would be created under the log folder as "
            "'resume_if_exists' is enabled.",
            f"[NeMo I {stamp} megatron_init:263] Rank {i * 8} has data parallel group : [{i * 8}]",
            f"[NeMo I {stamp} megatron_init:269] Rank {i * 8} has combined group of data parallel and context "
            f"parallel : [{i * 8}]",
            f"[NeMo I {stamp} megatron_init:274] All data parallel group ranks with context parallel combined: "
            "[[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15]]",
        ])
    f0 = files[hosts[0]]
    elapsed = 0.0
    for step in range(3601, 4201):
        elapsed += 5.99
        if step % 20 == 0:
            c.add(f0, f"Epoch 0: :  {step * 100 // 10000}%|▍| {step}/10000 [{int(elapsed // 3600)}:"
                      f"{int(elapsed % 3600 // 60):02d}:{int(elapsed % 60):02d}<9:41:01, "
                      f"reduced_train_loss={1.91 - (step - 3600) * 0.0001:.3f}, global_step={step - 1}.0, "
                      f"consumed_samples={step * 256}.0, train_step_timing in s=5.99]")
    t_save = plus(start, 3620)
    save = t_save.strftime("%Y-%m-%d %H:%M:%S")
    c.add(f0, "Epoch 0: : 42%|▍| 4200/10000 [1:00:14<9:41:01, reduced_train_loss=1.850, global_step=4199.0, "
              "consumed_samples=1075200.0, train_step_timing in s=5.99]`Trainer.fit` stopped: ...")
    c.add(f0, f"[NeMo I {save} nemo_model_checkpoint:497] Scheduled async checkpoint save for "
              "/lustre/exp/nemotron-15b/checkpoints/megatron_gpt--val_loss=1.85-step=4199-consumed_samples=1075200.0"
              ".ckpt")
    site = "/usr/local/lib/python3.10/dist-packages"
    frames = [
        (f"{site}/megatron/core/dist_checkpointing/strategies/filesystem_async.py", 243, "write_preloaded_data",
         "torch.save(data, stream)"),
        (f"{site}/torch/serialization.py", 652, "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
        (f"{site}/torch/serialization.py", 499, "__exit__", "self.file_like.write_end_of_file()"),
    ]
    for i, h in enumerate(hosts):
        for local in range(8):
            rank = i * 8 + local
            q = f"[rank{rank}]: "
            ts = plus(t_save, 41 + local * 0.13)
            c.add(files[h], f"[NeMo E {ts.strftime('%Y-%m-%d %H:%M:%S')} filesystem_async:258] Local process "
                            f"{local} encountered an error: [enforce fail at inline_container.cc:778] . "
                            f"PytorchStreamWriter failed writing file data/{local + 3}: file write failed")
            c.extend(files[h], traceback_lines(q, frames, []))
            c.add(files[h], f"{q}RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed "
                            f"writing file data/{local + 3}: file write failed",
                  mark=f"enforce{rank}" if rank == 0 else None)
            c.add(files[h], f"{q}OSError: [Errno 122] Disk quota exceeded: '/lustre/exp/nemotron-15b/checkpoints/"
                            f"megatron_gpt--val_loss=1.85-step=4199-consumed_samples=1075200.0.ckpt/__{rank}_0.distcp'",
                  mark=f"quota{rank}" if rank in (0, 8) else None)
    t_end = plus(t_save, 47)
    c.add(f0, f"[NeMo E {t_end.strftime('%Y-%m-%d %H:%M:%S')} nemo_model_checkpoint:512] Async checkpoint save for "
              "step 4199 failed; the checkpoint directory is incomplete and will not be finalized")
    c.add(f0, "srun: error: dgx-h100-041: tasks 0-7: Exited with exit code 1")
    c.add(files[hosts[1]], "srun: error: dgx-h100-042: tasks 8-15: Exited with exit code 1")
    for h in hosts:
        c.add(f"probes/{h}/lfs-quota.json", json.dumps({
            "probe": "lfs quota -u svc-nemo /lustre", "status": "fail",
            "detail": "/lustre: user svc-nemo 52428800000 kbytes used of 52428800000 kbytes hard limit (100%), "
                      "grace none",
            "metrics": {"kbytes_used": 52428800000, "kbytes_limit": 52428800000, "files": 1402211}}, indent=2))
    c.marks["lfs"] = ("probes/dgx-h100-041/lfs-quota.json", 4)
    job = f"""
job_id: "902211"
name: nemotron-15b-cpt
framework: nemo
status: failed
started_at: {iso(start)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.9.0.41", "10.9.0.42"], 8)}
code:
  - {{commit: 1d2e3f4, at: 2026-09-01T10:00:00Z, message: "cpt: 15b continued pretraining recipe"}}
checkpoints:
  - {{step: 3000, at: 2026-09-11T21:55:00Z, path: /lustre/exp/nemotron-15b/checkpoints/step=2999, valid: true}}
  - {{step: 3600, at: 2026-09-11T23:58:00Z, path: /lustre/exp/nemotron-15b/checkpoints/step=3599, valid: true}}
  - {{step: 4200, at: 2026-09-12T01:02:00Z, path: /lustre/exp/nemotron-15b/checkpoints/step=4199, valid: false}}
spares: 0
scheduler: slurm
"""
    c.write(job, {
        "fault": "storage_checkpoint_write_failure", "category": "infrastructure",
        "root_cause": "the step-4199 distributed checkpoint hit the Lustre user quota (Errno 122) on every rank; "
                      "the checkpoint is partial",
        "faulty_nodes": [], "stage": "checkpoint", "iteration": 4200,
        "indicating_lines": [c.ref("enforce0"), c.ref("quota0"), c.ref("quota8"), c.ref("lfs")],
        "actions": [{"kind": "restart", "from_step": 3600}],
    })


# --- 8. Megatron, 4 nodes: an uncorrectable ECC error, a 10-minute watchdog cascade and two red herrings -------


def nvsmi_ecc_one(gpu_bus: str, dram_unc: int, sbe: int, pending: str) -> list[str]:
    return [f"GPU {gpu_bus}", "    ECC Errors", "        Volatile",
            f"            SRAM Correctable              : {sbe}", "            SRAM Uncorrectable Parity     : 0",
            "            SRAM Uncorrectable SEC-DED    : 0", "            DRAM Correctable              : 0",
            f"            DRAM Uncorrectable            : {dram_unc}", "    Remapped Rows",
            "        Correctable Error                 : 0",
            f"        Uncorrectable Error               : {dram_unc}",
            f"        Pending                           : {pending}",
            "        Remapping Failure Occurred        : No", ""]


def megatron_ecc_cascade() -> None:
    c = Case("megatron-ecc-watchdog-cascade")
    hosts = ["sw-gpu-021", "sw-gpu-022", "sw-gpu-023", "sw-gpu-024"]
    ips = ["10.44.0.21", "10.44.0.22", "10.44.0.23", "10.44.0.24"]
    files = {h: f"logs/{h}/stdout.log" for h in hosts}
    start = t0("2026-10-07T08:01:00.000000")
    for i, h in enumerate(hosts):
        c.add(files[h], f"[{start.strftime('%Y-%m-%d %H:%M:%S')}] [INFO] node {h} node_rank {i}: starting 8 "
                        "workers (torchrun --nnodes 4 --nproc-per-node 8)")
    c.add(files["sw-gpu-024"], "[W1007 08:01:02.118000000 socket.cpp:697] [c10d] The client socket has failed to "
                               "connect to [sw-gpu-021]:29500 (errno: 111 - Connection refused).")
    c.add(files["sw-gpu-022"], "sw-gpu-022:1021:1021 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.")
    c.add(files["sw-gpu-022"], "sw-gpu-022:1021:1021 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin symbol "
                               "(>= v5). ncclNetPlugin symbols v4 and lower are not supported.")
    t = plus(start, 310)
    last = 21931
    f_last = files["sw-gpu-024"]  # last pipeline stage prints the iteration lines
    for it in range(21801, last + 1):
        t = plus(t, 4.11 + (it % 7) * 0.01)
        c.add(f_last, f"[{t.strftime('%Y-%m-%d %H:%M:%S')}] " + megatron_iteration(it, 300000, 4110.0 + (it % 7) * 10,
                                                                                  1.98 - (it - 21800) * 0.0001))
    t_fault = plus(t, 2.6)
    bad = files["sw-gpu-023"]
    c.add(bad, "sw-gpu-023:77102:77390 [2] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'",
          mark="nccl")
    c.add(bad, "sw-gpu-023:77102:77390 [2] NCCL INFO include/alloc.h:201 -> 1")
    c.extend(bad, traceback_lines("[rank18]: ", [
        ("/workspace/megatron-lm/pretrain_gpt.py", 266, "<module>", "pretrain("),
        ("/workspace/megatron-lm/megatron/training/training.py", 1542, "train", "train_step(forward_step_func,"),
        ("/workspace/megatron-lm/megatron/core/pipeline_parallel/schedules.py", 1444, "forward_backward_pipelining_"
         "without_interleaving", "output_tensor, num_tokens = forward_step("),
    ], []))
    c.add(bad, "[rank18]: RuntimeError: CUDA error: uncorrectable ECC error encountered", mark="cuda")
    c.add(bad, "[rank18]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    t_term = plus(t_fault, 1.2)
    for local in range(8):
        if local != 2:
            c.add(bad, f"{glog(t_term, 'W')} 77011 torch/distributed/elastic/multiprocessing/api.py:897] Sending "
                       f"process {77100 + local} closing signal SIGTERM")
    c.extend(bad, elastic_failure(plus(t_term, 3), "sw-gpu-023", 18, 2, 77102, 1, "pretrain_gpt.py"))
    # the other three nodes keep waiting: watchdog timeouts after 600 s on every rank, the master node's agent last
    t_wd = plus(t_fault, 600.2)
    for i, h in enumerate(hosts):
        if h == "sw-gpu-023":
            continue
        for local in range(8):
            c.extend(files[h], watchdog_lines(i * 8 + local, plus(t_wd, local * 0.002), 1183402))
            if i == 0:
                c.add(files[h], f"[rank{local}]:[{glog(plus(t_wd, 0.4), 'E')} ProcessGroupNCCL.cpp:1380] [PG 0 "
                                f"(default_pg) Rank {local}] ProcessGroupNCCL preparing to dump debug info. Include "
                                "the flight recorder trace: TORCH_NCCL_TRACE_BUFFER_SIZE=2000")
        c.extend(files[h], elastic_failure(plus(t_wd, 2), h, i * 8, 0, 1100 + i, -6, "pretrain_gpt.py", "6 SIGABRT"))
    dm = "probes/sw-gpu-023/dmesg.txt"
    c.add(dm, f"{dmesg_t(plus(start, -7200))} nvidia-nvswitch0: open (major=511)")
    c.add(dm, f"{dmesg_t(t_fault)} NVRM: Xid (PCI:0000:52:00): 48, pid=77102, name=python, An uncorrectable double "
              "bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
          mark="xid48")
    c.add(dm, f"{dmesg_t(plus(t_fault, 0.4))} NVRM: Xid (PCI:0000:52:00): 63, pid=77102, name=python, Row Remapper: "
              "New row (0x00000000088a1f40) marked for remapping, reset gpu to activate.")
    buses = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:52:00.0", "00000000:61:00.0",
             "00000000:9D:00.0", "00000000:C3:00.0", "00000000:D1:00.0", "00000000:DF:00.0"]
    for h in hosts:
        smi = f"probes/{h}/nvidia-smi.txt"
        c.extend(smi, ["==============NVSMI LOG==============", "", "Driver Version                            : "
                       "550.54.15", "", "Attached GPUs                             : 8"])
        for g, bus in enumerate(buses):
            unc = 1 if (h == "sw-gpu-023" and g == 2) else 0
            sbe = 14 if (h == "sw-gpu-024" and g == 6) else 0
            for line in nvsmi_ecc_one(bus, unc, sbe, "Yes" if unc else "No"):
                c.add(smi, line, mark="dram" if unc and "DRAM Uncorrectable" in line else None)
    job = f"""
job_id: "1183402"
name: gpt-moe-32x1b
framework: megatron
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t_wd, 3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 4, pp: 2, dp: 4, cp: 1, ep: 1}}
{nodes_yaml(hosts, ips, 8)}
code:
  - {{commit: 4aa19c2, at: 2026-10-01T08:00:00Z, message: "moe: aux loss coeff 1e-2"}}
checkpoints:
  - {{step: 21000, at: 2026-10-06T22:15:00Z, path: /weka/ckpt/gpt-moe/iter_0021000, valid: true}}
  - {{step: 21500, at: 2026-10-07T07:49:00Z, path: /weka/ckpt/gpt-moe/iter_0021500, valid: true}}
spares: 2
"""
    c.write(job, {
        "fault": "gpu_ecc_uncorrectable", "category": "hardware",
        "root_cause": "uncorrectable DRAM ECC error (Xid 48) on GPU 2 of sw-gpu-023 killed rank 18; the other 24 "
                      "ranks timed out in the NCCL watchdog 10 minutes later",
        "faulty_nodes": ["sw-gpu-023"], "stage": "training", "iteration": last + 1,
        "indicating_lines": [c.ref("nccl"), c.ref("cuda"), c.ref("xid48"), c.ref("dram")],
        "actions": [{"kind": "evict", "nodes": ["sw-gpu-023"]}, {"kind": "restart", "from_step": 21500}],
    })


# --- 9. PyTorch internal assert in the caching allocator; an earlier IB flap that recovered is the red herring;
#        the truth does not name a node (partial truth) -------------------------------------------------------


def pytorch_internal_assert() -> None:
    c = Case("pytorch-allocator-internal-assert")
    hosts = ["hpc-n031", "hpc-n032"]
    files = {h: f"logs/{h}/rank-log-{h}.txt" for h in hosts}
    start = t0("2026-11-03T06:00:00.000000")
    for h in hosts:
        c.add(files[h], f"{pylog(start)} INFO launcher: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1")
    c.add(files["hpc-n031"], "hpc-n031:4410:4522 [3] NCCL WARN NET/IB : mlx5_3:1 Got async event : port error")
    c.add(files["hpc-n031"], "hpc-n031:4410:4522 [3] NCCL WARN NET/IB : mlx5_3:1 Got async event : port active")
    t = plus(start, 60)
    last = 14630
    for it in range(14501, last + 1):
        t = plus(t, 2.2)
        if it % 5 == 0 or it == last:
            c.add(files["hpc-n031"], f"[{t.strftime('%Y-%m-%d %H:%M:%S')}] " +
                  megatron_iteration(it, 100000, 2200.0 + (it % 3) * 4.1, 2.77 - (it - 14500) * 0.0002, 256))
    t_fault = plus(t, 1.1)
    f = files["hpc-n032"]
    c.extend(f, traceback_lines("[rank13]: ", [
        ("/workspace/Megatron-LM/pretrain_gpt.py", 266, "<module>", "pretrain("),
        ("/workspace/Megatron-LM/megatron/core/distributed/param_and_grad_buffer.py", 379, "start_grad_sync",
         "bucket.start_grad_sync()"),
        ("/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", 3964,
         "_reduce_scatter_base", "work = group._reduce_scatter_base(output, input, opts)"),
    ], []))
    c.add(f, '[rank13]: RuntimeError: !block->expandable_segment_ INTERNAL ASSERT FAILED at '
             '"../c10/cuda/CUDACachingAllocator.cpp":2522, please report a bug to PyTorch. ', mark="assert")
    c.extend(f, elastic_failure(plus(t_fault, 2), "hpc-n032", 13, 5, 9944, 1, "pretrain_gpt.py"))
    for local in range(8):
        c.extend(files["hpc-n031"], remote_exit_lines(f"[rank{local}]:", local, plus(t_fault, 4), "2.21.5"))
    job = f"""
job_id: "55190"
name: gpt-8b-ablation
framework: megatron
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t_fault, 6))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 2, pp: 1, dp: 8, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["172.16.3.31", "172.16.3.32"], 8)}
code:
  - {{commit: c0ffee1, at: 2026-10-30T10:00:00Z, message: "enable expandable segments"}}
checkpoints:
  - {{step: 14000, at: 2026-11-02T23:00:00Z, path: /scratch/ckpt/gpt-8b/iter_0014000, valid: true}}
  - {{step: 14500, at: 2026-11-03T05:58:00Z, path: /scratch/ckpt/gpt-8b/iter_0014500, valid: true}}
spares: 1
"""
    c.write(job, {
        "fault": "pytorch_internal_assert", "category": "framework",
        "root_cause": "INTERNAL ASSERT in the CUDA caching allocator (expandable segments) on rank 13",
        "stage": "training", "iteration": last + 1,
        "indicating_lines": [c.ref("assert")],
        "actions": [{"kind": "restart", "from_step": 14500}],
    })


# --- 10. a thermal straggler: no error anywhere, the job is slow; Megatron's straggler report and nvidia-smi --


def nvsmi_perf(bus: str, hot: bool) -> list[str]:
    active = "Active" if hot else "Not Active"
    return [f"GPU {bus}", "    Performance State                     : P0", "    Clocks Event Reasons",
            "        Idle                              : Not Active",
            "        Applications Clocks Setting       : Not Active",
            "        SW Power Cap                      : Not Active",
            f"        HW Slowdown                       : {active}",
            f"            HW Thermal Slowdown           : {active}",
            "            HW Power Brake Slowdown       : Not Active",
            "        Sync Boost                        : Not Active",
            f"        SW Thermal Slowdown               : {active}",
            "        Display Clock Setting             : Not Active",
            "    Temperature",
            f"        GPU Current Temp                  : {91 if hot else 62} C",
            "        GPU T.Limit Temp                  : " + ("-3 C" if hot else "26 C"),
            "        GPU Shutdown Temp                 : 92 C",
            "        GPU Slowdown Temp                 : 89 C",
            "        GPU Max Operating Temp            : 87 C",
            "    Clocks",
            f"        Graphics                          : {1005 if hot else 1980} MHz",
            f"        SM                                : {1005 if hot else 1980} MHz",
            "        Memory                            : 2619 MHz", ""]


def megatron_thermal_straggler() -> None:
    c = Case("megatron-thermal-straggler")
    hosts = ["dgx-h100-31", "dgx-h100-32", "dgx-h100-33", "dgx-h100-34"]
    start = t0("2026-12-01T00:00:00.000000")
    f = "logs/dgx-h100-34/rank-31.log"
    t = plus(start, 400)
    first_slow = 9813
    for it in range(9601, 9951):
        slow = it >= first_slow
        ms = (5902.0 if slow else 4108.0) + (it % 5) * 6.0
        t = plus(t, ms / 1000)
        c.add(f, f"[{t.strftime('%Y-%m-%d %H:%M:%S')}] " + megatron_iteration(it, 500000, ms,
                                                                            2.05 - (it - 9600) * 0.0001, 1024))
        if it % 50 == 0:
            hot = it >= 9850
            line = (f"[{t.strftime('%Y-%m-%d %H:%M:%S')}]  | MnRtt/Rnk: {4071.2 if not slow else 4080.4}ms/3 | "
                    f"MxRtt/Rnk: {4112.8 if not slow else 5890.1}ms/{19 if slow else 12} | MnPwr/Rnk: "
                    f"{402110 if not hot else 291003}mW/{19 if hot else 7} | MxPwr/Rnk: 699870mW/2 | MnTmp/Rnk: 55C/2 "
                    f"| MxTmp/Rnk: {91 if hot else 71}C/{19 if hot else 30} | MnUtl/Rnk: 97%/{19 if hot else 5} | "
                    f"MxUtl/Rnk: 100%/0 | MnClk/Rnk: {1005 if hot else 1980}MHz/{19 if hot else 0} | MxClk/Rnk: "
                    "1980MHz/1")
            c.add(f, line, mark="straggler" if it == 9850 else None)
    buses = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
             "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0"]
    for h in hosts:
        smi = f"probes/{h}/nvidia-smi.txt"
        c.extend(smi, ["==============NVSMI LOG==============", "", "Timestamp                                 : "
                       "Tue Dec  1 00:42:10 2026", "Driver Version                            : 550.90.07", "",
                       "Attached GPUs                             : 8"])
        for g, bus in enumerate(buses):
            hot = h == "dgx-h100-33" and g == 3
            for line in nvsmi_perf(bus, hot):
                mark = None
                if hot and "HW Thermal Slowdown" in line:
                    mark = "thermal"
                elif hot and "GPU Current Temp" in line:
                    mark = "temp"
                c.add(smi, line, mark=mark)
    job = f"""
job_id: "880412"
name: gpt-175b-pretrain
framework: megatron
status: slow
started_at: {iso(start)}
gpus_per_node: 8
parallelism: {{tp: 8, pp: 4, dp: 1, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.50.2.31", "10.50.2.32", "10.50.2.33", "10.50.2.34"], 8)}
code:
  - {{commit: 9d1f00a, at: 2026-11-25T10:00:00Z, message: "straggler detector every 50 iterations"}}
checkpoints:
  - {{step: 9000, at: 2026-11-30T22:50:00Z, path: /lustre/ckpt/gpt-175b/iter_0009000, valid: true}}
  - {{step: 9500, at: 2026-11-30T23:48:00Z, path: /lustre/ckpt/gpt-175b/iter_0009500, valid: true}}
spares: 1
note: "iterations went from 4.1 s to 5.9 s at 00:14; nothing failed"
"""
    c.write(job, {
        "fault": "gpu_straggler", "category": "hardware",
        "root_cause": "GPU 3 of dgx-h100-33 (rank 19) is thermally throttled to 1005 MHz at 91 C; the whole "
                      "pipeline runs at its pace (iteration time 4.1 s -> 5.9 s)",
        "faulty_nodes": ["dgx-h100-33"], "stage": "training", "iteration": first_slow,
        "indicating_lines": [c.ref("straggler"), c.ref("thermal"), c.ref("temp")],
        "actions": [{"kind": "evict", "nodes": ["dgx-h100-33"]}, {"kind": "restart", "from_step": 9500}],
    })


# --- 11. HF from_pretrained: size mismatch at init after a tokenizer change (rollback) ------------------------


def hf_shape_mismatch_init() -> None:
    c = Case("hf-from-pretrained-size-mismatch")
    hosts = ["p5-train-01", "p5-train-02"]
    start = t0("2026-04-18T18:02:31.000000")
    stamp = start.strftime("%m/%d/%Y %H:%M:%S")
    site = "/usr/local/lib/python3.11/site-packages"
    frames = [
        ("/workspace/sft/train_sft.py", 141, "<module>", "main()"),
        ("/workspace/sft/train_sft.py", 88, "main", "model = AutoModelForCausalLM.from_pretrained("),
        (f"{site}/transformers/models/auto/auto_factory.py", 564, "from_pretrained", "return model_class."
         "from_pretrained("),
        (f"{site}/transformers/modeling_utils.py", 4225, "from_pretrained", ") = cls._load_pretrained_model("),
        (f"{site}/transformers/modeling_utils.py", 4728, "_load_pretrained_model", 'raise RuntimeError(f"Error(s) in '
         'loading state_dict for {model.__class__.__name__}:\\n\\t{error_msg}")'),
    ]
    for i, h in enumerate(hosts):
        f = f"logs/{h}/stdout.log"
        for local in range(8):
            rank = i * 8 + local
            c.add(f, f"{stamp} - WARNING - __main__ - Process rank: {rank}, device: cuda:{local}, n_gpu: 1, "
                     "distributed training: True, 16-bits training: False")
        c.add(f, f"{stamp} - INFO - __main__ - added 64 chat special tokens; len(tokenizer)=128320")
        c.add(f, "loading weights file /fsx/models/Meta-Llama-3-8B/model.safetensors.index.json")
        c.add(f, "Loading checkpoint shards: 100%|██████████| 4/4 [00:21<00:00,  5.31s/it]")
        for local in range(8):
            rank = i * 8 + local
            c.extend(f, traceback_lines(f"[rank{rank}]: ", frames, []))
            c.add(f, f"[rank{rank}]: RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:",
                  mark="err" if rank == 0 else None)
            c.add(f, f"[rank{rank}]: \tsize mismatch for model.embed_tokens.weight: copying a param with shape "
                     "torch.Size([128256, 4096]) from checkpoint, the shape in current model is "
                     "torch.Size([128320, 4096]).", mark="embed" if rank == 0 else None)
            c.add(f, f"[rank{rank}]: \tsize mismatch for lm_head.weight: copying a param with shape "
                     "torch.Size([128256, 4096]) from checkpoint, the shape in current model is "
                     "torch.Size([128320, 4096]).")
            c.add(f, f"[rank{rank}]: \tYou may consider adding `ignore_mismatched_sizes=True` in the model "
                     "`from_pretrained` method.")
        end = plus(start, 38)
        c.extend(f, [
            f"{glog(end, 'E')} 5101 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
            f"local_rank: 0 (pid: {5123 + i}) of binary: /usr/bin/python",
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/accelerate", line 8, in <module>',
            "    sys.exit(main())",
            f'  File "{site}/accelerate/commands/launch.py", line 1172, in launch_command',
            "    multi_gpu_launcher(args)",
            f'  File "{site}/accelerate/commands/launch.py", line 762, in multi_gpu_launcher',
            "    distrib_run.run(args)",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        ])
    job = f"""
job_id: "sft-3317"
name: llama3-8b-chat-sft
framework: other
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(start, 40))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.7.1.1", "10.7.1.2"], 8)}
code:
  - {{commit: 8e7d6c5, at: 2026-04-11T10:00:00Z, message: "sft: llama3 chat template"}}
  - {{commit: f00dbab, at: 2026-04-18T16:20:00Z, message: "tokenizer: add 64 tool-call special tokens"}}
checkpoints: []
spares: 1
history: [sft-3290, sft-3302]
"""
    c.write(job, {
        "fault": "user_shape_mismatch_at_init", "category": "user_code",
        "root_cause": "the newest commit added 64 special tokens but the model is loaded from the base checkpoint "
                      "without resizing: embed_tokens and lm_head size mismatch at load",
        "faulty_nodes": [], "stage": "init", "iteration": None,
        "indicating_lines": [c.ref("err"), c.ref("embed")],
        "actions": [{"kind": "rollback", "to_commit": "8e7d6c5"}],
    })


# --- 12. Kubernetes, Megatron: an InfiniBand link that flaps until a collective times out --------------------


def perfquery(lid: int, downed: int, symbol: int, recovery: int, rcv: int) -> list[str]:
    return [f"# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)", "PortSelect:......................1",
            "CounterSelect:...................0x0000", f"SymbolErrorCounter:..............{symbol}",
            f"LinkErrorRecoveryCounter:........{recovery}", f"LinkDownedCounter:...............{downed}",
            f"PortRcvErrors:...................{rcv}", "PortRcvRemotePhysicalErrors:.....0",
            "PortRcvSwitchRelayErrors:........0", "PortXmitDiscards:................0",
            "PortXmitConstraintErrors:........0", "PortRcvConstraintErrors:.........0",
            "CounterSelect2:..................0x00", "LocalLinkIntegrityErrors:........0",
            "ExcessiveBufferOverrunErrors:....0", "VL15Dropped:.....................0",
            "PortXmitData:....................3472881222", "PortRcvData:.....................3471032110",
            "PortXmitPkts:....................912388110", "PortRcvPkts:.....................912210001",
            "PortXmitWait:....................0", ""]


def k8s_ib_link_flap() -> None:
    c = Case("k8s-ib-link-flap")
    hosts = ["gpu-r12-n1", "gpu-r12-n2", "gpu-r12-n3", "gpu-r12-n4"]
    ips = ["10.42.1.11", "10.42.1.12", "10.42.1.13", "10.42.1.14"]
    pods = ["gpt-13b-master-0", "gpt-13b-worker-0", "gpt-13b-worker-1", "gpt-13b-worker-2"]
    files = {h: f"logs/{h}/{pod}.log" for h, pod in zip(hosts, pods, strict=True)}
    start = t0("2026-02-11T05:00:00.000000")
    for i, h in enumerate(hosts):
        c.add(files[h], f"{k8s(start)} {h}:{300 + i}:{300 + i} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
                        "[1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB "
                        f"[7]mlx5_7:1/IB ; OOB eth0:{ips[i]}<0>")
    t = plus(start, 120)
    last = 60212
    f0 = files[hosts[0]]
    flaps = [60150, 60171, 60188, 60203, 60209]
    for it in range(60101, last + 1):
        t = plus(t, 1.92)
        c.add(f0, f"{k8s(t)} [{t.strftime('%Y-%m-%d %H:%M:%S')}] " +
              megatron_iteration(it, 150000, 1920.0 + (it % 5) * 3.0 + (900.0 if it in flaps else 0.0),
                                 2.14 - (it - 60100) * 0.0001, 256))
        if it in flaps:
            n2 = files["gpu-r12-n2"]
            c.add(n2, f"{k8s(plus(t, 0.3))} gpu-r12-n2:301:544 [5] NCCL WARN NET/IB : mlx5_5:1 Got async event : "
                      "port error", mark="flap" if it == flaps[0] else None)
            c.add(n2, f"{k8s(plus(t, 1.1))} gpu-r12-n2:301:544 [5] NCCL WARN NET/IB : mlx5_5:1 Got async event : "
                      "port active")
    t_to = plus(t, 600.3)
    for i, h in enumerate(hosts):
        for local in range(8):
            for line in watchdog_lines(i * 8 + local, plus(t_to, local * 0.003), 2211873, "ALLREDUCE", 65536000):
                c.add(files[h], f"{k8s(plus(t_to, local * 0.003))} {line}")
    c.add(files["gpu-r12-n3"], f"{k8s(plus(t_to, -1))} gpu-r12-n3:302:551 [5] NCCL WARN NET/IB : Got completion from "
                               "peer 10.42.1.12<41123> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
                               "::ffff:10.42.1.13 remoteGid ::ffff:10.42.1.12 hca mlx5_5")
    for i, h in enumerate(hosts):
        pq = f"probes/{h}/ib-counters.txt"
        for k in range(8):
            bad = h == "gpu-r12-n2" and k == 5
            for line in perfquery(100 + i * 8 + k, 6 if bad else 0, 1293 if bad else 0, 41 if bad else 0,
                                  311 if bad else 0):
                c.add(pq, line, mark="downed" if bad and "LinkDowned" in line else
                      "symbol" if bad and "SymbolError" in line else None)
    job = f"""
job_id: "gpt-13b-0211"
name: gpt-13b
framework: megatron
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t_to, 4))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 1, dp: 4, cp: 1, ep: 1}}
{nodes_yaml(hosts, ips, 8)}
code:
  - {{commit: 2b4c6d8, at: 2026-02-01T10:00:00Z, message: "bump NCCL to 2.21"}}
checkpoints:
  - {{step: 60000, at: 2026-02-11T04:54:00Z, path: /mnt/weka/gpt-13b/iter_0060000, valid: true}}
spares: 3
platform: kubernetes (kubeflow PyTorchJob)
"""
    c.write(job, {
        "fault": "ib_link_flap", "category": "network",
        "root_cause": "mlx5_5 port 1 on gpu-r12-n2 flapped five times (LinkDownedCounter 6, symbol errors); the "
                      "sixth drop stalled an all-reduce until every rank's watchdog fired",
        "faulty_nodes": ["gpu-r12-n2"], "stage": "training", "iteration": last + 1,
        "indicating_lines": [c.ref("flap"), c.ref("downed"), c.ref("symbol")],
        "actions": [{"kind": "evict", "nodes": ["gpu-r12-n2"]}, {"kind": "restart", "from_step": 60000}],
    })


# --- 13. a corrupt Parquet shard in a DataLoader worker, with a rendezvous retry as the early red herring -----


def dataloader_corrupt_parquet() -> None:
    c = Case("dataloader-corrupt-parquet")
    hosts = ["trainer-0", "trainer-1"]
    start = t0("2026-01-19T14:00:00.000000")
    c.add("logs/trainer-1/node.log", "[W119 14:00:01.102000000 socket.cpp:697] [c10d] The client socket has failed "
                                     "to connect to [trainer-0]:29500 (errno: 111 - Connection refused).")
    c.add("logs/trainer-1/node.log", "[W119 14:00:03.881000000 socket.cpp:697] [c10d] The client socket has failed "
                                     "to connect to [trainer-0]:29500 (errno: 111 - Connection refused).")
    t = plus(start, 70)
    last = 7744
    f0 = "logs/trainer-0/rank-0.log"
    c.add(f0, f"{pylog(start)} INFO trainer: streaming 2,048 parquet shards from /data/fineweb-edu-dedup/")
    for it in range(7601, last + 1):
        t = plus(t, 3.3)
        if it % 4 == 0 or it == last:
            c.add(f0, f"{pylog(t)} INFO trainer: it={it} loss={2.33 - (it - 7600) * 0.0002:.4f} lr=3.0e-04 "
                      "grad_norm=0.27 tok/s/gpu=11830")
    f11 = "logs/trainer-1/rank-11.log"
    c.add(f11, f"{pylog(plus(t, 1.2))} WARNING parquet_dataset: retrying shard /data/fineweb-edu-dedup/"
               "shard-01823.parquet (attempt 2/3): Parquet magic bytes not found in footer")
    site = "/usr/local/lib/python3.10/dist-packages"
    c.extend(f11, traceback_lines("[rank11]: ", [
        ("/workspace/train.py", 301, "<module>", "main()"),
        ("/workspace/train.py", 254, "main", "batch = next(train_iter)"),
        (f"{site}/torch/utils/data/dataloader.py", 631, "__next__", "data = self._next_data()"),
        (f"{site}/torch/utils/data/dataloader.py", 1346, "_next_data", "return self._process_data(data)"),
        (f"{site}/torch/utils/data/dataloader.py", 1372, "_process_data", "data.reraise()"),
        (f"{site}/torch/_utils.py", 705, "reraise", "raise exception"),
    ], []))
    c.add(f11, "[rank11]: pyarrow.lib.ArrowInvalid: Caught ArrowInvalid in DataLoader worker process 2.",
          mark="caught")
    c.extend(f11, traceback_lines("[rank11]: ", [
        (f"{site}/torch/utils/data/_utils/worker.py", 308, "_worker_loop", "data = fetcher.fetch(index)"),
        (f"{site}/torch/utils/data/_utils/fetch.py", 33, "fetch", "data.append(next(self.dataset_iter))"),
        ("/workspace/data/parquet_dataset.py", 77, "__iter__", 'table = pq.read_table(path, columns=["input_ids"])'),
        (f"{site}/pyarrow/parquet/core.py", 1793, "read_table", "dataset = ParquetDataset("),
        ("pyarrow/error.pxi", 92, "pyarrow.lib.check_status", "raise convert_status(status)"),
    ], [], header="Original Traceback (most recent call last):"))
    c.add(f11, "[rank11]: pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer. Either the file is "
               "corrupted or this is not a parquet file.", mark="magic")
    c.add("logs/trainer-1/node.log", f"{glog(plus(t, 3), 'E')} 7711 torch/distributed/elastic/multiprocessing/api.py:"
                                     "869] failed (exitcode: 1) local_rank: 3 (pid: 7790) of binary: /usr/bin/python3")
    for r in range(8):
        c.extend(f"logs/trainer-0/rank-{r}.log", remote_exit_lines(f"[rank{r}]:", r, plus(t, 4), "2.21.5"))
    job = f"""
job_id: "ft-7744"
name: olmo-7b-cpt
framework: fsdp
status: failed
started_at: {iso(start)}
ended_at: {iso(plus(t, 6))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
{nodes_yaml(hosts, ["10.0.5.10", "10.0.5.11"], 8)}
code:
  - {{commit: aa11bb2, at: 2026-01-12T10:00:00Z, message: "stream parquet shards directly"}}
checkpoints:
  - {{step: 7500, at: 2026-01-19T13:50:00Z, path: /ckpt/olmo-7b-cpt/step7500, valid: true}}
spares: 0
"""
    c.write(job, {
        "fault": "dataloader_corrupt_sample", "category": "data",
        "root_cause": "shard-01823.parquet is corrupt (no Parquet footer); DataLoader worker 2 of rank 11 raised "
                      "ArrowInvalid",
        "faulty_nodes": [], "stage": "training", "iteration": last + 1,
        "indicating_lines": [c.ref("caught"), c.ref("magic")],
        "actions": [{"kind": "none"}],
    })


CASES: list[Callable[[], None]] = [
    deepspeed_zero3_cuda_oom, hf_trainer_nan_divergence, torchrun_single_node_xid79, slurm_no_timestamps_nic_down,
    torchtitan_silent_hang, k8s_oom_probes_only, nemo_checkpoint_quota, megatron_ecc_cascade,
    pytorch_internal_assert, megatron_thermal_straggler, hf_shape_mismatch_init, k8s_ib_link_flap,
    dataloader_corrupt_parquet,
]


def main(argv: list[str]) -> None:
    for build in CASES:
        if len(argv) > 1 and build.__name__ not in argv[1:]:
            continue
        build()
        print(f"built {build.__name__}")


if __name__ == "__main__":
    main(sys.argv)
