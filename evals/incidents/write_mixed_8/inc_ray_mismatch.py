"""Ray Train TorchTrainer ((RayTrainWorker pid=..., ip=...) prefixes), DDP MoE model; rank 11 skips the aux-loss
all_reduce in a data-dependent branch added by the newest commit, so its next collective (a DDP gradient bucket)
pairs with the peers' 1-element all_reduce: everything hangs, py-spy shows rank 11 at a different line, and 30 min
later the NCCL watchdog fires on every rank."""
import datetime as dt
from common import Bundle, yaml_job, iso, glog_ts, pyspy_dump

ID = "raytrain-collective-mismatch-pyspy-2node"
NODES = [("ray-gpu-0", "10.0.5.11"), ("ray-gpu-1", "10.0.5.12")]
BAD = 11
LAST_DONE = 4126
SEQ = 82517


def build(out):
    b = Bundle(out, seed=11)
    r = b.rng
    t0 = dt.datetime(2026, 12, 3, 9, 0, 1)
    pids = {rk: (2420 + 31 * rk if rk < 8 else 3311 + 31 * (rk - 8)) for rk in range(16)}
    files = {0: "logs/ray-gpu-0/ray-train-driver.log", 1: "logs/ray-gpu-1/ray-train-workers.log"}

    def pre(rk):
        return f"(RayTrainWorker pid={pids[rk]})" if rk < 8 else f"(RayTrainWorker pid={pids[rk]}, ip={NODES[1][1]})"

    def W(rk, text, mark=False):
        return b.add(files[0 if rk < 8 else 1], f"{pre(rk)} {text}", mark)

    D = lambda text, mark=False: b.add(files[0], text, mark)
    T = lambda s: (t0 + dt.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S,") + f"{r.randint(0, 999):03d}"
    D(f"{T(0)}\tINFO worker.py:1636 -- Connecting to existing Ray cluster at address: 10.0.5.11:6379...")
    D(f"{T(0)}\tINFO worker.py:1812 -- Connected to Ray cluster. View the dashboard at http://10.0.5.11:8265 ")
    D("")
    D("View detailed results here: /mnt/shared/ray_results/moe-1b-ddp")
    D("To visualize your results with TensorBoard, run: `tensorboard --logdir /tmp/ray/session_2026-12-03_08-41-12_774120_1873/artifacts/2026-12-03_09-00-03/moe-1b-ddp/driver_artifacts`")
    D("")
    D("Training started with configuration:")
    D("╭──────────────────────────────────────────────────╮")
    D("│ Training config                                  │")
    D("├──────────────────────────────────────────────────┤")
    D("│ train_loop_config/aux_loss_coef            0.01  │")
    D("│ train_loop_config/batch_size                  8  │")
    D("│ train_loop_config/lr                     0.0003  │")
    D("│ train_loop_config/num_experts                16  │")
    D("╰──────────────────────────────────────────────────╯")
    D("(TorchTrainer pid=2288) Started distributed worker processes: ")
    for rk in range(16):
        ip = NODES[0 if rk < 8 else 1][1]
        D(f"(TorchTrainer pid=2288) - (node_id={'5f1c0a' if rk < 8 else '9b7e22'}d8e4a31f09c6b2e17d4f0a8c35e91b6d7a2f0c4e18b93d5a7e6c1f, ip={ip}, pid={pids[rk]}) world_rank={rk}, local_rank={rk % 8}, node_rank={rk // 8}")
    for rk in range(16):
        W(rk, f"Setting up process group for: env:// [rank={rk}, world_size=16]")
    for rk in range(16):
        W(rk, "/home/ray/anaconda3/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
        W(rk, "  return self.fget.__get__(instance, owner)()")
    W(0, f"{T(40)} INFO train_loop_utils.py:441 -- Moving model to device: cuda:0")
    W(0, f"{T(44)} INFO train_loop_utils.py:501 -- Wrapping provided model in DistributedDataParallel.")
    W(0, f"resumed from checkpoint /mnt/shared/ray_results/moe-1b-ddp/TorchTrainer_3e1f0_00000/checkpoint_000008 (step 4000)")
    s = 60.0
    for st in range(4010, LAST_DONE + 1, 10):
        s += 19.2 + r.uniform(-0.4, 0.4)
        W(0, f"step {st} | loss {2.91 - (st - 4000) * 0.0004 + r.uniform(-0.03, 0.03):.4f} | aux {0.0141 + r.uniform(-0.002, 0.002):.4f} | routed_frac_min {0.021 + r.uniform(0, 0.01):.3f} | 1.92 s/it")
    t_hang = t0 + dt.timedelta(seconds=s + 2)
    t_wd = t_hang + dt.timedelta(seconds=1800.1)
    for rk in range(16):
        tt = t_wd + dt.timedelta(milliseconds=5 * rk)
        numel = 52428800 if rk == BAD else 1
        tid = pids[rk] + 140
        W(rk, f"[rank{rk}]:[E{glog_ts(tt)} {tid} ProcessGroupNCCL.cpp:632] [Rank {rk}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={SEQ}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=1800000) ran for 1800093 milliseconds before timing out.", mark=(rk == BAD))
        W(rk, f"[rank{rk}]:[E{glog_ts(tt)} {tid} ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank {rk}]  failure detected by watchdog at work sequence id: {SEQ} PG status: last enqueued work: {SEQ + (3 if rk == BAD else 0)}, last completed work: {SEQ - 1}")
        W(rk, f"[rank{rk}]:[E{glog_ts(tt)} {tid} ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.")
        if rk in (0, BAD):
            W(rk, "terminate called after throwing an instance of 'c10::DistBackendError'")
            W(rk, f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank {rk}] Process group watchdog thread terminated with exception: [Rank {rk}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={SEQ}, OpType=ALLREDUCE, NumelIn={52428800 if rk == BAD else 1}, NumelOut={52428800 if rk == BAD else 1}, Timeout(ms)=1800000) ran for 1800093 milliseconds before timing out.")
    b.add(files[1], f"(raylet, ip={NODES[1][1]}) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff3c9a1e0b7d55f21e6a8c40d201000000 Worker ID: 7e03c1b5a9d4f26e8b10c3d7a5e9f4b2c6d80a1e3f5b7c9d2e4a6b8c Node ID: 9b7e22d8e4a31f09c6b2e17d4f0a8c35e91b6d7a2f0c4e18b93d5a7e6c1f Worker IP address: 10.0.5.12 Worker port: 10021 Worker PID: {pids[BAD]} Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors. [repeated 7x across cluster]")
    D(f"{T(s + 1850)}\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_3e1f0_00000")
    D("Traceback (most recent call last):")
    D('  File "/home/ray/anaconda3/lib/python3.10/site-packages/ray/air/execution/_internal/event_manager.py", line 110, in resolve_future')
    D("    result = ray.get(future)")
    D("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.")
    D("\tclass_name: RayTrainWorker")
    D(f"\tpid: {pids[BAD]}")
    D("\tThe actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file.")
    D("")
    D("ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause. After fixing the issue (assuming that the error is not caused by your own application logic, but rather an error such as OOM), you can restart the run from scratch or continue this run.")
    # py-spy dumps, taken ~12 min into the hang
    common_tail = ["train_fn (ray/train/_internal/utils.py:169)", "run (ray/train/_internal/utils.py:57)",
                   "_bootstrap_inner (threading.py:1016)", "_bootstrap (threading.py:973)"]
    for rk in range(16):
        h = NODES[0 if rk < 8 else 1][0]
        frames = (["train_loop_per_worker (train_moe.py:171)"] if rk == BAD else ["train_loop_per_worker (train_moe.py:158)"]) + common_tail
        lines = pyspy_dump(pids[rk], "ray::_RayTrainWorker__execute.get_next", "3.10.14", "/home/ray/anaconda3/bin/python3.10",
                           [(pids[rk], "idle", "MainThread", ["main_loop (ray/_private/worker.py:879)", "<module> (ray/_private/workers/default_worker.py:289)"]),
                            (pids[rk] + 97, "active", "Thread-2", frames),
                            (pids[rk] + 98, "idle", "Thread-3 (report_loop)", ["wait (threading.py:324)", "get (queue.py:180)", "_report_loop (ray/train/_internal/session.py:418)", "run (threading.py:953)", "_bootstrap_inner (threading.py:1016)", "_bootstrap (threading.py:973)"])])
        path = f"stacks/{h}/rank-{rk}.txt"
        for j, x in enumerate(lines):
            b.add(path, x, mark=(rk == BAD and "train_moe.py:171" in x))
    t_end = t_wd + dt.timedelta(seconds=25)
    job = {
        "job_id": "raysubmit_Qx7mB2kT9pL4", "name": "moe-1b-ddp", "framework": "other", "status": "failed",
        "started_at": iso(t0), "ended_at": iso(t_end), "exit_code": 1, "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "scheduler": "ray job submit (Ray 2.40, TorchTrainer num_workers=16, use_gpu=True)",
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(8 * n, 8 * n + 8))} for n, (h, ip) in enumerate(NODES)],
        "code": [{"commit": "b90d7c4", "at": "2026-11-24T10:00:00Z", "message": "moe-1b: 16 experts top-2, aux loss 0.01"},
                 {"commit": "61ae0f3", "at": "2026-11-28T15:20:00Z", "message": "ckpt every 500 steps to /mnt/shared"},
                 {"commit": "c2f58d9", "at": "2026-12-03T08:35:00Z", "message": "moe: skip aux-loss all_reduce when a micro-batch routes no tokens (saves a sync)"}],
        "checkpoints": [{"step": 3500, "at": "2026-12-02T19:11:00Z", "path": "/mnt/shared/ray_results/moe-1b-ddp/TorchTrainer_3e1f0_00000/checkpoint_000007", "valid": True},
                        {"step": 4000, "at": "2026-12-02T21:52:00Z", "path": "/mnt/shared/ray_results/moe-1b-ddp/TorchTrainer_3e1f0_00000/checkpoint_000008", "valid": True}],
        "spares": 0, "history": ["raysubmit_Lm3vW8cN1dQ6"], "last_successful_run_ended_at": "2026-12-02T22:04:00Z",
        "stacks_taken_at": iso(t_hang + dt.timedelta(seconds=720)),
    }
    truth = {
        "fault": "collective_mismatch_deadlock", "category": "user_code",
        "root_cause": f"commit c2f58d9 made the aux-loss all_reduce conditional on the micro-batch routing tokens; at step {LAST_DONE + 1} rank {BAD} skipped it, so its next collective (a 52,428,800-element DDP gradient bucket, SeqNum {SEQ}) was matched against the other 15 ranks' 1-element all_reduce: every rank hung (py-spy: rank {BAD} at train_moe.py:171, the rest at train_moe.py:158) until the 30-minute NCCL watchdog killed the job",
        "faulty_nodes": [], "faulty_ranks": [BAD], "stage": "training", "iteration": LAST_DONE + 1,
        "actions": [{"kind": "rollback", "to_commit": "61ae0f3"}],
    }
    return b.write(yaml_job(job), truth)
