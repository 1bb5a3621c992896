"""CUDA illegal memory access on one rank right after a new custom Triton kernel commit; Colossal-AI's `colossalai run` launcher."""
import random
from common import Bundle, Ind, hhmmss

IID = "colossalai-run-ima-new-fused-kernel"
HOSTS = ["a100-pod3-21", "a100-pod3-22"]
IPS = ["10.9.1.21", "10.9.1.22"]
BAD_HOST, BAD_RANK = "a100-pod3-22", 11
T0 = 15 * 3600 + 3 * 60 + 50
LAST = 36
STEP_S = 2.31
CMD = "torchrun --nproc_per_node=8 --nnodes=2 --node_rank={nr} --master_addr=10.9.1.21 --master_port=29500 train.py --config configs/llama2_13b_tp2.py --plugin hybrid --tp 2 --zero 1 --load /nfs/ckpt/llama2-13b/step-9000"

def clog(ts, path, msg):
    return [f"[{ts}] INFO     colossalai - colossalai - INFO:                    ",
            f"                             {path}",
            f"                    INFO     colossalai - colossalai - INFO: {msg}"]

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(31)
    t_err = T0 + 95 + LAST * STEP_S + 1.7
    for n, h in enumerate(HOSTS):
        L = ["WARNING:torch.distributed.run:", "*****************************************",
             "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
             "*****************************************"]
        ts = f"11/22/26 {hhmmss(T0+14)}"
        if n == 0:
            L += clog(ts, "/opt/conda/lib/python3.10/site-packages/colossalai/initialize.py:75 launch", "Distributed environment is initialized, world size: 16")
        for g in range(8):
            L.append(f"/opt/conda/lib/python3.10/site-packages/colossalai/shardformer/layer/normalization.py:45: UserWarning: Please install apex from source (https://github.com/NVIDIA/apex) to use the fused layernorm kernel")
            L.append(f"{h}:{30410+g}:{30410+g} [{g}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ib0:{IPS[n]}<0>")
        L.append("[extension] Loading the JIT-built cpu_adam_x86 kernel during runtime now")
        L.append(f"[extension] Time taken to load cpu_adam_x86 op: {rnd.uniform(0.08,0.2):.6f} seconds")
        if n == 0:
            L += clog(f"11/22/26 {hhmmss(T0+92)}", "train.py:298 main", "Loaded checkpoint /nfs/ckpt/llama2-13b/step-9000 at epoch 3 step 9000")
            L += clog(f"11/22/26 {hhmmss(T0+93)}", "train.py:305 main", "Using fused RoPE+RMSNorm Triton kernel (kernels/fused_rope_rmsnorm.py)")
        if n == 1:
            for g in range(8):
                r = 8 + g
                if r == BAD_RANK:
                    L += [f"[rank{r}]: Traceback (most recent call last):",
                          f"[rank{r}]:   File \"/workspace/llama-train/train.py\", line 412, in <module>",
                          f"[rank{r}]:     main()",
                          f"[rank{r}]:   File \"/workspace/llama-train/train.py\", line 366, in main",
                          f"[rank{r}]:     step_loss = loss.item()",
                          f"[rank{r}]:                 ^^^^^^^^^^^"]
                    L.append(Ind(f"[rank{r}]: RuntimeError: CUDA error: an illegal memory access was encountered"))
                    L += [f"[rank{r}]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                          f"[rank{r}]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                          f"[rank{r}]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                          f"[rank{r}]:",
                          f"[rank{r}]:[E1122 {hhmmss(t_err+0.4)}.518220104 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 5 Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"]
        # the training bar (rank 0 only), carriage returns, after which the cascade follows
        if n == 0:
            bar = "".join(f"\rEpoch 3:  {s/1210:3.0%}|{'▏'*(s*10//1210):<10}| {s}/1210 [{int(s*STEP_S)//60:02d}:{int(s*STEP_S)%60:02d}<46:{s%60:02d},  2.31s/it, loss=1.{rnd.randint(6100,6400)}]" for s in range(0, LAST + 1))
            L.append(bar)
        for g in range(8):
            r = 8 * n + g
            if r == BAD_RANK:
                continue
            tw = hhmmss(t_err + 600.5 + 0.01 * g)
            L.append(f"[rank{r}]:[E1122 {tw}.{rnd.randint(100000000,999999999)} ProcessGroupNCCL.cpp:616] [Rank {r % 2}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1884, OpType=ALLREDUCE, NumelIn=20971520, NumelOut=20971520, Timeout(ms)=600000) ran for 600044 milliseconds before timing out.")
        te = t_err + 604
        if n == 1:
            L += [f"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 3 (pid: 30413) of binary: /opt/conda/bin/python",
                  "Traceback (most recent call last):", '  File "/opt/conda/bin/torchrun", line 33, in <module>',
                  "    sys.exit(load_entry_point('torch==2.4.1', 'console_scripts', 'torchrun')())",
                  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                  "============================================================", "train.py FAILED",
                  "------------------------------------------------------------", "Failures:", "  <NO_OTHER_FAILURES>",
                  "------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
                  f"  time      : 2026-11-22_{hhmmss(te)}", f"  host      : {h}", f"  rank      : {BAD_RANK} (local_rank: 3)",
                  "  exitcode  : -6 (pid: 30413)", "  error_file: <N/A>", "  traceback : Signal 6 (SIGABRT) received by PID 30413",
                  "============================================================"]
        b.write(f"logs/{h}/torchrun.log", L)
    # colossalai run's own output on the node it was launched from
    R = [f"$ colossalai run --nproc_per_node 8 --hostfile ./hostfile --master_addr 10.9.1.21 train.py --config configs/llama2_13b_tp2.py --plugin hybrid --tp 2 --zero 1 --load /nfs/ckpt/llama2-13b/step-9000",
         f"Error: failed to run {CMD.format(nr=1)} on 10.9.1.22, is localhost: False, exception: Encountered a bad command exit code!",
         "",
         f"Command: 'cd /workspace/llama-train && export SHELL=\"/bin/bash\" NCCL_IB_HCA=\"mlx5\" CUDA_DEVICE_MAX_CONNECTIONS=\"1\" && {CMD.format(nr=1)}'",
         "",
         "Exit code: 1",
         "",
         f"Error: failed to run {CMD.format(nr=0)} on 10.9.1.21, is localhost: True, exception: Encountered a bad command exit code!"]
    b.write(f"logs/{HOSTS[0]}/colossalai_run.log", R)
    for n, h in enumerate(HOSTS):
        D = [f"[Sun Nov 22 09:00:1{n} 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024"]
        if h == BAD_HOST:
            ts = f"[Sun Nov 22 {hhmmss(t_err-0.6)} 2026]"
            D += [f"{ts} NVRM: GPU at PCI:0000:4e:00: GPU-2a9f7c31-0d6e-8b44-51c2-9e7a3b0d1f65",
                  f"{ts} NVRM: GPU Board Serial Number: 1323721004412",
                  Ind(f"{ts} NVRM: Xid (PCI:0000:4e:00): 31, pid=30413, name=python, Ch 00000012, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_5 faulted @ 0x7f1c_a4000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE")]
        b.write(f"probes/{h}/dmesg.txt", D)
    b.job(f"""
job_id: "llama2-13b-cpt-r4"
name: llama2-13b-continued-pretrain
framework: other
launcher: colossalai
status: failed
started_at: 2026-11-22T{hhmmss(T0)}Z
ended_at: 2026-11-22T{hhmmss(te+3)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 2, pp: 1, dp: 8, cp: 1, ep: 1}}
nodes:
  - {{host: a100-pod3-21, ip: 10.9.1.21, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: a100-pod3-22, ip: 10.9.1.22, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
code:
  - {{commit: c7d02e9, at: 2026-11-14T10:30:00Z, message: "hybrid plugin: tp2 zero1"}}
  - {{commit: 4f8b1aa, at: 2026-11-22T14:41:00Z, message: "kernels: fused RoPE+RMSNorm triton kernel (fwd+bwd)"}}
checkpoints:
  - {{step: 8500, at: 2026-11-21T20:05:00Z, path: /nfs/ckpt/llama2-13b/step-8500, valid: true}}
  - {{step: 9000, at: 2026-11-22T06:12:00Z, path: /nfs/ckpt/llama2-13b/step-9000, valid: true}}
history: ["llama2-13b-cpt-r3"]
""")
    b.truth(fault="cuda_illegal_memory_access", category="framework",
            root_cause="the fused RoPE+RMSNorm Triton kernel added by commit 4f8b1aa (landed after the last good run, r3) wrote out of bounds on rank 11 (Xid 31 MMU fault on a100-pod3-22 GPU 3) 37 steps after the resume; the job's new code, not the GPU, is at fault",
            faulty_nodes=[], stage="training", iteration=9000 + LAST + 1,
            actions=[{"kind": "rollback", "to_commit": "c7d02e9"}])
    return b
