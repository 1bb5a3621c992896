"""pytorch_internal_assert: torchtitan on a Kubeflow PyTorchJob (4 pods x 8 H100).  Logs are what
`kubectl logs --prefix` gives: `[pod/<pod>/pytorch] ` on every line.  torchtitan's launcher tees only local
rank 0 (`--local-ranks-filter 0 --role rank --tee 3`), so the failing rank (local rank 5 of worker-1) shows its
autograd INTERNAL ASSERT only inside the elastic agent's ChildFailedError summary (train.py's main is @record).
The other pods see a reduce-scatter watchdog timeout 100 s later and abort."""
import random
from datetime import timedelta

from common import Bundle, T, dmesg_boot, dmesg_t, ibstat, nvidia_smi_q

ID = "k8s-prefix-torchtitan-autograd-assert-4pod"
PODS = ["trainer-master-0", "trainer-worker-0", "trainer-worker-1", "trainer-worker-2"]
HOSTS = ["h100-node-0517", "h100-node-0518", "h100-node-0519", "h100-node-0522"]
IPS = ["10.8.3.17", "10.8.3.18", "10.8.3.19", "10.8.3.22"]
PY = "/usr/local/lib/python3.11/site-packages"
BAD = 2          # trainer-worker-1
BAD_LOCAL = 5    # rank 21


def c10(d):
    return d.strftime("%m%d %H:%M:%S.%f") + "%03d" % random.Random(d.microsecond).randint(0, 999)


