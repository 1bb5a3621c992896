"""JAX + Orbax on a Vertex AI custom job (Cloud Logging JSON entries): one host's NFS client goes stale
while the step-12000 checkpoint is written to a Filestore share."""
import datetime as dt
import json
import random

from common import Bundle, job_yaml, ts

ID = "vertex-jax-orbax-nfs-stale-handle"
HOSTS = [("workerpool0-0", "10.148.0.18"), ("workerpool1-0", "10.148.0.19"), ("workerpool1-1", "10.148.0.20"), ("workerpool1-2", "10.148.0.21")]
BAD = 2
JOBID = "3021877455129231360"
CK = "/mnt/nfs/ckpt/gemma2-27b-ft"
SP = "/usr/local/lib/python3.11/site-packages"


class Log:
    def __init__(self, task, r):
        self.task, self.r, self.lines = task, r, []

    def e(self, t, sev, msg):
        z = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"
        rz = ts(t, 0.4 + self.r.random()).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self.lines.append(json.dumps({
            "insertId": f"{self.r.getrandbits(40):010x}",
            "jsonPayload": {"message": msg, "attrs": {"tag": self.task}, "levelname": sev},
            "resource": {"type": "ml_job", "labels": {"job_id": JOBID, "project_id": "acme-ml-prod", "task_name": self.task}},
            "timestamp": z, "severity": sev,
            "labels": {"ml.googleapis.com/trial_type": "", "ml.googleapis.com/tpu_worker_id": ""},
            "logName": f"projects/acme-ml-prod/logs/{self.task}", "receiveTimestamp": rz}))


