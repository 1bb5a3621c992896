#!/usr/bin/env python3
"""Builds the IF incident bundles. stdlib only. Truth line numbers are computed from the written text."""
import json, os, random, shutil, sys
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc


class Bundle:
    def __init__(self, iid):
        self.iid = iid
        self.dir = os.path.join(ROOT, iid)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.files = {}      # rel -> list of lines (str)
        self.opts = {}       # rel -> dict(eol, raw_subst)
        self.marks = []      # (rel, substring, occurrence)

    def f(self, rel, eol="\n"):
        self.files.setdefault(rel, [])
        self.opts[rel] = {"eol": eol}
        return self.files[rel]

    def mark(self, rel, sub, nth=1):
        self.marks.append((rel, sub, nth))

    def line_of(self, rel, sub, nth):
        n = 0
        for i, l in enumerate(self.files[rel]):
            if sub in l:
                n += 1
                if n == nth:
                    return i + 1
        raise SystemExit(f"{self.iid}: marker not found: {rel}: {sub!r} #{nth}")

    def write(self, job_yaml, truth):
        with open(os.path.join(self.dir, "job.yaml"), "w") as fh:
            fh.write(job_yaml.lstrip("\n"))
        for rel, lines in self.files.items():
            p = os.path.join(self.dir, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            eol = self.opts[rel]["eol"]
            data = eol.join(lines) + eol
            # lines may carry raw bytes as \udcXX surrogates (surrogateescape)
            with open(p, "wb") as fh:
                fh.write(data.encode("utf-8", "surrogateescape"))
        il = []
        for rel, sub, nth in self.marks:
            il.append({"file": rel, "line": self.line_of(rel, sub, nth)})
        truth["indicating_lines"] = il
        with open(os.path.join(self.dir, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=2)
            fh.write("\n")
        self.check(truth)

    def check(self, truth):
        total = 0
        for dp, _, fns in os.walk(self.dir):
            for fn in fns:
                total += os.path.getsize(os.path.join(dp, fn))
        assert total < 150_000, (self.iid, total)
        print(f"== {self.iid}  ({total} bytes)  fault={truth['fault']} nodes={truth['faulty_nodes']} "
              f"stage={truth['stage']} it={truth['iteration']}")
        for ent in truth["indicating_lines"]:
            p = os.path.join(self.dir, ent["file"])
            raw = open(p, "rb").read()
            # count lines the way a reader would: split on \n, strip \r
            lines = raw.split(b"\n")
            txt = lines[ent["line"] - 1].rstrip(b"\r").decode("utf-8", "replace")
            assert txt.strip(), ent
            print(f"   {ent['file']}:{ent['line']}: {txt[:200]}")


def ts(base, sec, fmt="%Y-%m-%d %H:%M:%S"):
    return (base + timedelta(seconds=sec)).strftime(fmt)


# ---------------------------------------------------------------------------------------------
# 1. Slurm, srun --output=%x-%j.%N.out (one file per node, no prefixes), Megatron-LM, cgroup OOM
# ---------------------------------------------------------------------------------------------
def inc_slurm_oom():
    b = Bundle("slurm-cgroup-oomkill-megatron-4node")
    R = random.Random(11)
    hosts = ["gpu-r03", "gpu-r04", "gpu-r05", "gpu-r06"]
    jid = 88124
    bad = "gpu-r05"
    t0 = datetime(2026, 11, 21, 6, 2, 10, tzinfo=UTC)
    start_it, fault_it = 6501, 6652
    for ni, h in enumerate(hosts):
        L = b.f(f"logs/{h}/pretrain-gpt-{jid}.{h}.out")
        L.append(f"W1121 06:02:14.118000 140213 torch/distributed/run.py:793] ")
        L.append("W1121 06:02:14.118000 140213 torch/distributed/run.py:793] *****************************************")
        L.append("W1121 06:02:14.118000 140213 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        L.append("W1121 06:02:14.118000 140213 torch/distributed/run.py:793] *****************************************")
        for lr in range(8):
            L.append(f"{h}:{141000+lr}:{141000+lr} [{lr}] NCCL INFO Bootstrap : Using ibs3:10.20.4.{3+ni}<0>")
        L.append(f"{h}:141000:141000 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB ibs3:10.20.4.{3+ni}<0>")
        L.append(f"/opt/megatron-lm/megatron/core/tensor_parallel/layers.py:582: UserWarning: async_grad_allreduce is deprecated and will be removed in a future release. Use overlap_grad_reduce instead.")
        if ni == 0:
            L.append(" loading checkpoint from /scratch/ckpt/gpt-13b/ at iteration 6500")
            L.append(" successfully loaded checkpoint from /scratch/ckpt/gpt-13b/ [ t 1/8, p 1/2 ] at iteration 6500")
            L.append("(min, max) time across ranks (ms):")
            L.append("    load-checkpoint ................................: (41210.55, 41233.02)")
            L.append("[after dataloaders are built] datetime: 2026-11-21 06:03:31 ")
            L.append("done with setup ...")
            L.append("training ...")
        last_rank = ni * 8 + 7
        if ni in (1, 3):   # last pp stage prints iteration lines (pp=2, last stage ranks 8-15, 24-31)
            for it in range(start_it, fault_it):
                ms = 3650 + R.uniform(-40, 40)
                loss = 2.71 - (it - 6500) * 0.0004 + R.uniform(-0.01, 0.01)
                sec = 81 + (it - start_it) * 3.66
                L.append(f" [{ts(t0, sec)}] iteration {it:8d}/  300000 | consumed samples:    {it*1024:10d} | "
                         f"elapsed time per iteration (ms): {ms:.1f} | learning rate: 1.500000E-04 | global batch size:  1024 | "
                         f"lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {R.uniform(0.18,0.26):.3f} | "
                         f"number of skipped iterations:   0 | number of nan iterations:   0 |")
                if it == 6600 and ni == 1:
                    L.append("WARNING:megatron.core.dist_checkpointing.strategies.filesystem_async:Retrying write of iter_0006600/__1_0.distcp after OSError(5, 'Input/output error') (attempt 1/3)")
                    L.append(" [2026-11-21 06:09:43] saved checkpoint from iteration    6600 to /scratch/ckpt/gpt-13b/ [ t 1/8, p 2/2 ]")
        else:
            L.append(f" [2026-11-21 06:09:43] saved checkpoint from iteration    6600 to /scratch/ckpt/gpt-13b/ [ t 1/8, p 1/2 ]")
        crash = ts(t0, 81 + (fault_it - start_it) * 3.66 + 2)
        if h == bad:
            L.append(f"slurmstepd: error: Detected 1 oom_kill event in StepId={jid}.0. Some of the step tasks have been OOM Killed.")
            L.append(f"W1121 {crash[11:]}.402000 140213 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 141002 closing signal SIGTERM")
            for lr in (0, 1, 3, 4, 5, 6, 7):
                if lr != 2:
                    pass
            L.append(f"E1121 {crash[11:]}.903000 140213 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 5 (pid: 141005) of binary: /usr/bin/python3")
            L += ["Traceback (most recent call last):",
                  '  File "/usr/local/bin/torchrun", line 8, in <module>',
                  "    sys.exit(main())",
                  '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 919, in main',
                  "    run(args)",
                  '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 263, in launch_agent',
                  "    raise ChildFailedError(",
                  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                  "=======================================================",
                  "pretrain_gpt.py FAILED",
                  "-------------------------------------------------------",
                  "Failures:",
                  "  <NO_OTHER_FAILURES>",
                  "-------------------------------------------------------",
                  "Root Cause (first observed failure):",
                  "[0]:",
                  f"  time      : {crash}",
                  f"  host      : {h}",
                  "  rank      : 21 (local_rank: 5)",
                  "  exitcode  : -9 (pid: 141005)",
                  "  error_file: <N/A>",
                  "  traceback : Signal 9 (SIGKILL) received by PID 141005",
                  "======================================================="]
            L.append(f"slurmstepd: error: *** STEP {jid}.0 ON {h} CANCELLED AT {crash.replace(' ', 'T')} ***")
        else:
            for lr in range(0, 8, 3):
                r = ni * 8 + lr
                L.append(f"[rank{r}]:[E1121 {crash[11:]}.512{lr:03d} ProcessGroupNCCL.cpp:1785] [PG ID 1 PG GUID 1 Rank {r}] Exception (either an error or timeout) detected by watchdog at work: 5529, last enqueued NCCL work: 5529, last completed NCCL work: 5528.")
                L.append(f"{h}:{141000+lr}:{141900+lr} [{lr}] NCCL INFO [Service thread] Connection closed by localRank {lr}")
                L.append(f"[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2027, remote process exited or there was a network error, NCCL version 2.21.5")
                L.append(f"[rank{r}]: Last error:")
                L.append(f"[rank{r}]: socketProgress: Connection closed by remote peer gpu-r05<43210>")
            L.append(f"slurmstepd: error: *** STEP {jid}.0 ON {h} CANCELLED AT {crash.replace(' ', 'T')} ***")
    # the batch script output on the first node
    B = b.f(f"logs/gpu-r03/slurm-{jid}.out")
    B += [f"+ srun --output=pretrain-gpt-%j.%N.out --ntasks-per-node=1 --kill-on-bad-exit=1 torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint gpu-r03:29500 pretrain_gpt.py ...",
          f"srun: error: {bad}: task 2: Out Of Memory",
          f"srun: Terminating StepId={jid}.0",
          "srun: error: gpu-r04: task 1: Exited with exit code 1",
          "srun: error: gpu-r06: task 3: Exited with exit code 1",
          "srun: error: gpu-r03: task 0: Exited with exit code 1"]
    D = b.f(f"probes/{bad}/dmesg.txt")
    crash_dt = t0 + timedelta(seconds=81 + (fault_it - start_it) * 3.66 + 2)
    kt = crash_dt.strftime("%a %b %d %H:%M:%S %Y")
    D += ["[Sat Nov 21 05:58:01 2026] IPv6: ADDRCONF(NETDEV_CHANGE): ibs3: link becomes ready",
          f"[{kt}] pt_data_worker invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
          f"[{kt}] CPU: 37 PID: 152233 Comm: pt_data_worker Tainted: P           OE     5.15.0-119-generic #129-Ubuntu",
          f"[{kt}] Hardware name: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 04/12/2024",
          f"[{kt}] memory: usage 1048576000kB, limit 1048576000kB, failcnt 4182",
          f"[{kt}] swap: usage 0kB, limit 9007199254740988kB, failcnt 0",
          f"[{kt}] Memory cgroup stats for /slurm/uid_41002/job_{jid}/step_0:",
          f"[{kt}] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
          f"[{kt}] [ 141005]  41002 141005 61283341 91320118 746512384        0             0 pt_main_thread",
          f"[{kt}] [ 152233]  41002 152233 38812201 21980101 191430656        0             0 pt_data_worker",
          f"[{kt}] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=step_0,mems_allowed=0-1,oom_memcg=/slurm/uid_41002/job_{jid}/step_0,task_memcg=/slurm/uid_41002/job_{jid}/step_0/task_0,task=pt_main_thread,pid=141005,uid=41002",
          f"[{kt}] Memory cgroup out of memory: Killed process 141005 (pt_main_thread) total-vm:245133364kB, anon-rss:365280472kB, file-rss:102400kB, shmem-rss:0kB, UID:41002 pgtables:729016kB oom_score_adj:0",
          f"[{kt}] oom_reaper: reaped process 141005 (pt_main_thread), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"]
    for h in hosts:
        if h != bad:
            b.f(f"probes/{h}/dmesg.txt").append("[Sat Nov 21 05:58:01 2026] IPv6: ADDRCONF(NETDEV_CHANGE): ibs3: link becomes ready")
    b.mark(f"logs/{bad}/pretrain-gpt-{jid}.{bad}.out", "Detected 1 oom_kill event")
    b.mark(f"logs/{bad}/pretrain-gpt-{jid}.{bad}.out", "exitcode  : -9")
    b.mark(f"logs/gpu-r03/slurm-{jid}.out", "Out Of Memory")
    b.mark(f"probes/{bad}/dmesg.txt", "oom-kill:constraint=CONSTRAINT_MEMCG")
    b.mark(f"probes/{bad}/dmesg.txt", "Memory cgroup out of memory: Killed process")
    job = f"""
job_id: "{jid}"
name: gpt-13b-pretrain
framework: megatron
status: failed
started_at: 2026-11-21T06:02:10Z
ended_at: 2026-11-21T06:12:49Z
exit_code: 137
scheduler: slurm
gpus_per_node: 8
parallelism: {{tp: 8, pp: 2, dp: 2, cp: 1, ep: 1}}
nodes:
  - {{host: gpu-r03, ip: 10.20.4.3, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: gpu-r04, ip: 10.20.4.4, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
  - {{host: gpu-r05, ip: 10.20.4.5, ranks: [16, 17, 18, 19, 20, 21, 22, 23]}}
  - {{host: gpu-r06, ip: 10.20.4.6, ranks: [24, 25, 26, 27, 28, 29, 30, 31]}}
slurm: {{mem_per_node: 1000G, output: "pretrain-gpt-%j.%N.out"}}
code:
  - {{commit: 4c1e9a2, at: 2026-11-12T09:30:00Z, message: "data: 16 dataloader workers, prefetch 8"}}
  - {{commit: 8b70d13, at: 2026-11-18T15:10:00Z, message: "log grad norm per layer"}}
checkpoints:
  - {{step: 6000, at: 2026-11-20T23:40:00Z, path: /scratch/ckpt/gpt-13b/iter_0006000, valid: true}}
  - {{step: 6500, at: 2026-11-21T05:51:00Z, path: /scratch/ckpt/gpt-13b/iter_0006500, valid: true}}
  - {{step: 6600, at: 2026-11-21T06:09:43Z, path: /scratch/ckpt/gpt-13b/iter_0006600, valid: true}}
spares: 2
history: ["88011", "88067"]
"""
    truth = {"fault": "host_oom_killed", "category": "infrastructure",
             "root_cause": "on gpu-r05 the Slurm step's memory cgroup hit its 1000G limit and the cgroup OOM killer SIGKILLed rank 21 (pid 141005); torchrun tore the node down and the peers failed with NCCL connection errors",
             "faulty_nodes": [bad], "stage": "training", "iteration": fault_it,
             "actions": [{"kind": "restart", "from_step": 6600}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 2. DeepSpeed launched through Intel MPI (impi launcher, -prepend-rank "[N] "), ECC found by DCGM only
# ---------------------------------------------------------------------------------------------
def inc_impi_dcgm_ecc():
    b = Bundle("impi-deepspeed-dcgm-ecc-3node")
    R = random.Random(22)
    hosts = ["xe9680-07", "xe9680-08", "xe9680-11"]
    ips = ["172.24.8.7", "172.24.8.8", "172.24.8.11"]
    bad, bad_rank, bad_gpu = "xe9680-08", 13, 5
    t0 = datetime(2026, 11, 23, 14, 0, 0, tzinfo=UTC)
    fault_step = 4437
    for ni, h in enumerate(hosts):
        L = b.f(f"logs/{h}/impi-stdout.log")
        if ni == 0:
            L.append("[2026-11-23 14:00:02,118] [INFO] [runner.py:463:main] Using IP address of 172.24.8.7 for node xe9680-07")
            L.append("[2026-11-23 14:00:02,120] [INFO] [multinode_runner.py:318:get_cmd] Intel MPI launcher: mpirun -ppn 8 -hosts xe9680-07,xe9680-08,xe9680-11 -genv I_MPI_PIN 0 -prepend-rank")
            L.append("[2026-11-23 14:00:02,121] [INFO] [runner.py:568:main] cmd = mpirun -ppn 8 -genv MASTER_ADDR 172.24.8.7 -genv MASTER_PORT 29500 -genv WORLD_SIZE 24 -genv LOCAL_SIZE 8 -genv I_MPI_PIN 0 -hosts xe9680-07,xe9680-08,xe9680-11 -prepend-rank -n 24 /opt/conda/bin/python -u train_ds.py --deepspeed_config ds_zero3.json")
        for lr in range(8):
            r = ni * 8 + lr
            L.append(f"[{r}] [2026-11-23 14:00:{9+lr%3:02d},{R.randint(100,999)}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)")
        for lr in range(8):
            r = ni * 8 + lr
            L.append(f"[{r}] [2026-11-23 14:00:14,{R.randint(100,999)}] [INFO] [comm.py:637:init_distributed] cdb=None")
        if ni == 0:
            L.append("[0] [2026-11-23 14:00:14,802] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl")
        L.append(f"[{ni*8}] /opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed.")
        L.append(f"[{ni*8}] {h}:{90311}:{90311} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [2]mlx5_4:1/RoCE [3]mlx5_5:1/RoCE ; OOB ens8f0np0:{ips[ni]}<0>")
        if ni == 0:
            L.append("[0] [2026-11-23 14:01:40,551] [INFO] [engine.py:3069:_load_checkpoint] rank: 0 loading checkpoint: /mnt/weka/ckpt/mistral-7b-sft/global_step4200/mp_rank_00_model_states.pt")
            L.append("[0] [2026-11-23 14:01:58,019] [INFO] [engine.py:3119:_load_checkpoint] [Rank 0] loaded checkpoint global_step4200 (note: global_step4400 skipped, latest tag rewritten by operator)")
            for st in range(4201, fault_step):
                sec = 120 + (st - 4201) * 2.41
                if st % 10 == 0:
                    L.append(f"[0] [{ts(t0, sec)},{R.randint(100,999)}] [INFO] [logging.py:128:log_dist] [Rank 0] step={st}, skipped=0, lr=[1.2e-05], mom=[(0.9, 0.95)]")
                    L.append(f"[0] [{ts(t0, sec)},{R.randint(100,999)}] [INFO] [timer.py:264:stop] epoch=0/micro_step={st*4}/global_step={st}, RunningAvgSamplesPerSec={R.uniform(94.2,95.1):.4f}, CurrSamplesPerSec={R.uniform(93,96):.4f}, MemAllocated=21.07GB, MaxMemAllocated=52.31GB")
                    L.append(f"[0] {{'loss': {1.31 - (st-4200)*0.0002 + R.uniform(-0.02,0.02):.4f}, 'grad_norm': {R.uniform(0.4,0.7):.4f}, 'learning_rate': 1.2e-05, 'epoch': 1.{st-4000:03d}}}")
        crash = ts(t0, 120 + (fault_step - 4201) * 2.41 + 1.2)
        crash_w = ts(t0, 120 + (fault_step - 4201) * 2.41 + 3.5)
        if h == bad:
            r = bad_rank
            L += [f"[{r}] Traceback (most recent call last):",
                  f'[{r}]   File "/workspace/sft/train_ds.py", line 241, in <module>',
                  f"[{r}]     main()",
                  f'[{r}]   File "/workspace/sft/train_ds.py", line 212, in main',
                  f"[{r}]     engine.backward(loss)",
                  f'[{r}]   File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 2020, in backward',
                  f"[{r}]     self.optimizer.backward(loss, retain_graph=retain_graph)",
                  f'[{r}]   File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/zero/stage3.py", line 2250, in backward',
                  f"[{r}]     self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)",
                  f'[{r}]   File "/opt/conda/lib/python3.11/site-packages/torch/autograd/__init__.py", line 289, in backward',
                  f"[{r}]     _engine_run_backward(",
                  f"[{r}] RuntimeError: CUDA error: unspecified launch failure",
                  f"[{r}] CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                  f"[{r}] For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                  f"[{r}] Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                  f"[{r}] ",
                  f"[{r}] terminate called after throwing an instance of 'c10::Error'",
                  f"[{r}]   what():  CUDA error: unspecified launch failure",
                  f"[{r}] Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):"]
            L.append("")
            L.append("===================================================================================")
            L.append("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES")
            L.append("=   RANK 13 PID 90316 RUNNING AT xe9680-08")
            L.append("=   KILLED BY SIGNAL: 6 (Aborted)")
            L.append("===================================================================================")
        else:
            for lr in (0, 4):
                r = ni * 8 + lr
                L.append(f"[{r}] [rank{r}]:[E1123 {crash_w[11:]}.{R.randint(100000,999999)} ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.20.5")
                L.append(f"[{r}] [rank{r}]:ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
                L.append(f"[{r}] {h}:{90311+lr}:{90700+lr} [{lr}] NCCL INFO [Service thread] Connection closed by localRank 5")
                L.append(f"[{r}] [rank{r}]:Last error:")
                L.append(f"[{r}] [rank{r}]:socketProgress: Connection closed by remote peer xe9680-08<{R.randint(40000,60000)}>")
    # probes: DCGM on every node (the epilog ran dcgmi diag -r 2 and dcgmi health -c)
    def diag(h, failing):
        D = b.f(f"probes/{h}/dcgm-diag.txt")
        D += ["Successfully ran diagnostic for group.",
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
              "| Environment Variables     | Pass                                           |"]
        if failing:
            D += ["| Page Retirement/Row Remap | Fail - GPU: 5                                  |",
                  "| Warning                   | GPU 5 had uncorrectable memory errors and row  |",
                  "|                           | remapping is pending. Drain the GPU and reset  |",
                  "|                           | it or reboot the node.                         |"]
        else:
            D += ["| Page Retirement/Row Remap | Pass                                           |"]
        D += ["| Graphics Processes        | Pass                                           |",
              "| Inforom                   | Pass                                           |",
              "+-----  Integration  -------+------------------------------------------------+",
              "| PCIe                      | Pass - All                                     |",
              "+-----  Hardware  ----------+------------------------------------------------+"]
        if failing:
            D += ["| GPU Memory                | Fail - GPU: 5                                  |",
                  "|                           | Pass - GPUs: 0, 1, 2, 3, 4, 6, 7               |",
                  "| Warning                   | GPU 5 Detected 2 volatile double-bit ECC       |",
                  "|                           | error(s).                                      |"]
        else:
            D += ["| GPU Memory                | Pass - All                                     |"]
        D += ["+-----  Stress  ------------+------------------------------------------------+",
              "| Targeted Stress           | " + ("Skip - All" if failing else "Pass - All").ljust(47) + "|",
              "| Targeted Power            | " + ("Skip - All" if failing else "Pass - All").ljust(47) + "|",
              "| Memory Bandwidth          | " + ("Skip - All" if failing else "Pass - All").ljust(47) + "|",
              "+---------------------------+------------------------------------------------+"]
        H = b.f(f"probes/{h}/dcgm-health.txt")
        H += ["+---------------------------+----------------------------------------------------------+",
              "| Health Monitor Report                                                                |",
              "+===========================+==========================================================+"]
        if failing:
            H += ["| Overall Health            | Failure                                                  |",
                  "| GPU                       |                                                          |",
                  "| -> 5                      | Failure                                                  |",
                  "|    -> Errors              |                                                          |",
                  "|       -> Memory system    | Failure                                                  |",
                  "|                           | A volatile double-bit ECC error has occurred on GPU 5.   |",
                  "|                           | Drain the GPU and reset it or reboot the node.           |",
                  "+---------------------------+----------------------------------------------------------+"]
        else:
            H += ["| Overall Health            | Healthy                                                  |",
                  "+---------------------------+----------------------------------------------------------+"]
    for h in hosts:
        diag(h, h == bad)
    f = f"logs/{bad}/impi-stdout.log"
    b.mark(f, f"[{bad_rank}] RuntimeError: CUDA error: unspecified launch failure")
    b.mark(f"probes/{bad}/dcgm-diag.txt", "| GPU Memory                | Fail - GPU: 5")
    b.mark(f"probes/{bad}/dcgm-diag.txt", "Detected 2 volatile double-bit ECC")
    b.mark(f"probes/{bad}/dcgm-diag.txt", "| Page Retirement/Row Remap | Fail - GPU: 5")
    b.mark(f"probes/{bad}/dcgm-health.txt", "A volatile double-bit ECC error has occurred on GPU 5")
    job = """
job_id: "ds-sft-20261123-1400"
name: mistral-7b-sft-zero3
framework: deepspeed
launcher: deepspeed --launcher impi (Intel MPI 2021.12, mpirun -prepend-rank)
status: failed
started_at: 2026-11-23T14:00:00Z
ended_at: 2026-11-23T14:11:36Z
exit_code: 134
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 24, cp: 1, ep: 1}
zero_stage: 3
nodes:
  - {host: xe9680-07, ip: 172.24.8.7, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}
  - {host: xe9680-08, ip: 172.24.8.8, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}
  - {host: xe9680-11, ip: 172.24.8.11, ranks: [16, 17, 18, 19, 20, 21, 22, 23]}
code:
  - {commit: e03b7f1, at: 2026-11-10T08:12:00Z, message: "sft: packing with attention mask"}
  - {commit: 51aa2c9, at: 2026-11-19T17:45:00Z, message: "eval every 500 steps"}
checkpoints:
  - {step: 4000, at: 2026-11-23T09:11:00Z, path: /mnt/weka/ckpt/mistral-7b-sft/global_step4000, valid: true}
  - {step: 4200, at: 2026-11-23T11:02:00Z, path: /mnt/weka/ckpt/mistral-7b-sft/global_step4200, valid: true}
  - {step: 4400, at: 2026-11-23T12:55:00Z, path: /mnt/weka/ckpt/mistral-7b-sft/global_step4400, valid: false, note: "shards of ranks 16-23 missing (previous job killed during save)"}
spares: 1
history: ["ds-sft-20261122-2210"]
"""
    truth = {"fault": "gpu_ecc_uncorrectable", "category": "hardware",
             "root_cause": "GPU 5 of xe9680-08 (rank 13) took uncorrectable double-bit ECC errors: the job saw only a generic 'CUDA error: unspecified launch failure', DCGM's diag and health check show the volatile DBE and pending row remap",
             "faulty_nodes": [bad], "stage": "training", "iteration": fault_step,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 4200}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 3. GKE + JobSet, torchtitan, kubectl logs --timestamps (RFC3339Nano prefix); pod preempted
# ---------------------------------------------------------------------------------------------
def inc_gke_preempt():
    b = Bundle("gke-jobset-torchtitan-preempted-4node")
    R = random.Random(33)
    nodes = ["gke-a3m-pool-7f3c-2kq8", "gke-a3m-pool-7f3c-5vzn", "gke-a3m-pool-7f3c-9hxw", "gke-a3m-pool-7f3c-qd4m"]
    pods = [f"llama3-8b-titan-workers-0-{i}-{s}" for i, s in enumerate(["h2k9x", "p8w4d", "c7m2r", "t5n6b"])]
    bad_i = 2
    t0 = datetime(2026, 11, 24, 2, 10, 0, tzinfo=UTC)
    first, fault_step = 12001, 12342
    sigterm = t0 + timedelta(seconds=90 + (fault_step - first) * 1.52 + 0.4)
    def k(dt):
        dt = dt + timedelta(microseconds=2100)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.%f") + f"{R.randint(0,999):03d}Z"
    for i, n in enumerate(nodes):
        L = b.f(f"logs/{n}/{pods[i]}.log")
        t = t0
        L.append(f"{k(t)} W1124 02:10:01.311000 1 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:10:09,412 - root - INFO - Starting job: Llama 3 8B training")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:10:11,020 - root - WARNING - ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden to 3 based on job config")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:10:11,734 - root - INFO - Building 1-D device mesh with ['dp_shard'], [32]")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:10:19,118 - root - INFO - Applied FSDP to the model")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:11:02,554 - root - INFO - Loading the checkpoint at step 12000.")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:11:26,901 - root - INFO - Finished loading the checkpoint in 24.35 seconds.")
        L.append(f"{k(t)} [rank{i*8}]:[titan] 2026-11-24 02:11:26,903 - root - INFO - Training starts at step 12001, with local batch size 2, global batch size 64, sequence length 8192, total steps 50000 (warmup 200)")
        L.append(f"{k(t)} [rank{i*8}]:/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/filesystem.py:92: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.")
        for st in range(first, fault_step):
            t = t0 + timedelta(seconds=90 + (st - first) * 1.52)
            if st % 10 == 0 or st == first:
                loss = 2.02 - (st - 12000) * 0.00011 + R.uniform(-0.02, 0.02)
                L.append(f"{k(t)} [rank{i*8}]:[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond//1000:03d} - root - INFO - step: {st:5d}  loss: {loss:7.4f}  memory: 61.84GiB(78.15%)  tps: {R.randint(5320,5420):,}  tflops: {R.uniform(298,304):.2f}  mfu: {R.uniform(30.1,30.7):.2f}%")
            if st == 12200:
                L.append(f"{k(t)} [rank{i*8}]:[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond//1000:03d} - root - INFO - Saving the checkpoint (or staging if async is enabled).")
                L.append(f"{k(t)} [rank{i*8}]:[titan] {t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond//1000:03d} - root - INFO - [GC] Performing periodical GC collection. 0.07 seconds.")
                L.append(f"{k(t+timedelta(seconds=3))} [rank{i*8}]:[titan] {(t+timedelta(seconds=3)).strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond//1000:03d} - root - INFO - Finished saving the checkpoint (or staging if async is enabled)in 3.04 seconds.")
        if i == bad_i:
            s = sigterm
            L.append(f"{k(s)} W1124 {s.strftime('%H:%M:%S.%f')} 1 torch/distributed/elastic/agent/server/api.py:704] Received 15 death signal, shutting down workers")
            for lr in range(8):
                L.append(f"{k(s)} W1124 {(s+timedelta(microseconds=900)).strftime('%H:%M:%S.%f')} 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process {57+lr} closing signal SIGTERM")
            s2 = s + timedelta(seconds=1)
            L += [f"{k(s2)} Traceback (most recent call last):",
                  f'{k(s2)}   File "/usr/local/bin/torchrun", line 8, in <module>',
                  f"{k(s2)}     sys.exit(main())",
                  f'{k(s2)}   File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py", line 864, in _invoke_run',
                  f"{k(s2)}     time.sleep(monitor_interval)",
                  f'{k(s2)}   File "/usr/local/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/api.py", line 84, in _terminate_process_handler',
                  f"{k(s2)}     raise SignalException(f\"Process {{os.getpid()}} got signal: {{sigval}}\", sigval=sigval)",
                  f"{k(s2)} torch.distributed.elastic.multiprocessing.api.SignalException: Process 1 got signal: 15"]
        else:
            s = sigterm + timedelta(seconds=R.uniform(3, 6))
            r = i * 8
            L.append(f"{k(s)} [rank{r}]:[E1124 {s.strftime('%H:%M:%S.%f')} ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5")
            L.append(f"{k(s)} [rank{r}]:ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
            L.append(f"{k(s)} [rank{r}]:Last error:")
            L.append(f"{k(s)} [rank{r}]:NET/FasTrak : Connection closed by remote peer llama3-8b-titan-workers-0-2.llama3-8b-titan<46201>")
            s3 = sigterm + timedelta(seconds=12)
            L.append(f"{k(s3)} W1124 {s3.strftime('%H:%M:%S.%f')} 1 torch/distributed/elastic/agent/server/api.py:704] Received 15 death signal, shutting down workers")
            L.append(f"{k(s3)} torch.distributed.elastic.multiprocessing.api.SignalException: Process 1 got signal: 15")
    E = b.f("probes/" + nodes[bad_i] + "/k8s-events.txt")
    E += ["$ kubectl get events -n train --sort-by=.lastTimestamp --field-selector involvedObject.name=" + pods[bad_i],
          "LAST SEEN   TYPE      REASON      OBJECT                                      MESSAGE",
          "15m         Normal    Scheduled   pod/" + pods[bad_i] + "   Successfully assigned train/" + pods[bad_i] + " to " + nodes[bad_i],
          "15m         Normal    Pulled      pod/" + pods[bad_i] + "   Container image \"us-docker.pkg.dev/acme-ml/train/titan:2026.11.2\" already present on machine",
          "15m         Normal    Started     pod/" + pods[bad_i] + "   Started container trainer",
          "2m10s       Normal    Preempted   pod/" + pods[bad_i] + "   Preempted by pod 8d1f0c53-6b1e-4a9e-9d1c-3f0f0e2b7a41 on node " + nodes[bad_i],
          "2m10s       Normal    Killing     pod/" + pods[bad_i] + "   Stopping container trainer",
          "",
          "$ kubectl get jobset llama3-8b-titan -n train -o jsonpath='{.status.restarts}'",
          "1"]
    P = b.f("probes/" + nodes[bad_i] + "/pod-status.json")
    P += json.dumps({"probe": "pod-conditions", "status": "warn",
                     "detail": "pod " + pods[bad_i] + " condition DisruptionTarget=True reason=PreemptionByScheduler: kube-scheduler: preempting to accommodate a higher priority pod",
                     "metrics": {"priorityClassName": "batch-low", "restartCount": 0}}, indent=2).split("\n")
    b.mark(f"logs/{nodes[bad_i]}/{pods[bad_i]}.log", "Received 15 death signal")
    b.mark("probes/" + nodes[bad_i] + "/k8s-events.txt", "Preempted by pod")
    b.mark("probes/" + nodes[bad_i] + "/pod-status.json", "PreemptionByScheduler")
    job = f"""
job_id: "llama3-8b-titan-1124"
name: llama3-8b-titan
framework: torchtitan
scheduler: kubernetes (GKE, JobSet + Kueue, priorityClass batch-low)
status: failed
started_at: 2026-11-24T02:10:00Z
ended_at: {(sigterm + timedelta(seconds=14)).strftime('%Y-%m-%dT%H:%M:%SZ')}
exit_code: 143
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
  - {{host: {nodes[0]}, ip: 10.128.0.41, ranks: [0, 1, 2, 3, 4, 5, 6, 7], pod: {pods[0]}}}
  - {{host: {nodes[1]}, ip: 10.128.0.57, ranks: [8, 9, 10, 11, 12, 13, 14, 15], pod: {pods[1]}}}
  - {{host: {nodes[2]}, ip: 10.128.0.62, ranks: [16, 17, 18, 19, 20, 21, 22, 23], pod: {pods[2]}}}
  - {{host: {nodes[3]}, ip: 10.128.0.80, ranks: [24, 25, 26, 27, 28, 29, 30, 31], pod: {pods[3]}}}
code:
  - {{commit: 2b8d0e4, at: 2026-11-16T11:00:00Z, message: "titan: float8 all-gather off"}}
checkpoints:
  - {{step: 12000, at: 2026-11-24T01:58:00Z, path: gs://acme-ckpt/llama3-8b-titan/step-12000, valid: true}}
  - {{step: 12200, at: 2026-11-24T02:16:21Z, path: gs://acme-ckpt/llama3-8b-titan/step-12200, valid: true}}
spares: 0
jobset: {{restarts: 1, failurePolicy: {{maxRestarts: 3}}}}
"""
    truth = {"fault": "scheduler_preemption", "category": "infrastructure",
             "root_cause": "kube-scheduler preempted worker pod 0-2 (low priority class) to make room for a higher-priority pod; torchrun on that pod received SIGTERM, the other workers lost their NCCL peer and JobSet restarted the whole set",
             "faulty_nodes": [nodes[bad_i]], "stage": "training", "iteration": fault_step,
             "actions": [{"kind": "restart", "from_step": 12200}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 4. HF Trainer (transformers logging prefix "[INFO|trainer.py:NNNN] date >> msg"), accelerate launch,
#    ImportError on one node whose image drifted (pip upgrade of transformers)
# ---------------------------------------------------------------------------------------------
def inc_hf_import():
    b = Bundle("hf-trainer-importerror-image-drift-2node")
    hosts = ["mlg-b1", "mlg-b2"]
    bad = "mlg-b2"
    A = b.f("logs/mlg-b1/accelerate-launch.log")
    A += ["The following values were not passed to `accelerate launch` and had defaults used instead:",
          "\t`--dynamo_backend` was set to a value of `'no'`",
          "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.",
          "W1125 09:00:07.551000 7715 torch/distributed/run.py:793] ",
          "W1125 09:00:07.551000 7715 torch/distributed/run.py:793] *****************************************",
          "W1125 09:00:07.551000 7715 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
          "W1125 09:00:07.551000 7715 torch/distributed/run.py:793] *****************************************"]
    for r in range(8):
        A.append(f"[INFO|training_args.py:2171] 2026-11-25 09:00:16,{100+r*7} >> PyTorch: setting up devices")
    A += ["[WARNING|logging.py:328] 2026-11-25 09:00:16,902 >> Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: True, 16-bits training: False",
          "[INFO|configuration_utils.py:677] 2026-11-25 09:00:17,011 >> loading configuration file /models/qwen2.5-7b/config.json",
          "[INFO|configuration_utils.py:746] 2026-11-25 09:00:17,014 >> Model config Qwen2Config {",
          '  "architectures": [',
          '    "Qwen2ForCausalLM"',
          "  ],",
          '  "hidden_size": 3584,',
          '  "num_hidden_layers": 28,',
          '  "torch_dtype": "bfloat16",',
          '  "transformers_version": "4.44.2",',
          '  "vocab_size": 152064',
          "}",
          "",
          "[INFO|tokenization_utils_base.py:2267] 2026-11-25 09:00:17,230 >> loading file vocab.json",
          "[INFO|tokenization_utils_base.py:2267] 2026-11-25 09:00:17,230 >> loading file merges.txt",
          "[INFO|modeling_utils.py:3678] 2026-11-25 09:00:17,601 >> loading weights file /models/qwen2.5-7b/model.safetensors.index.json",
          "[INFO|modeling_utils.py:1606] 2026-11-25 09:00:17,604 >> Instantiating Qwen2ForCausalLM model under default dtype torch.bfloat16.",
          "Loading checkpoint shards: 100%|██████████| 4/4 [00:11<00:00,  2.80s/it]",
          "[INFO|modeling_utils.py:4507] 2026-11-25 09:00:29,881 >> All model checkpoint weights were used when initializing Qwen2ForCausalLM.",
          "[WARNING|trainer.py:664] 2026-11-25 09:00:31,120 >> Using auto half precision backend",
          "[INFO|trainer.py:2128] 2026-11-25 09:00:31,402 >> Detected flash_attn, using flash_attention_2 for attention.",
          "Map (num_proc=16): 100%|██████████| 182311/182311 [00:21<00:00, 8543.11 examples/s]",
          "[rank3]:[W1125 09:00:55.003112 7722 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 3]  using GPU 3 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a particular device,or call init_process_group() with a device_id.",
          "[rank0]: Traceback (most recent call last):",
          '[rank0]:   File "/workspace/sft/train.py", line 188, in <module>',
          "[rank0]:     main()",
          '[rank0]:   File "/workspace/sft/train.py", line 121, in main',
          "[rank0]:     with training_args.main_process_first(desc=\"dataset map pre-processing\"):",
          '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/transformers/training_args.py", line 2420, in main_process_first',
          "[rank0]:     dist.barrier()",
          '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 4159, in barrier',
          "[rank0]:     work.wait()",
          "[rank0]:[E1125 09:30:55.771204 7719 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800087 milliseconds before timing out.",
          "[rank0]:[E1125 09:30:55.771390 7719 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.",
          "[rank0]:[E1125 09:30:55.771402 7719 ProcessGroupNCCL.cpp:630] [Rank 0] To avoid data inconsistency, we are taking the entire process down.",
          "[rank0]: torch.distributed.DistBackendError: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800087 milliseconds before timing out.",
          "E1125 09:31:04.772000 7715 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 7719) of binary: /usr/bin/python",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
          "============================================================",
          "train.py FAILED",
          "------------------------------------------------------------",
          "Root Cause (first observed failure):",
          "[0]:",
          "  time      : 2026-11-25_09:31:04",
          "  host      : mlg-b1",
          "  rank      : 0 (local_rank: 0)",
          "  exitcode  : 1 (pid: 7719)",
          "  error_file: <N/A>",
          "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
          "============================================================"]
    B = b.f("logs/mlg-b2/accelerate-launch.log")
    B += ["W1125 09:00:07.904000 30211 torch/distributed/run.py:793] *****************************************",
          "W1125 09:00:07.904000 30211 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
          "W1125 09:00:07.904000 30211 torch/distributed/run.py:793] *****************************************"]
    for lr in range(8):
        r = 8 + lr
        B += [f"[rank{r}]: Traceback (most recent call last):",
              f'[rank{r}]:   File "/workspace/sft/train.py", line 14, in <module>',
              f"[rank{r}]:     from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments",
              f'[rank{r}]:   File "/usr/local/lib/python3.10/dist-packages/transformers/__init__.py", line 26, in <module>',
              f"[rank{r}]:     from . import dependency_versions_check",
              f'[rank{r}]:   File "/usr/local/lib/python3.10/dist-packages/transformers/utils/hub.py", line 31, in <module>',
              f"[rank{r}]:     from huggingface_hub import (",
              f"[rank{r}]: ImportError: cannot import name 'split_torch_state_dict_into_shards' from 'huggingface_hub' (/usr/local/lib/python3.10/dist-packages/huggingface_hub/__init__.py)"]
    B += ["E1125 09:00:13.480000 30211 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 30215) of binary: /usr/bin/python",
          "Traceback (most recent call last):",
          '  File "/usr/local/bin/accelerate", line 8, in <module>',
          "    sys.exit(main())",
          '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 1159, in launch_command',
          "    multi_gpu_launcher(args)",
          '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 793, in multi_gpu_launcher',
          "    distrib_run.run(args)",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
          "============================================================",
          "train.py FAILED",
          "------------------------------------------------------------",
          "Failures:",
          "[1]:",
          "  time      : 2026-11-25_09:00:13",
          "  host      : mlg-b2",
          "  rank      : 9 (local_rank: 1)",
          "  exitcode  : 1 (pid: 30216)",
          "  error_file: <N/A>",
          "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
          "------------------------------------------------------------",
          "Root Cause (first observed failure):",
          "[0]:",
          "  time      : 2026-11-25_09:00:13",
          "  host      : mlg-b2",
          "  rank      : 8 (local_rank: 0)",
          "  exitcode  : 1 (pid: 30215)",
          "  error_file: <N/A>",
          "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
          "============================================================"]
    for h in hosts:
        P = b.f(f"probes/{h}/pip-versions.json")
        if h == bad:
            P += json.dumps({"probe": "pip-versions", "status": "warn",
                             "detail": "differs from image ml-train:24.10: transformers 4.46.2 (image 4.44.2) installed 2026-11-24T17:02Z by 'pip install -U transformers' into /usr/local/lib/python3.10/dist-packages; huggingface_hub 0.20.3 left at the image's version",
                             "metrics": {"transformers": "4.46.2", "huggingface_hub": "0.20.3", "accelerate": "0.34.2", "torch": "2.5.1"}}, indent=2).split("\n")
        else:
            P += json.dumps({"probe": "pip-versions", "status": "ok", "detail": "matches image ml-train:24.10",
                             "metrics": {"transformers": "4.44.2", "huggingface_hub": "0.24.6", "accelerate": "0.34.2", "torch": "2.5.1"}}, indent=2).split("\n")
    b.mark("logs/mlg-b2/accelerate-launch.log", "[rank8]: ImportError: cannot import name 'split_torch_state_dict_into_shards'")
    b.mark(f"probes/{bad}/pip-versions.json", "\"detail\": \"differs from image")
    job = """
job_id: "sft-qwen7b-1125a"
name: qwen2.5-7b-sft
framework: other
launcher: accelerate launch --multi_gpu --num_machines 2 --num_processes 16 (HF Trainer)
status: failed
started_at: 2026-11-25T09:00:02Z
ended_at: 2026-11-25T09:31:05Z
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}
nodes:
  - {host: mlg-b1, ip: 10.61.2.21, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}
  - {host: mlg-b2, ip: 10.61.2.22, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}
image: ml-train:24.10
code:
  - {commit: 0f4d7b2, at: 2026-11-08T13:20:00Z, message: "sft: chat template for qwen2.5"}
  - {commit: a91e6c0, at: 2026-11-19T10:05:00Z, message: "sft: neftune alpha 5"}
checkpoints: []
spares: 1
history: ["sft-qwen7b-1121b", "sft-qwen7b-1123a"]
last_successful_run: {job: sft-qwen7b-1123a, at: 2026-11-23T22:40:00Z, commit: a91e6c0}
"""
    truth = {"fault": "user_import_error", "category": "user_code",
             "root_cause": "mlg-b2's Python environment drifted from the image (transformers upgraded to 4.46.2 by pip while huggingface_hub stayed 0.20.3), so every rank on mlg-b2 died importing transformers; mlg-b1's ranks then timed out in the first barrier. Code is unchanged since the last good run.",
             "faulty_nodes": [bad], "stage": "init", "iteration": None,
             "actions": [{"kind": "none"}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 5. Lightning Fabric, one file per rank (fabric.launch under Slurm, no prefixes), NCCL bootstrap
#    on one node bound to docker0 via a stale /etc/nccl.conf -> peers connect to 172.17.0.1
# ---------------------------------------------------------------------------------------------
def inc_fabric_docker0():
    b = Bundle("fabric-nccl-ifname-docker0-4node")
    R = random.Random(55)
    hosts = ["gn-01", "gn-02", "gn-03", "gn-04"]
    ips = ["10.9.0.11", "10.9.0.12", "10.9.0.13", "10.9.0.14"]
    bad = "gn-04"
    for ni, h in enumerate(hosts):
        for lr in range(4):
            r = ni * 4 + lr
            pid = 52100 + ni * 10 + lr
            L = b.f(f"logs/{h}/rank-{r}.log")
            L.append(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r+1}/16")
            if r == 0:
                L += ["----------------------------------------------------------------------------------------------------",
                      "distributed_backend=nccl",
                      "All distributed processes registered. Starting with 16 processes",
                      "----------------------------------------------------------------------------------------------------",
                      ""]
            L.append("/opt/venv/lib/python3.11/site-packages/lightning/fabric/connector.py:571: `precision=bf16` is supported for historical reasons but its usage is discouraged. Please set your precision to bf16-mixed instead!")
            L.append(f"[rank: {r}] Seed set to 1234")
            L.append(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3]")
            if h == bad:
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO NCCL_SOCKET_IFNAME set by environment to docker0")
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>")
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)")
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB docker0:172.17.0.1<0>")
            else:
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib0")
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO Bootstrap : Using ib0:{ips[ni]}<0>")
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)")
                L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:{ips[ni]}<0>")
            L.append(f"{h}:{pid}:{pid} [{lr}] NCCL INFO cudaDriverVersion 12040")
            if r == 0:
                L.append("NCCL version 2.21.5+cuda12.4")
            L.append(f"{h}:{pid}:{pid+60} [{lr}] NCCL INFO ncclCommInitRank comm 0x55d1c8a3e2f0 rank {r} nranks 16 cudaDev {lr} nvmlDev {lr} busId {['18000','2a000','ab000','bd000'][lr]} commId 0x7b1f3e91c20a5d44 - Init START")
            if r == 0:
                for k in range(6):
                    L.append(f"{h}:{pid}:{pid+61} [{lr}] NCCL INFO Call to connect returned Connection refused, retrying")
                L.append(f"{h}:{pid}:{pid+61} [{lr}] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.1<43501> failed : Connection refused")
                L.append(f"{h}:{pid}:{pid+61} [{lr}] NCCL INFO misc/socket.cc:565 -> 2")
                L.append(f"{h}:{pid}:{pid+61} [{lr}] NCCL INFO bootstrap.cc:123 -> 2")
                L.append(f"{h}:{pid}:{pid+61} [{lr}] NCCL INFO bootstrap.cc:199 -> 2 [Root thread]")
                last = "socketStartConnect: Connect to 172.17.0.1<43501> failed : Connection refused"
            else:
                L.append(f"{h}:{pid}:{pid+60} [{lr}] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gn-01<{R.randint(33000,39000)}>")
                L.append(f"{h}:{pid}:{pid+60} [{lr}] NCCL INFO misc/socket.cc:752 -> 6")
                L.append(f"{h}:{pid}:{pid+60} [{lr}] NCCL INFO bootstrap.cc:581 -> 6")
                last = "socketProgress: Connection closed by remote peer gn-01"
            L.append(f"{h}:{pid}:{pid+60} [{lr}] NCCL INFO init.cc:1307 -> 2")
            L += ["Traceback (most recent call last):",
                  '  File "/work/lm/train_fabric.py", line 203, in <module>',
                  "    main(cfg)",
                  '  File "/work/lm/train_fabric.py", line 98, in main',
                  "    model, optimizer = fabric.setup(model, optimizer)",
                  '  File "/opt/venv/lib/python3.11/site-packages/lightning/fabric/fabric.py", line 253, in setup',
                  "    module, optimizers = self._strategy.setup_module_and_optimizers(  # type: ignore[assignment]",
                  '  File "/opt/venv/lib/python3.11/site-packages/lightning/fabric/strategies/fsdp.py", line 280, in setup_module',
                  "    module = FullyShardedDataParallel(",
                  '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/fsdp/_init_utils.py", line 663, in _sync_module_params_and_buffers',
                  "    _sync_params_and_buffers(",
                  '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/utils.py", line 317, in _sync_params_and_buffers',
                  "    dist._broadcast_coalesced(",
                  "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5",
                  "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                  "Last error:"]
            L.append(last)
    S = b.f("logs/gn-01/slurm-510377.out")
    S += ["srun: error: gn-02: tasks 4-7: Exited with exit code 1",
          "srun: Terminating StepId=510377.0",
          "srun: error: gn-04: tasks 12-15: Exited with exit code 1",
          "srun: error: gn-01: tasks 0-3: Exited with exit code 1",
          "srun: error: gn-03: tasks 8-11: Exited with exit code 1"]
    for ni, h in enumerate(hosts):
        P = b.f(f"probes/{h}/nccl-env.json")
        if h == bad:
            P += json.dumps({"probe": "nccl-env", "status": "warn",
                             "detail": "/etc/nccl.conf sets NCCL_SOCKET_IFNAME=docker0 (file dated 2026-10-02, left by a container-runtime test); job env does not set it; docker0 172.17.0.1/16 is a host-local bridge",
                             "metrics": {"/etc/nccl.conf": "NCCL_SOCKET_IFNAME=docker0\nNCCL_DEBUG=INFO", "ib0": ips[ni], "docker0": "172.17.0.1"}}, indent=2).split("\n")
        else:
            P += json.dumps({"probe": "nccl-env", "status": "ok",
                             "detail": "/etc/nccl.conf sets NCCL_SOCKET_IFNAME=ib0",
                             "metrics": {"/etc/nccl.conf": "NCCL_SOCKET_IFNAME=ib0\nNCCL_DEBUG=INFO", "ib0": ips[ni], "docker0": "172.17.0.1"}}, indent=2).split("\n")
    b.mark(f"logs/{bad}/rank-12.log", "NCCL_SOCKET_IFNAME set by environment to docker0")
    b.mark(f"logs/{bad}/rank-12.log", "Bootstrap : Using docker0:172.17.0.1<0>")
    b.mark(f"probes/{bad}/nccl-env.json", "\"detail\": \"/etc/nccl.conf sets NCCL_SOCKET_IFNAME=docker0")
    job = """
job_id: "510377"
name: gpt-neo-1.3b-fabric
framework: other
launcher: srun --output=logs/%N/rank-%t.log python train_fabric.py (Lightning Fabric 2.4, strategy=fsdp)
scheduler: slurm
status: failed
started_at: 2026-11-26T13:40:05Z
ended_at: 2026-11-26T13:41:22Z
exit_code: 1
gpus_per_node: 4
parallelism: {tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}
nodes:
  - {host: gn-01, ip: 10.9.0.11, ranks: [0, 1, 2, 3]}
  - {host: gn-02, ip: 10.9.0.12, ranks: [4, 5, 6, 7]}
  - {host: gn-03, ip: 10.9.0.13, ranks: [8, 9, 10, 11]}
  - {host: gn-04, ip: 10.9.0.14, ranks: [12, 13, 14, 15]}
code:
  - {commit: 6d2a0f8, at: 2026-11-20T16:00:00Z, message: "fabric: fsdp full shard, act ckpt"}
checkpoints:
  - {step: 18000, at: 2026-11-26T11:03:00Z, path: /lustre/ckpt/neo13b/step-18000.ckpt, valid: true}
spares: 2
history: ["510112", "510240"]
"""
    truth = {"fault": "nccl_bootstrap_failure", "category": "network",
             "root_cause": "a stale /etc/nccl.conf on gn-04 set NCCL_SOCKET_IFNAME=docker0, so gn-04's ranks advertised the host-local bridge address 172.17.0.1 for NCCL bootstrap; the bootstrap root (rank 0 on gn-01) could not reach 172.17.0.1 (connection refused after retries) and the first FSDP broadcast failed on every rank",
             "faulty_nodes": [bad], "stage": "init", "iteration": None,
             "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 18000}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 6. NeMo 2 / Megatron-Core with structured JSON logs (python-json-logger, one JSON object a line);
#    straggler: one node's DataLoader is CPU-bound (batch-generator time high), the whole job slows
# ---------------------------------------------------------------------------------------------
def inc_nemo_json_straggler():
    b = Bundle("nemo-mcore-jsonlog-dataloader-straggler-8node")
    R = random.Random(66)
    hosts = [f"h100-{i:03d}" for i in (112, 113, 114, 115, 116, 117, 118, 119)]
    bad_i = 5
    bad = hosts[bad_i]
    t0 = datetime(2026, 11, 26, 20, 0, 0, tzinfo=UTC)
    first, slow_from, last = 30001, 30128, 30170
    tcur = {}
    for ni, h in enumerate(hosts):
        L = b.f(f"logs/{h}/nemo_log_globalrank-{ni*8}.jsonl")
        def j(t, lvl, name, msg, **kw):
            d = {"asctime": t.strftime("%Y-%m-%d %H:%M:%S,") + f"{R.randint(0,999):03d}", "levelname": lvl, "name": name,
                 "rank": ni * 8, "host": h, "message": msg}
            d.update(kw)
            L.append(json.dumps(d))
        t = t0
        j(t, "INFO", "nemo.lightning.pytorch.strategies.megatron_strategy", "Fixing mis-match between ddp-config & mcore-optimizer config")
        j(t, "INFO", "megatron.core.num_microbatches_calculator", "setting number of microbatches to constant 16")
        j(t, "WARNING", "py.warnings", "/opt/megatron-lm/megatron/core/models/gpt/gpt_layer_specs.py:94: UserWarning: The fp8 argument in \"get_gpt_layer_with_transformer_engine_spec\" has been deprecated and will be removed soon. Please update your code accordingly.")
        j(t, "INFO", "nemo.lightning.io.pl", "Loading distributed checkpoint from /lustre/nemo/llama31-70b/checkpoints/step=30000-consumed_samples=15360000.0")
        j(t + timedelta(seconds=70), "INFO", "nemo.lightning.io.pl", "Restored model weights from /lustre/nemo/llama31-70b/checkpoints/step=30000-consumed_samples=15360000.0")
        t = t0 + timedelta(seconds=95)
        for it in range(first, last + 1):
            slow = it >= slow_from
            fb = R.uniform(6050, 6120)
            if ni == bad_i and slow:
                bg = R.uniform(4100, 4700)
            elif ni == bad_i:
                bg = R.uniform(6, 14)
            else:
                bg = R.uniform(3, 9)
            step = fb + (R.uniform(4450, 4800) if slow else R.uniform(60, 90))
            if ni == bad_i:
                step = fb + bg + R.uniform(50, 80)
            t = t + timedelta(milliseconds=step)
            if not (it % 10 == 0 or slow_from - 3 <= it <= slow_from + 6):
                continue
            j(t, "INFO", "megatron.core.timers", "per-rank timers (ms)", iteration=it,
              timers={"forward-backward": round(fb, 2), "batch-generator": round(bg, 2),
                      "optimizer": round(R.uniform(101, 109), 2), "all-grads-sync": round(R.uniform(38, 44) + (4000 if slow and ni != bad_i else 0), 2)})
            if ni == 7:
                j(t, "INFO", "nemo.lightning.pytorch.callbacks.progress_printer",
                  f"Training epoch 0, iteration {it - 1}/299999 | lr: 8.0e-05 | global_batch_size: 512 | global_step: {it - 1} | "
                  f"reduced_train_loss: {1.74 - (it-30000)*0.00005 + R.uniform(-0.01,0.01):.4f} | train_step_timing in s: {step/1000:.3f} | consumed_samples: {it*512}")
            if it == 30100 and ni == bad_i:
                j(t, "WARNING", "torch.utils.data.dataloader", "This DataLoader will create 12 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.")
            if it == 30150 and ni == 0:
                j(t, "INFO", "nemo.collections.llm.gpt.data.pre_training", "Retrying read of /lustre/data/blend/shard_00412.bin after OSError(116, 'Stale file handle') (attempt 1/5): succeeded")
    P = b.f(f"probes/{bad}/host-cpu.json")
    P += json.dumps({"probe": "host-cpu", "status": "warn",
                     "detail": "load average 187.3 on 64 vCPU; per-process: 8x pt_data_worker groups (96 processes) at 94% of all CPU, cpuset of the job 0-63; 'python preprocess_blend.py' (pid 771204, user etl) started 2026-11-26T20:12:31Z pinned to cores 0-31",
                     "metrics": {"loadavg_1m": 187.3, "cpus": 64, "cpu_busy_pct": 99.2, "dataloader_workers": 96, "steal_pct": 0.0}}, indent=2).split("\n")
    for h in hosts:
        if h != bad:
            b.f(f"probes/{h}/host-cpu.json").extend(json.dumps({"probe": "host-cpu", "status": "ok", "detail": "load average 41.0 on 64 vCPU",
                                                                  "metrics": {"loadavg_1m": 41.0, "cpus": 64, "cpu_busy_pct": 58.1, "dataloader_workers": 96}}, indent=2).split("\n"))
    f = f"logs/{bad}/nemo_log_globalrank-{bad_i*8}.jsonl"
    b.mark(f, f'"iteration": {slow_from}, "timers"')
    b.mark(f, f'"iteration": {slow_from + 1}, "timers"')
    b.mark(f"probes/{bad}/host-cpu.json", '"detail": "load average 187.3')
    nodes = "\n".join(f"  - {{host: {h}, ip: 10.33.1.{112+i}, ranks: [{', '.join(str(i*8+k) for k in range(8))}]}}" for i, h in enumerate(hosts))
    job = f"""
job_id: "nemo-llama31-70b-cpt-7781"
name: llama31-70b-cpt
framework: nemo
status: slow
started_at: 2026-11-26T20:00:00Z
gpus_per_node: 8
parallelism: {{tp: 8, pp: 4, dp: 2, cp: 1, ep: 1}}
logging: structured JSON (python-json-logger), one file per node from its first rank
nodes:
{nodes}
code:
  - {{commit: 3aa90e1, at: 2026-11-14T12:00:00Z, message: "cpt: 128k rope scaling"}}
checkpoints:
  - {{step: 29500, at: 2026-11-26T14:40:00Z, path: /lustre/nemo/llama31-70b/checkpoints/step=29500, valid: true}}
  - {{step: 30000, at: 2026-11-26T19:51:00Z, path: /lustre/nemo/llama31-70b/checkpoints/step=30000, valid: true}}
spares: 2
history: ["nemo-llama31-70b-cpt-7702"]
"""
    truth = {"fault": "input_pipeline_bound", "category": "infrastructure",
             "root_cause": f"from iteration {slow_from} the DataLoader workers on {bad} were starved of CPU (an unrelated preprocessing job pinned to half its cores): its batch-generator time rose from ~10 ms to ~4.4 s, every other rank waited for it in the gradient sync and the step time went from ~6.2 s to ~10.7 s",
             "faulty_nodes": [bad], "stage": "training", "iteration": slow_from,
             "actions": [{"kind": "none"}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 7. SageMaker training job (hosts algo-1/algo-2), Horovod over MPI: "[1,mpirank:N,algo-K]<stderr>:"
#    tags in algo-1's CloudWatch stream; a new commit's custom op trips a PyTorch INTERNAL ASSERT
# ---------------------------------------------------------------------------------------------
def inc_sagemaker_assert():
    b = Bundle("sagemaker-horovod-custom-op-internal-assert-2node")
    R = random.Random(77)
    t0 = datetime(2026, 11, 27, 3, 0, 0, tzinfo=UTC)
    A = b.f("logs/algo-1/pt-llm-horovod-2026-11-27-02-51-09-614-algo-1-1795748000.log")
    A += ["bash: cannot set terminal process group (-1): Inappropriate ioctl for device",
          "bash: no job control in this shell",
          "2026-11-27 03:00:01,114 sagemaker-training-toolkit INFO     Imported framework sagemaker_pytorch_container.training",
          "2026-11-27 03:00:01,131 sagemaker-training-toolkit INFO     No Neurons detected (normal if no neurons installed)",
          "2026-11-27 03:00:01,152 sagemaker_pytorch_container.training INFO     Block until all host DNS lookups succeed.",
          "2026-11-27 03:00:03,401 sagemaker_pytorch_container.training INFO     Invoking user training script.",
          "2026-11-27 03:00:04,092 sagemaker-training-toolkit INFO     Installing dependencies from requirements.txt:",
          "/opt/conda/bin/python3.10 -m pip install -r requirements.txt",
          "Requirement already satisfied: sentencepiece==0.2.0 in /opt/conda/lib/python3.10/site-packages (from -r requirements.txt (line 1)) (0.2.0)",
          "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='pypi.org', port=443): Read timed out. (read timeout=15)\")': /simple/ninja/",
          "Requirement already satisfied: ninja==1.11.1.1 in /opt/conda/lib/python3.10/site-packages (from -r requirements.txt (line 2)) (1.11.1.1)",
          "2026-11-27 03:00:21,770 sagemaker-training-toolkit INFO     Waiting for MPI workers to establish their SSH connections",
          "2026-11-27 03:00:21,790 sagemaker-training-toolkit INFO     Cannot connect to host algo-2 at port 22. Retrying...",
          "2026-11-27 03:00:26,802 sagemaker-training-toolkit INFO     Can connect to host algo-2 at port 22",
          "2026-11-27 03:00:26,803 sagemaker-training-toolkit INFO     Connection closed",
          "2026-11-27 03:00:26,803 sagemaker-training-toolkit INFO     Worker algo-2 available for communication",
          "2026-11-27 03:00:26,803 sagemaker-training-toolkit INFO     Network interface name: eth0",
          "2026-11-27 03:00:26,804 sagemaker-training-toolkit INFO     Host: ['algo-1', 'algo-2']",
          "2026-11-27 03:00:26,804 sagemaker-training-toolkit INFO     instance type: ml.p4d.24xlarge",
          "2026-11-27 03:00:26,881 sagemaker-training-toolkit INFO     Invoking user script",
          "Invoking script with the following command:",
          "mpirun --host algo-1:8,algo-2:8 -np 16 --allow-run-as-root --tag-output --oversubscribe -mca btl_tcp_if_include eth0 -mca oob_tcp_if_include eth0 -mca plm_rsh_no_tree_spawn 1 -mca pml ob1 -mca btl ^openib -mca orte_abort_on_non_zero_status 1 -mca btl_vader_single_copy_mechanism none -x NCCL_MIN_NRINGS=4 -x LD_LIBRARY_PATH -x PATH -x LD_PRELOAD=/opt/conda/lib/python3.10/site-packages/gethostname.cpython-310-x86_64-linux-gnu.so -x NCCL_DEBUG=WARN -x SM_HOSTS -x SM_CURRENT_HOST -x SM_MODEL_DIR -x SM_CHANNEL_TRAIN -x SM_HPS -x FI_PROVIDER=efa -x FI_EFA_USE_DEVICE_RDMA=1 smddpmpirun_wrapper /opt/conda/bin/python3.10 -m mpi4py train_hvd.py --resume s3://acme-llm/ckpt/pt-llm-1b3/step-5000 --epochs 2",
          "Warning: Permanently added 'algo-2,10.0.213.77' (ECDSA) to the list of known hosts."]
    ranks = list(range(16))
    for r in ranks:
        host = "algo-1" if r < 8 else "algo-2"
        A.append(f"[1,mpirank:{r},{host}]<stderr>:/opt/conda/lib/python3.10/site-packages/horovod/torch/mpi_ops.py:1060: UserWarning: Horovod was built without NCCL group calls support; falling back (this is harmless)")
    for r in ranks:
        host = "algo-1" if r < 8 else "algo-2"
        A.append(f"[1,mpirank:{r},{host}]<stdout>:[hvd] rank {r}/16 local_rank {r%8} on {host} ready")
    A += ["[1,mpirank:0,algo-1]<stdout>:Building extension module rope_ext...",
          "[1,mpirank:0,algo-1]<stderr>:Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...",
          "[1,mpirank:0,algo-1]<stdout>:ninja: no work to do.",
          "[1,mpirank:0,algo-1]<stdout>:Loading extension module rope_ext...",
          "[1,mpirank:0,algo-1]<stdout>:Resumed from s3://acme-llm/ckpt/pt-llm-1b3/step-5000 (epoch 1, step 5000)",
          "[1,mpirank:0,algo-1]<stdout>:[train] epoch 1 step 5001 starting, micro-batches 8, seq 4096"]
    order = [3, 0, 11, 1, 2, 9, 4, 5, 6, 7, 8, 10, 12, 13, 14, 15]
    for r in order:
        host = "algo-1" if r < 8 else "algo-2"
        p = f"[1,mpirank:{r},{host}]<stderr>:"
        A += [p + "Traceback (most recent call last):",
              p + '  File "/opt/ml/code/train_hvd.py", line 301, in <module>',
              p + "    train(args)",
              p + '  File "/opt/ml/code/train_hvd.py", line 244, in train',
              p + "    logits = model(batch[\"input_ids\"])",
              p + '  File "/opt/ml/code/model/attention.py", line 88, in forward',
              p + "    q, k = torch.ops.rope_ext.fused_rotary(q, k, self.cos_cached, self.sin_cached)",
              p + '  File "/opt/conda/lib/python3.10/site-packages/torch/_ops.py", line 1116, in __call__',
              p + "    return self._op(*args, **(kwargs or {}))",
              p + 'RuntimeError: isTuple() INTERNAL ASSERT FAILED at "/opt/conda/lib/python3.10/site-packages/torch/include/ATen/core/ivalue_inl.h":1916, please report a bug to PyTorch. Expected Tuple but got GenericList']
    A += ["--------------------------------------------------------------------------",
          "Primary job  terminated normally, but 1 process returned",
          "a non-zero exit code. Per user-direction, the job has been aborted.",
          "--------------------------------------------------------------------------",
          "--------------------------------------------------------------------------",
          "mpirun.real detected that one or more processes exited with non-zero status, thus causing",
          "the job to be terminated. The first process to do so was:",
          "",
          "  Process name: [[34211,1],3]",
          "  Exit code:    1",
          "--------------------------------------------------------------------------",
          "2026-11-27 03:02:48,119 sagemaker-training-toolkit ERROR    Reporting training FAILURE",
          "2026-11-27 03:02:48,119 sagemaker-training-toolkit ERROR    ExecuteUserScriptError:",
          "ExitCode 1",
          "ErrorMessage \"RuntimeError: isTuple() INTERNAL ASSERT FAILED at \"/opt/conda/lib/python3.10/site-packages/torch/include/ATen/core/ivalue_inl.h\":1916, please report a bug to PyTorch. Expected Tuple but got GenericList\"",
          "Command \"mpirun --host algo-1:8,algo-2:8 -np 16 --allow-run-as-root --tag-output --oversubscribe ... smddpmpirun_wrapper /opt/conda/bin/python3.10 -m mpi4py train_hvd.py --resume s3://acme-llm/ckpt/pt-llm-1b3/step-5000 --epochs 2\"",
          "2026-11-27 03:02:48,120 sagemaker-training-toolkit ERROR    Encountered exit_code 1"]
    B = b.f("logs/algo-2/pt-llm-horovod-2026-11-27-02-51-09-614-algo-2-1795748000.log")
    B += ["bash: cannot set terminal process group (-1): Inappropriate ioctl for device",
          "bash: no job control in this shell",
          "2026-11-27 03:00:01,377 sagemaker-training-toolkit INFO     Imported framework sagemaker_pytorch_container.training",
          "2026-11-27 03:00:01,401 sagemaker_pytorch_container.training INFO     Block until all host DNS lookups succeed.",
          "2026-11-27 03:00:03,520 sagemaker_pytorch_container.training INFO     Invoking user training script.",
          "2026-11-27 03:00:04,310 sagemaker-training-toolkit INFO     Installing dependencies from requirements.txt:",
          "2026-11-27 03:00:20,902 sagemaker-training-toolkit INFO     Starting MPI run as worker node.",
          "2026-11-27 03:00:20,902 sagemaker-training-toolkit INFO     Waiting for MPI Master to create SSH daemon.",
          "2026-11-27 03:00:20,951 sagemaker-training-toolkit INFO     Cannot connect to host algo-1 at port 22. Retrying...",
          "2026-11-27 03:00:25,961 sagemaker-training-toolkit INFO     Can connect to host algo-1 at port 22",
          "2026-11-27 03:00:25,962 sagemaker-training-toolkit INFO     Connection closed",
          "2026-11-27 03:00:25,962 sagemaker-training-toolkit INFO     MPI Master online, creating SSH daemon.",
          "2026-11-27 03:00:25,962 sagemaker-training-toolkit INFO     Writing environment variables to /etc/environment for the MPI process.",
          "2026-11-27 03:00:26,012 sagemaker-training-toolkit INFO     Waiting for MPI process to finish.",
          "2026-11-27 03:00:29,014 sagemaker-training-toolkit INFO     Process[es]: [psutil.Process(pid=118, name='orted', status='sleeping', started='03:00:27')]",
          "2026-11-27 03:00:29,015 sagemaker-training-toolkit INFO     Orted process found [psutil.Process(pid=118, name='orted', status='sleeping', started='03:00:27')]",
          "2026-11-27 03:00:29,015 sagemaker-training-toolkit INFO     Waiting for orted process [psutil.Process(pid=118, name='orted', status='sleeping', started='03:00:27')]",
          "2026-11-27 03:02:49,030 sagemaker-training-toolkit INFO     Orted process exited",
          "2026-11-27 03:02:49,031 sagemaker-training-toolkit INFO     Reporting training SUCCESS"]
    f = "logs/algo-1/pt-llm-horovod-2026-11-27-02-51-09-614-algo-1-1795748000.log"
    b.mark(f, "[1,mpirank:3,algo-1]<stderr>:RuntimeError: isTuple() INTERNAL ASSERT FAILED")
    b.mark(f, "[1,mpirank:11,algo-2]<stderr>:RuntimeError: isTuple() INTERNAL ASSERT FAILED")
    b.mark(f, "ErrorMessage \"RuntimeError: isTuple() INTERNAL ASSERT FAILED")
    job = """
job_id: "pt-llm-horovod-2026-11-27-02-51-09-614"
name: pt-llm-1b3-horovod
framework: other
platform: sagemaker (ml.p4d.24xlarge x2, PyTorch DLC 2.3, Horovod 0.28 over Open MPI)
status: failed
started_at: 2026-11-27T03:00:00Z
ended_at: 2026-11-27T03:02:49Z
exit_code: 1
gpus_per_node: 8
parallelism: {tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}
nodes:
  - {host: algo-1, ip: 10.0.197.12, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}
  - {host: algo-2, ip: 10.0.213.77, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}
code:
  - {commit: 77e2b19, at: 2026-11-20T09:40:00Z, message: "data: dedup shard list"}
  - {commit: c5f0a3d, at: 2026-11-26T21:15:00Z, message: "model: fused rotary embedding as a custom op (rope_ext)"}
checkpoints:
  - {step: 4500, at: 2026-11-25T18:02:00Z, path: s3://acme-llm/ckpt/pt-llm-1b3/step-4500, valid: true}
  - {step: 5000, at: 2026-11-26T06:30:00Z, path: s3://acme-llm/ckpt/pt-llm-1b3/step-5000, valid: true}
spares: 0
history: ["pt-llm-horovod-2026-11-25-22-10-44-101"]
last_successful_run: {job: pt-llm-horovod-2026-11-25-22-10-44-101, at: 2026-11-26T06:31:00Z, commit: 77e2b19}
"""
    truth = {"fault": "pytorch_internal_assert", "category": "framework",
             "root_cause": "commit c5f0a3d registered the custom op rope_ext::fused_rotary returning a list where its schema declares a tuple; the dispatcher's isTuple() INTERNAL ASSERT fired on every rank of both hosts at the first forward after resuming from step 5000",
             "faulty_nodes": [], "stage": "training", "iteration": 5001,
             "actions": [{"kind": "restart", "from_step": 5000}]}
    b.write(job, truth)


# ---------------------------------------------------------------------------------------------
# 8. Ray Train (TorchTrainer), driver log with "(RayTrainWorker pid=..., ip=...)" prefixes, exported
#    with CRLF line endings and one latin-1 byte; a GPU falls off the bus during evaluation
# ---------------------------------------------------------------------------------------------
def inc_ray_xid79():
    b = Bundle("raytrain-crlf-xid79-eval-2node")
    R = random.Random(88)
    head, wk = "ray-head-gpu-0", "ray-gpu-1"
    hip, wip = "10.40.1.11", "10.40.1.12"
    pids = {0: 41230, 1: 41231, 2: 41232, 3: 41233, 4: 7711, 5: 7712, 6: 7713, 7: 7714}
    def pre(r):
        return f"(RayTrainWorker pid={pids[r]}, ip={hip if r < 4 else wip}) "
    D = b.f(f"logs/{head}/driver.log", eol="\r\n")
    D += ["2026-11-27 11:00:02,311\tINFO worker.py:1816 -- Connecting to existing Ray cluster at address: 10.40.1.11:6379...",
          "2026-11-27 11:00:02,330\tINFO worker.py:1990 -- Connected to Ray cluster. View the dashboard at \x1b[1m\x1b[32mhttp://10.40.1.11:8265 \x1b[39m\x1b[22m",
          "",
          "View detailed results here: /mnt/shared/ray_results/vit-l-ft",
          "To visualize your results with TensorBoard, run: `tensorboard --logdir /tmp/ray/session_2026-11-27_10-58-41_102334_1/artifacts/2026-11-27_11-00-02/vit-l-ft/driver_artifacts`",
          "",
          "Training started with configuration:",
          "╭──────────────────────────────────────╮",
          "│ Training config                      │",
          "├──────────────────────────────────────┤",
          "│ train_loop_config/batch_size      64 │",
          "│ train_loop_config/eval_every    1000 │",
          "│ train_loop_config/lr          0.0002 │",
          "╰──────────────────────────────────────╯",
          "(TorchTrainer pid=40988, ip=10.40.1.11) Started distributed worker processes: ",
          f"(TorchTrainer pid=40988, ip=10.40.1.11) - (node_id=6c1b0a2f1a33e7d90c1f0d4c8a1e5b7f2d3c4e5f6a7b8c9d0e1f2a3b, ip={hip}, pid={pids[0]}) world_rank=0, local_rank=0, node_rank=0",
          f"(TorchTrainer pid=40988, ip=10.40.1.11) - (node_id=9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b, ip={wip}, pid={pids[4]}) world_rank=4, local_rank=0, node_rank=1",
          f"{pre(0)}Setting up process group for: env:// [rank=0, world_size=8]",
          f"{pre(0)}[rank0]:[W1127 11:00:19.422301 41230 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to perform barrier as devices used by this process are currently unknown.",
          f"{pre(0)}Checkpoint successfully restored from /mnt/shared/ray_results/vit-l-ft/TorchTrainer_5a1e2_00000/checkpoint_000001 (step 1000)"]
    t0 = datetime(2026, 11, 27, 11, 0, 40, tzinfo=UTC)
    for st in range(1001, 2001):
        t = t0 + timedelta(seconds=(st - 1001) * 0.92)
        if st % 50 == 0:
            D.append(f"{pre(0)}step {st} | loss {0.91 - (st-1000)*0.0002 + R.uniform(-0.02,0.02):.4f} | lr 2.00e-04 | {R.uniform(1093,1110):.1f} img/s | h2d copy {R.randint(380,420)} \udcb5s")
        if st == 1500:
            D.append(f"{pre(4)}/usr/local/lib/python3.11/site-packages/torch/optim/lr_scheduler.py:224: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. ")
            D.append(f"{pre(0)}Checkpoint successfully created at: Checkpoint(filesystem=local, path=/mnt/shared/ray_results/vit-l-ft/TorchTrainer_5a1e2_00000/checkpoint_000002)")
    D.append(f"{pre(0)}step 2000 done; running evaluation on 50000 images")
    bar = "".join(f"\rEval:  {p:3d}%|{'█'*(p//10)}{' '*(10-p//10)}| {p*196//100}/196 [00:{p*38//100:02d}<00:{38-p*38//100:02d},  5.14it/s]" for p in range(0, 14, 2))
    D.append(f"{pre(0)}" + bar)
    D += [f"{pre(5)}[rank5]:[E1127 11:16:03.771992 7712 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 5] Process group watchdog thread terminated with exception: CUDA error: unknown error",
          f"{pre(5)}CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
          f"{pre(5)}For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
          "2026-11-27 11:16:04,910\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_5a1e2_00000",
          "Traceback (most recent call last):",
          '  File "/usr/local/lib/python3.11/site-packages/ray/air/execution/_internal/event_manager.py", line 110, in resolve_future',
          "    result = ray.get(future)",
          '  File "/usr/local/lib/python3.11/site-packages/ray/_private/worker.py", line 2753, in get',
          "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
          f"ray.exceptions.RayTaskError(RuntimeError): \x1b[36mray::_Inner.train()\x1b[39m (pid=40988, ip={hip}, actor_id=3f1c2b9e7d8a4c6e5b0a910d01000000, repr=TorchTrainer)",
          '  File "/usr/local/lib/python3.11/site-packages/ray/train/_internal/utils.py", line 57, in check_for_failure',
          "    ray.get(object_ref)",
          f"ray.exceptions.RayTaskError(RuntimeError): \x1b[36mray::_RayTrainWorker__execute.get_next()\x1b[39m (pid={pids[5]}, ip={wip}, actor_id=b17a04e2c9d35f6a8e1c27d401000000, repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f3a1c5d2e90>)",
          '  File "/mnt/shared/code/vit_ft.py", line 171, in train_func',
          "    logits = model(images)",
          '  File "/usr/local/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1747, in _call_impl',
          "    return forward_call(*args, **kwargs)",
          "RuntimeError: CUDA error: unknown error",
          "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
          "",
          "Training errored after 3 iterations at 2026-11-27 11:16:05. Total running time: 16min 3s",
          "Error file: /tmp/ray/session_2026-11-27_10-58-41_102334_1/artifacts/2026-11-27_11-00-02/vit-l-ft/driver_artifacts/TorchTrainer_5a1e2_00000_0_2026-11-27_11-00-02/error.txt"]
    W = b.f(f"logs/{wk}/worker-b17a04e2c9d35f6a8e1c27d401000000-01000000-{pids[5]}.err", eol="\r\n")
    W += [":job_id:01000000",
          ":actor_name:RayTrainWorker",
          "/usr/local/lib/python3.11/site-packages/torch/optim/lr_scheduler.py:224: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. ",
          "Traceback (most recent call last):",
          '  File "/mnt/shared/code/vit_ft.py", line 171, in train_func',
          "    logits = model(images)",
          '  File "/usr/local/lib/python3.11/site-packages/timm/models/vision_transformer.py", line 853, in forward',
          "    x = self.forward_features(x)",
          "RuntimeError: CUDA error: unknown error",
          "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
          "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
          "",
          "[2026-11-27 11:16:04,102 E 7712 7790] logging.cc:108: Unhandled exception: N3c105ErrorE. what(): CUDA error: unknown error"]
    K = b.f(f"probes/{wk}/dmesg.txt")
    K += ["[Fri Nov 27 10:57:12 2026] nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, Class = 0x068000",
          "[Fri Nov 27 10:58:40 2026] docker0: port 1(veth3a1b2c9) entered forwarding state",
          "[Fri Nov 27 11:16:03 2026] NVRM: GPU at PCI:0000:4a:00: GPU-2c7e8f10-93b1-6d2a-0e4f-a1b2c3d4e5f6",
          "[Fri Nov 27 11:16:03 2026] NVRM: GPU Board Serial Number: 1654223019087",
          "[Fri Nov 27 11:16:03 2026] NVRM: Xid (PCI:0000:4a:00): 79, pid=7712, name=ray::RayTrainWo, GPU has fallen off the bus.",
          "[Fri Nov 27 11:16:03 2026] NVRM: GPU 0000:4a:00.0: GPU has fallen off the bus.",
          "[Fri Nov 27 11:16:03 2026] NVRM: A GPU crash dump has been created. If possible, please run",
          "                           NVRM: nvidia-bug-report.sh as root to collect this data before",
          "                           NVRM: the NVIDIA kernel module is unloaded.",
          "[Fri Nov 27 11:16:04 2026] pcieport 0000:48:01.0: AER: Uncorrected (Fatal) error received: 0000:48:01.0",
          "[Fri Nov 27 11:16:04 2026] pcieport 0000:48:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)"]
    S = b.f(f"probes/{wk}/nvidia-smi.txt")
    S += ["Unable to determine the device handle for GPU0000:4A:00.0: Unknown Error"]
    b.f(f"probes/{head}/dmesg.txt").append("[Fri Nov 27 10:58:39 2026] docker0: port 1(veth77c0e12) entered forwarding state")
    b.mark(f"logs/{wk}/worker-b17a04e2c9d35f6a8e1c27d401000000-01000000-{pids[5]}.err", "RuntimeError: CUDA error: unknown error")
    b.mark(f"probes/{wk}/dmesg.txt", "NVRM: Xid (PCI:0000:4a:00): 79")
    b.mark(f"probes/{wk}/dmesg.txt", "NVRM: GPU 0000:4a:00.0: GPU has fallen off the bus.")
    b.mark(f"probes/{wk}/nvidia-smi.txt", "Unable to determine the device handle")
    job = f"""
job_id: "raysubmit_Qm7TzXc1bVw2"
name: vit-l-ft
framework: other
platform: Ray 2.40 Train (TorchTrainer, ScalingConfig(num_workers=8, use_gpu=True)); logs exported from the Ray dashboard on a Windows workstation (CRLF)
status: failed
started_at: 2026-11-27T11:00:02Z
ended_at: 2026-11-27T11:16:05Z
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 8, cp: 1, ep: 1}}
nodes:
  - {{host: {head}, ip: {hip}, ranks: [0, 1, 2, 3]}}
  - {{host: {wk}, ip: {wip}, ranks: [4, 5, 6, 7]}}
code:
  - {{commit: 19c4e7a, at: 2026-11-22T15:30:00Z, message: "vit: layer decay 0.75"}}
checkpoints:
  - {{step: 1000, at: 2026-11-27T09:41:00Z, path: /mnt/shared/ray_results/vit-l-ft/TorchTrainer_5a1e2_00000/checkpoint_000001, valid: true}}
  - {{step: 1500, at: 2026-11-27T11:08:20Z, path: /mnt/shared/ray_results/vit-l-ft/TorchTrainer_5a1e2_00000/checkpoint_000002, valid: true}}
spares: 1
"""
    truth = {"fault": "gpu_fell_off_bus", "category": "hardware",
             "root_cause": f"GPU at PCI 0000:4a:00 on {wk} (world rank 5) fell off the bus (Xid 79, fatal PCIe AER on its upstream port) during the evaluation after step 2000; the worker saw 'CUDA error: unknown error' and Ray Train failed the trial",
             "faulty_nodes": [wk], "stage": "eval", "iteration": 2000,
             "actions": [{"kind": "evict", "nodes": [wk]}, {"kind": "restart", "from_step": 1500}]}
    b.write(job, truth)


ALL = [inc_slurm_oom, inc_impi_dcgm_ecc, inc_gke_preempt, inc_hf_import, inc_fabric_docker0,
       inc_nemo_json_straggler, inc_sagemaker_assert, inc_ray_xid79]

if __name__ == "__main__":
    for fn in ALL:
        fn()
