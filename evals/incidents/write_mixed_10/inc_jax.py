"""input_pipeline_bound: a JAX (pjit) trainer on 4 hosts x 8 H100, one process per host, absl logging.
From step 15201 the per-host input pipeline reads shards of a new data mix from an NFS share that is
saturated: data_wait grows to ~70% of the step on every host, GPUs idle; no error, the job is just slow.
Probes: nfsiostat on the mount (READ avg exe ~400 ms), nvidia-smi (GPU util ~30%)."""
import random
from datetime import timedelta

from common import Bundle, T, nvidia_smi_q

ID = "jax-absl-nfs-dataloader-starved-4host"
HOSTS = ["a3h-0%d" % i for i in (12, 13, 14, 15)]
IPS = ["10.128.0.%d" % i for i in (52, 53, 54, 55)]


def absl(d, tid, src, msg, lvl="I"):
    return "%s%s %d %s] %s" % (lvl, d.strftime("%m%d %H:%M:%S.%f"), tid, src, msg)


def xla(d, src, msg, lvl="I"):
    return "%s: %s %s] %s" % (d.strftime("%Y-%m-%d %H:%M:%S.%f"), lvl, src, msg)


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(77)
    start = T("2026-11-28T11:20:03") + timedelta(microseconds=118204)
    resume = 14400
    slow_from = 15201
    last = 15880
    marks = []
    fast_t, fast_w = 1.93, 0.04
    for n, host in enumerate(HOSTS):
        lg = b.log("logs/%s/train.log" % host)
        tid = 139874412345600 + 4096 * n
        d = start
        lg.add(absl(d, tid, "train.py:88", "JAX version 0.5.3, jaxlib 0.5.3, process %d/4 on %s" % (n, host)))
        if n == 0:
            lg.add(xla(d + timedelta(seconds=1), "external/xla/xla/pjrt/distributed/service.cc:369", "Jax service listening on [::]:8476"))
        lg.add(xla(d + timedelta(seconds=2), "external/xla/xla/pjrt/distributed/client.cc:135", "Connected to distributed JAX controller"))
        lg.add(absl(d + timedelta(seconds=3), tid, "train.py:97", "jax.process_count()=4 jax.device_count()=32 jax.local_device_count()=8"))
        lg.add(absl(d + timedelta(seconds=3), tid, "train.py:104", "mesh: Mesh('data': 4, 'fsdp': 8)"))
        lg.add(xla(d + timedelta(seconds=9), "external/xla/xla/service/gpu/nvptx_compiler.cc:930", "The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version 12.6.85. Because the driver is older than the PTX compiler version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.", lvl="W"))
        lg.add(absl(d + timedelta(seconds=12), tid, "checkpointing.py:143", "Restoring checkpoint from gs://ml-ckpt-prod/lm-9b/checkpoints/%d" % resume))
        lg.add(absl(d + timedelta(seconds=12), tid, "checkpoint_manager.py:1479", "[process=%d][thread=MainThread] Restoring checkpoint from gs://ml-ckpt-prod/lm-9b/checkpoints/%d." % (n, resume)))
        lg.add(absl(d + timedelta(seconds=58), tid, "checkpointer.py:259", "Finished restoring checkpoint from gs://ml-ckpt-prod/lm-9b/checkpoints/%d." % resume))
        lg.add(absl(d + timedelta(seconds=59), tid, "input_pipeline.py:61", "data mix 'web_code_v5': 1792 ArrayRecord shards under /mnt/nfs-datasets/lm/web_code_v5 (this host: 448), grain workers=8, prefetch=16"))
        lg.add(absl(d + timedelta(seconds=59), tid, "input_pipeline.py:74", "mix switch at step 15200 -> 'web_code_v6' (/mnt/nfs-datasets/lm/web_code_v6)"))
        if n == 2:
            lg.add(absl(d + timedelta(seconds=60), tid, "gcs_utils.py:212", "Retrying GET gs://ml-ckpt-prod/lm-9b/checkpoints/14400/_METADATA after 503 (attempt 1/5)", lvl="W"))
            lg.add(absl(d + timedelta(seconds=61), tid, "gcs_utils.py:219", "GET gs://ml-ckpt-prod/lm-9b/checkpoints/14400/_METADATA succeeded on attempt 2"))
        lg.add(absl(d + timedelta(seconds=70), tid, "train.py:241", "compiling train_step ..."))
        lg.add(absl(d + timedelta(seconds=131), tid, "train.py:246", "train_step compiled in 61.3s; starting at step %d" % (resume + 1)))
        t = d + timedelta(seconds=132)
        loss = 2.204
        acc_t = acc_w = 0.0
        for s in range(resume + 1, last + 1):
            if s < slow_from:
                st = fast_t + rnd.uniform(-0.03, 0.03)
                dw = fast_w + rnd.uniform(-0.02, 0.03)
            else:
                dw = rnd.uniform(3.6, 5.1) * min(1.0, (s - slow_from + 5) / 25.0) + fast_w
                st = fast_t - 0.05 + dw
            acc_t += st
            acc_w += dw
            t += timedelta(seconds=st)
            if s % 20 == 0:
                loss += rnd.uniform(-0.006, 0.0045)
                tokps = 8 * 4096 * 4 / (acc_t / 20) / 8 * 8
                k = lg.add(absl(t, tid, "train.py:301", "step %d | loss %.4f | lr %.3e | step_time %.2fs | data_wait %.2fs | tokens/s/device %s" % (
                    s, loss, 3e-4 * 0.5 * (1 + 0.95), acc_t / 20, acc_w / 20, "{:,}".format(int(tokps / 8)))))
                if n == 0 and s == 15220:
                    lg.marks["slow1"] = k
                if n == 3 and s == 15400:
                    lg.marks["slow3"] = k
                acc_t = acc_w = 0.0
            if s >= slow_from + 20 and s % 100 == 37:
                k = lg.add(absl(t, tid, "input_pipeline.py:133", "input pipeline stalled: waited %.2fs for the next batch (prefetch buffer 0/16, 8/8 workers blocked in read)" % (dw,), lvl="W"))
                if n == 0 and "stall" not in lg.marks:
                    lg.marks["stall"] = k
            if s % 200 == 0:
                lg.add(absl(t, tid, "checkpoint_manager.py:1068", "[process=%d] Saving checkpoint at step %d" % (n, s)) if s % 400 == 0 else
                       absl(t, tid, "train.py:322", "eval skipped (eval_every=1000)"))
        if n == 0:
            marks += [(lg.rel, "slow1"), (lg.rel, "stall")]
        if n == 3:
            marks.append((lg.rel, "slow3"))
    tp = start + timedelta(hours=1, minutes=40)
    for n, host in enumerate(HOSTS[:2]):
        p = b.log("probes/%s/nfsiostat.txt" % host)
        p.add("")
        p.add("nfs-fs-prod-2.internal:/datasets mounted on /mnt/nfs-datasets:")
        p.add("")
        p.add("           ops/s       rpc bklog")
        p.add("        %8.3f           %.3f" % (812.3 - 40 * n, 96.0 + 11 * n))
        p.add("")
        p.add("read:              ops/s            kB/s           kB/op         retrans    avg RTT (ms)    avg exe (ms)  avg queue (ms)          errors")
        k = p.add("                 %.3f       %.3f         128.000        0 (0.0%%)          %.3f         %.3f         %.3f        0 (0.0%%)" % (
            790.1 - 40 * n, (790.1 - 40 * n) * 128, 38.214 + 2 * n, 412.733 + 9 * n, 374.102 + 7 * n), key="read")
        p.add("write:             ops/s            kB/s           kB/op         retrans    avg RTT (ms)    avg exe (ms)  avg queue (ms)          errors")
        p.add("                   0.000           0.000           0.000        0 (0.0%)           0.000           0.000           0.000        0 (0.0%)")
        p.add("")
        if n == 0:
            marks.append((p.rel, "read"))
        if n:
            continue
        q = b.log("probes/%s/nvidia-smi.txt" % host)
        q.extend(nvidia_smi_q(tp, seed=40 + n, driver="550.90.07",
                              per_gpu={i: {"util": 27 + (i * 3) % 9, "power": 231.0 + 4 * i} for i in range(8)}))
    b.job({
        "job_id": "lm9b-pretrain-jax-0907",
        "name": "lm-9b-pretrain",
        "framework": "other",
        "launcher": "JAX multi-process (one process per host, jax.distributed.initialize), pjit/FSDP",
        "status": "slow",
        "started_at": start,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 32, "cp": 1, "ep": 1},
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(i * 8, i * 8 + 8))} for i, (h, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "08ba7e2", "at": T("2026-11-21T17:00:00"), "message": "data: schedule web_code_v6 mix from step 15200"},
        ],
        "storage": {"datasets": "nfs-fs-prod-2.internal:/datasets on /mnt/nfs-datasets (shared with other teams)", "checkpoints": "gs://ml-ckpt-prod/lm-9b/checkpoints"},
        "checkpoints": [
            {"step": 14000, "at": T("2026-11-28T09:41:00"), "path": "gs://ml-ckpt-prod/lm-9b/checkpoints/14000", "valid": True},
            {"step": 14400, "at": T("2026-11-28T10:55:12"), "path": "gs://ml-ckpt-prod/lm-9b/checkpoints/14400", "valid": True},
            {"step": 14800, "at": T("2026-11-28T11:35:06"), "path": "gs://ml-ckpt-prod/lm-9b/checkpoints/14800", "valid": True},
            {"step": 15200, "at": T("2026-11-28T11:48:40"), "path": "gs://ml-ckpt-prod/lm-9b/checkpoints/15200", "valid": True},
            {"step": 15600, "at": T("2026-11-28T12:30:31"), "path": "gs://ml-ckpt-prod/lm-9b/checkpoints/15600", "valid": True},
        ],
        "expected_step_time_s": 1.93,
        "spares": 0,
    })
    return b.truth(
        "input_pipeline_bound", "infrastructure",
        "the job is input-bound: from step 15201 (switch to the web_code_v6 mix on the shared NFS mount) every "
        "host waits ~4-5 s per step for data (data_wait ~70% of a ~6.5 s step, was 0.04 of 1.93 s); the NFS "
        "mount shows READ avg exe ~400 ms with an RPC backlog, the GPUs sit at ~30% utilization.  No node is "
        "at fault: move/cache the data locally or add readers.",
        [], "training", slow_from, marks, [{"kind": "none"}])
