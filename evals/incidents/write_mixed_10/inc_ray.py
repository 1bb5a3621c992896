"""process_killed_unknown: Ray Train (TorchTrainer, 4 nodes x 8 GPUs) fine-tune.  The RayTrainWorker of
world rank 17 (pid 48213 on rt-gpu-02) dies mid-step with a connection EOF: Ray's raylet reports the
SYSTEM_ERROR with its three "potential root causes"; the run fails with ActorDiedError.  Nothing says by
what: no Ray memory-monitor kill, no OOM killer or Xid in rt-gpu-02's dmesg, host memory was fine.  The
worker's own .out file in the Ray session logs stops mid-line."""
import random
from datetime import timedelta

from common import Bundle, T, dmesg_boot, dmesg_t

ID = "raytrain-worker-sigkill-no-oom-trace-4node"
HOSTS = ["rt-gpu-00", "rt-gpu-01", "rt-gpu-02", "rt-gpu-03"]
IPS = ["10.0.12.10", "10.0.12.11", "10.0.12.12", "10.0.12.13"]
PY = "/home/ray/anaconda3/lib/python3.11/site-packages"
BAD_RANK = 17


def rl(d):
    return "%s,%03d" % (d.strftime("%Y-%m-%d %H:%M:%S"), d.microsecond // 1000)


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(99)
    start = T("2026-11-28T14:00:01") + timedelta(milliseconds=233)
    steps_per_report = 50
    fail_step = 1851
    step_s = 2.37
    t0 = start + timedelta(seconds=71)
    t_fail = t0 + timedelta(seconds=(fail_step - 1) * step_s + 1.1)
    lg = b.log("logs/%s/driver.log" % HOSTS[0])
    pids = {r: 48150 + 21 * (r // 8) + (r % 8) for r in range(32)}
    pids[BAD_RANK] = 48213

    def W(r, msg):
        return lg.add("(RayTrainWorker pid=%d, ip=%s) %s" % (pids[r], IPS[r // 8], msg))

    lg.add("%s\tINFO worker.py:1654 -- Connecting to existing Ray cluster at address: 10.0.12.10:6379..." % rl(start))
    lg.add("%s\tINFO worker.py:1832 -- Connected to Ray cluster. View the dashboard at \x1b[1m\x1b[32m10.0.12.10:8265 \x1b[39m\x1b[22m" % rl(start + timedelta(milliseconds=240)))
    lg.add("%s\tINFO packaging.py:575 -- Creating a file package for local module '/home/ray/work/ft'." % rl(start + timedelta(milliseconds=300)))
    lg.add("%s\tINFO packaging.py:367 -- Pushing file package 'gcs://_ray_pkg_3b1e5f0a9c7d2e41.zip' (0.41MiB) to Ray cluster..." % rl(start + timedelta(milliseconds=320)))
    lg.add("%s\tINFO packaging.py:380 -- Successfully pushed file package 'gcs://_ray_pkg_3b1e5f0a9c7d2e41.zip'." % rl(start + timedelta(milliseconds=610)))
    lg.add("")
    lg.add("View detailed results here: /mnt/cluster_storage/ray_results/mistral-7b-ft")
    lg.add("To visualize your results with TensorBoard, run: `tensorboard --logdir /tmp/ray/session_2026-11-28_13-41-09_551200_2211/artifacts/2026-11-28_14-00-02/mistral-7b-ft/driver_artifacts`")
    lg.add("")
    lg.add("Training started with configuration:")
    lg.add("\u256d" + "\u2500" * 46 + "\u256e")
    lg.add("\u2502 Training config                              \u2502")
    lg.add("\u251c" + "\u2500" * 46 + "\u2524")
    for k_, v_ in (("train_loop_config/epochs", "1"), ("train_loop_config/lr", "2e-05"), ("train_loop_config/micro_batch", "4")):
        lg.add("\u2502 %-36s %7s \u2502" % (k_, v_))
    lg.add("\u2570" + "\u2500" * 46 + "\u256f")
    lg.add("(TrainTrainable pid=47911) Trainable.setup took 12.406 seconds. If your trainable is slow to initialize, consider setting reuse_actors=True to reduce actor creation overheads.")
    lg.add("(TorchTrainer pid=47911) Started distributed worker processes: ")
    for r in range(32):
        lg.add("(TorchTrainer pid=47911) - (node_id=%s, ip=%s, pid=%d) world_rank=%d, local_rank=%d, node_rank=%d" % (
            ["8e03dfec52242f9f6a067e1defb6cae0b12ce29c9460c28f0a451a48", "38300cefdc3b42caebdba478cc1da1adbba154304cecb24fd8ba1a7e",
             "ed9580448251cc916430246358f4b61106db8cf2a06ff38a04a51eb1", "df10b267e430270ad308394f0cef024ebb38ef648906813ce1b0c23c"][r // 8],
            IPS[r // 8], pids[r], r, r % 8, r // 8))
    W(0, "Setting up process group for: env:// [rank=0, world_size=32]")
    lg.add("(RayTrainWorker pid=%d, ip=%s) Setting up process group for: env:// [rank=1, world_size=32] [repeated 31x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)" % (pids[1], IPS[0]))
    W(0, "Moving model to device: cuda:0")
    W(0, "Wrapping provided model in FSDP.")
    W(8, "%s/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default. This behavior will be depracted in transformers v4.45, and will be then set to `False` by default. For more details check this issue: https://github.com/huggingface/transformers/issues/31884" % PY)
    W(8, "  warnings.warn(")
    lg.add("(RayTrainWorker pid=%d, ip=%s)   warnings.warn( [repeated 31x across cluster]" % (pids[9], IPS[1]))
    loss = 1.412
    for s in range(steps_per_report, fail_step, steps_per_report):
        loss += rnd.uniform(-0.02, 0.013)
        W(0, "step %d/5000 loss=%.4f lr=%.3e step_time=%.2fs gpu_mem=%.1fGiB host_rss=%.1fGiB" % (
            s, loss, 2e-5, step_s + rnd.uniform(-0.04, 0.05), 61.0 + rnd.uniform(0, 0.4), 38.2 + rnd.uniform(0, 0.6)))
        if s % 500 == 0:
            dc = t0 + timedelta(seconds=s * step_s + 40)
            W(0, "Checkpoint successfully created at: Checkpoint(filesystem=local, path=/mnt/cluster_storage/ray_results/mistral-7b-ft/TorchTrainer_9c2e1_00000_0_2026-11-28_14-00-02/checkpoint_%06d)" % (s // 500 - 1))
            lg.add("")
            lg.add("Training finished iteration %d at %s. Total running time: %s" % (
                s // 500, dc.strftime("%Y-%m-%d %H:%M:%S"), "%dhr %dmin %ds" % divmod_h((dc - start).seconds)))
            lg.add("\u256d" + "\u2500" * 52 + "\u256e")
            lg.add("\u2502 Training result                                    \u2502")
            lg.add("\u251c" + "\u2500" * 52 + "\u2524")
            lg.add("\u2502 checkpoint_dir_name              checkpoint_%06d \u2502" % (s // 500 - 1))
            lg.add("\u2502 time_this_iter_s                       %10.5f \u2502" % (500 * step_s + 38.1))
            lg.add("\u2502 time_total_s                          %11.4f \u2502" % ((dc - start).total_seconds()))
            lg.add("\u2502 training_iteration                            %4d \u2502" % (s // 500))
            lg.add("\u2502 loss                                      %.5f \u2502" % loss)
            lg.add("\u2502 step                                          %4d \u2502" % s)
            lg.add("\u2570" + "\u2500" * 52 + "\u256f")
    # the death
    tf = t_fail
    rtid = "ffffffffffffffff1b0c55e0f3e2a0d6a1f74c9a01000000"
    wid = "4f6a0e8d2c1b9a7e5d3c2b1a0f9e8d7c6b5a4938271605f4e3d2c1b0"
    nid = "ed9580448251cc916430246358f4b61106db8cf2a06ff38a04a51eb1"
    lg.add("%s\tWARNING worker.py:2253 -- A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: %s Worker ID: %s Node ID: %s Worker IP address: %s Worker port: 10043 Worker PID: %d Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors." % (
        rl(tf + timedelta(seconds=0.4)), rtid, wid, nid, IPS[2], pids[BAD_RANK]), key="died")
    for r in (16, 23):
        W(r, "%s:%d:%d [%d] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer %s<45821>" % (
            HOSTS[2], pids[r], pids[r] + 611, r % 8, HOSTS[2]))
        W(r, "%s:%d:%d [%d] NCCL INFO misc/socket.cc:749 -> 6" % (HOSTS[2], pids[r], pids[r] + 611, r % 8))
    lg.add("%s\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_9c2e1_00000" % rl(tf + timedelta(seconds=1.2)))
    tb = [
        "Traceback (most recent call last):",
        '  File "%s/ray/air/execution/_internal/event_manager.py", line 110, in resolve_future' % PY,
        "    result = ray.get(future)",
        "             ^^^^^^^^^^^^^^^",
        '  File "%s/ray/_private/auto_init_hook.py", line 21, in auto_init_wrapper' % PY,
        "    return fn(*args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^",
        '  File "%s/ray/_private/client_mode_hook.py", line 103, in wrapper' % PY,
        "    return func(*args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/ray/_private/worker.py", line 2772, in get' % PY,
        "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
        "                                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/ray/_private/worker.py", line 919, in get_objects' % PY,
        "    raise value.as_instanceof_cause()",
        "ray.exceptions.RayTaskError(ActorDiedError): \x1b[36mray::_Inner.train()\x1b[39m (pid=47911, ip=10.0.12.10, actor_id=0c9e4f3a1d2b5e6f7a8b9c0d01000000, repr=TorchTrainer)",
        '  File "%s/ray/tune/trainable/trainable.py", line 331, in train' % PY,
        "    raise skipped from exception_cause(skipped)",
        '  File "%s/ray/train/_internal/utils.py", line 57, in check_for_failure' % PY,
        "    ray.get(object_ref)",
        "           ^^^^^^^^^^^^^^^^^^^",
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "\tclass_name: RayTrainWorker",
        "\tactor_id: 7d1e0b4c9a8f3e2d5c6b1a0f01000000",
        "\tpid: %d" % pids[BAD_RANK],
        "\tnamespace: 5b8f2e71-3c0d-4a9e-b6f1-0e2d7c4a9b38",
        "\tip: %s" % IPS[2],
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
    ]
    for x in tb:
        k = lg.add(x)
        if x.startswith("The actor is dead"):
            lg.marks["actor"] = k
    lg.add("")
    dt = tf + timedelta(seconds=2)
    lg.add("Training errored after %d iterations at %s. Total running time: %s" % (fail_step // 500, dt.strftime("%Y-%m-%d %H:%M:%S"), "%dhr %dmin %ds" % divmod_h((dt - start).seconds)))
    lg.add("Error file: /mnt/cluster_storage/ray_results/mistral-7b-ft/TorchTrainer_9c2e1_00000_0_2026-11-28_14-00-02/error.txt")
    lg.add("")
    lg.extend([
        "Traceback (most recent call last):",
        '  File "/home/ray/work/ft/train_ray.py", line 171, in <module>',
        "    result = trainer.fit()",
        "             ^^^^^^^^^^^^^",
        '  File "%s/ray/train/base_trainer.py", line 638, in fit' % PY,
        "    raise TrainingFailedError(",
        "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause. After fixing the issue (assuming that the error is not caused by your own application logic, but rather an error such as OOM), you can restart the run from scratch or continue this run.",
        "To continue this run, you can use: `trainer = TorchTrainer.restore(\"/mnt/cluster_storage/ray_results/mistral-7b-ft\")`.",
        "To start a new run that will retry on training failures, set `train.RunConfig(failure_config=train.FailureConfig(max_failures))` in the Trainer's `run_config` with `max_failures > 0`, or `max_failures = -1` for unlimited retries.",
    ])
    # the dead worker's own session log: stops mid-line
    wl = b.log("logs/%s/worker-%s-01000000-%d.out" % (HOSTS[2], wid, pids[BAD_RANK]))
    wl.add(":job_id:01000000")
    wl.add(":actor_name:RayTrainWorker")
    wl.add("Setting up process group for: env:// [rank=%d, world_size=32]" % BAD_RANK)
    wl.add("Moving model to device: cuda:%d" % (BAD_RANK % 8))
    wl.add("Wrapping provided model in FSDP.")
    wl.add("%s/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default. This behavior will be depracted in transformers v4.45, and will be then set to `False` by default. For more details check this issue: https://github.com/huggingface/transformers/issues/31884" % PY)
    wl.add("  warnings.warn(")
    for s in range(steps_per_report, fail_step - 1, steps_per_report):
        wl.add("[rank%d] step %d host_rss=%.1fGiB dl_workers=4 shm_used=%.1fGiB" % (BAD_RANK, s, 38.3 + rnd.uniform(0, 0.5), 6.1 + rnd.uniform(0, 0.3)))
    wl.add("[rank%d] step %d host_rss=38.6GiB dl_wor" % (BAD_RANK, fail_step - 1))
    b.cut.add(wl.rel)
    marks = [(lg.rel, "died"), (lg.rel, "actor")]
    # probes on rt-gpu-02: nothing explains the kill
    ph = HOSTS[2]
    p = b.log("probes/%s/dmesg.txt" % ph)
    Lb, _ = dmesg_boot(T("2026-11-26T07:40:12"), ph, seed=12)
    p.extend(Lb)
    p.add("%s docker0: port 1(veth3c9a2e1) entered forwarding state" % dmesg_t(start - timedelta(minutes=19)))
    p.add("%s IPv6: ADDRCONF(NETDEV_CHANGE): veth3c9a2e1: link becomes ready" % dmesg_t(start - timedelta(minutes=19)))
    p = b.log("probes/%s/memory.json" % ph)
    p.add('{"probe": "free -g; cgroup memory.events (ray worker container)", "status": "ok", "detail": "host total 1007 GiB, used 341 GiB, available 652 GiB at %s; memory.events: oom 0, oom_kill 0, max 0", "metrics": {"mem_total_gib": 1007, "mem_used_gib": 341, "mem_available_gib": 652, "cgroup_oom": 0, "cgroup_oom_kill": 0, "swap_used_gib": 0}}' % (tf + timedelta(minutes=6)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    p = b.log("probes/%s/ray-memory-monitor.json" % ph)
    p.add('{"probe": "grep -c \'Task was killed due to the node running low on memory\' raylet.out", "status": "ok", "detail": "0 matches in /tmp/ray/session_latest/logs/raylet.out; memory_usage_threshold=0.95, node peak usage 0.37", "metrics": {"ray_oom_kills": 0, "memory_usage_threshold": 0.95, "node_peak_usage": 0.37}}')
    b.job({
        "job_id": "raysubmit_Xw3kP9bQ2mT7",
        "name": "mistral-7b-ft",
        "framework": "other",
        "launcher": "Ray Train TorchTrainer (FSDP), ray job submit; driver on rt-gpu-00 (head)",
        "status": "failed",
        "started_at": start,
        "ended_at": tf + timedelta(seconds=4),
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 32, "cp": 1, "ep": 1},
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(i * 8, i * 8 + 8))} for i, (h, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "2e8d4c1", "at": T("2026-11-24T16:20:00"), "message": "ft: mistral-7b on support-tickets v3"},
        ],
        "checkpoints": [
            {"step": 500, "at": (t0 + timedelta(seconds=500 * step_s + 40)).replace(microsecond=0), "path": "/mnt/cluster_storage/ray_results/mistral-7b-ft/TorchTrainer_9c2e1_00000_0_2026-11-28_14-00-02/checkpoint_000000", "valid": True},
            {"step": 1000, "at": (t0 + timedelta(seconds=1000 * step_s + 40)).replace(microsecond=0), "path": "/mnt/cluster_storage/ray_results/mistral-7b-ft/TorchTrainer_9c2e1_00000_0_2026-11-28_14-00-02/checkpoint_000001", "valid": True},
            {"step": 1500, "at": (t0 + timedelta(seconds=1500 * step_s + 40)).replace(microsecond=0), "path": "/mnt/cluster_storage/ray_results/mistral-7b-ft/TorchTrainer_9c2e1_00000_0_2026-11-28_14-00-02/checkpoint_000002", "valid": True},
        ],
        "spares": 1,
    })
    return b.truth(
        "process_killed_unknown", "infrastructure",
        "the RayTrainWorker of world rank 17 (pid 48213 on rt-gpu-02, 10.0.12.12) was killed abruptly at step "
        "1851 (SYSTEM_ERROR, connection EOF: consistent with SIGKILL) and the run failed with ActorDiedError; "
        "nothing in the bundle says by what: no Ray memory-monitor kill, no OOM killer or Xid in dmesg, host "
        "memory and cgroup OOM counters are clean.  Check the host's audit/journal and whoever can kill "
        "processes there before retrying.",
        [HOSTS[2]], "training", fail_step, marks, [{"kind": "none"}])


def divmod_h(sec):
    h, r = divmod(sec, 3600)
    m, s = divmod(r, 60)
    return h, m, s
