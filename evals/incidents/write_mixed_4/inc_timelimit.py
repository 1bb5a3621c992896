"""Slurm wall-clock time limit reached while training was healthy; PyTorch Lightning, node journals (journalctl -o short-iso)."""
import random
from common import Bundle, Ind, hhmmss

IID = "journald-lightning-slurm-timelimit"
HOSTS = ["gpu-e05", "gpu-e06", "gpu-e07"]
IPS = ["10.60.2.5", "10.60.2.6", "10.60.2.7"]
JOB = 918273
T0 = 18 * 3600 + 0 * 60 + 1           # 2026-11-23T18:00:01, 12 h limit
TL = T0 + 12 * 3600 + 11              # when slurmctld fired
FIRST, STEP_S = 8001, 6.79

def ts(t):
    d = 23 + int(t // 86400)
    return f"2026-11-{d}T{hhmmss(t)}+00:00"

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(12)
    last = FIRST + int((TL - T0 - 240) / STEP_S) - 1
    for n, h in enumerate(HOSTS):
        tp = 88120 + 17 * n
        L = [f"{ts(T0-2)} {h} slurmd[1432]: slurmd: launch task StepId={JOB}.0 request from UID:41207 GID:41207 HOST:10.60.0.2 PORT:51744",
             f"{ts(T0-2)} {h} slurmd[1432]: slurmd: task/affinity: lllp_distribution: JobId={JOB} manual binding: none,one_thread",
             f"{ts(T0-1)} {h} slurmstepd[{tp-20}]: task/cgroup: _memcg_initialize: job: alloc=1500000MB mem.limit=1500000MB memsw.limit=unlimited",
             f"{ts(T0)} {h} systemd[1]: Started Session c4{n} of User svc-train."]
        for g in range(4):
            L.append(f"{ts(T0+21)} {h} train[{tp+g}]: [rank: {4*n+g}] Seed set to 20261123")
            L.append(f"{ts(T0+22)} {h} train[{tp+g}]: Initializing distributed: GLOBAL_RANK: {4*n+g}, MEMBER: {4*n+g+1}/12")
        if n == 0:
            L += [f"{ts(T0+30)} {h} train[{tp}]: GPU available: True (cuda), used: True",
                  f"{ts(T0+30)} {h} train[{tp}]: TPU available: False, using: 0 TPU cores",
                  f"{ts(T0+31)} {h} train[{tp}]: You are using a CUDA device ('NVIDIA L40S') that has Tensor Cores. To properly utilize them, you should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision for performance. For more details, read https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html#torch.set_float32_matmul_precision",
                  f"{ts(T0+44)} {h} train[{tp}]: Restoring states from the checkpoint path at /proj/vit-g/ckpt/step=8000.ckpt",
                  f"{ts(T0+71)} {h} train[{tp}]: Restored all states from the checkpoint at /proj/vit-g/ckpt/step=8000.ckpt"]
        L.append(f"{ts(T0+75)} {h} train[{tp}]: /opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=15` in the `DataLoader` to improve performance.")
        t = T0 + 240
        s = FIRST
        while s <= last:
            if n == 0 and s % 250 == 0:
                L.append(f"{ts(t)} {h} train[{tp}]: [{rnd.randint(1,9)}.{rnd.randint(0,9)}K blob data]")
            if n == 0 and s % 1000 == 0:
                L.append(f"{ts(t+1)} {h} train[{tp}]: Epoch 2, global step {s}: 'val/top1' reached {0.781+0.0004*(s-8000)/1000:.5f} (best {0.781+0.0004*(s-8000)/1000:.5f}), saving model to '/proj/vit-g/ckpt/step={s}.ckpt' as top 3")
            if n == 1 and s % 2000 == 0:
                L.append(f"{ts(t)} {h} kernel: mlx5_core 0000:41:00.0: mlx5_fw_tracer_handle_traces:742:(pid 2210): FWTracer: Events were lost")
            t += STEP_S
            s += 1
        L.append(f"{ts(TL)} {h} slurmstepd[{tp-20}]: error: *** STEP {JOB}.0 ON {h} CANCELLED AT {ts(TL)[:19]} DUE TO TIME LIMIT ***")
        if n == 0:
            L.insert(len(L) - 1, Ind(f"{ts(TL)} {h} slurmstepd[{tp-41}]: error: *** JOB {JOB} ON {h} CANCELLED AT {ts(TL)[:19]} DUE TO TIME LIMIT ***"))
        for g in range(4):
            L.append(f"{ts(TL)} {h} train[{tp+g}]: [rank: {g}] Received SIGTERM: 15")
        L += [f"{ts(TL+1)} {h} train[{tp}]: Traceback (most recent call last):" if n == 0 else f"{ts(TL+1)} {h} kernel: infiniband mlx5_0: mlx5_ib_destroy_qp:2954:(pid {tp}): destroy QP 0x1a3 while in ERR state",
              f"{ts(TL+31)} {h} slurmstepd[{tp-20}]: error: Sent SIGKILL signal to StepId={JOB}.0",
              f"{ts(TL+32)} {h} slurmstepd[{tp-20}]: done with step",
              f"{ts(TL+32)} {h} systemd[1]: session-c4{n}.scope: Deactivated successfully."]
        b.write(f"logs/{h}/journal.log", L)
    S = ["JobID           JobName  Partition      State  Timelimit    Elapsed ExitCode        NodeList ",
         "------------ ---------- ---------- ---------- ---------- ---------- -------- --------------- ",
         Ind(f"{JOB}       vitg-pt       l40s    TIMEOUT   12:00:00   12:00:42      0:0 gpu-e[05-07]   "),
         f"{JOB}.batch       batch             CANCELLED              12:00:42     0:15        gpu-e05 ",
         f"{JOB}.extern     extern             COMPLETED              12:00:42      0:0 gpu-e[05-07]   ",
         f"{JOB}.0         python             CANCELLED              12:00:42     0:9  gpu-e[05-07]   "]
    b.write(f"probes/{HOSTS[0]}/sacct.txt", S)
    for n, h in enumerate(HOSTS):
        b.write(f"probes/{h}/nvidia-smi.json", ['{"probe": "nvidia-smi", "status": "ok", "detail": "4x NVIDIA L40S, no ECC errors, no retired pages, clocks nominal", "metrics": {"ecc_dbe": 0, "max_temp_c": %d}}' % (61 + n)])
    nodes = "\n".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(r) for r in range(4*i, 4*i+4))}]}}" for i, h in enumerate(HOSTS))
    last_ck = (last // 1000) * 1000
    b.job(f"""
job_id: "{JOB}"
name: vit-g-pretrain
framework: other
launcher: lightning
scheduler: slurm
time_limit: "12:00:00"
status: failed
started_at: {ts(T0).replace('+00:00', 'Z')}
ended_at: {ts(TL+32).replace('+00:00', 'Z')}
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 12, cp: 1, ep: 1}}
nodes:
{nodes}
code:
  - {{commit: e2a6c90, at: 2026-11-02T09:00:00Z, message: "vit-g: layer-scale init 1e-5"}}
checkpoints:
  - {{step: 8000, at: 2026-11-23T17:41:00Z, path: /proj/vit-g/ckpt/step=8000.ckpt, valid: true}}
""" + "".join(f"  - {{step: {s}, at: {ts(T0 + 240 + (s - FIRST + 1) * STEP_S).replace('+00:00', 'Z')}, path: /proj/vit-g/ckpt/step={s}.ckpt, valid: true}}\n" for s in range(9000, last_ck + 1, 1000)))
    b.truth(fault="job_time_limit", category="infrastructure",
            root_cause=f"Slurm ended job {JOB} when it reached its 12:00:00 wall-clock limit (state TIMEOUT); training was healthy up to the SIGTERM, nothing on the nodes failed",
            faulty_nodes=[], stage="training", iteration=last + 1,
            actions=[{"kind": "restart", "from_step": last_ck}])
    return b
