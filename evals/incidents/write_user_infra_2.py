#!/usr/bin/env python3
"""Builds hand-made incident bundles into this directory. stdlib only."""
import json, os, random, shutil, sys
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
FILES = {}   # (inc, rel) -> list of lines


def W(inc, rel, lines):
    FILES[(inc, rel)] = list(lines)
    p = os.path.join(ROOT, inc, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))


def WRAW(inc, rel, text):
    FILES[(inc, rel)] = text.split("\n")
    p = os.path.join(ROOT, inc, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def L(inc, rel, needle, nth=1):
    """1-based number of the nth line of file containing needle."""
    n = 0
    for i, line in enumerate(FILES[(inc, rel)]):
        if needle in line:
            n += 1
            if n == nth:
                return i + 1
    raise SystemExit(f"needle not found: {inc}/{rel}: {needle!r} #{nth}")


def yaml_job(inc, d):
    out = []
    for k, v in d.items():
        if isinstance(v, list):
            out.append(f"{k}:")
            for it in v:
                if isinstance(it, dict):
                    out.append("  - {" + ", ".join(f"{a}: {fmt(b)}" for a, b in it.items()) + "}")
                else:
                    out.append(f"  - {fmt(it)}")
        elif isinstance(v, dict):
            out.append(f"{k}: {{" + ", ".join(f"{a}: {fmt(b)}" for a, b in v.items()) + "}")
        else:
            out.append(f"{k}: {fmt(v)}")
    W(inc, "job.yaml", out)


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, (int, float)):
        return str(v)
    if v is None:
        return "null"
    s = str(v)
    if any(c in s for c in ":#{}[],&*!|>'\"%@`") or s.strip() != s:
        return json.dumps(s)
    return s


def truth(inc, t, lines):
    t = dict(t)
    t["indicating_lines"] = [{"file": f, "line": n} for f, n in lines]
    with open(os.path.join(ROOT, inc, "truth.json"), "w") as f:
        json.dump(t, f, indent=2)
        f.write("\n")


def ts(dt, f="%Y-%m-%d %H:%M:%S"):
    return dt.strftime(f)


def nodes_block(hosts, ips, gpn, start=0):
    return [{"host": h, "ip": ip, "ranks": list(range(start + i * gpn, start + (i + 1) * gpn))}
            for i, (h, ip) in enumerate(zip(hosts, ips))]


def dmesg_boot(host, t0, rnd, extra_lines=()):
    """a healthy-looking dmesg -T tail."""
    out = []
    t = t0
    base = [
        "mlx5_core 0000:{b}:00.0: mlx5_pcie_event:301:(pid 1204): PCIe slot advertised sufficient power (27W).",
        "IPv6: ADDRCONF(NETDEV_CHANGE): ib{n}: link becomes ready",
        "nvidia-nvswitch{n}: open (major=508)",
        "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:22:07 UTC 2024",
        "nvidia-uvm: Loaded the UVM driver, major device number 510.",
        "EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode. Quota mode: none.",
        "Lustre: Lustre: Build Version: 2.15.4",
        "LNet: Added LNI 10.150.{n}.{m}@o2ib [8/256/0/180]",
        "audit: type=1400 audit({e}.112:{q}): apparmor=\"STATUS\" operation=\"profile_replace\" profile=\"unconfined\" name=\"docker-default\" pid={p} comm=\"apparmor_parser\"",
        "docker0: port 1(veth{h}) entered forwarding state",
    ]
    for i in range(14):
        t += timedelta(seconds=rnd.randint(1, 400))
        l = rnd.choice(base).format(b=rnd.choice(["0c", "2a", "41", "5d", "9b", "ba"]), n=rnd.randint(0, 7),
                                    m=rnd.randint(2, 250), e=rnd.randint(1700000000, 1800000000),
                                    q=rnd.randint(100, 999), p=rnd.randint(1000, 99999),
                                    h="%07x" % rnd.getrandbits(28))
        out.append(f"[{t.strftime('%a %b %d %H:%M:%S %Y')}] {l}")
    return out


CHILD_FAILED_HDR = [
    "Traceback (most recent call last):",
]


def child_failed(entry, host, rank, lrank, pid, exitcode, when, tb, other=None):
    out = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
           "============================================================",
           f"{entry} FAILED",
           "------------------------------------------------------------",
           "Failures:"]
    if other:
        for i, (r, lr, p, ec, tbo) in enumerate(other, 1):
            out += [f"[{i}]:",
                    f"  time      : {when}",
                    f"  host      : {host}",
                    f"  rank      : {r} (local_rank: {lr})",
                    f"  exitcode  : {ec} (pid: {p})",
                    "  error_file: <N/A>",
                    f"  traceback : {tbo}"]
    else:
        out.append("  <NO_OTHER_FAILURES>")
    out += ["------------------------------------------------------------",
            "Root Cause (first observed failure):",
            "[0]:",
            f"  time      : {when}",
            f"  host      : {host}",
            f"  rank      : {rank} (local_rank: {lrank})",
            f"  exitcode  : {exitcode} (pid: {pid})",
            "  error_file: <N/A>",
            f"  traceback : {tb}",
            "============================================================"]
    return out


