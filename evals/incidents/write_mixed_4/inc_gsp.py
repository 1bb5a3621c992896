"""Xid 119 GSP RPC timeout on one GPU; Megatron-LM under Slurm, srun --label --output=%N.out."""
import random
from common import Bundle, Ind, hhmmss

IID = "slurm-label-megatron-xid119-gsp"
HOSTS = ["gpu-c12", "gpu-c13", "gpu-c14", "gpu-c15"]
IPS = ["10.40.7.12", "10.40.7.13", "10.40.7.14", "10.40.7.15"]
BAD, BAD_GPU, BAD_BUS = "gpu-c14", 5, "0000:b3:00"
JOB = 5531907
T0 = 6 * 3600 + 2 * 60 + 11          # 06:02:11 on 2026-11-20
START_IT, LAST_IT = 4001, 4212        # resumed from iter 4000, 4212 was the last completed
ITER_S = 4.47

def lab(t):
    return f"{t:>2}: "

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(119)
    busids = ["0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00", "0000:9a:00", "0000:b3:00", "0000:ba:00", "0000:db:00"]
    pids = {h: 4100 + 37 * i for i, h in enumerate(HOSTS)}
    t_last = T0 + 95 + (LAST_IT - START_IT + 1) * ITER_S
    t_fault = t_last + 2.1
    t_wd = t_fault + 600.2
    for n, h in enumerate(HOSTS):
        L = []
        ranks = list(range(8 * n, 8 * n + 8))
        for r in ranks:
            L.append(lab(r) + f"/usr/local/lib/python3.10/dist-packages/transformer_engine/pytorch/cpu_offload.py:586: DeprecationWarning: Offloading weights is deprecated. Using offload_weights=True does not have any effect.")
        if n == 0:
            L += [lab(0) + "using world size: 32, data-parallel size: 2, context-parallel size: 1, hierarchical context-parallel sizes: None, tensor-model-parallel size: 8, encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: 2, encoder-pipeline-model-parallel size: 0",
                  lab(0) + "> initializing torch distributed ...",
                  lab(0) + "> initialized tensor model parallel with size 8",
                  lab(0) + "> initialized pipeline model parallel with size 2",
                  lab(0) + "> setting random seeds to 1234 ...",
                  lab(0) + f"  loading checkpoint from /lustre/ckpt/gpt-30b/ at iteration 4000",
                  lab(0) + "  successfully loaded checkpoint from /lustre/ckpt/gpt-30b/ [ t 1/8, p 1/2 ] at iteration 4000"]
        for r in ranks:
            g = r % 8
            p = pids[h] + g
            L.append(lab(r) + f"{h}:{p}:{p} [{g}] NCCL INFO Bootstrap : Using ibp26s0:{IPS[n]}<0>")
            L.append(lab(r) + f"{h}:{p}:{p} [{g}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB [4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB [RO]; OOB ibp26s0:{IPS[n]}<0>")
            L.append(lab(r) + f"{h}:{p}:{p+212} [{g}] NCCL INFO comm 0x5606d4c1e0 rank {r} nRanks 32 nNodes 4 localRanks 8 localRank {g} MNNVL 0")
        for r in ranks:
            L.append(lab(r) + "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py:83: FutureWarning: `torch.distributed._all_gather_base` is a private function and will be deprecated. Please use `torch.distributed.all_gather_into_tensor` instead.")
        if n == 3:
            t = T0 + 95
            for it in range(START_IT, LAST_IT + 1):
                t += ITER_S + rnd.uniform(-0.05, 0.05)
                if it % 5 and it != LAST_IT:
                    continue
                loss = 2.31 - 0.00004 * it + rnd.uniform(-0.02, 0.02)
                L.append(lab(31) + f" [2026-11-20 {hhmmss(t)}] iteration     {it}/  250000 | consumed samples:      {it*1024} | elapsed time per iteration (ms): {ITER_S*1000+rnd.uniform(-30,30):.1f} | learning rate: 2.941E-04 | global batch size:  1024 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {0.38+rnd.uniform(-0.05,0.05):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
                if it == 4100:
                    L.append(lab(31) + f"{h}:{pids[h]+7}:{pids[h]+530} [7] NCCL INFO NET/IB : mlx5_11:1 Got async event : GID table change")
        # the cascade (and the root on gpu-c14)
        for r in ranks:
            g = r % 8
            ts = f"E1120 {hhmmss(t_wd + 0.01*g)}.{rnd.randint(100000,999999)}{rnd.randint(100,999)}"
            if h == BAD and g == BAD_GPU:
                L.append(Ind(lab(r) + f"[rank{r}]:[E1120 {hhmmss(t_fault + 31)}.{rnd.randint(100000,999999)}417 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure"))
                L.append(lab(r) + "[rank%d]:Search for `cudaErrorLaunchFailure' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information." % r)
                L.append(lab(r) + f"[rank{r}]:CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
                L.append(lab(r) + f"[rank{r}]:For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
                L.append(lab(r) + f"[rank{r}]:Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
                L.append(lab(r) + f"[rank{r}]:Exception raised from c10_cuda_check_implementation at /opt/pytorch/pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):")
                continue
            L.append(lab(r) + f"[rank{r}]:[{ts} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=58921, OpType=_ALLGATHER_BASE, NumelIn=47185920, NumelOut=377487360, Timeout(ms)=600000) ran for 600027 milliseconds before timing out.")
            L.append(lab(r) + f"[rank{r}]:[{ts} ProcessGroupNCCL.cpp:1632] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception (either an error or timeout) detected by watchdog at work: 58921, last enqueued NCCL work: 58923, last completed NCCL work: 58920.")
            L.append(lab(r) + f"[rank{r}]:[{ts} ProcessGroupNCCL.cpp:630] [Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
            L.append(lab(r) + f"[rank{r}]:[{ts} ProcessGroupNCCL.cpp:636] [Rank {r}] To avoid data inconsistency, we are taking the entire process down.")
        b.write(f"logs/{h}/{h}.out", L)
    # srun's own messages land in the batch script's output on the first node
    te = t_wd + 4
    S = [f"+ srun --label --output=%N.out --kill-on-bad-exit=1 python pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 ...",
         f"srun: error: {BAD}: task 21: Aborted (core dumped)",
         "srun: Terminating StepId=%d.0" % JOB,
         f"slurmstepd: error: *** STEP {JOB}.0 ON gpu-c12 CANCELLED AT 2026-11-20T{hhmmss(te)} ***",
         "srun: error: gpu-c13: tasks 8-15: Aborted (core dumped)",
         "srun: error: gpu-c12: tasks 0-7: Aborted (core dumped)",
         "srun: error: gpu-c15: tasks 24-31: Aborted (core dumped)",
         f"srun: error: {BAD}: tasks 16-20,22-23: Aborted (core dumped)"]
    b.write(f"logs/gpu-c12/slurm-{JOB}.out", S)
    # probes
    for n, h in enumerate(HOSTS):
        up = 1630000 + n * 977
        D = [f"[Fri Nov 20 00:12:{10+n:02d} 2026] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.127.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Oct  8 01:31:12 UTC 2024",
             f"[Fri Nov 20 00:12:{14+n:02d} 2026] nvidia-fabricmanager: Fabric Manager started",
             f"[Fri Nov 20 00:13:02 2026] mlx5_core 0000:1a:00.0 ibp26s0: Link up"]
        if h == BAD:
            ts = f"[Fri Nov 20 {hhmmss(t_fault)} 2026]"
            D += [f"{ts} NVRM: GPU at PCI:{BAD_BUS}: GPU-7c1d2e93-5b0a-4f61-b8a2-3d9e6f01c4a7",
                  f"{ts} NVRM: GPU Board Serial Number: 1654123018842",
                  Ind(f"{ts} NVRM: Xid (PCI:{BAD_BUS}): 119, pid=4179, name=python, Timeout after 6s of waiting for RPC response from GPU{BAD_GPU} GSP! Expected function 76 (GSP_RM_CONTROL) (0x2080014b 0x5)."),
                  f"{ts} NVRM: GPU{BAD_GPU} GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data 0x000000002080014b 0x0000000000000005.",
                  f"{ts} NVRM: GPU{BAD_GPU} RPC history (CPU -> GSP):",
                  f"{ts} NVRM:     entry function                   data0              data1              ts_start           ts_end             duration actively_polling",
                  f"{ts} NVRM:      0    76   GSP_RM_CONTROL       0x000000002080014b 0x0000000000000005 0x00062b1f8a91c2e0 0x0000000000000000          y",
                  f"{ts} NVRM:     -1    76   GSP_RM_CONTROL       0x0000000020800a4c 0x0000000000000004 0x00062b1f8a8c1a10 0x00062b1f8a8c1a9b    139us  ",
                  f"{ts} NVRM: GPU{BAD_GPU} _kgspLogXid119: ********************************* GSP Timeout **********************************",
                  f"{ts} NVRM: GPU{BAD_GPU} _kgspLogXid119: Note: Please also check logs above.",
                  f"[Fri Nov 20 {hhmmss(t_fault+18)} 2026] NVRM: Xid (PCI:{BAD_BUS}): 119, pid=4179, name=python, Timeout after 6s of waiting for RPC response from GPU{BAD_GPU} GSP! Expected function 10 (FREE) (0xa55a0070 0x0).",
                  f"[Fri Nov 20 {hhmmss(t_fault+18)} 2026] NVRM: Rate limiting GSP RPC error prints for GPU at PCI:{BAD_BUS} (printing 1 of every 30).  The GPU likely needs to be reset.",
                  f"[Fri Nov 20 {hhmmss(t_fault+31)} 2026] NVRM: Xid (PCI:{BAD_BUS}): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"]
        D.append(f"[Fri Nov 20 {hhmmss(te+9)} 2026] python[{4100+37*n}]: segfault at 0 ip 00007f3a1c2b1e57 sp 00007ffd5b0e1a40 error 4 in libcuda.so.550.127.05[7f3a1be00000+1a3e000]" if h == BAD else f"[Fri Nov 20 {hhmmss(te+8)} 2026] docker0: port 1(veth3c1d9e2) entered disabled state")
        b.write(f"probes/{h}/dmesg.txt", D)
        if h == BAD:
            b.write(f"probes/{h}/nvidia-smi.txt", [Ind(f"Unable to determine the device handle for GPU{BAD_BUS.upper()}.0: Unknown Error")])
        else:
            b.write(f"probes/{h}/nvidia-smi.txt", smi_ok(h))
    nodes = "\n".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(r) for r in range(8*i, 8*i+8))}]}}" for i, h in enumerate(HOSTS))
    b.job(f"""
job_id: "{JOB}"
name: gpt-30b-pretrain
framework: megatron
status: failed
scheduler: slurm
started_at: 2026-11-20T{hhmmss(T0)}Z
ended_at: 2026-11-20T{hhmmss(te+6)}Z
exit_code: 134
gpus_per_node: 8
parallelism: {{tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}}
nodes:
{nodes}
code:
  - {{commit: 3e19a0d, at: 2026-11-12T16:40:00Z, message: "data: add code mix v3"}}
  - {{commit: b82f7c4, at: 2026-11-17T09:05:00Z, message: "enable overlap-param-gather"}}
checkpoints:
  - {{step: 3500, at: 2026-11-19T21:48:00Z, path: /lustre/ckpt/gpt-30b/iter_0003500, valid: true}}
  - {{step: 4000, at: 2026-11-20T05:31:00Z, path: /lustre/ckpt/gpt-30b/iter_0004000, valid: true}}
spares: 2
history: ["5529114"]
""")
    b.truth(fault="gpu_gsp_timeout", category="hardware",
            root_cause=f"GPU {BAD_GPU} (PCI {BAD_BUS}) of {BAD} stopped answering its GSP firmware RPCs (Xid 119, then 154 'GPU Reset Required'); rank 21 died with 'unspecified launch failure' and every other rank hit the NCCL watchdog timeout",
            faulty_nodes=[BAD], stage="training", iteration=LAST_IT + 1,
            actions=[{"kind": "evict", "nodes": [BAD]}, {"kind": "restart", "from_step": 4000}])
    return b

def smi_ok(h):
    out = ["", "==============NVSMI LOG==============", "", "Timestamp                                 : Fri Nov 20 06:39:02 2026",
           "Driver Version                            : 550.127.05", "CUDA Version                              : 12.4", "", "Attached GPUs                             : 8"]
    for i, bus in enumerate(["18", "2A", "3A", "5D", "9A", "B3", "BA", "DB"]):
        out += [f"GPU 00000000:{bus}:00.0", "    Product Name                          : NVIDIA H100 80GB HBM3",
                "    Persistence Mode                      : Enabled", "    GSP Firmware Version                  : 550.127.05",
                "    ECC Errors", "        Volatile", "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : 0", "            DRAM Uncorrectable            : 0",
                "    Temperature", f"        GPU Current Temp                  : {34+i} C", ""]
    return out
