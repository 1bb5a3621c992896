"""nccl_internal_error: NeMo 2.0 (Megatron-core GPT) under sbatch; the whole job's output is one
slurm-<id>.out on the batch host, every line labelled by `srun -l` with its task id.  Rank 21 on hgx-c13
gets ncclInternalError from the NCCL proxy (retcode 3); srun kills the step.  Hardware probes on hgx-c13
(nvidia-smi, ibstat, dmesg, a 2-node all_reduce_perf afterwards) are clean."""
import random
from datetime import timedelta

from common import Bundle, T, dmesg_boot, dmesg_t, ibstat, nvidia_smi_q

ID = "sbatch-srun-l-nemo-nccl-proxy-internal-4node"
HOSTS = ["hgx-c11", "hgx-c12", "hgx-c13", "hgx-c14"]
IPS = ["10.44.1.11", "10.44.1.12", "10.44.1.13", "10.44.1.14"]
JOB = 5583021
BADR = 21
PY = "/usr/local/lib/python3.10/dist-packages"


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(21)
    lg = b.log("logs/%s/slurm-%d.out" % (HOSTS[0], JOB))

    def L(task, text, key=None):
        return lg.add("\n".join("%2d: %s" % (task, x) for x in text.split("\n")), key)

    def nemo(task, d, msg, lvl="I", src="nemo_logging:393"):
        return L(task, "[NeMo %s %s %s] %s" % (lvl, d.strftime("%Y-%m-%d %H:%M:%S"), src, msg))

    start = T("2026-11-28T01:02:04")
    resume = 11750
    step_s = 7.31
    fail_step = 12418
    # plain sbatch-script output first (no labels)
    lg.add("+ export NCCL_DEBUG=WARN NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 CUDA_DEVICE_MAX_CONNECTIONS=1")
    lg.add("+ srun -l --kill-on-bad-exit=1 --container-image=nvcr.io#nvidia/nemo:25.09 --container-mounts=/lustre:/lustre python /lustre/proj/llm/pretrain_llama3_70b.py --resume")
    lg.add("pyxis: importing docker image: nvcr.io#nvidia/nemo:25.09")
    lg.add("pyxis: imported docker image: nvcr.io#nvidia/nemo:25.09")
    d = start + timedelta(seconds=48)
    for t in range(0, 32, 8):
        L(t, "[NeMo W %s nemo_logging:405] %s/pyannote/core/notebook.py:134: MatplotlibDeprecationWarning: The get_cmap function was deprecated in Matplotlib 3.7 and will be removed two minor releases later. Use ``matplotlib.colormaps[name]`` or ``matplotlib.colormaps.get_cmap(obj)`` instead." % (d.strftime("%Y-%m-%d %H:%M:%S"), PY))
        L(t, "      cm = get_cmap(\"Set1\")")
    d += timedelta(seconds=6)
    nemo(0, d, "Experiments will be logged at /lustre/proj/llm/results/llama3_70b/default")
    L(0, "GPU available: True (cuda), used: True")
    L(0, "TPU available: False, using: 0 TPU cores")
    L(0, "HPU available: False, using: 0 HPUs")
    nemo(0, d, "Fixing mis-match between ddp-config & mcore-optimizer config")
    nemo(0, d, "Rank 0 has data parallel group : [0, 4, 8, 12]", src="megatron_init:314")
    nemo(0, d, "Rank 0 has combined group of data parallel and context parallel : [0, 4, 8, 12]", src="megatron_init:320")
    nemo(0, d, "All data parallel group ranks with context parallel combined: [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15], [16, 20, 24, 28], [17, 21, 25, 29], [18, 22, 26, 30], [19, 23, 27, 31]]", src="megatron_init:325")
    nemo(0, d, "Ranks 0 has data parallel rank: 0", src="megatron_init:328")
    nemo(0, d, "Rank 0 has context parallel group: [0]", src="megatron_init:336")
    nemo(0, d, "Rank 0 has model parallel group: [0, 1, 2, 3, 16, 17, 18, 19]", src="megatron_init:351")
    nemo(0, d, "Rank 0 has tensor model parallel group: [0, 1, 2, 3]", src="megatron_init:362")
    nemo(0, d, "Rank 0 has pipeline model parallel group: [0, 16]", src="megatron_init:393")
    for t in range(32):
        L(t, "Initializing distributed: GLOBAL_RANK: %d, MEMBER: %d/32" % (t, t + 1))
    L(0, "-" * 100 + "\ndistributed_backend=nccl\nAll distributed processes registered. Starting with 32 processes\n" + "-" * 100 + "\n")
    for t in range(0, 32, 4):
        L(t, "LOCAL_RANK: %d - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]" % (t % 8))
    d += timedelta(seconds=40)
    nemo(0, d, "Padded vocab_size: 128256, original vocab_size: 128256, dummy tokens: 0.", src="utils:302")
    nemo(0, d, "Copying Trainer's 'max_steps' (50000) to LR scheduler's 'max_steps'.", src="utils:661")
    nemo(0, d, "Doing selective restore from RestoreConfig(path='/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.14-step=11749-consumed_samples=6016000.0', adapter_path=None, load_model_state=True, load_optim_state=True, load_artifacts=True)")
    d += timedelta(seconds=95)
    nemo(0, d, "Using <megatron.core.dist_checkpointing.strategies.fully_parallel.FullyParallelLoadStrategyWrapper object at 0x7f2e1c5b3d90> dist-ckpt load strategy.")
    nemo(0, d, "Global Checkpoint Load : Rank : 0 : Start time : %.3fs : Time spent in load_checkpoint: 92.118s" % d.timestamp(), src="nemo_logging:393")
    nemo(0, d, "Restoring model weights from RestoreConfig(path='/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.14-step=11749-consumed_samples=6016000.0', adapter_path=None, load_model_state=True, load_optim_state=True, load_artifacts=True)")
    nemo(0, d, "Finished restoring from RestoreConfig(path='/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.14-step=11749-consumed_samples=6016000.0', adapter_path=None, load_model_state=True, load_optim_state=True, load_artifacts=True), cleaning up.")
    L(0, "\n  | Name   | Type     | Params | Mode \n--------------------------------------------\n0 | module | GPTModel | 4.5 B  | train\n--------------------------------------------\n4.5 B     Trainable params\n0         Non-trainable params\n4.5 B     Total params\n17,843.773Total estimated model params size (MB)\n649       Modules in train mode\n0         Modules in eval mode")
    L(0, "%s/lightning/pytorch/loops/training_epoch_loop.py:160: You're resuming from a checkpoint that ended before the epoch ended. This can cause unreliable results if further training is done. Consider using an end-of-epoch checkpoint" % PY)
    t0 = d + timedelta(seconds=20)
    loss = 2.171
    for it in range(resume + 1 - resume, fail_step - resume):
        s = resume + it
        loss += rnd.uniform(-0.006, 0.005)
        dt = step_s + rnd.uniform(-0.06, 0.09)
        if s % 5 == 0 or s == fail_step - 1:
          L(0, "Training epoch 0, iteration %d/38249 | lr: %.4g | global_batch_size: 512 | global_step: %d | reduced_train_loss: %.4g | train_step_timing in s: %.4g | consumed_samples: %d" % (
            it - 1, 0.0002996 - s * 1e-9, s, loss, dt, s * 512))
        if s == 12000 or s == 12250:
            ds = t0 + timedelta(seconds=(s - resume) * step_s)
            L(0, "[NeMo I %s nemo_logging:393] Async checkpoint save for step %d (/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.11-step=%d-consumed_samples=%d.0-last.distcp) initiated." % (
                  ds.strftime("%Y-%m-%d %H:%M:%S"), s, s - 1, s * 512))
            if s == 12000:
                L(0, "[NeMo I %s nemo_logging:393] Successfully saved checkpoint from iteration %d to /lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.11-step=%d-consumed_samples=%d.0-last.distcp" % (
                    (ds + timedelta(seconds=71)).strftime("%Y-%m-%d %H:%M:%S"), s - 1, s - 1, s * 512))
                L(0, "[NeMo I %s nemo_logging:393] Async checkpoint save for step %d (/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.11-step=%d-consumed_samples=%d.0-last.distcp) finalized successfully." % (
                    (ds + timedelta(seconds=71)).strftime("%Y-%m-%d %H:%M:%S"), s, s - 1, s * 512))
    t_fail = t0 + timedelta(seconds=(fail_step - resume) * step_s - 3.2)
    # the failing rank: NCCL proxy internal error
    h = HOSTS[BADR // 8]
    pid = 71816 + BADR % 8
    tid = 72410
    pre = "%s:%d:%d [%d] " % (h, pid, tid, BADR % 8)
    L(BADR, pre + "NCCL INFO transport/net.cc:592 -> 3")
    L(BADR, pre + "NCCL INFO proxy.cc:1306 -> 3")
    L(BADR, pre + "NCCL INFO proxy.cc:1377 -> 3")
    L(BADR, "")
    L(BADR, pre + "proxy.cc:1519 NCCL WARN [Proxy Service %d] Failed to execute operation Connect from rank %d, retcode 3" % (BADR, BADR), key="warn")
    pre2 = "%s:%d:%d [%d] " % (h, pid, pid, BADR % 8)
    L(BADR, pre2 + "NCCL INFO transport/net.cc:288 -> 3")
    L(BADR, pre2 + "NCCL INFO transport.cc:197 -> 3")
    L(BADR, pre2 + "NCCL INFO enqueue.cc:1305 -> 3")
    L(BADR, pre2 + "NCCL INFO group.cc:234 -> 3")
    L(BADR, pre2 + "NCCL INFO group.cc:460 -> 3")
    L(BADR, pre2 + "NCCL INFO group.cc:106 -> 3")
    for lr in (4, 6, 7):
        L(16 + lr, "%s:%d:%d [%d] NCCL INFO [Service thread] Connection closed by localRank 5" % (h, 71816 + lr, 72390 + lr, lr))
    rk = "[rank%d]: " % BADR
    tb = [
        "Traceback (most recent call last):",
        '  File "/lustre/proj/llm/pretrain_llama3_70b.py", line 141, in <module>',
        "    run.run(recipe, executor=run.LocalExecutor())",
        '  File "/opt/NeMo/nemo/collections/llm/api.py", line 127, in pretrain',
        "    return train(",
        '  File "/opt/NeMo/nemo/collections/llm/api.py", line 98, in train',
        "    trainer.fit(model, data)",
        '  File "%s/lightning/pytorch/trainer/trainer.py", line 538, in fit' % PY,
        "    call._call_and_handle_interrupt(",
        '  File "%s/lightning/pytorch/loops/training_epoch_loop.py", line 250, in advance' % PY,
        "    batch_output = self.automatic_optimization.run(trainer.optimizers[0], batch_idx, kwargs)",
        '  File "/opt/NeMo/nemo/lightning/megatron_parallel.py", line 302, in forward',
        "    microbatch_outputs = step()",
        '  File "/opt/megatron-lm/megatron/core/pipeline_parallel/schedules.py", line 1818, in forward_backward_pipelining_without_interleaving',
        "    send_backward(input_tensor_grad, recv_tensor_shapes, config)",
        '  File "/opt/megatron-lm/megatron/core/pipeline_parallel/p2p_communication.py", line 488, in send_backward',
        "    _communicate(",
        '  File "/opt/megatron-lm/megatron/core/pipeline_parallel/p2p_communication.py", line 349, in _communicate',
        "    reqs = p2p_func(",
        '  File "/opt/megatron-lm/megatron/core/pipeline_parallel/p2p_communication.py", line 147, in _batched_p2p_ops',
        "    reqs = torch.distributed.batch_isend_irecv(ops)",
        '  File "%s/torch/distributed/distributed_c10d.py", line 2508, in batch_isend_irecv' % PY,
        "    with _coalescing_manager(group, device, async_ops=True) as cm:",
        '  File "%s/torch/distributed/distributed_c10d.py", line 2440, in _coalescing_manager' % PY,
        "    work = group._end_coalescing(device)",
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3353, internal error - please report this issue to the NCCL developers, NCCL version 2.23.4",
        "ncclInternalError: Internal check failed.",
        "Last error:",
        "[Proxy Service %d] Failed to execute operation Connect from rank %d, retcode 3" % (BADR, BADR),
    ]
    for x in tb:
        k = L(BADR, rk + x)
        if x.startswith("torch.distributed.DistBackendError"):
            lg.marks["exc"] = k
        if x.startswith("ncclInternalError"):
            lg.marks["exc2"] = k
    tk = t_fail + timedelta(seconds=3)
    lg.add("srun: error: %s: task %d: Exited with exit code 1" % (h, BADR), key="srunerr")
    lg.add("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    lg.add("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (JOB, HOSTS[0], tk.strftime("%Y-%m-%dT%H:%M:%S")))
    for t in (0, 5, 13, 29):
        L(t, "[rank%d]:[W%s ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only recently been added. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())" % (
            t, (tk + timedelta(milliseconds=40 * t)).strftime("%m%d %H:%M:%S.%f") + "418"))
    for n, hh in enumerate(HOSTS):
        if n == 2:
            lg.add("srun: error: %s: tasks 16-20,22-23: Killed" % hh)
        else:
            lg.add("srun: error: %s: tasks %d-%d: Killed" % (hh, n * 8, n * 8 + 7))
    lg.add("srun: Force Terminated StepId=%d.0" % JOB)
    marks = [(lg.rel, "warn"), (lg.rel, "exc"), (lg.rel, "exc2")]
    # probes on hgx-c13 (and c14 for the all_reduce_perf pair): all clean
    ph = HOSTS[2]
    p = b.log("probes/%s/nvidia-smi.txt" % ph)
    p.extend(nvidia_smi_q(tk + timedelta(minutes=12), seed=13, util=0,
                          per_gpu={i: {"used": 1, "util": 0, "power": 70.2 + i} for i in range(8)}))
    p = b.log("probes/%s/ibstat.txt" % ph)
    p.extend(ibstat(guid_base=0x5c257303009f7a00, lid_base=213))
    p = b.log("probes/%s/dmesg.txt" % ph)
    Lb, _ = dmesg_boot(T("2026-11-19T03:22:09"), ph, seed=5)
    p.extend(Lb)
    p.add("%s enroot-mksquashovlfs[402117]: Parallel mksquashfs: Using 224 processors" % dmesg_t(start + timedelta(seconds=12)))
    p.add("%s audit: type=1400 audit(%d.512:4401): apparmor=\"DENIED\" operation=\"capable\" class=\"cap\" profile=\"/usr/sbin/cupsd\" pid=1822 comm=\"cupsd\" capability=12  capname=\"net_admin\"" % (dmesg_t(start + timedelta(hours=-3)), int((start + timedelta(hours=-3)).timestamp())))
    p = b.log("probes/%s/nccl-tests.txt" % ph)
    tt = tk + timedelta(minutes=25)
    p.add("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")
    p.add("#")
    p.add("# Using devices")
    bus = ["0x18", "0x2a", "0x3a", "0x5d", "0x9a", "0xab", "0xba", "0xdb"]
    for r in range(16):
        hh = HOSTS[2 + r // 8]
        p.add("#  Rank %2d Group  0 Pid %6d on    %s device  %d [%s] NVIDIA H100 80GB HBM3" % (r, 90211 + r, hh, r % 8, bus[r % 8]))
    p.add("#")
    p.add("#                                                              out-of-place                       in-place          ")
    p.add("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")
    p.add("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ")
    size = 8
    bws = []
    while size <= 8589934592:
        cnt = size // 4
        lat = 38.0 + size / 190e3
        bw = size / lat / 1e3
        bb = bw * 2 * 15 / 16
        bws.append(bb)
        p.add("%12d  %12d     float     sum      -1  %7.2f  %6.2f  %6.2f      0  %7.2f  %6.2f  %6.2f      0" % (
            size, cnt, lat, bw, bb, lat * 1.01, bw / 1.01, bb / 1.01))
        size *= 2
    p.add("# Out of bounds values : 0 OK")
    p.add("# Avg bus bandwidth    : %.4f " % (sum(bws) / len(bws)))
    p.add("#")
    b.job({
        "job_id": str(JOB),
        "name": "llama3-70b-pretrain-nemo",
        "framework": "nemo",
        "scheduler": "slurm",
        "status": "failed",
        "started_at": start,
        "ended_at": tk + timedelta(seconds=34),
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 4, "pp": 2, "dp": 4, "cp": 1, "ep": 1},
        "nodes": [{"host": hh, "ip": ip, "ranks": list(range(i * 8, i * 8 + 8))} for i, (hh, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "d02b7e6", "at": T("2026-11-03T11:15:00"), "message": "recipe: llama3 70b, 4 nodes, seq 8192"},
            {"commit": "7c1e9aa", "at": T("2026-11-21T18:40:00"), "message": "data: refresh blend manifest"},
        ],
        "checkpoints": [
            {"step": 11750, "at": T("2026-11-27T22:10:30"), "path": "/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.14-step=11749-consumed_samples=6016000.0", "valid": True},
            {"step": 12000, "at": T("2026-11-28T01:36:52"), "path": "/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.11-step=11999-consumed_samples=6144000.0-last", "valid": True},
            {"step": 12250, "at": T("2026-11-28T02:07:18"), "path": "/lustre/proj/llm/results/llama3_70b/default/checkpoints/model_name=0--val_loss=2.11-step=12249-consumed_samples=6272000.0-last", "valid": False, "note": "async save never finalized (no metadata.json)"},
        ],
        "spares": 2,
    })
    return b.truth(
        "nccl_internal_error", "framework",
        "NCCL 2.23.4 returned ncclInternalError on rank 21 (hgx-c13, GPU 5): its proxy service failed a Connect "
        "operation (retcode 3) during a pipeline-parallel send; srun --kill-on-bad-exit took the step down.  "
        "hgx-c13's GPUs, HCAs, dmesg and a 2-node all_reduce_perf are clean: a software fault, not the node.",
        [HOSTS[2]], "training", fail_step, marks,
        [{"kind": "restart", "from_step": 12000}])