##############################################################################
# 1. HF accelerate, size mismatch at init on every rank after a new commit
##############################################################################
def inc_accelerate_shape():
    inc = "accelerate-fsdp-vocab-size-mismatch-4node"
    rnd = random.Random(11)
    hosts = ["gpu-r2-n101", "gpu-r2-n102", "gpu-r2-n105", "gpu-r2-n106"]
    ips = ["10.44.2.101", "10.44.2.102", "10.44.2.105", "10.44.2.106"]
    t0 = datetime(2026, 11, 18, 7, 2, 11)
    py = "/opt/conda/envs/sft/lib/python3.11/site-packages"
    for ni, h in enumerate(hosts):
        rnd2 = random.Random(100 + ni)
        out = []
        t = t0 + timedelta(milliseconds=rnd2.randint(0, 900))
        def lg(lvl, name, msg, rank=None, dt=0.2):
            nonlocal t
            t += timedelta(seconds=dt * rnd2.random())
            r = f"rank{rank}" if rank is not None else "launcher"
            out.append(f"{t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond//1000:03d} {h} [{r}] {lvl:<7} {name}: {msg}")
        out.append("The following values were not passed to `accelerate launch` and had defaults used instead:")
        out.append("\t`--dynamo_backend` was set to a value of `'no'`")
        out.append("To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.")
        lg("INFO", "torch.distributed.run", "Using nproc_per_node=8.")
        out.append("W1118 07:02:13.118000 140233918469952 torch/distributed/run.py:779 ")
        out.append("W1118 07:02:13.118000 140233918469952 torch/distributed/run.py:779 *****************************************")
        out.append("W1118 07:02:13.118000 140233918469952 torch/distributed/run.py:779 Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        out.append("W1118 07:02:13.118000 140233918469952 torch/distributed/run.py:779 *****************************************")
        for lr in range(8):
            rank = ni * 8 + lr
            lg("INFO", "__main__", f"Distributed environment: FSDP  Backend: nccl | Num processes: 32 | Process index: {rank} | Local process index: {lr} | Device: cuda:{lr} | Mixed precision type: bf16", rank, 0.05)
        if ni == 0:
            lg("INFO", "__main__", "git commit: 5e91d0c (tokenizer: add 128 tool-call special tokens, bump vocab_size)", 0)
            lg("INFO", "__main__", "loading tokenizer from /mnt/weka/tok/llama2-7b-toolcall-v2", 0)
        for lr in range(8):
            rank = ni * 8 + lr
            out.append(f"{py}/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default. This behavior will be depracted in transformers v4.45, and will be then set to `False` by default. For more details check this issue: https://github.com/huggingface/transformers/issues/31884")
            out.append("  warnings.warn(")
            lg("INFO", "__main__", "tokenizer has 32128 tokens (added 128 special tokens)", rank, 0.1)
            lg("INFO", "__main__", "model config: vocab_size=32128 hidden_size=4096 num_hidden_layers=32 (from configs/llama2-7b-toolcall.json)", rank, 0.05)
            lg("INFO", "__main__", "loading base weights from /mnt/weka/models/llama-2-7b-hf", rank, 0.05)
        out.append(f"{h}:{31000+ni*17}:{31000+ni*17} [0] NCCL INFO Bootstrap : Using ibp12s0:{ips[ni]}<0>")
        out.append(f"{h}:{31000+ni*17}:{31000+ni*17} [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation")
        out.append(f"{h}:{31000+ni*17}:{31000+ni*17} [0] NCCL INFO cudaDriverVersion 12040")
        out.append("NCCL version 2.20.5+cuda12.4" if ni == 0 else f"{h}:{31000+ni*17}:{31000+ni*17} [0] NCCL INFO Comm config Blocking set to 1")
        shards = 2 if ni in (1, 3) else 0   # tqdm bars (\r) only where no truth line follows
        for i in range(1, shards + 1):
            out.append(f"\rLoading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]\rLoading checkpoint shards:  50%|█████     | 1/2 [00:0{3+i}<00:0{3+i},  {3.8+i/10:.2f}s/it]\rLoading checkpoint shards: 100%|██████████| 2/2 [00:06<00:00,  2.91s/it]\rLoading checkpoint shards: 100%|██████████| 2/2 [00:06<00:00,  3.12s/it]")
        # tracebacks: two full ones per node, the rest truncated interleave
        for k, lr in enumerate([0, 3, 5]):
            rank = ni * 8 + lr
            out += [
                "[rank%d]: Traceback (most recent call last):" % rank,
                "[rank%d]:   File \"/workspace/sft/train_sft.py\", line 412, in <module>" % rank,
                "[rank%d]:     main()" % rank,
                "[rank%d]:   File \"/workspace/sft/train_sft.py\", line 188, in main" % rank,
                "[rank%d]:     model = AutoModelForCausalLM.from_pretrained(" % rank,
                "[rank%d]:             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^" % rank,
                f"[rank{rank}]:   File \"{py}/transformers/models/auto/auto_factory.py\", line 564, in from_pretrained",
                f"[rank{rank}]:     return model_class.from_pretrained(",
                f"[rank{rank}]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                f"[rank{rank}]:   File \"{py}/transformers/modeling_utils.py\", line 3916, in from_pretrained",
                f"[rank{rank}]:     ) = cls._load_pretrained_model(",
                f"[rank{rank}]:         ^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                f"[rank{rank}]:   File \"{py}/transformers/modeling_utils.py\", line 4466, in _load_pretrained_model",
                f"[rank{rank}]:     raise RuntimeError(f\"Error(s) in loading state_dict for {{model.__class__.__name__}}:\\n\\t{{error_msg}}\")",
                f"[rank{rank}]: RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:",
                f"[rank{rank}]: \tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([32000, 4096]) from checkpoint, the shape in current model is torch.Size([32128, 4096]).",
                f"[rank{rank}]: \tsize mismatch for lm_head.weight: copying a param with shape torch.Size([32000, 4096]) from checkpoint, the shape in current model is torch.Size([32128, 4096]).",
                f"[rank{rank}]: \tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained` method.",
            ]
        out.append(f"W1118 07:03:02.441000 140233918469952 torch/distributed/elastic/multiprocessing/api.py:858 Sending process {51230+ni*40+1} closing signal SIGTERM")
        for lr in (2, 4, 6, 7):
            out.append(f"W1118 07:03:02.442000 140233918469952 torch/distributed/elastic/multiprocessing/api.py:858 Sending process {51230+ni*40+lr} closing signal SIGTERM")
        out.append(f"E1118 07:03:03.907000 140233918469952 torch/distributed/elastic/multiprocessing/api.py:833 failed (exitcode: 1) local_rank: 0 (pid: {51230+ni*40}) of binary: /opt/conda/envs/sft/bin/python")
        out += ["Traceback (most recent call last):",
                "  File \"/opt/conda/envs/sft/bin/accelerate\", line 8, in <module>",
                "    sys.exit(main())",
                "             ^^^^^^",
                f"  File \"{py}/accelerate/commands/accelerate_cli.py\", line 48, in main",
                "    args.func(args)",
                f"  File \"{py}/accelerate/commands/launch.py\", line 1159, in launch_command",
                "    multi_gpu_launcher(args)",
                f"  File \"{py}/accelerate/commands/launch.py\", line 793, in multi_gpu_launcher",
                "    distrib_run.run(args)",
                f"  File \"{py}/torch/distributed/run.py\", line 910, in run",
                "    elastic_launch(",
                f"  File \"{py}/torch/distributed/launcher/api.py\", line 138, in __call__",
                "    return launch_agent(self._config, self._entrypoint, list(args))",
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                f"  File \"{py}/torch/distributed/launcher/api.py\", line 269, in launch_agent",
                "    raise ChildFailedError("]
        out += child_failed("/workspace/sft/train_sft.py", h, ni * 8, 0, 51230 + ni * 40, 1,
                            "2026-11-18_07:03:02",
                            "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                            other=[(ni * 8 + 3, 3, 51230 + ni * 40 + 3, 1, "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"),
                                   (ni * 8 + 5, 5, 51230 + ni * 40 + 5, 1, "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")])
        W(inc, f"logs/{h}/accelerate-launch.log", out)
    yaml_job(inc, {
        "job_id": "sft-toolcall-0412",
        "name": "llama2-7b-toolcall-sft",
        "framework": "other",
        "launcher": "accelerate launch (FSDP, 4 machines, python logging with hostnames)",
        "status": "failed",
        "started_at": "2026-11-18T07:02:05Z",
        "ended_at": "2026-11-18T07:03:04Z",
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 32, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 8),
        "code": [
            {"commit": "a17c3e2", "at": "2026-11-09T15:20:00Z", "message": "sft: packing + cosine schedule"},
            {"commit": "5e91d0c", "at": "2026-11-17T21:48:00Z", "message": "tokenizer: add 128 tool-call special tokens, bump vocab_size in model config"},
        ],
        "checkpoints": [],
        "spares": 2,
        "history": ["sft-toolcall-0398 (succeeded 2026-11-12, commit a17c3e2)"],
    })
    f0 = f"logs/{hosts[0]}/accelerate-launch.log"
    f2 = f"logs/{hosts[2]}/accelerate-launch.log"
    truth(inc, {
        "fault": "user_shape_mismatch_at_init",
        "category": "user_code",
        "root_cause": "commit 5e91d0c raised the model config's vocab_size to 32128 but the run still loads the 32000-token llama-2-7b base weights, so from_pretrained fails with a size mismatch for embed_tokens and lm_head on every rank before training starts",
        "faulty_nodes": [],
        "stage": "init",
        "iteration": None,
    }, [(f0, L(inc, f0, "[rank0]: RuntimeError: Error(s) in loading state_dict")),
        (f0, L(inc, f0, "[rank0]: \tsize mismatch for model.embed_tokens.weight")),
        (f2, L(inc, f2, "[rank16]: RuntimeError: Error(s) in loading state_dict"))])
    json_add_actions(inc, [{"kind": "rollback", "to_commit": "a17c3e2"}])


def json_add_actions(inc, actions):
    p = os.path.join(ROOT, inc, "truth.json")
    t = json.load(open(p))
    t["actions"] = actions
    with open(p, "w") as f:
        json.dump(t, f, indent=2)
        f.write("\n")


##############################################################################
# 2. Azure ML + Horovod: ImportError on every rank after an environment change
##############################################################################
def inc_azureml_horovod_import():
    inc = "azureml-horovod-ext-not-built-2node"
    hosts = ["7c1f02a9e4b34d6e9a0b55f1c3d8e7a2000000", "7c1f02a9e4b34d6e9a0b55f1c3d8e7a2000001"]
    ips = ["10.0.0.4", "10.0.0.5"]
    site = "/opt/conda/envs/ptca/lib/python3.10/site-packages"
    for ni, h in enumerate(hosts):
        for lr in range(4):
            rank = ni * 4 + lr
            out = []
            out.append(f"{site}/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: 'libc10_cuda.so: cannot open shared object file: No such file or directory'If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might be something wrong with your environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?")
            out.append("  warn(")
            out.append(f"[2026-11-19 22:41:0{lr}] train_resnet.py: rank-local setup, OMPI_COMM_WORLD_RANK={rank} OMPI_COMM_WORLD_LOCAL_RANK={lr} AZ_BATCHAI_MPI_MASTER_NODE=10.0.0.4")
            out.append(f"[2026-11-19 22:41:0{lr}] train_resnet.py: torch 2.3.1+cu121, cuda available: True, device count: 4")
            out += [
                "Traceback (most recent call last):",
                "  File \"/mnt/azureml/cr/j/5b1d7e3c0f6a4e2c9d1e8b7a6c5f4e3d/exe/wd/train_resnet.py\", line 17, in <module>",
                "    import horovod.torch as hvd",
                f"  File \"{site}/horovod/torch/__init__.py\", line 19, in <module>",
                "    check_extension('horovod.torch', 'HOROVOD_WITH_PYTORCH',",
                f"  File \"{site}/horovod/common/util.py\", line 56, in check_extension",
                "    raise ImportError(",
                f"ImportError: Extension horovod.torch has not been built: {site}/horovod/torch/mpi_lib_v2.cpython-310-x86_64-linux-gnu.so not found",
                "If this is not expected, reinstall Horovod with HOROVOD_WITH_PYTORCH=1 to debug the build error.",
            ]
            W(inc, f"logs/{h}/std_log_process_{rank}.txt", out)
    # driver stdout (mpirun summary)
    W(inc, f"logs/{hosts[0]}/std_log.txt", [
        "[2026-11-19T22:40:51.118442] Entering job preparation.",
        "[2026-11-19T22:40:52.903117] Starting job preparation.",
        "[2026-11-19T22:40:58.264009] Job preparation is complete.",
        "[2026-11-19T22:40:58.611205] Entering context manager injector.",
        "Starting the daemon thread to refresh tokens in background for process with pid = 211",
        "Using MPI distribution: mpirun -np 8 --hostfile /job/hostfile -bind-to none -map-by slot -x NCCL_DEBUG=WARN python train_resnet.py --epochs 90 --batch-size 256",
        "--------------------------------------------------------------------------",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "--------------------------------------------------------------------------",
        "--------------------------------------------------------------------------",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        "  Process name: [[52811,1],2]",
        "  Exit code:    1",
        "--------------------------------------------------------------------------",
        "[2026-11-19T22:41:09.772910] Finished context manager injector with Exception.",
    ])
    yaml_job(inc, {
        "job_id": "resnet152-hvd_1732056045_7c1f02a9",
        "name": "resnet152-imagenet-horovod",
        "framework": "other",
        "launcher": "Azure ML command job, MPI distribution (process_count_per_instance 4), user_logs/std_log_process_N.txt",
        "status": "failed",
        "started_at": "2026-11-19T22:40:51Z",
        "ended_at": "2026-11-19T22:41:10Z",
        "exit_code": 1,
        "gpus_per_node": 4,
        "parallelism": {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 4),
        "code": [
            {"commit": "c4d2a90", "at": "2026-10-28T09:12:00Z", "message": "resnet: label smoothing 0.1"},
            {"commit": "e08b6f1", "at": "2026-11-06T17:30:00Z", "message": "log throughput per epoch"},
        ],
        "environment": {"name": "acpt-hvd-train", "version": 15, "updated_at": "2026-11-19T18:05:00Z", "previous_version": 14, "change": "base image moved to torch 2.3.1; horovod reinstalled from requirements.txt"},
        "checkpoints": [{"step": 35, "at": "2026-11-15T03:10:00Z", "path": "azureml://datastores/ckpt/paths/resnet152/epoch_035.pt", "valid": True}],
        "spares": 0,
        "history": ["resnet152-hvd_1731600000_1a2b3c4d (succeeded 2026-11-14, commit e08b6f1, environment v14)"],
    })
    f0 = f"logs/{hosts[0]}/std_log_process_0.txt"
    f5 = f"logs/{hosts[1]}/std_log_process_5.txt"
    truth(inc, {
        "fault": "user_import_error",
        "category": "user_code",
        "root_cause": "environment version 15 (torch 2.3.1 base image) reinstalled horovod without its PyTorch extension, so `import horovod.torch` raises ImportError on every rank at startup; the code did not change since the last good run",
        "faulty_nodes": [],
        "stage": "init",
        "iteration": None,
    }, [(f0, L(inc, f0, "ImportError: Extension horovod.torch has not been built")),
        (f5, L(inc, f5, "ImportError: Extension horovod.torch has not been built"))])
    json_add_actions(inc, [{"kind": "none"}])


