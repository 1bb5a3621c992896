"""NVSwitch fatal SXid on one HGX node; torchtitan launched with torchrun --tee 3 ([default0]: prefixes)."""
import random
from common import Bundle, Ind, hhmmss

IID = "torchtitan-tee-sxid-nvswitch-fatal"
HOSTS = ["hgx-n031", "hgx-n032"]
IPS = ["172.19.4.31", "172.19.4.32"]
BAD = "hgx-n032"
T0 = 10 * 3600 + 4 * 60 + 40
LAST = 1386
STEP_S = 3.21
ESC = "\x1b"

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(24)
    t_fault = T0 + 70 + LAST * STEP_S + 1.4
    t_wd = t_fault + 100.1
    bus = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
    for n, h in enumerate(HOSTS):
        L = [f"W1120 {hhmmss(T0)}.512000 139920417 torch/distributed/run.py:793] ",
             f"W1120 {hhmmss(T0)}.512000 139920417 torch/distributed/run.py:793] *****************************************",
             f"W1120 {hhmmss(T0)}.512000 139920417 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
             f"W1120 {hhmmss(T0)}.512000 139920417 torch/distributed/run.py:793] *****************************************"]
        for g in range(8):
            r = 8 * n + g
            ts = f"2026-11-20 {hhmmss(T0+9)},{rnd.randint(100,999)}"
            L.append(f"[default{g}]:[titan] {ts} - root - INFO - Starting job: Llama 3 8B training")
            L.append(f"[default{g}]:[titan] {ts} - root - INFO - Building 1-D device mesh with ['dp_shard'], [16]")
            L.append(f"[default{g}]:[titan] {ts} - root - INFO - [GC] Initial GC collection. 0.00 seconds.")
            L.append(f"[default{g}]:{h}:{52100+g}:{52100+g} [{g}] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0")
            L.append(f"[default{g}]:{h}:{52100+g}:{52100+g} [{g}] NCCL INFO cudaDriverVersion 12040")
            L.append(f"[default{g}]:/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_loader.py:25: UserWarning: 'load_state_dict' is deprecated and will be removed in future versions. Please use 'load' instead.")
            L.append(f"[default{g}]:[titan] 2026-11-20 {hhmmss(T0+41)},{rnd.randint(100,999)} - root - INFO - Loading the checkpoint at step 1200.")
        t = T0 + 70 + 1200 * 0
        for s in range(1201, LAST + 1):
            if s % 10 and s != LAST:
                continue
            tt = T0 + 70 + (s - 1200) * STEP_S
            loss = 3.02 - 0.0002 * (s - 1200) + rnd.uniform(-0.03, 0.03)
            for g in ([0] if n == 0 else [0, 1]):
                L.append(f"[default{g}]:[titan] 2026-11-20 {hhmmss(tt)},{rnd.randint(100,999)} - root - INFO - {ESC}[31mstep: {s:>5}  {ESC}[32mloss: {loss:7.4f}  {ESC}[33mmemory: 61.83GiB(78.09%)  {ESC}[34mtps: {5090+rnd.randint(-40,40):,}  {ESC}[36mtflops: 294.7{rnd.randint(0,9)}  {ESC}[35mmfu: 29.80%{ESC}[39m")
        if n == 1:
            L.append(f"[default3]:{h}:52103:52511 [3] NCCL INFO [Service thread] Connection closed by localRank 3")
        for g in range(8):
            r = 8 * n + g
            ts = f"E1120 {hhmmss(t_wd + 0.02*g)}.{rnd.randint(100000,999999)}{rnd.randint(100,999)}"
            if h == BAD:
                line = f"[default{g}]:[rank{r}]:[{ts} ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Process group watchdog thread terminated with exception: CUDA error: uncorrectable NVLink error detected during the execution"
                L.append(Ind(line) if g == 4 else line)
                L.append(f"[default{g}]:[rank{r}]:For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
            else:
                L.append(f"[default{g}]:[rank{r}]:[{ts} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=97422, OpType=_REDUCE_SCATTER_BASE, NumelIn=1048576000, NumelOut=65536000, Timeout(ms)=100000) ran for 100074 milliseconds before timing out.")
                L.append(f"[default{g}]:[rank{r}]:[{ts} ProcessGroupNCCL.cpp:636] [Rank {r}] To avoid data inconsistency, we are taking the entire process down.")
        te = t_wd + 3
        L += [f"W1120 {hhmmss(te)}.101000 139920417 torch/distributed/elastic/multiprocessing/api.py:897] Sending process {52101} closing signal SIGTERM",
              f"E1120 {hhmmss(te)}.388000 139920417 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: 52100) of binary: /usr/bin/python3",
              "Traceback (most recent call last):",
              '  File "/usr/local/bin/torchrun", line 8, in <module>',
              "    sys.exit(main())",
              '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
              "    return f(*args, **kwargs)",
              '  File "/usr/local/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 263, in launch_agent',
              "    raise ChildFailedError(",
              "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
              "============================================================",
              "torchtitan/train.py FAILED",
              "------------------------------------------------------------",
              "Failures:",
              "  <NO_OTHER_FAILURES>",
              "------------------------------------------------------------",
              "Root Cause (first observed failure):",
              "[0]:",
              f"  time      : 2026-11-20_{hhmmss(te)}",
              f"  host      : {h}",
              f"  rank      : {8*n} (local_rank: 0)",
              "  exitcode  : -6 (pid: 52100)",
              "  error_file: <N/A>",
              "  traceback : Signal 6 (SIGABRT) received by PID 52100",
              "============================================================"]
        b.write(f"logs/{h}/torchrun.log", L)
    # probes
    for n, h in enumerate(HOSTS):
        D = [f"[Fri Nov 20 08:51:0{n} 2026] nvidia-nvswitch0: open (major=509)",
             f"[Fri Nov 20 08:51:0{n} 2026] nvidia-nvswitch: Probing device 0000:07:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, Class = 0x68000",
             f"[Fri Nov 20 08:51:1{n} 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024"]
        if h == BAD:
            ts = f"[Fri Nov 20 {hhmmss(t_fault)} 2026]"
            D += [Ind(f"{ts} nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Fatal, Link 28 egress non-posted PRIV error"),
                  f"{ts} nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Severity 1 Engine instance 28 Sub-engine instance 00",
                  f"{ts} nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Data {{0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}}"]
            for g in range(8):
                D.append(f"[Fri Nov 20 {hhmmss(t_fault+2)} 2026] NVRM: Xid (PCI:0000:{bus[g]}:00): 45, pid={52100+g}, name=python3, Ch {g+10:08x}")
            D[-8] = Ind(D[-8])
        D.append(f"[Fri Nov 20 {hhmmss(t_wd+5)} 2026] python3[{52100}]: segfault at 8 ip 00007f5d2a91c2e1 sp 00007ffe01c3a9f0 error 4 in libnccl.so.2[7f5d28a00000+1f4b000]" if h == BAD else f"[Fri Nov 20 {hhmmss(t_wd+9)} 2026] mlx5_core 0000:1a:00.0: mlx5_fw_tracer_handle_traces:742:(pid 611): FWTracer: Events were lost")
        b.write(f"probes/{h}/dmesg.txt", D)
        st = "Failure" if h == BAD else "Success"
        J = ('{"probe": "nvswitch-fabric", "status": "%s", "detail": "%s", "metrics": {"nvswitch_count": 4, "fatal_sxid": %d}}'
             % ("fail" if h == BAD else "ok", "nvidia-nvswitch2 (0000:07:00.0) reported fatal SXid 12028; fabric degraded" if h == BAD else "fabric state Completed, status Success", 1 if h == BAD else 0))
        b.write(f"probes/{h}/fabric.json", [J])
    b.job(f"""
job_id: "tt-llama3-8b-0412"
name: llama3-8b-torchtitan
framework: torchtitan
status: failed
started_at: 2026-11-20T{hhmmss(T0)}Z
ended_at: 2026-11-20T{hhmmss(t_wd+4)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
  - {{host: hgx-n031, ip: 172.19.4.31, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: hgx-n032, ip: 172.19.4.32, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
launcher: "torchrun --nnodes 2 --nproc_per_node 8 --tee 3 --rdzv_backend c10d --rdzv_endpoint hgx-n031:29500"
code:
  - {{commit: 5fe1c2a, at: 2026-11-04T11:00:00Z, message: "float8 all-gather for fsdp2"}}
checkpoints:
  - {{step: 1000, at: 2026-11-19T23:10:00Z, path: /mnt/ckpt/llama3-8b/step-1000, valid: true}}
  - {{step: 1200, at: 2026-11-20T02:40:00Z, path: /mnt/ckpt/llama3-8b/step-1200, valid: true}}
spares: 1
""")
    b.truth(fault="nvswitch_fatal_error", category="hardware",
            root_cause=f"NVSwitch 2 (0000:07:00.0) of {BAD} raised fatal SXid 12028 (egress non-posted PRIV error); NVLink traffic stalled, the driver aborted the CUDA contexts (Xid 45) and the FSDP collectives timed out",
            faulty_nodes=[BAD], stage="training", iteration=LAST + 1,
            actions=[{"kind": "evict", "nodes": [BAD]}, {"kind": "restart", "from_step": 1200}])
    return b
