"""Lightning Fabric (litgpt pretrain) under Slurm, per-node srun output files; the whole job is preempted
(CANCELLED ... DUE TO PREEMPTION), ranks catch SIGTERM and start an emergency save that SIGKILL cuts short."""
import datetime as dt
from common import Bundle, yaml_job, iso

ID = "slurm-fabric-litgpt-preempted-4node"
NODES = [("gpu-a017", "10.20.4.17"), ("gpu-a018", "10.20.4.18"), ("gpu-a019", "10.20.4.19"), ("gpu-a020", "10.20.4.20")]
GPN = 4
RESUME = 1250
FAIL_STEP = 1329
ACC = 4
CK = "/lustre/ckpt/litgpt-7b-r4"


def build(out):
    b = Bundle(out, seed=884)
    r = b.rng
    t0 = dt.datetime(2026, 5, 19, 2, 49, 30)
    files = {n: f"logs/{h}/litgpt-884213-{h}.out" for n, (h, _) in enumerate(NODES)}
    W = lambda n, x, mark=False: b.add(files[n], x, mark)
    for n in range(4):
        for k in range(GPN):
            W(n, f"Initializing distributed: GLOBAL_RANK: {GPN * n + k}, MEMBER: {GPN * n + k + 1}/16")
    W(0, "----------------------------------------------------------------------------------------------------")
    W(0, "distributed_backend=nccl")
    W(0, "All distributed processes registered. Starting with 16 processes")
    W(0, "----------------------------------------------------------------------------------------------------")
    W(0, "")
    W(0, "[rank: 0] Seed set to 42")
    W(0, "{'data': {'class_path': 'litgpt.data.TextFiles', 'init_args': {'train_data_path': '/lustre/data/corpus-r4/train', 'val_data_path': '/lustre/data/corpus-r4/val', 'num_workers': 6}},")
    W(0, " 'devices': 4, 'num_nodes': 4, 'model_name': 'Llama-2-7b-hf', 'out_dir': '" + CK + "', 'precision': 'bf16-true', 'resume': True,")
    W(0, " 'train': {'global_batch_size': 256, 'micro_batch_size': 4, 'save_interval': 250, 'log_interval': 8, 'max_tokens': 400000000000, 'lr_warmup_steps': 2000},")
    W(0, " 'eval': {'interval': 1000, 'max_iters': 100}, 'optimizer': 'AdamW', 'tokenizer_dir': 'checkpoints/meta-llama/Llama-2-7b-hf'}")
    W(0, "Time to instantiate model: 0.03 seconds.")
    W(0, "Total parameters: 6,738,415,616")
    W(0, f"Resuming training from {CK}/step-{RESUME:08d}/lit_model.pth")
    W(0, "Measured TFLOPs: 2102.31")
    step_s = 1.66 * ACC
    it0 = RESUME * ACC
    t_train = t0 + dt.timedelta(seconds=95)
    for it in range(it0 + 8, FAIL_STEP * ACC, 8):
        step = it // ACC
        t = t_train + dt.timedelta(seconds=(it - it0) * 1.66)
        loss = 2.48 - 0.0002 * (step - RESUME) + r.uniform(-0.04, 0.04)
        rem = dt.timedelta(seconds=int((95000 - step) * step_s))
        W(0, f"Epoch 1 | iter {it} step {step} | loss train: {loss:.3f}, val: n/a | iter time: {1660 + r.uniform(-25, 25):.2f} ms (step) remaining time: {rem.days} days, {str(dt.timedelta(seconds=rem.seconds))}")
    tp = t_train + dt.timedelta(seconds=(FAIL_STEP * ACC - 2 - it0) * 1.66)
    stamp = tp.strftime("%Y-%m-%dT%H:%M:%S")
    W(0, f"slurmstepd: error: *** JOB 884213 ON gpu-a017 CANCELLED AT {stamp} DUE TO PREEMPTION ***", mark=True)
    W(0, f"slurmstepd: error: *** STEP 884213.0 ON gpu-a017 CANCELLED AT {stamp} DUE TO PREEMPTION ***")
    W(0, "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    for n in range(4):
        for k in range(GPN):
            rk = GPN * n + k
            W(n, f"[rank: {rk}] SIGTERM received (signal 15) during iter {FAIL_STEP * ACC - 2}; will write an emergency checkpoint and exit")
    W(0, f"Saving checkpoint to '{CK}/step-{FAIL_STEP:08d}-preempt/lit_model.pth'")
    for n in (1, 2, 3):
        rk = GPN * n + 1
        W(n, f"[rank{rk}]:[E{tp:%m%d %H:%M:%S}.{r.randint(100000, 999999)} {61000 + 97 * n} ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank {rk}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5")
        W(n, f"[rank{rk}]:ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
        W(n, f"[rank{rk}]:Last error:")
        W(n, f"[rank{rk}]:socketProgress: Connection closed by remote peer gpu-a017<{45000 + 13 * n}>")
    W(0, "srun: error: gpu-a017: tasks 0-3: Killed")
    W(0, "srun: error: gpu-a019: tasks 8-11: Killed")
    W(0, "srun: error: gpu-a018: tasks 4-7: Killed")
    W(0, "srun: error: gpu-a020: tasks 12-15: Killed")
    p = "probes/gpu-a017/sacct.txt"
    start = iso(t0).rstrip("Z")
    end = stamp
    end2 = (tp + dt.timedelta(seconds=33)).strftime("%Y-%m-%dT%H:%M:%S")
    b.add(p, "JobID           JobName  Partition      State ExitCode               Start                 End        NodeList ")
    b.add(p, "------------ ---------- ---------- ---------- -------- ------------------- ------------------- --------------- ")
    b.add(p, f"884213       litgpt-7b+ gpu-preem+  PREEMPTED      0:0 {start} {end} gpu-a[017-020] ", mark=True)
    b.add(p, f"884213.batch      batch             CANCELLED     0:15 {start} {end2}        gpu-a017 ")
    b.add(p, f"884213.extern    extern             COMPLETED      0:0 {start} {end2} gpu-a[017-020] ")
    b.add(p, f"884213.0         python             CANCELLED      0:9 {(t0 + dt.timedelta(seconds=2)).strftime('%Y-%m-%dT%H:%M:%S')} {end2} gpu-a[017-020] ")
    for n, (h, ip) in enumerate(NODES):
        q = f"probes/{h}/dmesg.txt"
        b.add(q, f"[{(t0 - dt.timedelta(days=2)):%a %b %d %H:%M:%S %Y}] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024")
        b.add(q, f"[{(t0 - dt.timedelta(days=2)):%a %b %d %H:%M:%S %Y}] mlx5_core 0000:4b:00.0 ib0: Link up")
    job = {
        "job_id": "884213", "name": "litgpt-7b-r4", "framework": "other", "status": "failed",
        "started_at": iso(t0), "ended_at": iso(tp + dt.timedelta(seconds=33)), "exit_code": 0, "gpus_per_node": GPN,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "scheduler": "slurm (partition gpu-preemptible, PreemptMode=CANCEL, GraceTime=30)", "trainer": "litgpt pretrain on Lightning Fabric (FSDP)",
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(GPN * n, GPN * n + GPN))} for n, (h, ip) in enumerate(NODES)],
        "code": [{"commit": "aa3c9e1", "at": "2026-05-06T08:30:00Z", "message": "r4: corpus-r4 text files, lr warmup 2000"},
                 {"commit": "5f02b7d", "at": "2026-05-12T14:10:00Z", "message": "add SIGTERM handler: emergency checkpoint on preemption"}],
        "checkpoints": [{"step": 1000, "at": "2026-05-18T22:41:00Z", "path": f"{CK}/step-00001000/lit_model.pth", "valid": True},
                        {"step": RESUME, "at": "2026-05-19T00:20:00Z", "path": f"{CK}/step-{RESUME:08d}/lit_model.pth", "valid": True},
                        {"step": FAIL_STEP, "at": iso(tp + dt.timedelta(seconds=4)), "path": f"{CK}/step-{FAIL_STEP:08d}-preempt/lit_model.pth", "valid": False}],
        "spares": 0, "history": ["883990"],
    }
    truth = {
        "fault": "scheduler_preemption", "category": "infrastructure",
        "root_cause": f"Slurm preempted the whole job 884213 (PreemptMode=CANCEL on partition gpu-preemptible): slurmstepd cancelled the step DUE TO PREEMPTION, every rank received SIGTERM and began an emergency checkpoint that was SIGKILLed after the 30 s grace time, so step-{FAIL_STEP:08d}-preempt is incomplete; no node or code fault",
        "faulty_nodes": [], "stage": "training", "iteration": FAIL_STEP,
        "actions": [{"kind": "restart", "from_step": RESUME}],
    }
    return b.write(yaml_job(job), truth)