##############################################################################
# 3. Megatron-LM, Slurm per-task output files: tp*pp does not divide world size
##############################################################################
def inc_megatron_config():
    inc = "slurm-pertask-megatron-tp8pp4-48gpu"
    hosts = [f"dgx-c{n:02d}" for n in (11, 12, 13, 14, 17, 18)]
    ips = [f"172.22.8.{n}" for n in (11, 12, 13, 14, 17, 18)]
    jobid = "918244"
    site = "/usr/local/lib/python3.10/dist-packages"
    for ni, h in enumerate(hosts):
        for lr in range(8):
            rank = ni * 8 + lr
            out = []
            out.append(f"{site}/transformer_engine/pytorch/attention.py:88: UserWarning: To use flash-attn v3, please use the following commands to install: ")
            out.append("(1) pip install \"git+https://github.com/Dao-AILab/flash-attention.git#egg=flashattn-hopper&subdirectory=hopper\" ")
            out.append("  warnings.warn(")
            if rank == 0:
                out.append("WARNING: TensorBoard writing requested but is not available (are you using PyTorch 1.1.0 or later?), no TensorBoard logs will be written.")
            out += [
                "Traceback (most recent call last):",
                "  File \"/workspace/Megatron-LM/pretrain_gpt.py\", line 278, in <module>",
                "    pretrain(",
                "  File \"/workspace/Megatron-LM/megatron/training/training.py\", line 271, in pretrain",
                "    initialize_megatron(",
                "  File \"/workspace/Megatron-LM/megatron/training/initialize.py\", line 66, in initialize_megatron",
                "    validate_args(args, args_defaults)",
                "  File \"/workspace/Megatron-LM/megatron/training/arguments.py\", line 238, in validate_args",
                "    assert args.world_size % total_model_size == 0, (",
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                "AssertionError: world size (48) is not divisible by total_model_size (total_model_size=32)",
            ]
            W(inc, f"logs/{h}/gpt-175b_{jobid}_{rank}.out", out)
    W(inc, f"logs/{hosts[0]}/slurm-{jobid}.out", [
        "+ export CUDA_DEVICE_MAX_CONNECTIONS=1",
        "+ NNODES=6",
        "+ srun --ntasks-per-node=8 --gpus-per-task=1 --cpu-bind=none --container-image=/lustre/images/nemo-24.09.sqsh --output=logs/%x_%j_%t.out python /workspace/Megatron-LM/pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --micro-batch-size 1 --global-batch-size 1536 --bf16 --load /lustre/ckpt/gpt-175b --save /lustre/ckpt/gpt-175b --save-interval 500",
        "pyxis: imported docker image: /lustre/images/nemo-24.09.sqsh",
        "srun: error: dgx-c12: tasks 8-15: Exited with exit code 1",
        "srun: error: dgx-c11: tasks 0-7: Exited with exit code 1",
        "srun: error: dgx-c17: tasks 32-39: Exited with exit code 1",
        "srun: error: dgx-c13: tasks 16-23: Exited with exit code 1",
        "srun: error: dgx-c14: tasks 24-31: Exited with exit code 1",
        "srun: error: dgx-c18: tasks 40-47: Exited with exit code 1",
    ])
    yaml_job(inc, {
        "job_id": jobid,
        "name": "gpt-175b",
        "framework": "megatron",
        "scheduler": "slurm",
        "launcher": "sbatch + srun --output=logs/%x_%j_%t.out (one file per task, no prefix)",
        "status": "failed",
        "started_at": "2026-11-20T04:10:33Z",
        "ended_at": "2026-11-20T04:11:19Z",
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 8, "pp": 4, "cp": 1, "ep": 1},
        "requested": {"sbatch_nodes": 6, "note": "submitted with --nodes=6; earlier runs of this script used --nodes=8 (64 GPUs, dp 2)"},
        "nodes": nodes_block(hosts, ips, 8),
        "code": [
            {"commit": "3b8e77f", "at": "2026-11-02T11:00:00Z", "message": "gpt-175b: tp8 pp4 layout"},
            {"commit": "91ac04e", "at": "2026-11-11T08:30:00Z", "message": "data: add code mix to blend"},
        ],
        "checkpoints": [
            {"step": 12000, "at": "2026-11-17T22:41:00Z", "path": "/lustre/ckpt/gpt-175b/iter_0012000", "valid": True},
            {"step": 12500, "at": "2026-11-18T06:02:00Z", "path": "/lustre/ckpt/gpt-175b/iter_0012500", "valid": True},
        ],
        "spares": 2,
        "history": ["917702 (8 nodes, succeeded until time limit 2026-11-18, commit 91ac04e)"],
    })
    fa = f"logs/{hosts[0]}/gpt-175b_{jobid}_0.out"
    fb = f"logs/{hosts[4]}/gpt-175b_{jobid}_37.out"
    truth(inc, {
        "fault": "user_config_error",
        "category": "user_code",
        "root_cause": "the job was submitted on 6 nodes (48 GPUs) with --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4, and 48 is not a multiple of tp*pp = 32, so Megatron's validate_args asserts on every rank before initialization",
        "faulty_nodes": [],
        "stage": "init",
        "iteration": None,
    }, [(fa, L(inc, fa, "AssertionError: world size (48)")),
        (fb, L(inc, fb, "AssertionError: world size (48)"))])
    json_add_actions(inc, [{"kind": "none"}])