def pyt(d):
    return d.strftime("%m%d %H:%M:%S.%f")


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(7)
    start = T("2026-11-28T00:40:12") + timedelta(milliseconds=381)
    resume = 1000
    fail_step = 1211
    step_s = 2.31
    t0 = start + timedelta(seconds=96)
    t_fail = t0 + timedelta(seconds=(fail_step - resume - 1) * step_s + 1.7)
    marks = []
    for n, (pod, host, ip) in enumerate(zip(PODS, HOSTS, IPS)):
        lg = b.log("logs/%s/%s.log" % (host, pod))
        pre = "[pod/%s/pytorch] " % pod

        def add(s, key=None):
            return lg.add("\n".join(pre + x for x in s.split("\n")), key)

        r0 = n * 8
        agent = 71
        pids = [305 + i for i in range(8)]
        rk = "[rank%d]:" % r0
        add("+ torchrun --nnodes=4 --nproc_per_node=8 --rdzv_backend c10d --rdzv_endpoint=trainer-master-0:29400 --rdzv_id=llama3-8b-cpt-77 --local-ranks-filter 0 --role rank --tee 3 -m torchtitan.train --job.config_file ./torchtitan/models/llama3/train_configs/llama3_8b.toml --checkpoint.enable_checkpoint --training.steps 5000")
        ts = start.strftime("%m%d %H:%M:%S.%f")
        add("W%s %d site-packages/torch/distributed/run.py:792] " % (ts, agent))
        add("W%s %d site-packages/torch/distributed/run.py:792] *****************************************" % (ts, agent))
        add("W%s %d site-packages/torch/distributed/run.py:792] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % (ts, agent))
        add("W%s %d site-packages/torch/distributed/run.py:792] *****************************************" % (ts, agent))

        def titan(d, msg, level="INFO"):
            return add("%s[titan] %s,%03d - root - %s - %s" % (rk, d.strftime("%Y-%m-%d %H:%M:%S"), d.microsecond // 1000, level, msg))

        d = start + timedelta(seconds=9)
        titan(d, "Starting job: Llama 3 8B continued pretraining")
        titan(d, "Building 1-D device mesh with ['dp_shard'], [32]")
        titan(d, "[GC] Initial GC collection. 0.00 seconds.")
        nc = "%s%s:%d:%d [0] NCCL INFO " % (rk, host, pids[0], pids[0])
        add(nc + "Bootstrap : Using eth0:%s<0>" % ip)
        add(nc + "cudaDriverVersion 12040")
        add(nc + "NCCL version 2.21.5+cuda12.4")
        add(nc + "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.")
        add(nc + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB eth0:%s<0>" % ip)
        add(nc + "Using network IB")
        add(nc + "comm 0x5581f0a3c2d0 rank %d nRanks 32 nNodes 4 localRanks 8 localRank 0 MNNVL 0" % r0)
        add(nc + "Channel 00/32 :    0   7   6   5   4   3   2   1   8  15  14  13  12  11  10   9  16  23  22  21")
        add(nc + "Connected all rings")
        add(nc + "Connected all trees")
        add(nc + "threadThresholds 8/8/64 | 256/8/64 | 512 | 512")
        add(nc + "32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer")
        add(nc + "comm 0x5581f0a3c2d0 rank %d nranks 32 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9d1c4e0b27f3a511 - Init COMPLETE" % r0)
        d += timedelta(seconds=4)
        titan(d, "Loading tokenizer from tokenizer.model")
        titan(d, "Preparing c4 dataset from allenai/c4")
        if n == 1:
            add("%s[titan] %s,%03d - huggingface_hub.utils._http - WARNING - '(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: 4f1b2c9e-07aa-4c55-b2f3-6d0e1f77a190)')' thrown while requesting GET https://huggingface.co/datasets/allenai/c4/resolve/1588ec454efa1a09f29cd18ddd04fe05fc8653a2/en/c4-train.00217-of-01024.json.gz" % (rk, d.strftime("%Y-%m-%d %H:%M:%S"), 412))
            add("%s[titan] %s,%03d - huggingface_hub.utils._http - WARNING - Retrying in 1s [Retry 1/5]." % (rk, d.strftime("%Y-%m-%d %H:%M:%S"), 413))
        d += timedelta(seconds=6)
        titan(d, "Building llama3 8B with TransformerModelArgs(_enforced='This field is used to enforce all fields have defaults.', dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256, multiple_of=1024, ffn_dim_multiplier=1.3, norm_eps=1e-05, rope_theta=500000, max_seq_len=8192, depth_init=True, use_flex_attn=False, attn_mask_type='causal', eos_id=0)")
        titan(d, "CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory")
        titan(d, "\x1b[34mModel llama3 8B \x1b[31msize: 8,030,261,248 total parameters\x1b[39m")
        titan(d, "Applied selective activation checkpointing to the model")
        titan(d, "Applied FSDP to the model")
        titan(d, "Peak FLOPS used for computing MFU: 9.890e+14")
        titan(d, "CUDA memory usage for model: 3.77GiB(4.77%)")
        titan(d, "Checkpointing active. Checkpoints will be loaded from and saved to /mnt/ckpt/llama3-8b-cpt/checkpoint")
        titan(d, "Loading the checkpoint at step %d." % resume)
        d += timedelta(seconds=14)
        titan(d, "[GC] GC collection invoked by checkpointer. 0.03 seconds.")
        titan(d, "Finished loading the checkpoint in 13.82 seconds.")
        titan(d, "Training starts at step %d, with local batch size 2, global batch size 64, sequence length 8192, total steps 5000 (warmup 200)" % (resume + 1))
        titan(d, "Profiling active. Traces will be saved at /mnt/ckpt/llama3-8b-cpt/profile_trace")
        loss = 2.412
        for s in range(resume + 1, fail_step):
            if s % 10 and s != resume + 1:
                continue
            ds = t0 + timedelta(seconds=(s - resume) * step_s, milliseconds=rnd.randint(0, 400))
            loss += rnd.uniform(-0.018, 0.012)
            tps = rnd.randint(3520, 3590)
            titan(ds, "\x1b[31mstep: %4d  \x1b[32mloss: %8.5f  \x1b[38;2;180;60;0mgrad_norm: %7.4f  \x1b[33mmemory: 61.32GiB(77.52%%)  \x1b[34mtps: %s  \x1b[36mtflops: %.2f  \x1b[35mmfu: %.2f%%\x1b[39m" % (
                s, loss, rnd.uniform(0.29, 0.41), "{:,}".format(tps), tps * 0.0586, tps * 0.0586 / 9.89))
            if s % 100 == 0:
                titan(ds, "[GC] Peforming periodical GC collection. 0.06 seconds.")
        if n == BAD:
            # local rank 5 dies in backward; agent notices within a second, kills the others, prints the summary
            tf = t_fail + timedelta(seconds=1)
            for i in range(8):
                if i != BAD_LOCAL:
                    add("W%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (
                        pyt(tf - timedelta(milliseconds=40 - i)), agent, pids[i]))
            add("E%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: %d (pid: %d) of binary: /usr/bin/python3" % (
                pyt(tf + timedelta(milliseconds=220)), agent, BAD_LOCAL, pids[BAD_LOCAL]), key="agentfail")
            add("Traceback (most recent call last):")
            add('  File "/usr/local/bin/torchrun", line 8, in <module>')
            add("    sys.exit(main())")
            add("             ^^^^^^")
            add('  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper' % PY)
            add("    return f(*args, **kwargs)")
            add("           ^^^^^^^^^^^^^^^^^^")
            add('  File "%s/torch/distributed/run.py", line 918, in main' % PY)
            add("    run(args)")
            add('  File "%s/torch/distributed/run.py", line 909, in run' % PY)
            add("    elastic_launch(")
            add('  File "%s/torch/distributed/launcher/api.py", line 138, in __call__' % PY)
            add("    return launch_agent(self._config, self._entrypoint, list(args))")
            add("           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^")
            add('  File "%s/torch/distributed/launcher/api.py", line 269, in launch_agent' % PY)
            add("    raise ChildFailedError(")
            add("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
            add("============================================================")
            add("torchtitan.train FAILED")
            add("------------------------------------------------------------")
            add("Failures:")
            add("  <NO_OTHER_FAILURES>")
            add("------------------------------------------------------------")
            add("Root Cause (first observed failure):")
            add("[0]:")
            add("  time      : %s" % t_fail.strftime("%Y-%m-%d_%H:%M:%S"))
            add("  host      : %s" % pod)
            add("  rank      : %d (local_rank: %d)" % (r0 + BAD_LOCAL, BAD_LOCAL))
            add("  exitcode  : 1 (pid: %d)" % pids[BAD_LOCAL])
            add("  error_file: /tmp/torchelastic_q1w0v9ne/llama3-8b-cpt-77_3hx2m0a1/attempt_0/%d/error.json" % BAD_LOCAL)
            add("  traceback : Traceback (most recent call last):")
            add('    File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper' % PY)
            add("      return f(*args, **kwargs)")
            add("             ^^^^^^^^^^^^^^^^^^")
            add('    File "/workspace/torchtitan/torchtitan/train.py", line 560, in main')
            add("      trainer.train()")
            add('    File "/workspace/torchtitan/torchtitan/train.py", line 478, in train')
            add("      self.train_step(inputs, labels)")
            add('    File "/workspace/torchtitan/torchtitan/train.py", line 402, in train_step')
            add("      loss.backward()")
            add('    File "%s/torch/_tensor.py", line 626, in backward' % PY)
            add("      torch.autograd.backward(")
            add('    File "%s/torch/autograd/__init__.py", line 347, in backward' % PY)
            add("      _engine_run_backward(")
            add('    File "%s/torch/autograd/graph.py", line 823, in _engine_run_backward' % PY)
            add("      return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")
            add("             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^")
            add('  RuntimeError: !grad_accumulator_.expired() INTERNAL ASSERT FAILED at "/pytorch/torch/csrc/autograd/saved_variable.cpp":226, please report a bug to PyTorch. No grad accumulator for a saved leaf', key="assert")
            add("  ")
            add("============================================================")
            marks.append((lg.rel, "assert"))
            marks.append((lg.rel, "agentfail"))
        else:
            tw = t_fail + timedelta(seconds=100.05 + 0.01 * n)
            sq = 48211 + 3
            wn = "WorkNCCL(SeqNum=%d, OpType=_REDUCE_SCATTER_BASE, NumelIn=131334144, NumelOut=4104192, Timeout(ms)=100000)" % sq
            add("%s[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: %s ran for 100047 milliseconds before timing out." % (rk, c10(tw), r0, wn))
            add("%s[E%s ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (rk, c10(tw), r0, sq, sq + 1, sq - 1))
            add("%s[E%s ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank %d] Timeout at NCCL work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (rk, c10(tw), r0, sq, sq + 1, sq - 1))
            add("%s[E%s ProcessGroupNCCL.cpp:630] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (rk, c10(tw), r0))
            add("%s[E%s ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (rk, c10(tw), r0))
            add("%s[E%s ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: %s ran for 100047 milliseconds before timing out." % (rk, c10(tw), r0, r0, wn))
            add("%sException raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):" % rk)
            add("%sframe #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3b6e56c446 in %s/torch/lib/libc10.so)" % (rk, PY))
            add("%sframe #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x282 (0x7f3b1f0c6772 in %s/torch/lib/libtorch_cuda.so)" % (rk, PY))
            add("%sframe #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3b1f0cdbb3 in %s/torch/lib/libtorch_cuda.so)" % (rk, PY))
            add("%sframe #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7f3b1f0cf61d in %s/torch/lib/libtorch_cuda.so)" % (rk, PY))
            add("%sframe #4: <unknown function> + 0x145c0 (0x7f3b6e9d85c0 in %s/torch/lib/libtorch.so)" % (rk, PY))
            add("%sframe #5: <unknown function> + 0x94ac3 (0x7f3b70a94ac3 in /lib/x86_64-linux-gnu/libc.so.6)" % rk)
            add("%sframe #6: <unknown function> + 0x126850 (0x7f3b70b26850 in /lib/x86_64-linux-gnu/libc.so.6)" % rk)
            add("")
            add("%sterminate called after throwing an instance of 'c10::DistBackendError'" % rk)
            add("W%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (pyt(tw + timedelta(seconds=1)), agent, pids[1]))
            add("E%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: %d) of binary: /usr/bin/python3" % (pyt(tw + timedelta(seconds=2)), agent, pids[0]))
            add("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
            add("============================================================")
            add("torchtitan.train FAILED")
            add("------------------------------------------------------------")
            add("Root Cause (first observed failure):")
            add("[0]:")
            add("  time      : %s" % (tw.strftime("%Y-%m-%d_%H:%M:%S")))
            add("  host      : %s" % pod)
            add("  rank      : %d (local_rank: 0)" % r0)
            add("  exitcode  : -6 (pid: %d)" % pids[0])
            add("  error_file: <N/A>")
            add("  traceback : Signal 6 (SIGABRT) received by PID %d" % pids[0])
            add("============================================================")
    # probes on the faulty node: GPUs, HCAs, kernel all clean
    ph = HOSTS[BAD]
    p = b.log("probes/%s/nvidia-smi.txt" % ph)
    p.extend(nvidia_smi_q(t_fail + timedelta(minutes=9), seed=3, util=0,
                          per_gpu={i: {"used": 1, "util": 0, "power": 69.5 + i} for i in range(8)}))
    p = b.log("probes/%s/ibstat.txt" % ph)
    p.extend(ibstat(guid_base=0x946dae0300c21e00, lid_base=519))
    p = b.log("probes/%s/dmesg.txt" % ph)
    L, tb = dmesg_boot(T("2026-11-21T06:12:40"), ph, seed=2)
    p.extend(L)
    p.add("%s cni0: port 3(veth5e2c1a07) entered forwarding state" % dmesg_t(start - timedelta(seconds=40)))
    p.add("%s cni0: port 3(veth5e2c1a07) entered disabled state" % dmesg_t(t_fail + timedelta(seconds=4)))
    b.job({
        "job_id": "llama3-8b-cpt-77",
        "name": "llama3-8b-continued-pretrain",
        "framework": "torchtitan",
        "scheduler": "kubernetes (Kubeflow PyTorchJob)",
        "status": "failed",
        "started_at": start,
        "ended_at": t_fail + timedelta(seconds=104),
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 32, "cp": 1, "ep": 1},
        "nodes": [{"host": h, "ip": ip, "pod": pd, "ranks": list(range(i * 8, i * 8 + 8))} for i, (h, ip, pd) in enumerate(zip(HOSTS, IPS, PODS))],
        "code": [
            {"commit": "3f8e0b2", "at": T("2026-11-10T09:41:00"), "message": "config: llama3 8b cpt on c4 + code mix"},
            {"commit": "a91c7d5", "at": T("2026-11-17T16:05:00"), "message": "train: log grad_norm every step"},
        ],
        "checkpoints": [
            {"step": 500, "at": T("2026-11-27T20:51:10"), "path": "/mnt/ckpt/llama3-8b-cpt/checkpoint/step-500", "valid": True},
            {"step": 1000, "at": T("2026-11-27T23:31:44"), "path": "/mnt/ckpt/llama3-8b-cpt/checkpoint/step-1000", "valid": True},
        ],
        "history": ["llama3-8b-cpt-75", "llama3-8b-cpt-76"],
        "spares": 2,
    })
    return b.truth(
        "pytorch_internal_assert", "framework",
        "rank 21 (local rank 5 of pod trainer-worker-1 on h100-node-0519) hit a PyTorch autograd INTERNAL ASSERT "
        "(!grad_accumulator_.expired() in saved_variable.cpp) during loss.backward() at step 1211; its peers' "
        "reduce-scatter then timed out (watchdog, 100 s) and aborted.  GPUs, HCAs and dmesg on the node are clean.",
        [HOSTS[BAD]], "training", fail_step, marks,
        [{"kind": "restart", "from_step": 1000}])
