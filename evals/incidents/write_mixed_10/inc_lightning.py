"""framework_bug: Lightning 2.6.0 (new in the image) raises inside its own loop code when the first
step-based checkpoint after a resume is taken; every rank dies at once.  Per-node torchrun logs,
Lightning's default console output, tqdm bar (with \r) on the rank-0 node only."""
import random
from datetime import timedelta

from common import Bundle, T, iso, nvidia_smi_q

ID = "lightning-tqdm-resume-ckpt-bug-4node"
HOSTS = ["gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04"]
IPS = ["10.31.0.11", "10.31.0.12", "10.31.0.13", "10.31.0.14"]
PY = "/usr/local/lib/python3.11/dist-packages"


def tb(rank_prefix=""):
    p = rank_prefix
    L = [
        "Traceback (most recent call last):",
        '  File "/workspace/vlm/train.py", line 212, in <module>',
        "    main()",
        '  File "/workspace/vlm/train.py", line 205, in main',
        "    trainer.fit(model, datamodule=dm, ckpt_path=cfg.resume_from)",
        '  File "%s/lightning/pytorch/trainer/trainer.py", line 561, in fit' % PY,
        "    call._call_and_handle_interrupt(",
        '  File "%s/lightning/pytorch/trainer/call.py", line 47, in _call_and_handle_interrupt' % PY,
        "    return trainer.strategy.launcher.launch(trainer_fn, *args, trainer=trainer, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/strategies/launchers/subprocess_script.py", line 105, in launch' % PY,
        "    return function(*args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/trainer/trainer.py", line 599, in _fit_impl' % PY,
        "    self._run(model, ckpt_path=ckpt_path)",
        '  File "%s/lightning/pytorch/trainer/trainer.py", line 1012, in _run' % PY,
        "    results = self._run_stage()",
        "              ^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/trainer/trainer.py", line 1056, in _run_stage' % PY,
        "    self.fit_loop.run()",
        '  File "%s/lightning/pytorch/loops/fit_loop.py", line 216, in run' % PY,
        "    self.advance()",
        '  File "%s/lightning/pytorch/loops/fit_loop.py", line 455, in advance' % PY,
        "    self.epoch_loop.run(self._data_fetcher)",
        '  File "%s/lightning/pytorch/loops/training_epoch_loop.py", line 152, in run' % PY,
        "    self.advance(data_fetcher)",
        '  File "%s/lightning/pytorch/loops/training_epoch_loop.py", line 371, in advance' % PY,
        '    call._call_callback_hooks(trainer, "on_train_batch_end", batch_output, batch, batch_idx)',
        '  File "%s/lightning/pytorch/trainer/call.py", line 227, in _call_callback_hooks' % PY,
        "    fn(trainer, trainer.lightning_module, *args, **kwargs)",
        '  File "%s/lightning/pytorch/callbacks/model_checkpoint.py", line 318, in on_train_batch_end' % PY,
        "    self._save_topk_checkpoint(trainer, monitor_candidates)",
        '  File "%s/lightning/pytorch/callbacks/model_checkpoint.py", line 392, in _save_topk_checkpoint' % PY,
        "    self._save_none_monitor_checkpoint(trainer, monitor_candidates)",
        '  File "%s/lightning/pytorch/callbacks/model_checkpoint.py", line 721, in _save_none_monitor_checkpoint' % PY,
        "    self._save_checkpoint(trainer, filepath)",
        '  File "%s/lightning/pytorch/callbacks/model_checkpoint.py", line 402, in _save_checkpoint' % PY,
        "    trainer.save_checkpoint(filepath, self.save_weights_only)",
        '  File "%s/lightning/pytorch/trainer/trainer.py", line 1377, in save_checkpoint' % PY,
        "    checkpoint = self._checkpoint_connector.dump_checkpoint(weights_only)",
        "                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/trainer/connectors/checkpoint_connector.py", line 449, in dump_checkpoint' % PY,
        '    "loops": self._get_loops_state_dict(),',
        "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/trainer/connectors/checkpoint_connector.py", line 531, in _get_loops_state_dict' % PY,
        '    "fit_loop": self.trainer.fit_loop.state_dict(),',
        "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/loops/loop.py", line 81, in state_dict' % PY,
        '    v.state_dict(destination, key + ".")',
        '  File "%s/lightning/pytorch/loops/loop.py", line 74, in state_dict' % PY,
        '    destination[prefix + "state_dict"] = self.on_save_checkpoint()',
        "                                         ^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "%s/lightning/pytorch/loops/training_epoch_loop.py", line 523, in on_save_checkpoint' % PY,
        '    state_dict["_resumed_fetch_state"] = self._resumed_fetch_state.copy()',
        "                                         ^^^^^^^^^^^^^^^^^^^^^^^^^",
        "AttributeError: '_TrainingEpochLoop' object has no attribute '_resumed_fetch_state'",
    ]
    return L