##############################################################################
# 4. torchtitan, torchrun --log-dir per-rank files: INTERNAL ASSERT on one rank
##############################################################################
def inc_torchtitan_assert():
    inc = "torchtitan-tee-perrank-allocator-assert-4node"
    hosts = ["a3-mega-0041", "a3-mega-0042", "a3-mega-0047", "a3-mega-0048"]
    ips = ["10.128.0.41", "10.128.0.42", "10.128.0.47", "10.128.0.48"]
    rnd = random.Random(4)
    bad_rank, bad_node = 13, 1
    t0 = datetime(2026, 11, 21, 2, 58, 0)
    step0, fail_step = 1180, 1237   # 1236 complete, 1237 in progress
    site = "/opt/venv/lib/python3.11/site-packages"
    step_time = 2.61
    for ni, h in enumerate(hosts):
        agent = []
        for lr in range(8):
            rank = ni * 8 + lr
            out = []
            t = t0
            def tl(msg):
                out.append(f"[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(0,999):03d} - root - INFO - {msg}")
            tl("Starting job: Llama 3 8B long-context")
            tl(f"Building 2-D device mesh with ['dp_shard', 'tp'], [4, 8]")
            tl("[GC] Initial GC collection. 0.00 seconds.")
            out.append(f"{h}:{70100+lr}:{70100+lr} [{lr}] NCCL INFO NCCL_SOCKET_IFNAME set by environment to enp0s12")
            out.append(f"{h}:{70100+lr}:{70100+lr} [{lr}] NCCL INFO NET/Plugin: Loaded net plugin FasTrak (v8)")
            tl("Loading tokenizer from tokenizer.model")
            tl("Preparing c4 dataset from allenai/c4")
            tl("Applied Tensor Parallelism to the model")
            tl("Applied selective activation checkpointing to the model")
            tl("Applied FSDP to the model")
            tl("CUDA memory usage for model: 3.87GiB(4.89%)")
            tl(f"Loading the checkpoint at step 1150.")
            tl(f"Finished loading the checkpoint in 21.83 seconds.")
            tl(f"Training starts at step 1151, with local batch size 1, global batch size 4, sequence length 32768, total steps 30000 (warmup 600)")
            t += timedelta(seconds=40)
            for s in range(1151, fail_step):
                t += timedelta(seconds=step_time + rnd.random() * 0.05)
                if s % 10 == 0 or s == fail_step - 1:
                    loss = 2.41 - (s - 1151) * 0.0009 + rnd.random() * 0.03
                    out.append(f"[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(0,999):03d} - root - INFO - step: {s:2d}  loss: {loss:7.4f}  memory: 61.{rnd.randint(10,40)}GiB(77.{rnd.randint(10,99)}%)  tps: {3120+rnd.randint(-30,30):,}  tflops: 181.{rnd.randint(10,99)}  mfu: 18.{rnd.randint(10,60)}%")
                if s == 1200:
                    tl("Saving the checkpoint (or staging if async is enabled).")
                    tl("[GC] GC collection invoked by checkpointer. 0.04 seconds.")
                    out.append(f"[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(0,999):03d} - root - INFO - Finished saving the checkpoint (or staging if async is enabled)in 6.12 seconds.")
            tfail = t + timedelta(seconds=1.9)
            if rank == bad_rank:
                out += [
                    "terminate called after throwing an instance of 'c10::Error'",
                    "  what():  inserted INTERNAL ASSERT FAILED at \"/pytorch/c10/cuda/CUDACachingAllocator.cpp\":3316, please report a bug to PyTorch. ",
                    "Exception raised from free_block at /pytorch/c10/cuda/CUDACachingAllocator.cpp:3316 (most recent call first):",
                    f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3a1c46c446 in {site}/torch/lib/libc10.so)",
                    f"frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64 (0x7f3a1c4166e4 in {site}/torch/lib/libc10.so)",
                    f"frame #2: <unknown function> + 0x1f7c2 (0x7f3a1c8b07c2 in {site}/torch/lib/libc10_cuda.so)",
                    f"frame #3: <unknown function> + 0x21a3e (0x7f3a1c8b2a3e in {site}/torch/lib/libc10_cuda.so)",
                    f"frame #4: c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::free(void*) + 0x1b1 (0x7f3a1c8b3f21 in {site}/torch/lib/libc10_cuda.so)",
                    f"frame #5: <unknown function> + 0x5a4d1c (0x7f3a6b1a4d1c in {site}/torch/lib/libtorch_python.so)",
                    f"frame #6: c10::TensorImpl::~TensorImpl() + 0x9 (0x7f3a1c445a09 in {site}/torch/lib/libc10.so)",
                    f"frame #7: torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&) + 0x1c6 (0x7f3a5ad6e2b6 in {site}/torch/lib/libtorch_cpu.so)",
                    f"frame #8: torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&) + 0x4b3 (0x7f3a5ad66f93 in {site}/torch/lib/libtorch_cpu.so)",
                    f"frame #9: torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool) + 0x79 (0x7f3a6b02a9d9 in {site}/torch/lib/libtorch_python.so)",
                    "frame #10: <unknown function> + 0xdc253 (0x7f3a9d0dc253 in /lib/x86_64-linux-gnu/libstdc++.so.6)",
                    "frame #11: <unknown function> + 0x94ac3 (0x7f3a9ce94ac3 in /lib/x86_64-linux-gnu/libc.so.6)",
                    "frame #12: clone + 0x44 (0x7f3a9cf26850 in /lib/x86_64-linux-gnu/libc.so.6)",
                    "",
                ]
            else:
                tw = tfail + timedelta(seconds=600.1)
                stamp = f"{tw.strftime('%m%d %H:%M:%S')}.{rnd.randint(100000000, 999999999)}"
                seq = 88412 + (rank % 8)
                out += [
                    f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:632] [Rank {rank % 8 if ni == bad_node else rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=_REDUCE_SCATTER_BASE, NumelIn=262668288, NumelOut=32833536, Timeout(ms)=600000) ran for 600043 milliseconds before timing out.",
                    f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank {rank // 8 if False else rank % 4}]  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, last completed work: {seq - 1}",
                    f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
                    f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:684] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
                    f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:690] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
                ] if ni != bad_node else [
                    f"{h}:{70100+lr}:{70900+lr} [{lr}] NCCL INFO [Service thread] Connection closed by localRank {bad_rank % 8}",
                ]
            W(inc, f"logs/{h}/attempt_0_rank_{rank}.log", out)
        # agent log per node
        tfail = t0 + timedelta(seconds=40 + (fail_step - 1151) * 2.64)
        if ni == bad_node:
            agent += [f"W1121 {(tfail+timedelta(seconds=2)).strftime('%H:%M:%S')}.310000 139871122462528 torch/distributed/elastic/multiprocessing/api.py:897 Sending process {70100+lr} closing signal SIGTERM" for lr in range(8) if lr != bad_rank % 8]
            agent.append(f"E1121 {(tfail+timedelta(seconds=4)).strftime('%H:%M:%S')}.002000 139871122462528 torch/distributed/elastic/multiprocessing/api.py:869 failed (exitcode: -6) local_rank: 5 (pid: 70105) of binary: /opt/venv/bin/python")
            agent += ["Traceback (most recent call last):",
                      "  File \"/opt/venv/bin/torchrun\", line 8, in <module>",
                      "    sys.exit(main())",
                      "             ^^^^^^",
                      f"  File \"{site}/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 355, in wrapper",
                      "    return f(*args, **kwargs)",
                      "           ^^^^^^^^^^^^^^^^^^",
                      f"  File \"{site}/torch/distributed/run.py\", line 919, in main",
                      "    run(args)",
                      f"  File \"{site}/torch/distributed/run.py\", line 910, in run",
                      "    elastic_launch(",
                      f"  File \"{site}/torch/distributed/launcher/api.py\", line 138, in __call__",
                      "    return launch_agent(self._config, self._entrypoint, list(args))",
                      "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                      f"  File \"{site}/torch/distributed/launcher/api.py\", line 269, in launch_agent",
                      "    raise ChildFailedError("]
            agent += child_failed("torchtitan.train", h, bad_rank, 5, 70105, -6,
                                  tfail.strftime("%Y-%m-%d_%H:%M:%S"),
                                  "Signal 6 (SIGABRT) received by PID 70105")
        else:
            tw = tfail + timedelta(seconds=602)
            agent.append(f"W1121 {tw.strftime('%H:%M:%S')}.881000 140102337517376 torch/distributed/elastic/multiprocessing/api.py:897 Sending process {70100} closing signal SIGTERM")
            agent.append(f"E1121 {tw.strftime('%H:%M:%S')}.990000 140102337517376 torch/distributed/elastic/multiprocessing/api.py:869 failed (exitcode: -6) local_rank: 1 (pid: 70101) of binary: /opt/venv/bin/python")
        W(inc, f"logs/{h}/torchrun-agent.log",
          [f"W1121 02:57:41.002000 {139871122462528+ni} torch/distributed/run.py:793 Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
           f"I1121 02:57:41.120000 {139871122462528+ni} torch/distributed/launcher/api.py:194 Starting elastic_operator with launch configs:",
           f"I1121 02:57:41.120000 {139871122462528+ni} torch/distributed/launcher/api.py:194   entrypoint       : torchtitan.train",
           f"I1121 02:57:41.120000 {139871122462528+ni} torch/distributed/launcher/api.py:194   min_nodes        : 4",
           f"I1121 02:57:41.120000 {139871122462528+ni} torch/distributed/launcher/api.py:194   nproc_per_node   : 8",
           f"I1121 02:57:41.120000 {139871122462528+ni} torch/distributed/launcher/api.py:194   rdzv_backend     : c10d",
           f"I1121 02:57:41.120000 {139871122462528+ni} torch/distributed/launcher/api.py:194   log_dir          : /home/train/logs/llama3-8b-lc",
           ] + agent)
        # nvidia-smi probe
        W(inc, f"probes/{h}/dcgm-diag.txt", dcgm_pass(h))
    yaml_job(inc, {
        "job_id": "titan-lc-0071",
        "name": "llama3-8b-long-context",
        "framework": "torchtitan",
        "launcher": "torchrun --tee 3 --log-dir (one file per rank, no prefix) + agent stderr per node",
        "status": "failed",
        "started_at": "2026-11-21T02:57:40Z",
        "ended_at": "2026-11-21T03:13:05Z",
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 8, "pp": 1, "dp": 4, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 8),
        "code": [
            {"commit": "d0f3a61", "at": "2026-11-14T10:00:00Z", "message": "lc: rope scaling 8x, seq 32k"},
        ],
        "checkpoints": [
            {"step": 1100, "at": "2026-11-20T23:12:00Z", "path": "gs://titan-ckpt/lc-0071/step-1100", "valid": True},
            {"step": 1150, "at": "2026-11-21T01:58:00Z", "path": "gs://titan-ckpt/lc-0071/step-1150", "valid": True},
            {"step": 1200, "at": "2026-11-21T03:00:52Z", "path": "gs://titan-ckpt/lc-0071/step-1200", "valid": False, "note": ".metadata missing: async upload not finished when the job died"},
        ],
        "spares": 1,
        "env": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    })
    fb = f"logs/{hosts[bad_node]}/attempt_0_rank_{bad_rank}.log"
    fa = f"logs/{hosts[bad_node]}/torchrun-agent.log"
    truth(inc, {
        "fault": "pytorch_internal_assert",
        "category": "framework",
        "root_cause": "rank 13 on a3-mega-0042 aborted (SIGABRT) on a PyTorch CUDA caching allocator INTERNAL ASSERT (free_block, CUDACachingAllocator.cpp:3316) thrown from the autograd thread in step 1237; its peers then hit the NCCL watchdog timeout",
        "faulty_nodes": [hosts[bad_node]],
        "stage": "training",
        "iteration": fail_step,
    }, [(fb, L(inc, fb, "what():  inserted INTERNAL ASSERT FAILED")),
        (fa, L(inc, fa, "Signal 6 (SIGABRT) received by PID 70105"))])
    json_add_actions(inc, [{"kind": "restart", "from_step": 1150}])


def dcgm_pass(h):
    return [
        "Successfully ran diagnostic for group.",
        "+---------------------------+------------------------------------------------+",
        "| Diagnostic                | Result                                         |",
        "+===========================+================================================+",
        "|-----  Metadata  ----------+------------------------------------------------|",
        "| DCGM Version              | 3.3.7                                          |",
        "| Driver Version Detected   | 550.90.07                                      |",
        "| GPU Device IDs Detected   | 2330,2330,2330,2330,2330,2330,2330,2330        |",
        "|-----  Deployment  --------+------------------------------------------------|",
        "| Denylist                  | Pass                                           |",
        "| NVML Library              | Pass                                           |",
        "| CUDA Main Library         | Pass                                           |",
        "| Permissions and OS Blocks | Pass                                           |",
        "| Persistence Mode          | Pass                                           |",
        "| Environment Variables     | Pass                                           |",
        "| Page Retirement/Row Remap | Pass                                           |",
        "| Graphics Processes        | Pass                                           |",
        "| Inforom                   | Pass                                           |",
        "+-----  Integration  -------+------------------------------------------------+",
        "| PCIe                      | Pass - All                                     |",
        "+-----  Hardware  ----------+------------------------------------------------+",
        "| GPU Memory                | Pass - All                                     |",
        "+---------------------------+------------------------------------------------+",
    ]


