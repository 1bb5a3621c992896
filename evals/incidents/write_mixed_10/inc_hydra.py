"""dataloader_corrupt_sample: an HF accelerate SFT run driven by Hydra (4 nodes x 4 GPUs; logs in Hydra's
`[time][logger][LEVEL] - msg` format, one stdout per node).  DataLoader worker 2 of rank 10 (l40s-n3) reads
a truncated JSONL record; torch re-raises the JSONDecodeError as RuntimeError (JSONDecodeError cannot be
built from one string), Hydra prints its short trace.  The other 15 ranks wait in all-reduce for 30 min."""
import random
from datetime import timedelta

from common import Bundle, T, ms

ID = "hydra-accelerate-jsonl-truncated-record-4node"
HOSTS = ["l40s-n1", "l40s-n2", "l40s-n3", "l40s-n4"]
IPS = ["192.168.60.11", "192.168.60.12", "192.168.60.13", "192.168.60.14"]
PY = "/opt/venv/lib/python3.11/site-packages"
GPN = 4
BADN, BADL = 2, 2


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(44)
    start = T("2026-11-28T09:58:02") + timedelta(milliseconds=644)
    resume = 2000
    fail_step = 2613
    step_s = 1.83
    t0 = start + timedelta(seconds=74)
    t_fail = t0 + timedelta(seconds=(fail_step - resume - 1) * step_s + 0.7)
    marks = []
    world = 16
    for n, host in enumerate(HOSTS):
        lg = b.log("logs/%s/stdout.log" % host)

        def H(d, name, level, msg):
            return lg.add("[%s][%s][%s] - %s" % (ms(d), name, level, msg))

        lg.add("The following values were not passed to `accelerate launch` and had defaults used instead:")
        lg.add("\t`--dynamo_backend` was set to a value of `'no'`")
        lg.add("To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.")
        agent = 30110 + n
        lg.add("W%s %d torch/distributed/run.py:793] " % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] *****************************************" % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] *****************************************" % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        d = start + timedelta(seconds=6)
        for lr in range(GPN):
            r = n * GPN + lr
            H(d + timedelta(milliseconds=13 * lr), "__main__", "INFO", "Distributed environment: MULTI_GPU  Backend: nccl\nNum processes: %d\nProcess index: %d\nLocal process index: %d\nDevice: cuda:%d\n\nMixed precision type: bf16\n" % (world, r, lr, lr))
        if n == 0:
            H(d, "__main__", "INFO", "Config:\nmodel:\n  name: Qwen/Qwen2.5-14B\n  gradient_checkpointing: true\ndata:\n  train_glob: /data/sft/mix-v7/shard-*.jsonl\n  max_len: 4096\n  num_workers: 4\ntrainer:\n  lr: 2.0e-05\n  max_steps: 6000\n  per_device_batch: 4\n  grad_accum: 2\n  save_every: 500\n  resume_from: /ckpt/qwen14b-sft-v7/checkpoint-2000\n")
        for lr in range(GPN):
            if lr == 0:
                lg.add("%s/transformers/modeling_utils.py:5006: FutureWarning: `_is_quantized_training_enabled` is going to be deprecated in transformers 4.39.0. Please use `model.hf_quantizer.is_trainable` instead" % PY)
        d += timedelta(seconds=19)
        H(d, "__main__", "INFO", "Loading checkpoint shards: 100%% 8/8 done in 17.2s")
        if n == 0:
            for m in ["Loading states from /ckpt/qwen14b-sft-v7/checkpoint-2000"]:
                H(d, "accelerate.accelerator", "INFO", m)
            d += timedelta(seconds=31)
            for m in ["All model weights loaded successfully", "All optimizer states loaded successfully",
                      "All scheduler states loaded successfully", "All dataloader sampler states loaded successfully",
                      "All random states loaded successfully"]:
                H(d, "accelerate.checkpointing", "INFO", m)
            H(d, "accelerate.accelerator", "INFO", "Loading in 0 custom states")
            H(d, "__main__", "INFO", "Resumed from step %d; skipping 8000 already-seen batches" % resume)
            H(d + timedelta(seconds=2), "datasets.utils.file_utils", "WARNING", "HEAD request to /data/sft/mix-v7/manifest.json timed out, retrying... [1.0s]")
            H(d + timedelta(seconds=3), "__main__", "INFO", "manifest ok: 412 shards, 8,912,330 records")
        if n == BADN:
            for w in range(4):
                H(d + timedelta(seconds=2 + w * 0.1), "sft.data", "INFO", "rank %d worker %d: streaming shards %s" % (
                    n * GPN + BADL, w, ", ".join("shard-%06d.jsonl" % (101 + 16 * w + k) for k in range(0, 48, 16))))
        if n == 0:
            loss = 0.912
            for s in range(resume + 1, fail_step):
                if s % 10:
                    continue
                ds = t0 + timedelta(seconds=(s - resume) * step_s)
                loss += rnd.uniform(-0.008, 0.0065)
                H(ds, "__main__", "INFO", "step %d/6000 | loss %.4f | lr %.3e | grad_norm %.3f | %.2f s/step" % (
                    s, loss, 2e-5 * (1 - (s - 200) / 5800 * 0.9), rnd.uniform(0.9, 1.6), step_s + rnd.uniform(-0.05, 0.05)))
                if s == 2500:
                    H(ds + timedelta(seconds=1), "accelerate.accelerator", "INFO", "Saving current state to /ckpt/qwen14b-sft-v7/checkpoint-2500")
                    H(ds + timedelta(seconds=38), "accelerate.checkpointing", "INFO", "Model weights saved in /ckpt/qwen14b-sft-v7/checkpoint-2500/model.safetensors")
                    H(ds + timedelta(seconds=52), "accelerate.checkpointing", "INFO", "Optimizer state saved in /ckpt/qwen14b-sft-v7/checkpoint-2500/optimizer.bin")
                    H(ds + timedelta(seconds=52), "accelerate.checkpointing", "INFO", "Random states saved in /ckpt/qwen14b-sft-v7/checkpoint-2500/random_states_0.pkl")
        if n == BADN:
            r = n * GPN + BADL
            pid = 30220 + BADL
            lg.add("Error executing job with overrides: ['experiment=sft_mix_v7', 'trainer.resume_from=/ckpt/qwen14b-sft-v7/checkpoint-2000']")
            tb = [
                "Traceback (most recent call last):",
                '  File "/workspace/sft/train.py", line 188, in main',
                "    for batch in train_dl:",
                '  File "%s/accelerate/data_loader.py", line 561, in __iter__' % PY,
                "    next_batch = next(dataloader_iter)",
                "                 ^^^^^^^^^^^^^^^^^^^^^",
                '  File "%s/torch/utils/data/dataloader.py", line 708, in __next__' % PY,
                "    data = self._next_data()",
                "           ^^^^^^^^^^^^^^^^^",
                '  File "%s/torch/utils/data/dataloader.py", line 1480, in _next_data' % PY,
                "    return self._process_data(data)",
                "           ^^^^^^^^^^^^^^^^^^^^^^^^",
                '  File "%s/torch/utils/data/dataloader.py", line 1505, in _process_data' % PY,
                "    data.reraise()",
                '  File "%s/torch/_utils.py", line 733, in reraise' % PY,
                "    raise RuntimeError(msg) from None",
                "RuntimeError: Caught JSONDecodeError in DataLoader worker process 2.",
                "Original Traceback (most recent call last):",
                '  File "%s/torch/utils/data/_utils/worker.py", line 349, in _worker_loop' % PY,
                "    data = fetcher.fetch(index)  # type: ignore[possibly-undefined]",
                "           ^^^^^^^^^^^^^^^^^^^^",
                '  File "%s/torch/utils/data/_utils/fetch.py", line 33, in fetch' % PY,
                "    data.append(next(self.dataset_iter))",
                "                ^^^^^^^^^^^^^^^^^^^^^^^",
                '  File "/workspace/sft/sft/data.py", line 91, in __iter__',
                "    ex = json.loads(line)",
                "         ^^^^^^^^^^^^^^^^",
                '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads',
                "    return _default_decoder.decode(s)",
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^",
                '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode',
                "    obj, end = self.raw_decode(s, idx=_w(s, 0).end())",
                "               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                '  File "/usr/lib/python3.11/json/decoder.py", line 353, in raw_decode',
                "    obj, end = self.scan_once(s, idx)",
                "               ^^^^^^^^^^^^^^^^^^^^^^",
                "json.decoder.JSONDecodeError: Unterminated string starting at: line 1 column 3077 (char 3076)",
                "",
                "",
                "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
            ]
            for x in tb:
                k = lg.add(x)
                if x.startswith("RuntimeError: Caught"):
                    lg.marks["rt"] = k
                if x.startswith("json.decoder.JSONDecodeError"):
                    lg.marks["json"] = k
            marks += [(lg.rel, "rt"), (lg.rel, "json")]
            tf = t_fail + timedelta(seconds=1.3)
            for lr in range(GPN):
                if lr != BADL:
                    lg.add("W%s %d torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (
                        tf.strftime("%m%d %H:%M:%S.%f"), agent, 30220 + lr))
            lg.add("E%s %d torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: %d (pid: %d) of binary: /opt/venv/bin/python" % (
                (tf + timedelta(milliseconds=310)).strftime("%m%d %H:%M:%S.%f"), agent, BADL, pid))
            lg.extend([
                "Traceback (most recent call last):",
                '  File "/opt/venv/bin/accelerate", line 8, in <module>',
                "    sys.exit(main())",
                "             ^^^^^^",
                '  File "%s/accelerate/commands/accelerate_cli.py", line 48, in main' % PY,
                "    args.func(args)",
                '  File "%s/accelerate/commands/launch.py", line 1163, in launch_command' % PY,
                "    multi_gpu_launcher(args)",
                '  File "%s/accelerate/commands/launch.py", line 792, in multi_gpu_launcher' % PY,
                "    distrib_run.run(args)",
                '  File "%s/torch/distributed/run.py", line 910, in run' % PY,
                "    elastic_launch(",
                '  File "%s/torch/distributed/launcher/api.py", line 138, in __call__' % PY,
                "    return launch_agent(self._config, self._entrypoint, list(args))",
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                '  File "%s/torch/distributed/launcher/api.py", line 269, in launch_agent' % PY,
                "    raise ChildFailedError(",
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                "============================================================",
                "train.py FAILED",
                "------------------------------------------------------------",
                "Failures:",
                "  <NO_OTHER_FAILURES>",
                "------------------------------------------------------------",
                "Root Cause (first observed failure):",
                "[0]:",
                "  time      : %s" % t_fail.strftime("%Y-%m-%d_%H:%M:%S"),
                "  host      : %s" % host,
                "  rank      : %d (local_rank: %d)" % (r, BADL),
                "  exitcode  : 1 (pid: %d)" % pid,
                "  error_file: <N/A>",
                "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                "============================================================",
            ])
        else:
            tw = t_fail + timedelta(seconds=1800.4 + 0.2 * n)
            wn = "WorkNCCL(SeqNum=167311, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)"
            for lr in range(GPN):
                r = n * GPN + lr
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: %s ran for 1800086 milliseconds before timing out." % (
                    r, (tw + timedelta(milliseconds=4 * lr)).strftime("%m%d %H:%M:%S.%f") + "903", r, wn))
                lg.add("[rank%d]:[E%s ProcessGroupNCCL.cpp:698] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (
                    r, (tw + timedelta(milliseconds=4 * lr + 1)).strftime("%m%d %H:%M:%S.%f") + "117", r))
            lg.add("E%s %d torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: %d) of binary: /opt/venv/bin/python" % (
                (tw + timedelta(seconds=2)).strftime("%m%d %H:%M:%S.%f"), agent, 30220))
            lg.add("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
            lg.add("============================================================")
            lg.add("train.py FAILED")
            lg.add("------------------------------------------------------------")
            lg.add("Root Cause (first observed failure):")
            lg.add("[0]:")
            lg.add("  time      : %s" % (tw.strftime("%Y-%m-%d_%H:%M:%S")))
            lg.add("  host      : %s" % host)
            lg.add("  rank      : %d (local_rank: 0)" % (n * GPN))
            lg.add("  exitcode  : -6 (pid: 30220)")
            lg.add("  error_file: <N/A>")
            lg.add("  traceback : Signal 6 (SIGABRT) received by PID 30220")
            lg.add("============================================================")
    b.job({
        "job_id": "qwen14b-sft-v7-0031",
        "name": "qwen14b-sft-mix-v7",
        "framework": "other",
        "launcher": "accelerate launch (multi-node, torch elastic), Hydra config",
        "status": "failed",
        "started_at": start,
        "ended_at": t_fail + timedelta(seconds=1803),
        "exit_code": 1,
        "gpus_per_node": GPN,
        "parallelism": {"tp": 1, "pp": 1, "dp": 16, "cp": 1, "ep": 1},
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(i * GPN, i * GPN + GPN))} for i, (h, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "c3a0e71", "at": T("2026-11-20T14:12:00"), "message": "sft: hydra experiment sft_mix_v7"},
            {"commit": "f9b24d0", "at": T("2026-11-25T08:55:00"), "message": "data: stream jsonl shards, 4 workers"},
        ],
        "data": {"train_glob": "/data/sft/mix-v7/shard-*.jsonl", "manifest_updated_at": T("2026-11-27T21:30:00")},
        "checkpoints": [
            {"step": 2000, "at": T("2026-11-28T02:41:15"), "path": "/ckpt/qwen14b-sft-v7/checkpoint-2000", "valid": True},
            {"step": 2500, "at": iso_(t0 + timedelta(seconds=500 * step_s + 52)), "path": "/ckpt/qwen14b-sft-v7/checkpoint-2500", "valid": True},
        ],
        "history": ["qwen14b-sft-v7-0030"],
        "spares": 0,
    })
    return b.truth(
        "dataloader_corrupt_sample", "data",
        "a truncated JSONL record in the SFT data (read by DataLoader worker 2 of rank 10 on l40s-n3: "
        "'Unterminated string starting at: line 1 column 3077') raised JSONDecodeError, re-raised by torch as "
        "RuntimeError 'Caught JSONDecodeError in DataLoader worker process 2'; the other ranks then hung in "
        "all-reduce until the 30 min NCCL watchdog.  Fix or skip the record; nothing to evict.",
        [], "training", fail_step, marks, [{"kind": "none"}])


def iso_(d):
    return d.replace(microsecond=0)