def build(out):
    b = Bundle(out, ID)
    rnd = random.Random(11)
    start = T("2026-11-27T22:04:10") + timedelta(milliseconds=517, microseconds=312)
    resume_step = 18000
    fail_step = 18500
    step_s = 0.94
    t_train0 = start + timedelta(seconds=212)
    t_fail = t_train0 + timedelta(seconds=(fail_step - resume_step) * step_s)
    steps_per_epoch = 2500
    epoch = resume_step // steps_per_epoch  # 7
    ckpt = "/mnt/ckpt/vlm-13b-sft/epoch=7-step=18000.ckpt"
    marks = []
    for n, host in enumerate(HOSTS):
        lg = b.log("logs/%s/node.log" % host)
        base_pid = 40210 + 1000 * n
        agent = base_pid - 31
        lg.add("W%s %d torch/distributed/run.py:793] " % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] *****************************************" % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        lg.add("W%s %d torch/distributed/run.py:793] *****************************************" % (start.strftime("%m%d %H:%M:%S.%f"), agent))
        for lr in range(8):
            r = n * 8 + lr
            if lr == 0:
                lg.add("[train.py] host=%s image=registry.internal/ml/vlm-trainer:2026.11.2 torch=2.6.0+cu124 lightning=2.6.0 transformers=4.47.1" % host)
            if r == 0:
                lg.add("Using bfloat16 Automatic Mixed Precision (AMP)")
                lg.add("GPU available: True (cuda), used: True")
                lg.add("TPU available: False, using: 0 TPU cores")
                lg.add("HPU available: False, using: 0 HPUs")
            lg.add("Initializing distributed: GLOBAL_RANK: %d, MEMBER: %d/32" % (r, r + 1))
        if n == 0:
            lg.add("-" * 100)
            lg.add("distributed_backend=nccl")
            lg.add("All distributed processes registered. Starting with 32 processes")
            lg.add("-" * 100)
            lg.add("")
        lg.add("%s/lightning/pytorch/trainer/connectors/logger_connector/logger_connector.py:76: Starting from v1.9.0, `tensorboardX` has been removed as a dependency of the `lightning.pytorch` package, due to potential conflicts with other packages in the ML ecosystem. For this reason, `logger=True` will use `CSVLogger` as the default logger, unless the `tensorboard` or `tensorboardX` packages are found. Please `pip install lightning[extra]` or one of them to enable TensorBoard support by default" % PY)
        for lr in range(8):
            lg.add("LOCAL_RANK: %d - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]" % lr)
        if n == 0:
            lg.add("Restoring states from the checkpoint path at %s" % ckpt)
            lg.add("")
            lg.add("  | Name        | Type                 | Params | Mode ")
            lg.add("---------------------------------------------------------------")
            lg.add("0 | vision      | SiglipVisionModel    | 400 M  | eval ")
            lg.add("1 | projector   | Sequential           | 29.4 M | train")
            lg.add("2 | llm         | LlamaForCausalLM     | 13.0 B | train")
            lg.add("3 | loss_fn     | CrossEntropyLoss     | 0      | train")
            lg.add("---------------------------------------------------------------")
            lg.add("13.0 B    Trainable params")
            lg.add("400 M     Non-trainable params")
            lg.add("13.4 B    Total params")
            lg.add("53,727.119Total estimated model params size (MB)")
            lg.add("1102      Modules in train mode")
            lg.add("421       Modules in eval mode")
            lg.add("Restored all states from the checkpoint at %s" % ckpt)
        for lr in range(2):
            lg.add("%s/torch/utils/checkpoint.py:87: UserWarning: None of the inputs have requires_grad=True. Gradients will be None" % PY)
            lg.add('  warnings.warn(')
        lg.add("%s/lightning/pytorch/loops/training_epoch_loop.py:168: You're resuming from a checkpoint that ended before the epoch ended and your dataloader is not resumable. This can cause unreliable results if further training is done. Consider using an end-of-epoch checkpoint or make your dataloader resumable by implementing the `state_dict` / `load_state_dict` interface." % PY)
        if n == 0:
            # tqdm bar: one physical line, updates separated by \r, as a file receives it
            total = steps_per_epoch
            done0 = resume_step - epoch * steps_per_epoch
            parts = []
            loss = 1.62
            for k in range(0, fail_step - resume_step + 1, 10):
                i = done0 + k
                el = k * step_s + 4
                rem = (total - i) * step_s
                loss += rnd.uniform(-0.02, 0.018)
                bar_n = int(10 * i / total)
                bar = "\u2588" * bar_n + ("\u258c" if (10 * i / total - bar_n) >= 0.5 else " ") + " " * (9 - bar_n)
                parts.append("Epoch %d:  %2d%%|%s| %d/%d [%02d:%02d<%02d:%02d,  %.2fit/s, v_num=12, train_loss=%.3f]" % (
                    epoch, 100 * i // total, bar[:10], i, total, el // 60, el % 60, rem // 60, rem % 60, 1 / step_s, loss))
            lg.add("\r".join(parts))
        # every rank raises the same AttributeError
        for lr in ((0, 3, 6) if n != 3 else (1, 3, 5)):
            r = n * 8 + lr
            for i, line in enumerate(tb()):
                k = lg.add(line)
                if line.startswith("AttributeError") and ((host == "gpu-a02" and lr == 0) or (host == "gpu-a04" and lr == 3)):
                    lg.marks["err"] = k
                if host == "gpu-a02" and lr == 0 and "on_save_checkpoint" in line and line.startswith("  File"):
                    lg.marks["frame"] = k
        tf = t_fail + timedelta(seconds=2 + n * 0.3)
        pids = [base_pid + i for i in range(8)]
        for i in range(1, 8):
            lg.add("W%s %d torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (
                (tf + timedelta(milliseconds=3 * i)).strftime("%m%d %H:%M:%S.%f"), agent, pids[i]))
        lg.add("E%s %d torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: %d) of binary: /usr/bin/python" % (
            (tf + timedelta(seconds=1)).strftime("%m%d %H:%M:%S.%f"), agent, pids[0]))
        lg.extend([
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            "             ^^^^^^",
            '  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper' % PY,
            "    return f(*args, **kwargs)",
            "           ^^^^^^^^^^^^^^^^^^",
            '  File "%s/torch/distributed/run.py", line 919, in main' % PY,
            "    run(args)",
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
            "  time      : %s" % (tf.strftime("%Y-%m-%d_%H:%M:%S")),
            "  host      : %s" % host,
            "  rank      : %d (local_rank: 0)" % (n * 8),
            "  exitcode  : 1 (pid: %d)" % pids[0],
            "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
            "============================================================",
        ])
        if "err" in lg.marks and host in ("gpu-a02", "gpu-a04"):
            marks.append((lg.rel, "err"))
        if host == "gpu-a02":
            marks.append((lg.rel, "frame"))
    # probes: nodes are healthy
    for n, host in [(1, "gpu-a02")]:
        p = b.log("probes/%s/nvidia-smi.txt" % host)
        p.extend(nvidia_smi_q(t_fail + timedelta(minutes=6), seed=n, util=0,
                              per_gpu={i: {"used": 4, "util": 0, "power": 71.0 + i} for i in range(8)}))
    end = t_fail + timedelta(seconds=5)
    b.job({
        "job_id": "vlm13b-sft-0412",
        "name": "vlm-13b-sft",
        "framework": "other",
        "launcher": "torchrun (one agent per node), PyTorch Lightning 2.6.0, strategy=fsdp",
        "image": "registry.internal/ml/vlm-trainer:2026.11.2",
        "status": "failed",
        "started_at": start,
        "ended_at": end,
        "exit_code": 1,
        "gpus_per_node": 8,
        "parallelism": {"tp": 1, "pp": 1, "dp": 32, "cp": 1, "ep": 1},
        "nodes": [{"host": h, "ip": ip, "ranks": list(range(i * 8, i * 8 + 8))} for i, (h, ip) in enumerate(zip(HOSTS, IPS))],
        "code": [
            {"commit": "5e0c9a1", "at": T("2026-11-12T15:20:00"), "message": "data: add chart-QA mixture at 6%"},
            {"commit": "b71d2f4", "at": T("2026-11-19T10:02:00"), "message": "model: freeze vision tower after warmup"},
        ],
        "checkpoints": [
            {"step": 17500, "at": T("2026-11-27T19:55:41"), "path": "/mnt/ckpt/vlm-13b-sft/epoch=6-step=17500.ckpt", "valid": True},
            {"step": 18000, "at": T("2026-11-27T21:48:03"), "path": ckpt, "valid": True},
        ],
        "images": [
            {"tag": "registry.internal/ml/vlm-trainer:2026.11.1", "lightning": "2.5.2", "used_by": "vlm13b-sft-0411"},
            {"tag": "registry.internal/ml/vlm-trainer:2026.11.2", "lightning": "2.6.0", "used_by": "vlm13b-sft-0412"},
        ],
        "history": ["vlm13b-sft-0409", "vlm13b-sft-0410", "vlm13b-sft-0411"],
        "spares": 1,
    })
    shown, size = b.truth(
        "framework_bug", "framework",
        "PyTorch Lightning 2.6.0, new in the job's image (2026.11.2), raises AttributeError inside its own "
        "_TrainingEpochLoop.on_save_checkpoint ('_resumed_fetch_state' missing on a run resumed from a checkpoint) "
        "the first time ModelCheckpoint saves after the resume (step 18500); all 32 ranks die at once. "
        "Pin lightning 2.5.2 (the previous image) or take the patch release.",
        [], "checkpoint", fail_step, marks, [{"kind": "none"}])
    return shown, size