##############################################################################
# 5. Lightning CLI on Slurm: resume from a checkpoint path that does not exist
##############################################################################
def inc_lightning_ckpt():
    inc = "lightning-cli-resume-ckpt-not-found-2node"
    hosts = ["gn-a100-017", "gn-a100-018"]
    ips = ["192.168.40.17", "192.168.40.18"]
    jobid = "5531876"
    site = "/home/mkowal/.conda/envs/vit/lib/python3.10/site-packages"
    bad = "/mnt/nfs/projects/vit-h/checkpoints/epoch=11-step=48000.ckpt"
    for ni, h in enumerate(hosts):
        out = []
        if ni == 0:
            out += ["Seed set to 1234",
                    "Using 16bit Automatic Mixed Precision (AMP)",
                    "GPU available: True (cuda), used: True",
                    "TPU available: False, using: 0 TPU cores",
                    "HPU available: False, using: 0 HPUs"]
        for lr in range(8):
            rank = ni * 8 + lr
            out.append(f"Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {rank+1}/16")
        if ni == 0:
            out += ["----------------------------------------------------------------------------------------------------",
                    "distributed_backend=nccl",
                    "All distributed processes registered. Starting with 16 processes",
                    "----------------------------------------------------------------------------------------------------",
                    ""]
        out.append(f"{site}/pytorch_lightning/trainer/connectors/data_connector.py:424: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument to `num_workers=11` in the `DataLoader` to improve performance.")
        if ni == 0:
            out.append(f"Restoring states from the checkpoint path at {bad}")
        for k, lr in enumerate(range(8)):
            rank = ni * 8 + lr
            if lr not in (0, 1) and not (ni == 1 and lr == 4):
                continue
            out.append(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
            out += [
                "Traceback (most recent call last):",
                "  File \"/home/mkowal/vit-h/train.py\", line 61, in <module>",
                "    cli_main()",
                "  File \"/home/mkowal/vit-h/train.py\", line 57, in cli_main",
                "    LightningCLI(ViTClassifier, ImageNetDataModule, save_config_kwargs={\"overwrite\": True})",
                f"  File \"{site}/pytorch_lightning/cli.py\", line 386, in __init__",
                "    self._run_subcommand(self.subcommand)",
                f"  File \"{site}/pytorch_lightning/cli.py\", line 677, in _run_subcommand",
                "    fn(**fn_kwargs)",
                f"  File \"{site}/pytorch_lightning/trainer/trainer.py\", line 544, in fit",
                "    call._call_and_handle_interrupt(",
                f"  File \"{site}/pytorch_lightning/trainer/call.py\", line 44, in _call_and_handle_interrupt",
                "    return trainer_fn(*args, **kwargs)",
                f"  File \"{site}/pytorch_lightning/trainer/trainer.py\", line 580, in _fit_impl",
                "    self._run(model, ckpt_path=ckpt_path)",
                f"  File \"{site}/pytorch_lightning/trainer/trainer.py\", line 955, in _run",
                "    self._checkpoint_connector._restore_modules_and_callbacks(ckpt_path)",
                f"  File \"{site}/pytorch_lightning/trainer/connectors/checkpoint_connector.py\", line 397, in _restore_modules_and_callbacks",
                "    self.resume_start(checkpoint_path)",
                f"  File \"{site}/pytorch_lightning/trainer/connectors/checkpoint_connector.py\", line 79, in resume_start",
                "    loaded_checkpoint = self.trainer.strategy.load_checkpoint(checkpoint_path)",
                f"  File \"{site}/pytorch_lightning/strategies/strategy.py\", line 368, in load_checkpoint",
                "    return self.checkpoint_io.load_checkpoint(checkpoint_path)",
                f"  File \"{site}/lightning_fabric/plugins/io/torch_io.py\", line 79, in load_checkpoint",
                "    raise FileNotFoundError(f\"Checkpoint at {path} not found. Aborting training.\")",
                f"FileNotFoundError: Checkpoint at {bad} not found. Aborting training.",
            ]
        W(inc, f"logs/{h}/vit-h-ft-{jobid}-{h}.out", out)
    W(inc, f"logs/{hosts[0]}/slurm-{jobid}.out", [
        "Lmod: loading cuda/12.1 nccl/2.18.3",
        f"+ srun --output=vit-h-ft-%j-%N.out python train.py fit --config configs/vit_h.yaml --trainer.num_nodes 2 --ckpt_path {bad}",
        "srun: error: gn-a100-018: tasks 8-15: Exited with exit code 1",
        "srun: Terminating StepId=5531876.0",
        "srun: error: gn-a100-017: tasks 0-7: Exited with exit code 1",
    ])
    yaml_job(inc, {
        "job_id": jobid,
        "name": "vit-h-ft",
        "framework": "other",
        "launcher": "Lightning CLI under srun (one output file per node via %N)",
        "status": "failed",
        "started_at": "2026-11-21T14:20:08Z",
        "ended_at": "2026-11-21T14:21:37Z",
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 8),
        "code": [
            {"commit": "f22b9d4", "at": "2026-11-03T12:00:00Z", "message": "vit-h: layer decay 0.75"},
        ],
        "checkpoints": [
            {"step": 44000, "at": "2026-11-20T19:02:00Z", "path": "/mnt/nfs/projects/vit-h/lightning_logs/version_7/checkpoints/epoch=10-step=44000.ckpt", "valid": True},
            {"step": 48000, "at": "2026-11-21T06:47:00Z", "path": "/mnt/nfs/projects/vit-h/lightning_logs/version_7/checkpoints/epoch=11-step=48000.ckpt", "valid": True},
        ],
        "spares": 0,
        "history": ["5530112 (preempted at step 48630 on 2026-11-21)"],
    })
    f0 = f"logs/{hosts[0]}/vit-h-ft-{jobid}-{hosts[0]}.out"
    f1 = f"logs/{hosts[1]}/vit-h-ft-{jobid}-{hosts[1]}.out"
    truth(inc, {
        "fault": "checkpoint_load_failure",
        "category": "user_code",
        "root_cause": "the resume was given --ckpt_path .../vit-h/checkpoints/epoch=11-step=48000.ckpt, a path that does not exist (the checkpoint lives under lightning_logs/version_7/checkpoints/), so Lightning raises FileNotFoundError on every rank before training",
        "faulty_nodes": [],
        "stage": "init",
        "iteration": None,
    }, [(f0, L(inc, f0, "FileNotFoundError: Checkpoint at")),
        (f1, L(inc, f1, "FileNotFoundError: Checkpoint at"))])
    json_add_actions(inc, [{"kind": "none"}])


