"""HF Trainer (accelerate launch -> torchrun --tee 3, `[defaultN]:` prefixes) with a JSON-lines metrics file in
logging_dir. A new custom compute_loss (length-normalised per-sequence loss) meets a rare batch in which every
label is -100 after truncation: torch.stack([]) raises on one rank. Peers hang in the DDP allreduce until the
30-minute watchdog."""
import json, random
from datetime import timedelta
from common import Bundle, T, iso, nccl, nccl_init_lines, watchdog_timeout, torchrun_summary

IID = "hf-trainer-customloss-emptystack-3node"
HOSTS = ["hpc-gx14", "hpc-gx15", "hpc-gx16"]
IPS = ["172.20.8.14", "172.20.8.15", "172.20.8.16"]
T0 = T("2026-11-25T14:02:10")
SP = "/opt/venv/lib/python3.11/site-packages"
BAD_RANK, BAD_NODE, BAD_LR = 13, 1, 5
STEP_FAIL = 1247


def build():
    b = Bundle(IID)
    logs = {h: [] for h in HOSTS}
    pids = {h: 20441 + 977 * i for i, h in enumerate(HOSTS)}
    for i, h in enumerate(HOSTS):
        L = logs[h]
        L.append(f"W1125 14:02:11.{random.randint(100000, 999999)} {pids[h] - 40} torch/distributed/run.py:792] ")
        L.append("W1125 14:02:11.%06d %d torch/distributed/run.py:792] *****************************************" % (random.randint(0, 999999), pids[h] - 40))
        L.append("W1125 14:02:11.%06d %d torch/distributed/run.py:792] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % (random.randint(0, 999999), pids[h] - 40))
        L.append("W1125 14:02:11.%06d %d torch/distributed/run.py:792] *****************************************" % (random.randint(0, 999999), pids[h] - 40))
        for lr in range(8):
            L.append(f"[default{lr}]:{SP}/transformers/training_args.py:1575: FutureWarning: `evaluation_strategy` is "
                     f"deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead")
        for lr in (0, 4):
            L += [f"[default{lr}]:{x}" for x in nccl_init_lines(h, pids[h] + lr, lr, IPS[i], iface="eth0")]
        for lr in range(0, 8, 2):
            L.append(f"[default{lr}]:{SP}/transformers/trainer.py:3505: FutureWarning: `tokenizer` is deprecated and "
                     f"will be removed in version 5.0.0 for `SFTLossTrainer.__init__`. Use `processing_class` instead.")
        L.append(f"[default{random.randint(0, 7)}]:`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.")
    L0 = logs[HOSTS[0]]
    L0.append("[default0]:loading weights file /models/llama-3.1-8b/model.safetensors.index.json")
    L0.append("[default0]:Loading checkpoint shards: 100%|██████████| 4/4 [00:07<00:00,  1.83s/it]")
    L0.append("[default0]:Continuing training from checkpoint, will skip to saved global_step")
    L0.append("[default0]:  Continuing training from epoch 0")
    L0.append("[default0]:  Continuing training from global step 1200")
    L0.append("[default0]:***** Running training *****")
    L0.append("[default0]:  Num examples = 1,152,000")
    L0.append("[default0]:  Num Epochs = 1")
    L0.append("[default0]:  Instantaneous batch size per device = 4")
    L0.append("[default0]:  Total train batch size (w. parallel, distributed & accumulation) = 384")
    L0.append("[default0]:  Gradient Accumulation steps = 4")
    L0.append("[default0]:  Total optimization steps = 3,000")
    L0.append("[default0]:  Number of trainable parameters = 8,030,261,248")
    # tqdm bar redrawn with \r on one physical line, dict logs every 10 steps
    t = T("2026-11-25T14:09:40")
    jsonl = []
    bar = []
    for step in range(1201, STEP_FAIL):
        t += timedelta(seconds=5.9 + random.random() * 0.2)
        pct = step * 100 // 3000
        done = 10 * step // 3000
        el = int((t - T("2026-11-25T12:06:00")).total_seconds())
        left = int((3000 - step) * 5.96)
        bar.append(f"\r {pct}%|{'█' * done}{' ' * (10 - done)}| {step}/3000 [{el // 3600}:{el % 3600 // 60:02d}:{el % 60:02d}"
                   f"<{left // 3600}:{left % 3600 // 60:02d}:{left % 60:02d},  {5.9 + random.random() * 0.1:.2f}s/it]")
        if step % 10 == 0:
            loss = round(0.92 - (step - 1200) * 0.0004 + random.uniform(-0.03, 0.03), 4)
            gn = round(random.uniform(0.31, 0.52), 6)
            lr_ = round(1.6e-05 - step * 1e-09, 11)
            L0.append("[default0]:" + "".join(bar))
            bar = []
            L0.append(f"[default0]:{{'loss': {loss}, 'grad_norm': {gn}, 'learning_rate': {lr_!r}, 'epoch': {step / 3000:.4f}}}")
            jsonl.append(json.dumps({"step": step, "epoch": round(step / 3000, 4), "loss": loss, "grad_norm": gn,
                                     "learning_rate": lr_, "wall": iso(t)}))
    L0.append("[default0]:" + "".join(bar))
    t_fail = t + timedelta(seconds=4)
    # the rare batch on rank 13
    LB = logs[HOSTS[BAD_NODE]]
    tb = ["Traceback (most recent call last):",
          '  File "/work/sft/train_sft.py", line 241, in <module>',
          "    main()",
          '  File "/work/sft/train_sft.py", line 236, in main',
          "    trainer.train(resume_from_checkpoint=args.resume)",
          f'  File "{SP}/transformers/trainer.py", line 2123, in train',
          "    return inner_training_loop(",
          f'  File "{SP}/transformers/trainer.py", line 2481, in _inner_training_loop',
          "    tr_loss_step = self.training_step(model, inputs, num_items_in_batch)",
          f'  File "{SP}/transformers/trainer.py", line 3579, in training_step',
          "    loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)",
          '  File "/work/sft/sft_loss.py", line 58, in compute_loss',
          "    per_seq = torch.stack([l[m].mean() for l, m in zip(tok_loss, mask) if m.any()])",
          "RuntimeError: stack expects a non-empty TensorList"]
    LB += [f"[default{BAD_LR}]:[rank{BAD_RANK}]: {x}" for x in tb]
    LB.append(f"W1125 {t_fail.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} {pids[HOSTS[BAD_NODE]] - 40} "
              f"torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[HOSTS[BAD_NODE]] + 0} closing signal SIGTERM")
    for lr in (1, 2, 3, 4, 6, 7):
        LB.append(f"W1125 {t_fail.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} {pids[HOSTS[BAD_NODE]] - 40} "
                  f"torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[HOSTS[BAD_NODE]] + lr} closing signal SIGTERM")
    LB.append(f"E1125 {t_fail.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} {pids[HOSTS[BAD_NODE]] - 40} "
              f"torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: {BAD_LR} "
              f"(pid: {pids[HOSTS[BAD_NODE]] + BAD_LR}) of binary: /opt/venv/bin/python")
    LB += torchrun_summary(t_fail, [(BAD_RANK, BAD_LR, HOSTS[BAD_NODE], 1, pids[HOSTS[BAD_NODE]] + BAD_LR, None)],
                           script="/work/sft/train_sft.py", sp=SP, accelerate=True)
    # healthy nodes: watchdog after ddp_timeout=1800s
    tw = t_fail + timedelta(seconds=1800)
    for i in (0, 2):
        h = HOSTS[i]
        L = logs[h]
        for lr in (0, 3, 6):
            r = 8 * i + lr
            L += [f"[default{lr}]:{x}" for x in watchdog_timeout(r, tw, 30962, "ALLREDUCE", 262144000, timeout_ms=1800000)]
        L.append(f"[default2]:{nccl(h, pids[h] + 2, pids[h] + 160, 2, 'WARN [Service thread] Accept failed Resource temporarily unavailable')}")
        L.append(f"E1125 {tw.strftime('%H:%M:%S')}.{random.randint(100000, 999999)} {pids[h] - 40} "
                 f"torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 "
                 f"(pid: {pids[h]}) of binary: /opt/venv/bin/python")
        L += torchrun_summary(tw + timedelta(seconds=2),
                              [(8 * i, 0, h, -6, pids[h], f"Signal 6 (SIGABRT) received by PID {pids[h]}")] +
                              [(8 * i + k, k, h, -6, pids[h] + k, f"Signal 6 (SIGABRT) received by PID {pids[h] + k}")
                               for k in (3, 6)], script="/work/sft/train_sft.py", sp=SP, accelerate=True)
    for h in HOSTS:
        b.f(f"logs/{h}/accelerate-launch.out").extend(logs[h])
    b.f(f"logs/{HOSTS[0]}/tb_logs/metrics.jsonl").extend(jsonl)
    rel = f"logs/{HOSTS[BAD_NODE]}/accelerate-launch.out"
    b.mark(rel, "RuntimeError: stack expects a non-empty TensorList")
    b.mark(rel, "line 58, in compute_loss")

    job = f"""
job_id: "hf-sft-0412"
name: llama31-8b-sft-lenorm
framework: other
trainer: hf-transformers (accelerate launch, DDP)
status: failed
started_at: {iso(T0)}
ended_at: {iso(tw + timedelta(seconds=3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 24, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + f"""code:
  - {{commit: 2d9f70b, at: 2026-11-12T10:20:00Z, message: "sft: packing off, max_len 4096"}}
  - {{commit: e54a1c8, at: 2026-11-25T09:47:00Z, message: "loss: length-normalised per-sequence loss (SFTLossTrainer.compute_loss)"}}
checkpoints:
  - {{step: 1000, at: 2026-11-24T22:31:00Z, path: /mnt/ckpt/hf-sft/checkpoint-1000, valid: true}}
  - {{step: 1200, at: 2026-11-25T13:58:00Z, path: /mnt/ckpt/hf-sft/checkpoint-1200, valid: true}}
spares: 0
history: [hf-sft-0398]
last_successful_run: {{job: hf-sft-0398, ended_at: 2026-11-20T06:12:00Z, commit: 2d9f70b}}
"""
    truth = {
        "fault": "user_code_exception",
        "category": "user_code",
        "root_cause": "the new custom compute_loss (commit e54a1c8) stacks per-sequence means only over sequences that have "
                      "unmasked labels; on a rare micro-batch on rank 13 (hpc-gx15) every label was -100 after truncation, "
                      "so torch.stack got an empty list and raised RuntimeError; the other nodes hung in the DDP allreduce "
                      "until the 30-minute watchdog aborted them",
        "faulty_nodes": [HOSTS[BAD_NODE]],
        "stage": "training",
        "iteration": STEP_FAIL,
        "actions": [{"kind": "rollback", "to_commit": "2d9f70b"}],
    }
    b.write(job, truth)