def build(root):
    b = Bundle(root, ID)
    r = random.Random(116)
    t0 = dt.datetime(2026, 11, 24, 0, 3, 10, 221000)
    tstart = ts(t0, 190)
    tsave = ts(tstart, 1000 * 3.12)
    for i, (task, ip) in enumerate(HOSTS):
        g = Log(task, r)
        e = g.e
        e(t0, "INFO", f"jax.distributed.initialize: coordinator_address=workerpool0-0:8476, num_processes=4, process_id={i}")
        e(ts(t0, 3), "INFO", f"JAX devices: 32 global, 8 local (process_index={i}): [CudaDevice(id={i * 8}), ..., CudaDevice(id={i * 8 + 7})]")
        e(ts(t0, 3), "WARNING", f"{SP}/jax/_src/xla_bridge.py:1048: UserWarning: jax.host_count has been renamed to jax.process_count. This alias will eventually be removed; please update your code.")
        e(ts(t0, 3), "WARNING", "  warnings.warn(")
        e(ts(t0, 40), "INFO", f"Restoring checkpoint from {CK}/11000")
        if i == 0:
            e(ts(t0, 41), "WARNING", "Retrying storage.objects.get for gs://acme-ml-prod-data/gemma2-ft/mixture_v4/shard-00017-of-00512.array_record after ConnectionResetError(104, 'Connection reset by peer') (attempt 1/5)")
            e(ts(t0, 42), "INFO", "Opened 512 array_record shards (mixture_v4), 48,812,211 examples")
        e(ts(t0, 160), "INFO", f"Restored step 11000 from {CK}/11000 in 118.7s")
        if i == 0:
            for st in range(11900, 12001, 10):
                t = ts(tstart, (st - 11000) * 3.12)
                e(t, "INFO", f"step {st}: loss={1.734 - (st - 11900) * 0.0001 + r.uniform(-0.01, 0.01):.4f} grad_norm={r.uniform(0.21, 0.26):.3f} lr={9.2e-6:.2e} step_time={3.12 + r.uniform(-0.03, 0.03):.2f}s tokens/s/device={2610 + r.randint(-20, 20)}")
        e(tsave, "INFO", f"Saving checkpoint for step 12000 to {CK}/12000.orbax-checkpoint-tmp-1732412201 (async)")
        if i == BAD:
            te = ts(tsave, 2.7)
            tb = ["Traceback (most recent call last):",
                  '  File "/app/train.py", line 518, in <module>',
                  "    app.run(main)",
                  f'  File "{SP}/absl/app.py", line 254, in _run_main',
                  "    sys.exit(main(argv))",
                  '  File "/app/train.py", line 497, in main',
                  "    ckpt_mgr.save(step, args=ocp.args.StandardSave(state))",
                  f'  File "{SP}/orbax/checkpoint/checkpoint_manager.py", line 1288, in save',
                  "    self._checkpointer.save(save_directory, args=args)",
                  f'  File "{SP}/orbax/checkpoint/async_checkpointer.py", line 378, in save',
                  "    commit_ops = asyncio_utils.run_sync(self._handler.async_save(tmpdir.get(), args=ckpt_args))",
                  f'  File "{SP}/orbax/checkpoint/_src/handlers/base_pytree_checkpoint_handler.py", line 612, in async_save',
                  "    ocdbt_dir.mkdir(parents=False, exist_ok=True)",
                  f'  File "{SP}/etils/epath/gpath.py", line 123, in mkdir',
                  "    self._backend.mkdir(self._path_str, exist_ok=exist_ok, mode=mode)",
                  f'  File "{SP}/etils/epath/backend.py", line 207, in mkdir',
                  "    os.mkdir(path, mode=mode)",
                  f"OSError: [Errno 116] Stale file handle: '{CK}/12000.orbax-checkpoint-tmp-1732412201/state/ocdbt.process_2'"]
            for k, ln in enumerate(tb):
                e(ts(te, k * 0.0001), "ERROR", ln)
        else:
            tf = ts(tsave, 2.7 + 61.0 + i * 0.3)
            e(tf, "ERROR", f"F{tf.strftime('%m%d %H:%M:%S')}.{tf.microsecond:06d}    {330 + i} client.cc:1041] Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):")
            e(tf, "ERROR", "/job:jax_worker/replica:0/task:2")
            e(tf, "ERROR", "The tasks have crashed. Check the task logs for an earlier error to debug further.")
            e(tf, "ERROR", "*** Check failure stack trace: ***")
            e(tf, "ERROR", "    @     0x7f2e1c3d51b4  absl::lts_20230802::log_internal::LogMessage::SendToLog()")
        if i == 0:
            tj = ts(tsave, 95)
            e(tj, "ERROR", f"The replica {HOSTS[BAD][0]} exited with a non-zero status of 1. Termination reason: Error. To find out more about why your job exited please check the logs: https://console.cloud.google.com/logs/viewer?project=481207733919&resource=ml_job%2Fjob_id%2F{JOBID}&advancedFilter=resource.type%3D%22ml_job%22%0Aresource.labels.job_id%3D%22{JOBID}%22")
        b.add(f"logs/{task}/cloud-logging.jsonl.log", g.lines)
        probe = ({"probe": "nfs", "status": "fail",
                  "detail": f"mount 10.88.0.2:/vol1 on /mnt/nfs type nfs (vers=3,hard,proto=tcp,timeo=600,retrans=2); stat {CK}: Stale file handle; kernel: 'nfs: server 10.88.0.2 not responding, still trying' at {ts(tsave, -141).strftime('%H:%M:%S')}Z, 'nfs: server 10.88.0.2 OK' at {ts(tsave, -9).strftime('%H:%M:%S')}Z",
                  "metrics": {"stale_handles": 1, "retrans": 87, "server_not_responding_events": 1}}
                 if i == BAD else
                 {"probe": "nfs", "status": "ok",
                  "detail": f"mount 10.88.0.2:/vol1 on /mnt/nfs type nfs (vers=3,hard,proto=tcp,timeo=600,retrans=2); stat {CK}: ok",
                  "metrics": {"stale_handles": 0, "retrans": r.randint(0, 2), "server_not_responding_events": 0}})
        b.add(f"probes/{task}/nfs.json", [json.dumps(probe)])
    bad = f"logs/{HOSTS[BAD][0]}/cloud-logging.jsonl.log"
    b.mark(bad, "OSError: [Errno 116] Stale file handle")
    b.mark(f"probes/{HOSTS[BAD][0]}/nfs.json", "Stale file handle")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml(JOBID, "gemma2-27b-sft-jax", "other", "failed", t0, ts(tsave, 95), 1, 8,
                 (8, 1, 4, 1), nodes,
                 [("1d44e0c", dt.datetime(2026, 11, 15, 7, 30), "jax 0.4.35, orbax 0.9 async ckpt"),
                  ("6e9b2f1", dt.datetime(2026, 11, 21, 16, 4), "sft: mixture_v4")],
                 [(10000, dt.datetime(2026, 11, 23, 21, 12), f"{CK}/10000", True),
                  (11000, dt.datetime(2026, 11, 23, 23, 5), f"{CK}/11000", True),
                  (12000, tsave, f"{CK}/12000.orbax-checkpoint-tmp-1732412201", False)],
                 extra={"scheduler": "vertex-ai-customjob", "machine": "a3-highgpu-8g x4 (workerpool0 x1, workerpool1 x3)",
                        "framework_detail": "jax 0.4.35 + orbax-checkpoint 0.9, mesh fsdp=4 x tensor=8", "storage": "Filestore NFS 10.88.0.2:/vol1 on /mnt/nfs"})
    truth = {"fault": "storage_checkpoint_write_failure", "category": "infrastructure",
             "root_cause": "the NFS client on workerpool1-1 lost the Filestore server for ~2 minutes and came back with a stale handle for the checkpoint directory; when Orbax saved step 12000, process 2's mkdir of its ocdbt.process_2 directory failed with OSError [Errno 116] Stale file handle, the process exited and the JAX coordination service terminated the other three hosts",
             "faulty_nodes": [HOSTS[BAD][0]], "stage": "checkpoint", "iteration": 12001,
             "actions": [{"kind": "restart", "from_step": 11000}]}
    return b.write(y, truth)