##############################################################################
# 6. NeMo 2 (torchrun --tee [defaultN]: prefix): Lustre eviction -> EIO on ckpt save, one node
##############################################################################
def inc_nemo_lustre():
    inc = "nemo-default-prefix-lustre-evict-ckpt-eio-4node"
    hosts = ["hpc-gpu-214", "hpc-gpu-215", "hpc-gpu-221", "hpc-gpu-222"]
    ips = ["10.150.2.214", "10.150.2.215", "10.150.2.221", "10.150.2.222"]
    bad_node = 2
    rnd = random.Random(6)
    site = "/usr/local/lib/python3.10/dist-packages"
    t0 = datetime(2026, 11, 22, 13, 31, 4)
    start_step, save_step = 4001, 4500
    ckdir = "/lustre/fsw/llm/nemo/mistral-12b-cpt/checkpoints"
    ck = f"{ckdir}/model_name=0--val_loss=0.00-step=4499-consumed_samples=2304000.0"
    for ni, h in enumerate(hosts):
        out = []
        t = t0
        def nm(lvl, mod, msg, lr=0):
            out.append(f"[default{lr}]:[NeMo {lvl} {t.strftime('%Y-%m-%d %H:%M:%S')} {mod}] {msg}")
        for lr in range(8):
            out.append(f"[default{lr}]:{site}/megatron/core/tensor_parallel/layers.py:290: FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.")
            out.append(f"[default{lr}]:  def forward(")
        if ni == 0:
            nm("I", "nemo_logger:145", "Experiments will be logged at /lustre/fsw/llm/nemo/mistral-12b-cpt")
            nm("I", "megatron_strategy:315", "Fixing mis-match between ddp-config & mcore-optimizer config")
        for lr in range(8):
            rank = ni * 8 + lr
            out.append(f"[default{lr}]:Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {rank+1}/32")
        out.append(f"[default0]:{h}:{91800}:{91800} [0] NCCL INFO Bootstrap : Using ibs3:{ips[ni]}<0>")
        out.append(f"[default0]:{h}:{91800}:{92410} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ibs3:{ips[ni]}<0>")
        if ni == 0:
            nm("I", "megatron_init:426", "Rank 0 has data parallel group : [0, 8, 16, 24]")
            nm("I", "megatron_init:452", "Ranks 0 has context parallel rank: 0")
            nm("I", "megatron_init:483", "Rank 0 has pipeline model parallel group: [0, 4]")
            out.append(f"[default0]:Restoring states from the checkpoint path at {ckdir}/model_name=0--val_loss=0.00-step=3999-consumed_samples=2048000.0")
            nm("I", "nemo_logging:393", "Doing selective restore from RestoreConfig(path='/lustre/fsw/llm/nemo/mistral-12b-cpt/checkpoints/model_name=0--val_loss=0.00-step=3999-consumed_samples=2048000.0', adapter_path=None, load_model_state=True, load_optim_state=True, load_artifacts=True)")
        t += timedelta(seconds=95)
        step_t = 6.2
        for s in range(start_step, save_step + 1):
            t += timedelta(seconds=step_t + rnd.random() * 0.1)
            if ni == 0 and (s % 5 == 0 or s >= save_step - 2):
                loss = 1.92 - (s - 4000) * 0.00005 + rnd.random() * 0.02
                out.append(f"[default0]:Training epoch 0, iteration {s-1}/99999 | lr: 0.0002 | global_batch_size: 512 | global_step: {s-1} | reduced_train_loss: {loss:.4f} | train_step_timing in s: {step_t + rnd.random()*0.1:.3f} | consumed_samples: {s*512}")
            if ni == 0 and s == 4250:
                out.append(f"[default0]:[NeMo W {t.strftime('%Y-%m-%d %H:%M:%S')} nemo_logging:405] /lustre/fsw/llm/nemo/mistral-12b-cpt/data: index file is older than data file, rebuilding is not needed (mtime skew 2s)")
        tsave = t + timedelta(seconds=1)
        if ni == 0:
            out.append(f"[default0]:[NeMo I {tsave.strftime('%Y-%m-%d %H:%M:%S')} model_checkpoint:497] Scheduled async checkpoint save for {ck}.ckpt")
        if ni == bad_node:
            tt = tsave + timedelta(seconds=67)
            for lr in (1, 3, 6):
                rank = ni * 8 + lr
                out.append(f"[default{lr}]:ERROR:megatron.core.dist_checkpointing.strategies.filesystem_async:Local process 0 encountered an error: [Errno 5] Input/output error")
            for lr in (1,):
                out += [
                    f"[default{lr}]:Traceback (most recent call last):",
                    f"[default{lr}]:  File \"{site}/megatron/core/dist_checkpointing/strategies/filesystem_async.py\", line 278, in write_preloaded_data",
                    f"[default{lr}]:    with open(file_name, \"wb\") as stream:",
                    f"[default{lr}]:OSError: [Errno 5] Input/output error: '{ck}/weights/__17_0.distcp'",
                ]
        # everybody: the collective finalize fails
        tt = tsave + timedelta(seconds=70)
        lrs = [0] if ni != bad_node else [0, 1]
        for lr in lrs:
            rank = ni * 8 + lr
            bad_ranks = "[17, 19, 22]"
            out += [
                f"[default{lr}]:[rank{rank}]: Traceback (most recent call last):",
                f"[default{lr}]:[rank{rank}]:   File \"/opt/NeMo/nemo/lightning/pytorch/callbacks/model_checkpoint.py\", line 432, in _save_checkpoint",
                f"[default{lr}]:[rank{rank}]:     trainer.save_checkpoint(ckpt_filepath, self.save_weights_only, storage_options=storage_options)",
                f"[default{lr}]:[rank{rank}]:   File \"{site}/megatron/core/dist_checkpointing/strategies/async_utils.py\", line 184, in maybe_finalize_async_call",
                f"[default{lr}]:[rank{rank}]:     raise CheckpointException('write', {{rank: exc for rank, exc in ...}})",
                f"[default{lr}]:[rank{rank}]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys({bad_ranks})",
            ]
        W(inc, f"logs/{h}/nemo_cpt_{h}.log", out)
        # dmesg probes
        rnd2 = random.Random(60 + ni)
        dm = dmesg_boot(h, datetime(2026, 11, 19, 8, 0, 0), rnd2)
        if ni == bad_node:
            e = tsave + timedelta(seconds=3)
            osc = "fsw-OST0017-osc-ffff9a61c2e4d000"
            dm += [
                f"[{(e - timedelta(seconds=40)).strftime('%a %b %d %H:%M:%S %Y')}] mlx5_core 0000:41:00.0: mlx5_port_module_event:1170:(pid 0): Port module event[error]: module 0, Cable error, High Temperature",
                f"[{e.strftime('%a %b %d %H:%M:%S %Y')}] LustreError: 11-0: {osc}: operation ost_write to node 10.150.9.27@o2ib failed: rc = -107",
                f"[{e.strftime('%a %b %d %H:%M:%S %Y')}] Lustre: {osc}: Connection to fsw-OST0017 (at 10.150.9.27@o2ib) was lost; in progress operations using this service will wait for recovery to complete",
                f"[{(e+timedelta(seconds=61)).strftime('%a %b %d %H:%M:%S %Y')}] LustreError: 167-0: {osc}: This client was evicted by fsw-OST0017; in progress operations using this service will fail.",
                f"[{(e+timedelta(seconds=61)).strftime('%a %b %d %H:%M:%S %Y')}] LustreError: Skipped 3 previous similar messages",
                f"[{(e+timedelta(seconds=62)).strftime('%a %b %d %H:%M:%S %Y')}] Lustre: {osc}: Connection restored to 10.150.9.27@o2ib (at 10.150.9.27@o2ib)",
            ]
        W(inc, f"probes/{h}/dmesg.txt", dm)
    yaml_job(inc, {
        "job_id": "2290417",
        "name": "mistral-12b-cpt",
        "framework": "nemo",
        "scheduler": "slurm",
        "launcher": "NeMo-Run SlurmExecutor, torchrun --tee 3 per node ([defaultN]: prefix)",
        "status": "failed",
        "started_at": "2026-11-22T13:30:40Z",
        "ended_at": "2026-11-22T14:26:30Z",
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 4, "pp": 2, "dp": 4, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 8),
        "code": [{"commit": "0be4c27", "at": "2026-11-10T09:00:00Z", "message": "cpt: 60/40 web/code blend"}],
        "checkpoints": [
            {"step": 3500, "at": "2026-11-22T05:55:00Z", "path": f"{ckdir}/model_name=0--val_loss=0.00-step=3499-consumed_samples=1792000.0", "valid": True},
            {"step": 4000, "at": "2026-11-22T12:48:00Z", "path": f"{ckdir}/model_name=0--val_loss=0.00-step=3999-consumed_samples=2048000.0", "valid": True},
            {"step": 4500, "at": "2026-11-22T14:24:44Z", "path": ck, "valid": False},
        ],
        "spares": 3,
        "storage": {"checkpoint_fs": "lustre /lustre/fsw (LNet o2ib)"},
    })
    fb = f"logs/{hosts[bad_node]}/nemo_cpt_{hosts[bad_node]}.log"
    pd = f"probes/{hosts[bad_node]}/dmesg.txt"
    truth(inc, {
        "fault": "storage_checkpoint_write_failure",
        "category": "infrastructure",
        "root_cause": "while the step-4500 distributed checkpoint was being written, hpc-gpu-221's Lustre client lost OST0017 and was evicted (dmesg LustreError 11-0 / 167-0), so its ranks' writes failed with EIO and the checkpoint finalize failed on every rank",
        "faulty_nodes": [hosts[bad_node]],
        "stage": "checkpoint",
        "iteration": save_step,
    }, [(fb, L(inc, fb, "Local process 0 encountered an error: [Errno 5]")),
        (fb, L(inc, fb, "OSError: [Errno 5] Input/output error")),
        (pd, L(inc, pd, "LustreError: 11-0:")),
        (pd, L(inc, pd, "LustreError: 167-0:"))])
    json_add_actions(inc, [{"kind": "restart", "from_step": 4000}])


