"""NeMo 2.0 (llm.pretrain, MegatronStrategy) on Slurm, srun --output=%x_%j_%N.out (one file per node, no prefix),
2 nodes x 8 H100, TP 8 x DP 2. An uncorrectable NVLink error (Xid 74) on GPU 5 of the second node kills rank 13;
its TP peers and the DP peers on the first node then time out in their collectives.
"""
import random
from datetime import timedelta

from common import Bundle, T, iso, dmesg_T, dmesg_boot, jitter, nccl, nccl_init, nccl_comm_done, watchdog

ID = "nemo2-srun-pernode-xid74-nvlink-2node"
JOB = "88213"
HOSTS = ["dgxh-0412", "dgxh-0413"]
IPS = ["10.52.8.12", "10.52.8.13"]
BUSID = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
BAD_NODE, BAD_LR = 1, 5
BAD_RANK = 8 + BAD_LR
SP = "/usr/local/lib/python3.10/dist-packages"


def nemo(t, lvl, src, msg):
    return f"[NeMo {lvl} {t.strftime('%Y-%m-%d %H:%M:%S')} {src}] {msg}"


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    t0 = T("2026-11-28T02:14:07")
    t_tr = T("2026-11-28T02:21:40")
    it0, last_ok = 2401, 2460
    step_s = 11.84
    t_fault = t_tr + timedelta(seconds=(last_ok - it0 + 1) * step_s + 4.1)
    t_wd = t_fault + timedelta(seconds=1800.2)

    for n, host in enumerate(HOSTS):
        f = f"logs/{host}/llama3_70b_{JOB}_{host}.out"
        L = []
        t = t0 + timedelta(seconds=3 + n)
        if n == 0:
            L += ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores",
                  "HPU available: False, using: 0 HPUs",
                  nemo(t, "W", "nemo_logging:405", "WandB is currently turned off."),
                  nemo(t, "W", "nemo_logging:405", "User-set tensorboard is currently turned off. Internally one may still be set by NeMo2."),
                  nemo(t, "I", "nemo_logging:393", "Experiments will be logged at /lustre/results/llama3_70b/2026-11-28_02-14-07"),
                  nemo(t, "I", "nemo_logging:393", "Fixing mis-match between ddp-config & mcore-optimizer config")]
        for lr in range(8):
            r = n * 8 + lr
            L.append(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/16")
        if n == 0:
            L += ["----------------------------------------------------------------------------------------------------",
                  "distributed_backend=nccl", "All distributed processes registered. Starting with 16 processes",
                  "----------------------------------------------------------------------------------------------------", ""]
        for lr in range(8):
            r = n * 8 + lr
            ts = jitter(t0, 20, 22)
            L.append(nemo(ts, "I", "nemo_logging:393", f"Rank {r} has data parallel group : [{lr}, {lr + 8}]"))
            L.append(nemo(ts, "I", "nemo_logging:393", f"Rank {r} has tensor model parallel group: "
                                                       f"[{', '.join(str(n * 8 + k) for k in range(8))}]"))
        pids = [40110 + 17 * n + lr for lr in range(8)]
        for lr in range(8):
            out, tid = nccl_init(host, pids[lr], lr, IPS[n], iface="bond0", hcas=8, plugin=False)
            L += out if lr in (0, 5) else out[-2:]
        for lr in range(8):
            L.append(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        if n == 0:
            L += [nemo(jitter(t0, 30, 31), "I", "nemo_logging:393", "Padded vocab_size: 128256, original vocab_size: 128256, dummy tokens: 0."),
                  nemo(jitter(t0, 40, 41), "I", "nemo_logging:393", " > number of parameters on (tensor, pipeline) model parallel rank (0 ,0): 8813895680"),
                  nemo(jitter(t0, 41, 42), "I", "nemo_logging:393", "Setting up optimizers"),
                  "",
                  "  | Name   | Type     | Params | Mode ",
                  "----------------------------------------------",
                  "0 | module | GPTModel | 8.8 B  | train",
                  "----------------------------------------------",
                  "8.8 B     Trainable params", "0         Non-trainable params", "8.8 B     Total params",
                  "35,255.583Total estimated model params size (MB)",
                  nemo(t_tr - timedelta(seconds=6), "W", "nemo_logging:405", f"{SP}/lightning/pytorch/trainer/connectors/"
                       "data_connector.py:425: The 'train_dataloader' does not have many workers which may be a bottleneck. "
                       "Consider increasing the value of the `num_workers` argument` to `num_workers=111` in the `DataLoader` "
                       "to improve performance.", ),
                  "    ",
                  nemo(t_tr - timedelta(seconds=5), "W", "rerun_state_machine:1263", "Implicit initialization of Rerun State Machine!"),
                  nemo(t_tr - timedelta(seconds=5), "W", "rerun_state_machine:239", "RerunStateMachine initialized in mode RerunMode.DISABLED")]
        for lr in range(8):
            L.append(nccl_comm_done(host, pids[lr], pids[lr] + 90 + lr, lr, lr, 8, BUSID[lr]))
        if n == 1:
            L.append(f"{SP}/transformer_engine/pytorch/module/base.py:631: DeprecationWarning: The `fuse_wgrad_accumulation` "
                     f"argument without main_grad is deprecated")
        if n == 0:
            gs = 128
            for it in range(it0, last_ok + 1):
                loss = 1.93 - (it - 2000) * 0.00011 + random.uniform(-0.03, 0.03)
                lr_ = 2.9999e-4 * min(1, it / 2000)
                L.append(f"Training epoch 0, iteration {it}/99999 | lr: {lr_:.4g} | global_batch_size: {gs} | "
                         f"global_step: {it} | reduced_train_loss: {loss:.4g} | train_step_timing in s: "
                         f"{step_s + random.uniform(-0.08, 0.08):.4g} | consumed_samples: {(it + 1) * gs}")
        if n == BAD_NODE:
            p = f"[rank{BAD_RANK}]: "
            tb = [p + "Traceback (most recent call last):",
                  p + '  File "/workspace/pretrain_llama3_70b.py", line 96, in <module>',
                  p + "    run.run(recipe, executor=run.LocalExecutor())",
                  p + f'  File "{SP}/nemo/collections/llm/api.py", line 150, in pretrain',
                  p + "    return train(",
                  p + f'  File "{SP}/nemo/collections/llm/api.py", line 107, in train',
                  p + "    trainer.fit(model, data)",
                  p + f'  File "{SP}/lightning/pytorch/loops/training_epoch_loop.py", line 250, in advance',
                  p + "    batch_output = self.manual_optimization.run(kwargs)",
                  p + f'  File "{SP}/nemo/lightning/megatron_parallel.py", line 292, in forward',
                  p + "    microbatch_outputs = step()",
                  p + f'  File "/opt/megatron-lm/megatron/core/pipeline_parallel/schedules.py", line 471, in forward_backward_no_pipelining',
                  p + "    backward_step(input_tensor, output_tensor, output_tensor_grad, model_type, config)",
                  p + f'  File "{SP}/torch/autograd/__init__.py", line 347, in backward',
                  p + "    _engine_run_backward(",
                  p + f'  File "{SP}/torch/autograd/graph.py", line 825, in _engine_run_backward',
                  p + "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
                  p + "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
                  p + "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                  p + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                  p + "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", p]
            pid = pids[BAD_LR]
            L.append(nccl(host, pid, pid + 95, BAD_LR, "WARN Cuda failure 'uncorrectable NVLink error detected during the execution'"))
            L.append(nccl(host, pid, pid + 95, BAD_LR, "INFO transport/p2p.cc:275 -> 1"))
            L += tb
            b.mark(f"logs/{host}/llama3_70b_{JOB}_{host}.out", "RuntimeError: CUDA error: uncorrectable NVLink error")
            b.mark(f"logs/{host}/llama3_70b_{JOB}_{host}.out", "NCCL WARN Cuda failure 'uncorrectable NVLink error")
        for lr in range(8):
            r = n * 8 + lr
            if r == BAD_RANK:
                continue
            L += watchdog(r, jitter(t_wd, 0, 1.2), 148902 if n == 1 else 211355,
                          "ALLREDUCE" if n == 1 else "_ALLGATHER_BASE", 58720256 if n == 1 else 1101789184, 1800000)
        b.add(f"logs/{host}/llama3_70b_{JOB}_{host}.out", L)

    t_end = t_wd + timedelta(seconds=8)
    b.add(f"logs/{HOSTS[0]}/slurm-{JOB}.out", [
        f"Submitted by nemo_run: llama3_70b pretrain ({JOB}), nodes=dgxh-[0412-0413]",
        "+ srun --output /lustre/results/llama3_70b/logs/%x_%j_%N.out --container-image=nvcr.io/nvidia/nemo:24.12 "
        "--container-mounts=/lustre:/lustre --mpi=pmix python /workspace/pretrain_llama3_70b.py",
        f"srun: error: {HOSTS[1]}: task {BAD_RANK}: Exited with exit code 1",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        f"slurmstepd: error: *** STEP {JOB}.0 ON {HOSTS[0]} CANCELLED AT {t_end.strftime('%Y-%m-%dT%H:%M:%S')} ***",
        f"srun: error: {HOSTS[0]}: tasks 0-7: Killed",
        f"srun: error: {HOSTS[1]}: tasks 8-12,14-15: Killed"])

    for n, host in enumerate(HOSTS):
        d = dmesg_boot(host, T("2026-11-19T07:55:31"))
        if n == BAD_NODE:
            tf = t_fault
            d += [f"{dmesg_T(tf)} NVRM: Xid (PCI:0000:ab:00): 74, pid={pids[BAD_LR]}, name=python3, "
                  f"NVLink: fatal error detected on link 11(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
                  f"{dmesg_T(tf + timedelta(seconds=1))} NVRM: Xid (PCI:0000:ab:00): 45, pid={pids[BAD_LR]}, name=python3, Ch 00000008",
                  f"{dmesg_T(t_end)} NVRM: Xid (PCI:0000:ba:00): 45, pid={pids[BAD_LR] + 1}, name=python3, Ch 00000008",
                  f"{dmesg_T(t_end)} NVRM: Xid (PCI:0000:9a:00): 45, pid={pids[BAD_LR] - 1}, name=python3, Ch 00000008"]
            b.mark(f"probes/{host}/dmesg.txt", "): 74, pid=")
        b.add(f"probes/{host}/dmesg.txt", d)

    job = f"""
job_id: "{JOB}"
name: llama3-70b-proxy-pretrain
framework: nemo
status: failed
started_at: {iso(t0)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 1, dp: 2, cp: 1, ep: 1}}
scheduler: slurm
nodes:
  - {{host: {HOSTS[0]}, ip: {IPS[0]}, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: {HOSTS[1]}, ip: {IPS[1]}, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
code:
  - {{commit: 5c0e7aa, at: 2026-11-02T11:40:00Z, message: "recipe: llama3 70b proxy (16 layers)"}}
  - {{commit: 91b2de4, at: 2026-11-20T15:03:00Z, message: "data: add code mix 0.15"}}
checkpoints:
  - {{step: 2200, at: 2026-11-27T23:31:20Z, path: /lustre/results/llama3_70b/checkpoints/step=2199, valid: true}}
  - {{step: 2400, at: 2026-11-28T00:11:02Z, path: /lustre/results/llama3_70b/checkpoints/step=2399-last, valid: true}}
spares: 0
"""
    truth = {
        "fault": "nvlink_error",
        "category": "hardware",
        "root_cause": "uncorrectable NVLink error (Xid 74, link 11) on GPU 5 (PCI 0000:ab:00) of dgxh-0413 killed rank 13 "
                      "in the backward pass; its tensor-parallel and data-parallel peers then hit the 30 min NCCL watchdog",
        "faulty_nodes": [HOSTS[1]],
        "stage": "training",
        "iteration": last_ok + 1,
        "actions": [{"kind": "evict", "nodes": [HOSTS[1]]}, {"kind": "restart", "from_step": 2400}],
    }
    return b.write(job, truth)