##############################################################################
# 7. DeepSpeed (--no_ssh, one log per node): fp16 loss scale collapse
##############################################################################
def inc_deepspeed_loss_scale():
    inc = "deepspeed-nossh-fp16-loss-scale-floor-2node"
    hosts = ["trn-h100-31", "trn-h100-32"]
    ips = ["10.9.31.1", "10.9.32.1"]
    rnd = random.Random(7)
    site = "/usr/local/lib/python3.10/dist-packages"
    t0 = datetime(2026, 11, 23, 1, 10, 2)
    first_ovf, resume = 7386, 7201
    for ni, h in enumerate(hosts):
        out = []
        t = t0
        def ds(lvl, where, msg):
            out.append(f"[{t.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(0,999):03d}] [{lvl}] [{where}] {msg}")
        ds("INFO", "real_accelerator.py:219:get_accelerator", "Setting ds_accelerator to cuda (auto detect)")
        ds("INFO", "launch.py:146:main", "WORLD INFO DICT: {'trn-h100-31': [0, 1, 2, 3, 4, 5, 6, 7], 'trn-h100-32': [0, 1, 2, 3, 4, 5, 6, 7]}")
        ds("INFO", "launch.py:152:main", f"nnodes=2, num_local_procs=8, node_rank={ni}")
        ds("INFO", "launch.py:163:main", "global_rank_mapping=defaultdict(<class 'list'>, {'trn-h100-31': [0, 1, 2, 3, 4, 5, 6, 7], 'trn-h100-32': [8, 9, 10, 11, 12, 13, 14, 15]})")
        ds("INFO", "launch.py:164:main", "dist_world_size=16")
        ds("INFO", "launch.py:168:main", "Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
        for lr in range(8):
            ds("INFO", "comm.py:652:init_distributed", "cdb=None")
        if ni == 0:
            ds("INFO", "comm.py:683:init_distributed", "Initializing TorchBackend in DeepSpeed with backend nccl")
            ds("INFO", "logging.py:96:log_dist", "[Rank 0] DeepSpeed info: version=0.14.4, git-hash=unknown, git-branch=unknown")
            ds("INFO", "logging.py:96:log_dist", "[Rank 0] Creating fp16 ZeRO stage 2 optimizer")
            ds("INFO", "stage_1_and_2.py:149:__init__", "Reduce bucket size 500000000")
            ds("INFO", "config.py:1000:print", "  fp16_enabled ................. True")
            ds("INFO", "config.py:1000:print", "  dynamic_loss_scale_args ...... {'init_scale': 65536, 'scale_window': 1000, 'delayed_shift': 2, 'consecutive_hysteresis': False, 'min_scale': 1}")
            ds("INFO", "engine.py:3076:_load_zero_checkpoint", f"loading 16 zero partition checkpoints for rank 0")
            out.append(f"resumed from /data/ckpt/codegen-6b/global_step7200, continuing at step {resume}")
        warn = f"{site}/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the previous behavior, you can set use_reentrant=True. Refer to docs for more details on the differences between the two variants."
        for lr in range(8):
            out.append(warn)
            out.append("  warnings.warn(")
        scale = 65536.0
        hyst = 2
        skipped = 41
        step = resume
        dead_step = None
        while True:
            t += timedelta(seconds=1.4 + rnd.random() * 0.05)
            if step < first_ovf:
                loss = 1.31 + rnd.random() * 0.05
                if ni == 0 and step % 10 == 0:
                    out.append(f"step {step} | loss {loss:.4f} | lr 1.20e-04 | loss_scale {scale:.1f} | grad_norm {0.38 + rnd.random()*0.1:.3f} | tokens/s 184{rnd.randint(100,999)}")
                if ni == 0 and step % 50 == 0:
                    ds("INFO", "logging.py:96:log_dist", f"[Rank 0] step={step}, skipped={skipped}, lr=[0.00012], mom=[(0.9, 0.95)]")
                    ds("INFO", "timer.py:260:stop", f"epoch=0/micro_step={step*4}/global_step={step}, RunningAvgSamplesPerSec=45.{rnd.randint(10,99)}, CurrSamplesPerSec=45.{rnd.randint(10,99)}, MemAllocated=21.38GB, MaxMemAllocated=58.02GB")
            else:
                if hyst > 1:
                    if ni == 0:
                        ds("INFO", "loss_scaler.py:190:update_scale", f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {int(scale)}, but hysteresis is {hyst}. Reducing hysteresis to {hyst-1}")
                    hyst -= 1
                elif scale > 1 and ni == 0:
                    ds("INFO", "loss_scaler.py:183:update_scale", f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {int(scale)}, reducing to {int(scale/2)}")
                if ni == 0:
                    if step % 10 == 0:
                        out.append(f"step {step} | loss {'nan'} | lr 1.20e-04 | loss_scale {scale:.1f} | grad_norm {'inf'} | tokens/s 1917{rnd.randint(10,99)}")
                if hyst <= 1 and scale <= 1 and step > first_ovf:
                    dead_step = step
                    break
                if hyst <= 1 and step > first_ovf and scale > 1:
                    scale /= 2
                skipped += 1
                if step == 7400 and ni == 0:
                    ds("INFO", "logging.py:96:log_dist", f"[Rank 0] step={step}, skipped={skipped}, lr=[0.00012], mom=[(0.9, 0.95)]")
                    ds("INFO", "logging.py:96:log_dist", "[Rank 0] Saving model checkpoint: /data/ckpt/codegen-6b/global_step7400/mp_rank_00_model_states.pt")
                    ds("INFO", "torch_checkpoint_engine.py:33:commit", "[Torch] Checkpoint global_step7400 is ready now!")
            step += 1
        # exception on every rank
        for lr in range(8):
            rank = ni * 8 + lr
            if lr in (0, 5):
                out += [
                    "Traceback (most recent call last):",
                    "  File \"/workspace/codegen/train_ds.py\", line 318, in <module>",
                    "    main()",
                    "  File \"/workspace/codegen/train_ds.py\", line 287, in main",
                    "    engine.step()",
                    f"  File \"{site}/deepspeed/runtime/engine.py\", line 2213, in step",
                    "    self._take_model_step(lr_kwargs)",
                    f"  File \"{site}/deepspeed/runtime/engine.py\", line 2119, in _take_model_step",
                    "    self.optimizer.step()",
                    f"  File \"{site}/deepspeed/runtime/zero/stage_1_and_2.py\", line 1855, in step",
                    "    self._update_scale(self.overflow)",
                    f"  File \"{site}/deepspeed/runtime/zero/stage_1_and_2.py\", line 2096, in _update_scale",
                    "    self.loss_scaler.update_scale(has_overflow)",
                    f"  File \"{site}/deepspeed/runtime/fp16/loss_scaler.py\", line 175, in update_scale",
                    "    raise Exception(",
                    "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
                ]
        t += timedelta(seconds=3)
        for lr in range(8):
            rank = ni * 8 + lr
            out.append(f"[{t.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(0,999):03d}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {40210+lr}")
        out.append(f"[{t.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(0,999):03d}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', '/workspace/codegen/train_ds.py', '--local_rank=7', '--deepspeed', '--deepspeed_config', 'configs/ds_zero2_fp16.json', '--resume', '/data/ckpt/codegen-6b'] exits with return code = 1")
        W(inc, f"logs/{h}/deepspeed_node{ni}.log", out)
    yaml_job(inc, {
        "job_id": "codegen6b-ft-33",
        "name": "codegen-6b-finetune",
        "framework": "deepspeed",
        "launcher": "deepspeed --hostfile hosts --no_ssh --node_rank=N (one log per node, no prefix)",
        "status": "failed",
        "started_at": "2026-11-23T01:10:00Z",
        "ended_at": "2026-11-23T01:14:55Z",
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 8),
        "code": [{"commit": "77d1e0a", "at": "2026-11-12T16:00:00Z", "message": "ft: longer warmup"}],
        "checkpoints": [
            {"step": 7000, "at": "2026-11-22T21:40:00Z", "path": "/data/ckpt/codegen-6b/global_step7000", "valid": True},
            {"step": 7200, "at": "2026-11-22T23:55:00Z", "path": "/data/ckpt/codegen-6b/global_step7200", "valid": True},
            {"step": 7400, "at": "2026-11-23T01:14:47Z", "path": "/data/ckpt/codegen-6b/global_step7400", "valid": True},
        ],
        "spares": 1,
    })
    f0 = f"logs/{hosts[0]}/deepspeed_node0.log"
    f1 = f"logs/{hosts[1]}/deepspeed_node1.log"
    truth(inc, {
        "fault": "loss_scale_collapse",
        "category": "data",
        "root_cause": "from step 7386 every step overflowed in fp16; DeepSpeed halved the dynamic loss scale each skipped step from 65536 down to its minimum of 1 and then raised 'Current loss scale already at minimum' on every rank; the step-7400 checkpoint was written while steps were being skipped",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": first_ovf,
    }, [(f0, L(inc, f0, "Attempted loss scale: 65536, but hysteresis is 2")),
        (f0, L(inc, f0, "Attempted loss scale: 2, reducing to 1")),
        (f0, L(inc, f0, "Exception: Current loss scale already at minimum")),
        (f1, L(inc, f1, "Exception: Current loss scale already at minimum"))])
    json_add_actions(inc, [{"kind": "restart", "from_step": 7200}])


##############################################################################
# 8. Ray Train worker log files (no prefix): DataLoader worker OOM-killed on one node
##############################################################################
def inc_ray_dataloader_oom():
    inc = "raytrain-workerfiles-dataloader-oomkill-4node"
    hosts = ["ip-10-0-33-74", "ip-10-0-33-181", "ip-10-0-34-12", "ip-10-0-34-90"]
    ips = ["10.0.33.74", "10.0.33.181", "10.0.34.12", "10.0.34.90"]
    bad_node, bad_lr = 1, 2
    rnd = random.Random(8)
    site = "/home/ray/anaconda3/lib/python3.10/site-packages"
    t0 = datetime(2026, 11, 24, 6, 2, 40)
    start, fail_step = 2401, 2958
    kill_pid = 61544
    job = "05000000"
    tkill = None
    for ni, h in enumerate(hosts):
        for lr in range(4):
            rank = ni * 4 + lr
            wpid = 3400 + rank * 7
            out = []
            t = t0
            out.append(f"Setting up process group for: env:// [rank={rank}, world_size=16]")
            out.append(f"{site}/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 10 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.")
            out.append("  warnings.warn(_create_warning_msg(")
            out.append(f"Moving model to device: cuda:{lr}")
            out.append("Wrapping provided model in DistributedDataParallel.")
            out.append(f"{h}:{wpid}:{wpid+61} [{lr}] NCCL INFO NET/OFI Selected Provider is efa (found 1 nics)")
            out.append(f"{h}:{wpid}:{wpid+61} [{lr}] NCCL INFO Using network AWS Libfabric")
            out.append(f"restored checkpoint from s3://ml-ckpt/det-swin-l/checkpoint_000009 (step 2400)")
            for s in range(start, fail_step):
                t += timedelta(seconds=3.1 + rnd.random() * 0.2)
                if s % 25 == 0:
                    out.append(f"[{t.strftime('%H:%M:%S')}] epoch 10 step {s} loss_cls {0.31 + rnd.random()*0.02:.4f} loss_box {0.22 + rnd.random()*0.02:.4f} data_time {0.08 + rnd.random()*0.03:.3f}s iter_time {3.15 + rnd.random()*0.1:.3f}s")
                if s == 2700:
                    out.append(f"Retrying GET s3://ml-data/coco-objects365/shard-0412.tar (attempt 2/5) after ConnectionResetError(104, 'Connection reset by peer')")
                    out.append(f"GET s3://ml-data/coco-objects365/shard-0412.tar ok after 2 attempts")
            tkill = t + timedelta(seconds=1.7)
            if ni == bad_node and lr == bad_lr:
                out += [
                    "Traceback (most recent call last):",
                    f"  File \"{site}/torch/utils/data/dataloader.py\", line 1133, in _try_get_data",
                    "    data = self._data_queue.get(timeout=timeout)",
                    "  File \"/home/ray/anaconda3/lib/python3.10/multiprocessing/queues.py\", line 113, in get",
                    "    if not self._poll(timeout):",
                    "  File \"/home/ray/anaconda3/lib/python3.10/multiprocessing/connection.py\", line 257, in poll",
                    "    return self._poll(timeout)",
                    "  File \"/home/ray/anaconda3/lib/python3.10/multiprocessing/connection.py\", line 424, in _poll",
                    "    r = wait([self], timeout)",
                    "  File \"/home/ray/anaconda3/lib/python3.10/multiprocessing/connection.py\", line 931, in wait",
                    "    ready = selector.select(timeout)",
                    "  File \"/home/ray/anaconda3/lib/python3.10/selectors.py\", line 416, in select",
                    "    fd_event_list = self._selector.poll(timeout)",
                    f"  File \"{site}/torch/utils/data/_utils/signal_handling.py\", line 73, in handler",
                    "    _error_if_any_worker_fails()",
                    f"RuntimeError: DataLoader worker (pid {kill_pid}) is killed by signal: Killed. ",
                    "",
                    "The above exception was the direct cause of the following exception:",
                    "",
                    "Traceback (most recent call last):",
                    f"  File \"{site}/ray/train/_internal/utils.py\", line 176, in discard_return_wrapper",
                    "    train_func(*args, **kwargs)",
                    "  File \"/home/ray/det/train_ray.py\", line 214, in train_loop_per_worker",
                    "    for batch in train_loader:",
                    f"  File \"{site}/torch/utils/data/dataloader.py\", line 630, in __next__",
                    "    data = self._next_data()",
                    f"  File \"{site}/torch/utils/data/dataloader.py\", line 1329, in _next_data",
                    "    idx, data = self._get_data()",
                    f"  File \"{site}/torch/utils/data/dataloader.py\", line 1295, in _get_data",
                    "    success, data = self._try_get_data()",
                    f"  File \"{site}/torch/utils/data/dataloader.py\", line 1146, in _try_get_data",
                    "    raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e",
                    f"RuntimeError: DataLoader worker (pid(s) {kill_pid}) exited unexpectedly",
                ]
            else:
                tc = tkill + timedelta(seconds=2 + rnd.random())
                stamp = f"{tc.strftime('%m%d %H:%M:%S')}.{rnd.randint(100000000, 999999999)}"
                if ni != bad_node and lr == 0:
                    out.append(f"{h}:{wpid}:{wpid+77} [{lr}] NCCL WARN Net : Connection closed by remote peer ip-10-0-33-181.us-west-2.compute.internal<46212>")
                out += [
                    f"[rank{rank}]:[E{stamp} ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
                    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                    "Last error:",
                    "Net : Connection closed by remote peer ip-10-0-33-181.us-west-2.compute.internal<46212>" if ni != bad_node else "socketProgress: Connection closed by remote peer localhost<51370>",
                ]
            wid = "%056x" % random.Random(rank).getrandbits(224)
            W(inc, f"logs/{h}/worker-{wid}-{job}-{wpid}.out", out)
        rnd2 = random.Random(80 + ni)
        dm = dmesg_boot(h, datetime(2026, 11, 23, 20, 0, 0), rnd2)
        if ni == bad_node:
            k = tkill - timedelta(seconds=1)
            s = k.strftime('%a %b %d %H:%M:%S %Y')
            dm += [
                f"[{s}] ray::RayTrainWo invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0",
                f"[{s}] CPU: 37 PID: 61539 Comm: ray::RayTrainWo Tainted: P           OE      6.8.0-1019-aws #21~22.04.1-Ubuntu",
                f"[{s}] Hardware name: Amazon EC2 p4d.24xlarge/, BIOS 1.0 10/16/2017",
                f"[{s}] Call Trace:",
                f"[{s}]  <TASK>",
                f"[{s}]  dump_stack_lvl+0x76/0xa0",
                f"[{s}]  dump_header+0x4a/0x250",
                f"[{s}]  oom_kill_process+0x10a/0x1c0",
                f"[{s}]  out_of_memory+0x107/0x580",
                f"[{s}]  __alloc_pages_slowpath.constprop.0+0xcdb/0xe00",
                f"[{s}]  </TASK>",
                f"[{s}] Mem-Info:",
                f"[{s}] active_anon:275398211 inactive_anon:3120377 isolated_anon:0",
                f"[{s}] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/docker/4b1e9f0c2d7a,task=ray::RayTrainWo,pid={kill_pid},uid=1000",
                f"[{s}] Out of memory: Killed process {kill_pid} (ray::RayTrainWo) total-vm:96514300kB, anon-rss:88213412kB, file-rss:103816kB, shmem-rss:8192kB, UID:1000 pgtables:172880kB oom_score_adj:0",
                f"[{s}] oom_reaper: reaped process {kill_pid} (ray::RayTrainWo), now anon-rss:0kB, file-rss:0kB, shmem-rss:8192kB",
            ]
        W(inc, f"probes/{h}/dmesg.txt", dm)
        W(inc, f"probes/{h}/host-memory.json", [json.dumps({
            "probe": "free -g", "status": "fail" if ni == bad_node else "ok",
            "detail": "MemAvailable 3 GiB of 1121 GiB after the kill" if ni == bad_node else "MemAvailable 702 GiB of 1121 GiB",
            "metrics": {"mem_total_gib": 1121, "mem_available_gib": 3 if ni == bad_node else 702}})])
    yaml_job(inc, {
        "job_id": "raysubmit_Jx9Q2mTc4fVb7LwR",
        "name": "swin-l-detector-o365",
        "framework": "other",
        "launcher": "Ray Train TorchTrainer (4 workers x 4 GPUs); bundle holds the per-worker .out files from /tmp/ray/session_latest/logs, no prefix",
        "status": "failed",
        "started_at": "2026-11-24T06:01:50Z",
        "ended_at": "2026-11-24T06:32:41Z",
        "exit_code": 1,
        "gpus_per_node": 4,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "nodes": nodes_block(hosts, ips, 4),
        "code": [{"commit": "b61d5e3", "at": "2026-11-16T13:00:00Z", "message": "det: mosaic aug + 10 loader workers"}],
        "checkpoints": [
            {"step": 2000, "at": "2026-11-23T23:10:00Z", "path": "s3://ml-ckpt/det-swin-l/checkpoint_000008", "valid": True},
            {"step": 2400, "at": "2026-11-24T05:40:00Z", "path": "s3://ml-ckpt/det-swin-l/checkpoint_000009", "valid": True},
        ],
        "spares": 1,
    })
    bh = hosts[bad_node]
    bwpid = 3400 + (bad_node * 4 + bad_lr) * 7
    bwid = "%056x" % random.Random(bad_node * 4 + bad_lr).getrandbits(224)
    fb = f"logs/{bh}/worker-{bwid}-{job}-{bwpid}.out"
    pd = f"probes/{bh}/dmesg.txt"
    truth(inc, {
        "fault": "dataloader_worker_killed",
        "category": "infrastructure",
        "root_cause": "the host OOM killer on ip-10-0-33-181 killed DataLoader worker pid 61544 of rank 6 (host RAM exhausted by the 10 loader workers per rank), so rank 6 raised 'DataLoader worker ... is killed by signal: Killed' and its peers lost their NCCL connections",
        "faulty_nodes": [bh],
        "stage": "training",
        "iteration": fail_step,
    }, [(fb, L(inc, fb, "is killed by signal: Killed.")),
        (pd, L(inc, pd, "invoked oom-killer")),
        (pd, L(inc, pd, f"Out of memory: Killed process {kill_pid}"))])
    json_add_actions(inc, [{"kind": "restart", "from_step": 2400}])


def main():
    for d in os.listdir(ROOT):
        p = os.path.join(ROOT, d)
        if os.path.isdir(p) and os.path.exists(os.path.join(p, "job.yaml")):
            shutil.rmtree(p)
    for fn in (inc_accelerate_shape, inc_azureml_horovod_import, inc_megatron_config, inc_torchtitan_assert,
               inc_lightning_ckpt, inc_nemo_lustre, inc_deepspeed_loss_scale, inc_ray_dataloader_oom):
        fn()
    # verify
    bad = 0
    for d in sorted(os.listdir(ROOT)):
        p = os.path.join(ROOT, d)
        if not os.path.isdir(p) or not os.path.exists(os.path.join(p, "truth.json")):
            continue
        t = json.load(open(os.path.join(p, "truth.json")))
        size = sum(os.path.getsize(os.path.join(a, f)) for a, _, fs in os.walk(p) for f in fs)
        print(f"== {d}  fault={t['fault']}  nodes={t['faulty_nodes']}  iter={t['iteration']}  size={size/1024:.1f}KB  actions={t['actions']}")
        if size > 150 * 1024:
            print("   !! bundle over 150 KB"); bad += 1
        assert 1 <= len(t["indicating_lines"]) <= 6
        for il in t["indicating_lines"]:
            with open(os.path.join(p, il["file"]), "rb") as f:
                raw = f.read()
            lines = raw.decode("utf-8", "replace").split("\n")
            if b"\r" in raw:
                print(f"   !! {il['file']} holds \\r: line numbers depend on the splitter"); bad += 1
            txt = lines[il["line"] - 1] if 0 < il["line"] <= len(lines) else None
            if not txt or not txt.strip():
                print(f"   !! empty/missing line {il}"); bad += 1
            else:
                print(f"   {il['file']}:{il['line']}: {txt[:200]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
